// A gate in front of an S3 server that checks AWS Signature Version 4 as S3 does, with an
// implementation of its own (node:crypto, written from the SigV4 description; checked against
// AWS's published S3 example in s3-signing.test.ts): a request whose signature does not verify with
// the secret of its access key is refused with 403 and S3's SignatureDoesNotMatch body, any other
// request passes on unchanged. s3rver checks access keys but not V4 signatures; behind this gate
// a wrong secret is refused the way AWS refuses it.

import { createHash, createHmac } from 'node:crypto';
import * as http from 'node:http';
import * as net from 'node:net';

const hmac = (key: Buffer | string, data: string): Buffer => createHmac('sha256', key).update(data).digest();
const sha256 = (data: string): string => createHash('sha256').update(data).digest('hex');

export interface SignedRequest {
  method: string;
  /** The path and query as sent. */
  url: string;
  headers: http.IncomingHttpHeaders;
}

/** The signature a request should carry, from its Authorization header's scope and signed headers. */
export function expectedSignature(req: SignedRequest, secret: string): { given: string; expected: string } | string {
  const auth =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/.exec(
      String(req.headers.authorization ?? ''),
    );
  if (auth === null) return 'no AWS4-HMAC-SHA256 Authorization';
  const [, , date, region, service, signedHeaders, given] = auth as unknown as string[];
  const amzDate = String(req.headers['x-amz-date'] ?? '');
  const [pathPart, query = ''] = req.url.split('?', 2) as [string, string?];
  const canonicalQuery = query
    .split('&')
    .filter((p) => p !== '')
    .map((p) => (p.includes('=') ? p : `${p}=`))
    .sort()
    .join('&');
  const names = signedHeaders!.split(';');
  const canonicalHeaders = names
    .map(
      (n) =>
        `${n}:${String(req.headers[n] ?? '')
          .trim()
          .replace(/\s+/g, ' ')}\n`,
    )
    .join('');
  const canonical = [
    req.method,
    pathPart,
    canonicalQuery,
    canonicalHeaders,
    signedHeaders,
    String(req.headers['x-amz-content-sha256'] ?? sha256('')),
  ].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonical)].join('\n');
  let key = hmac(`AWS4${secret}`, date!);
  for (const part of [region!, service!, 'aws4_request']) key = hmac(key, part);
  return { given: given!, expected: createHmac('sha256', key).update(toSign).digest('hex') };
}

export interface SignatureGate {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  refused: number;
  close(): Promise<void>;
}

/** A gate on a free loopback port in front of `target` (`http://host:port`); `secrets` by access key. */
export async function startSignatureGate(target: string, secrets: Record<string, string>): Promise<SignatureGate> {
  const to = new URL(target);
  const agent = new http.Agent({ keepAlive: true });
  const state = { refused: 0 };
  const server = http.createServer((req, res) => {
    const key = /Credential=([^/]+)\//.exec(String(req.headers.authorization ?? ''))?.[1];
    const secret = key === undefined ? undefined : secrets[key];
    const check =
      secret === undefined
        ? undefined
        : expectedSignature({ method: req.method!, url: req.url!, headers: req.headers }, secret);
    if (check !== undefined && (typeof check === 'string' || check.given !== check.expected)) {
      state.refused++;
      const body =
        '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SignatureDoesNotMatch</Code>' +
        '<Message>The request signature we calculated does not match the signature you provided.</Message></Error>';
      res.writeHead(403, { 'Content-Type': 'application/xml', 'Content-Length': String(Buffer.byteLength(body)) });
      return res.end(req.method === 'HEAD' ? undefined : body);
    }
    const up = http.request(
      { host: to.hostname, port: to.port, path: req.url, method: req.method, headers: req.headers, agent },
      (upRes) => {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        upRes.pipe(res);
      },
    );
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    get refused() {
      return state.refused;
    },
    close: () =>
      new Promise<void>((resolve) => {
        agent.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  } as SignatureGate;
}
