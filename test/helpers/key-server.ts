// A key server for the tests, on loopback: it speaks the seed's signed-request API the way the
// origin's client must (docs/guide/drm.md#asking-a-key-server-for-the-key) and is written apart from
// origin/drm/key-request.ts, so the two check each other. It verifies every request: the body's
// `request`, `signature` and `signer`; the signature decrypted with the signer's AES-256-CBC key
// and IV it knows (PKCS#7 removed) must be the SHA-1 of the decoded `request` bytes, compared in
// constant time; a bad signature or an unknown signer is answered with status SIGNATURE_FAILED, a
// request it cannot read with MALFORMED_REQUEST (both with HTTP 200, as the API does). A good
// request gets one track per requested type: Base64 key_id and key, and the pssh data of the
// DRM with system id edef8ba9… (its protobuf: key_id, provider, content_id) with the pssh box.
// `fault` makes it fail in one chosen way instead. HTTP, or HTTPS with a certificate the test makes.

import { createDecipheriv, createHash, timingSafeEqual } from 'node:crypto';
import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';

export const SIGNER = 'origin_test';
export const SIGNING_KEY = '1f2e3d4c5b6a79880f1e2d3c4b5a69788796a5b4c3d2e1f0a1b2c3d4e5f60718';
export const SIGNING_IV = '0a1b2c3d4e5f60718293a4b5c6d7e8f9';
export const DRM_A_ID = 'edef8ba979d64acea3c827dcd51d21ed';

/** The key pair of each track type, as hex (what the .ism must get). */
export const TRACK_KEYS: Record<string, { kid: string; key: string }> = {
  SD: { kid: '5c4d3e2f1a0b99887766554433221100', key: '6f5e4d3c2b1a09f8e7d6c5b4a3928170' },
  HD: { kid: '0f1e2d3c4b5a69788796a5b4c3d2e1f0', key: '11223344556677889900aabbccddeeff' },
  AUDIO: { kid: 'aa00bb11cc22dd33ee44ff5566778899', key: '99887766554433221100ffeeddccbbaa' },
};

export type KeyServerFault =
  | 'http-500'
  | 'status-not-ok'
  | 'not-json'
  | 'response-not-base64'
  | 'no-tracks'
  | 'key-not-base64'
  | 'short-key'
  | 'long-kid'
  | 'two-pairs'
  | 'no-pssh'
  | 'boxes-mismatch'
  | 'no-drm'
  | 'hang'
  | 'oversize'
  | 'redirect';

export interface ReceivedRequest {
  signer: string;
  /** The decoded `request` JSON. */
  request: { content_id: string; tracks: Array<{ type: string }>; drm_types: string[]; policy: string };
  signatureValid: boolean;
}

export interface TestKeyServer {
  url: string;
  /** Every request, in order (tests read what the client sent). */
  received: ReceivedRequest[];
  /** How the next answers fail (undefined: they succeed). */
  fault: KeyServerFault | undefined;
  close(): Promise<void>;
}

/** The pssh data of a track: protobuf field 2 key_id, 3 provider, 4 content_id. */
export function psshDataOf(kid: string, contentId: Buffer): Buffer {
  const field = (tag: number, bytes: Buffer): Buffer => Buffer.concat([Buffer.from([tag, bytes.length]), bytes]);
  return Buffer.concat([
    field(0x12, Buffer.from(kid, 'hex')),
    field(0x1a, Buffer.from('origin-test')),
    field(0x22, contentId),
  ]);
}

/** A version 0 pssh box of the drm_a system holding `data`. */
function psshBox(data: Buffer): Buffer {
  const head = Buffer.alloc(32);
  head.writeUInt32BE(32 + data.length, 0);
  head.write('pssh', 4, 'latin1');
  Buffer.from(DRM_A_ID, 'hex').copy(head, 12);
  head.writeUInt32BE(data.length, 28);
  return Buffer.concat([head, data]);
}

function verified(signature: string, requestBytes: Buffer): boolean {
  try {
    const d = createDecipheriv('aes-256-cbc', Buffer.from(SIGNING_KEY, 'hex'), Buffer.from(SIGNING_IV, 'hex'));
    const digest = Buffer.concat([d.update(Buffer.from(signature, 'base64')), d.final()]);
    const expected = createHash('sha1').update(requestBytes).digest();
    return digest.length === expected.length && timingSafeEqual(digest, expected);
  } catch {
    return false; // bad padding: not our key
  }
}

