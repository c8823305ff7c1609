// npm s3rver on loopback: the S3-compatible storage of the `s3://` tests. It speaks the S3 REST
// API (buckets, HEAD/GET with ranges, ETags, XML errors) and refuses an access key it does not
// know (InvalidAccessKeyId; its one account is S3RVER/S3RVER), but it does not check a V4
// signature against the secret, nor honour If-Match on GET (the origin checks the ETag of each
// answer, io/remote/http-storage.ts). Objects are written through its API with a signed PUT.

import { promises as fs } from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
// s3rver ships no type declarations.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const S3rver = require('s3rver') as new (opts: Record<string, unknown>) => {
  run(): Promise<{ address: string; port: number }>;
  close(): Promise<void>;
};
import { s3Signer } from '../../origin/io/remote/s3-signer';
import { tempDir } from './fixtures';

export const S3RVER_KEYS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export interface S3Store {
  /** `http://s3.localhost:<port>`: path style as is, virtual-host style as `<bucket>.s3.localhost`. */
  endpoint: string;
  port: number;
  /** Writes an object (signed PUT, path style). */
  put(bucket: string, key: string, body: Buffer): Promise<void>;
  close(): Promise<void>;
}

/** Starts s3rver with `buckets` on a free loopback port (or `port`). */
export async function startS3rver(buckets: readonly string[], port = 0): Promise<S3Store> {
  const server = new S3rver({
    address: '127.0.0.1',
    port,
    silent: true,
    directory: tempDir('origin-s3rver-'),
    // Host names `<bucket>.s3.localhost` are virtual-host requests, `s3.localhost` path style.
    serviceEndpoint: 'localhost',
    configureBuckets: buckets.map((name) => ({ name })),
  });
  const address = await server.run();
  const endpoint = `http://s3.localhost:${address.port}`;
  const sign = s3Signer({ region: 'us-east-1', credentials: async () => S3RVER_KEYS });
  return {
    endpoint,
    port: address.port,
    put: async (bucket, key, body) => {
      const url = new URL(`${endpoint}/${bucket}/${key.split('/').map(encodeURIComponent).join('/')}`);
      const headers = await sign('PUT', url, {
        'content-length': String(body.byteLength),
        'x-amz-content-sha256': 'UNSIGNED-PAYLOAD',
      });
      // s3.localhost is loopback (RFC 6761 §6.3): connect there, send the signed Host.
      const status = await new Promise<number>((resolve, reject) => {
        const req = http.request({ host: '127.0.0.1', port: address.port, path: url.pathname, method: 'PUT', headers });
        req.on('response', (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
        req.end(body);
      });
      if (status !== 200) throw new Error(`PUT ${url.href}: ${status}`);
    },
    close: () => server.close(),
  };
}

/** Every file under `dir` written to `bucket` under `prefix`. */
export async function putTree(store: S3Store, bucket: string, prefix: string, dir: string): Promise<void> {
  for (const entry of await fs.readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    const key = prefix + path.relative(dir, full).split(path.sep).join('/');
    await store.put(bucket, key, await fs.readFile(full));
  }
}
