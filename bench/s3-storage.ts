// The remote suite's S3 storage: npm s3rver (the S3 server the tests use, test/helpers/s3rver.ts)
// in a process of its own — the bench runs wrk synchronously, which would stall a server in its
// own event loop — with the files of a directory written to a bucket through signed PUTs
// (origin/io/remote/s3-signer.ts; s3rver knows the access key S3RVER, and does not check
// signatures). The origin reads it as `proxy_pass: s3://<bucket>/`, path style, with the keys
// from its environment (s3Env).

import { ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';
import { repoRoot } from './media';

export interface S3Storage {
  /** The `s3_endpoint` of a location: `http://s3.localhost:<port>` (loopback, RFC 6761 §6.3). */
  endpoint: string;
  port: number;
  pid: number;
  stop(): Promise<void>;
}

/** The environment an origin reads s3rver's keys from. */
export const s3Env = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER', AWS_REGION: 'us-east-1' };

/** Starts s3rver with `bucket` holding every file of `dir` (the directory's paths as keys). */
export function startS3Storage(dir: string, bucket: string, dataDir: string): Promise<S3Storage> {
  const signer = path.join(repoRoot(), 'dist', 'origin', 'io', 'remote', 's3-signer.js');
  const child = spawn(process.execPath, ['-e', SERVER, signer, dir, bucket, dataDir], {
    cwd: repoRoot(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  return new Promise((resolve, reject) => {
    let out = '';
    child.once('exit', (code) => reject(new Error(`s3rver exited (${code}): ${err}`)));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /^ready (\d+)$/m.exec(out);
      if (m === null) return;
      child.removeAllListeners('exit');
      const port = Number(m[1]);
      resolve({ endpoint: `http://s3.localhost:${port}`, port, pid: child.pid!, stop: () => stopChild(child) });
    });
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** argv: signer module, directory, bucket, s3rver's data directory. Prints `ready <port>`. */
const SERVER = `
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const S3rver = require('s3rver');
const { s3Signer } = require(process.argv[1]);
const [dir, bucket, data] = process.argv.slice(2);
(async () => {
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: data,
    serviceEndpoint: 'localhost', configureBuckets: [{ name: bucket }] });
  const { port } = await server.run();
  const sign = s3Signer({ region: 'us-east-1', credentials: async () => ({ accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }) });
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile() && !e.isSymbolicLink()) continue;
    const full = path.join(e.parentPath, e.name);
    const key = path.relative(dir, full).split(path.sep).map(encodeURIComponent).join('/');
    const url = new URL('http://s3.localhost:' + port + '/' + bucket + '/' + key);
    const size = fs.statSync(full).size;
    const headers = await sign('PUT', url, { 'content-length': String(size), 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' });
    const status = await new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, path: url.pathname, method: 'PUT', headers });
      req.on('response', (res) => { res.resume(); res.on('end', () => resolve(res.statusCode)); });
      req.on('error', reject);
      fs.createReadStream(full).pipe(req);
    });
    if (status !== 200) throw new Error('PUT ' + url.href + ': ' + status);
  }
  console.log('ready ' + port);
  process.on('SIGTERM', () => server.close().then(() => process.exit(0)));
})().catch((e) => { console.error(e); process.exit(1); });
`;