const b64 = (hex: string): string => Buffer.from(hex, 'hex').toString('base64');

function track(type: string, contentId: Buffer, fault: KeyServerFault | undefined): Record<string, unknown> {
  const { kid, key } = TRACK_KEYS[type] ?? TRACK_KEYS.SD!;
  const data = psshDataOf(kid, contentId);
  const boxes = psshBox(fault === 'boxes-mismatch' ? psshDataOf(kid, Buffer.from('other')) : data);
  return {
    type,
    key_id: fault === 'long-kid' ? b64(`${kid}00112233`) : b64(kid),
    key: fault === 'key-not-base64' ? 'not Base64!' : fault === 'short-key' ? b64(key.slice(0, 16)) : b64(key),
    pssh:
      fault === 'no-pssh'
        ? [{ drm_type: 'OTHER', data: 'AAAA' }]
        : [{ drm_type: 'WIDEVINE', data: data.toString('base64'), boxes: boxes.toString('base64') }],
    entitled_key: [],
    content_groups: [],
  };
}

/** The inner answer for a verified request. */
function answerOf(req: ReceivedRequest['request'], fault: KeyServerFault | undefined): Record<string, unknown> {
  if (fault === 'status-not-ok') return { status: 'POLICY_UNKNOWN' };
  const contentId = Buffer.from(req.content_id, 'base64');
  const types = fault === 'two-pairs' ? ['SD', 'HD'] : req.tracks.map((t) => t.type);
  return {
    status: 'OK',
    drm: fault === 'no-drm' ? [] : [{ type: 'WIDEVINE', system_id: DRM_A_ID }],
    ...(fault === 'no-tracks' ? {} : { tracks: types.map((t) => track(t, contentId, fault)) }),
    already_used: false,
  };
}

function reply(res: http.ServerResponse, inner: Record<string, unknown>, fault: KeyServerFault | undefined): void {
  const response =
    fault === 'response-not-base64' ? '{"status":"OK"}' : Buffer.from(JSON.stringify(inner)).toString('base64');
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ response }));
}

/** Answers the faults that do not depend on the request; true when it did. */
function failEarly(res: http.ServerResponse, fault: KeyServerFault | undefined): boolean {
  switch (fault) {
    case 'http-500':
      res.writeHead(500, { 'content-type': 'text/plain' }).end('internal error\n');
      return true;
    case 'not-json':
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>key server</body></html>');
      return true;
    case 'redirect':
      res.writeHead(302, { location: '/elsewhere' }).end();
      return true;
    case 'oversize':
      res.writeHead(200, { 'content-type': 'application/json' }).end(Buffer.alloc(2 << 20, 0x20));
      return true;
    case 'hang':
      return true; // never answers
    default:
      return false;
  }
}

function handle(server: TestKeyServer, body: Buffer, res: http.ServerResponse): void {
  if (failEarly(res, server.fault)) return;
  let outer: { request?: unknown; signature?: unknown; signer?: unknown };
  let request: ReceivedRequest['request'];
  try {
    outer = JSON.parse(body.toString('utf8'));
    request = JSON.parse(Buffer.from(String(outer.request), 'base64').toString('utf8'));
  } catch {
    return reply(res, { status: 'MALFORMED_REQUEST' }, undefined);
  }
  const requestBytes = Buffer.from(String(outer.request), 'base64');
  const signatureValid =
    outer.signer === SIGNER && typeof outer.signature === 'string' && verified(outer.signature, requestBytes);
  server.received.push({ signer: String(outer.signer), request, signatureValid });
  if (!signatureValid) return reply(res, { status: 'SIGNATURE_FAILED' }, undefined);
  if (!Array.isArray(request.tracks) || !request.drm_types?.includes('WIDEVINE'))
    return reply(res, { status: 'MALFORMED_REQUEST' }, undefined);
  reply(res, answerOf(request, server.fault), server.fault);
}

/** `tls`: serve HTTPS with this key and certificate (PEM) instead of HTTP. */
export async function startKeyServer(tls?: { key: string; cert: string }): Promise<TestKeyServer> {
  const state: TestKeyServer = {
    url: '',
    received: [],
    fault: undefined,
    close: async () => {},
  };
  const listener = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    if (req.method !== 'POST') return void res.writeHead(405).end();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(state, Buffer.concat(chunks), res));
  };
  const server = tls ? https.createServer(tls, listener) : http.createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `${tls ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}/cenc/getcontentkey`;
  state.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return state;
}
