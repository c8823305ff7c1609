// AWS Signature Version 4 for the S3 storage's requests, made by @smithy/signature-v4 (the AWS
// SDK's own signer; docs/design/architecture.md says why it and not the whole S3 client). The
// storage client (storage-client.ts) asks for the headers of each exchange just before sending it,
// retries included, so every attempt carries a fresh X-Amz-Date. S3 signs the path as sent, without
// the second URI-encoding other services use (uriEscapePath false), and the payload hash of a GET
// or HEAD is that of the empty body (the x-amz-content-sha256 header S3 requires).

import { createHash, createHmac, Hash, Hmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import type { S3Credentials } from './s3-credentials';

/** Signs one request: the headers to send with it (the given ones plus the signature's). */
export type Sign = (method: string, url: URL, headers: Record<string, string>) => Promise<Record<string, string>>;

type SourceData = string | ArrayBuffer | ArrayBufferView;

function bytesOf(data: SourceData): Buffer | string {
  if (typeof data === 'string') return data;
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
}

/** SHA-256 (and HMAC-SHA256 with a secret) from node:crypto, in the signer's Checksum shape. */
class NodeSha256 {
  private h: Hash | Hmac;

  constructor(private readonly secret?: SourceData) {
    this.h = this.fresh();
  }

  private fresh(): Hash | Hmac {
    return this.secret === undefined ? createHash('sha256') : createHmac('sha256', bytesOf(this.secret));
  }

  update(data: Uint8Array): void {
    this.h.update(data);
  }

  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.h.digest());
  }

  reset(): void {
    this.h = this.fresh();
  }
}

export interface S3SignerOptions {
  region: string;
  /** Asked once per signature: a provider that keeps its answer. */
  credentials: () => Promise<S3Credentials>;
  /** The signing time (tests of the published examples); now when absent. */
  now?: () => Date;
}

export function s3Signer(opts: S3SignerOptions): Sign {
  const signer = new SignatureV4({
    service: 's3',
    region: opts.region,
    credentials: opts.credentials,
    sha256: NodeSha256,
    uriEscapePath: false,
    applyChecksum: true,
  });
  return async (method, url, headers) => {
    const signed = await signer.sign(
      {
        method,
        protocol: url.protocol,
        hostname: url.hostname,
        port: url.port === '' ? undefined : Number(url.port),
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: { ...headers, host: url.host },
      },
      { signingDate: opts.now?.() ?? new Date() },
    );
    return signed.headers as Record<string, string>;
  };
}
