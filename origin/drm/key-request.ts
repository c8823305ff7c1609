// Key acquisition, the pure part: the signed request for a `drm_a` key pair and the checked reading
// of the key server's answer. The exchange (docs/guide/drm.md#asking-a-key-server-for-the-key):
//
//   request JSON  {"content_id": Base64(id), "tracks": [{"type": T}], "drm_types": [...], "policy": P}
//   POST body     {"request": Base64(json bytes), "signature": S, "signer": name}
//   S             Base64(AES-256-CBC(key = signer key, iv = signer IV, PKCS#7(SHA-1(json bytes))))
//   answer        {"response": Base64(JSON {"status": "OK", "drm": [{type, system_id}],
//                   "tracks": [{type, key_id: Base64, key: Base64, pssh: [{drm_type, data, boxes}]}]})}
//
// The signature is over the very bytes that are Base64-encoded into `request` (a server re-encoding
// the JSON would compute another hash). KID and CEK come back in Base64 and are written as hex,
// the PSSH `data` as it is; only one key pair is used (several keys are CPIX's job), so an answer
// with several different pairs is refused. Every field is checked before anything is used, and a
// refusal names the field, never its value: the answer holds the content key.
// No I/O here: origin/drm/key-client.ts sends the request.

import { createCipheriv, createHash } from 'node:crypto';
import { KEY_TRACK_TYPES } from '../options/key-server-options';
import { keyServerError } from './key-server-error';
import { DRM_A } from './systems';

export type KeyTrackType = (typeof KEY_TRACK_TYPES)[number];

export interface KeyRequest {
  /** The content's identifier as the key server knows it (text; sent as Base64 of its UTF-8). */
  contentId: string;
  /** The one track type whose key pair is asked for. */
  trackType: KeyTrackType;
  policy: string;
  signer: string;
  /** 32 bytes: the AES-256 key of the signer. */
  signingKey: Uint8Array;
  /** 16 bytes: the AES-CBC IV of the signer. */
  signingIv: Uint8Array;
}

/** What the key server gave, ready for the `drm_a` options. */
export interface AcquiredKey {
  trackType: KeyTrackType;
  /** 32 hexadecimal digits, lower case. */
  kid: string;
  /** The content key: 32 hexadecimal digits, lower case. A secret. */
  key: string;
  /** The PSSH data of `drm_a`, Base64 exactly as the key server gave it. */
  psshData: string;
}

/** `drm_a`'s name at the key server: its `drm_types` entry (the name the public API uses). */
export const DRM_A_NAME = 'WIDEVINE';

/** The request JSON, the bytes that are both signed and sent. */
export function keyRequestJson(r: KeyRequest): Buffer {
  const request = {
    content_id: Buffer.from(r.contentId, 'utf8').toString('base64'),
    tracks: [{ type: r.trackType }],
    drm_types: [DRM_A_NAME],
    policy: r.policy,
  };
  return Buffer.from(JSON.stringify(request), 'utf8');
}

/** Base64(AES-256-CBC(key, iv, PKCS#7(SHA-1(json)))): 20 bytes padded to 32, so 44 characters. */
export function keyRequestSignature(json: Uint8Array, key: Uint8Array, iv: Uint8Array): string {
  if (key.byteLength !== 32 || iv.byteLength !== 16) throw new Error('the signing key is 32 bytes, the IV 16');
  const digest = createHash('sha1').update(json).digest();
  const cipher = createCipheriv('aes-256-cbc', key, iv); // node pads with PKCS#7 by default
  return Buffer.concat([cipher.update(digest), cipher.final()]).toString('base64');
}

/** The POST body: `{request, signature, signer}`. */
export function keyRequestBody(r: KeyRequest): string {
  const json = keyRequestJson(r);
  return JSON.stringify({
    request: json.toString('base64'),
    signature: keyRequestSignature(json, r.signingKey, r.signingIv),
    signer: r.signer,
  });
}

/** The options the key becomes, in the order they are written. */
export function acquiredKeyOptions(k: AcquiredKey): Array<{ cli: string; value: string }> {
  return [
    { cli: 'drm_a.key', value: `${k.kid}:${k.key}` },
    { cli: 'drm_a.drm_specific_data', value: k.psshData },
  ];
}

/** The status a key server answers for a request whose signature does not verify. */
const SIGNATURE_FAILED = 'SIGNATURE_FAILED';

/** Reads a 200 answer for a request of `wanted`; a KeyServerError names what is wrong. */
export function parseKeyAnswer(body: Uint8Array, wanted: KeyTrackType): AcquiredKey {
  const outer = object(parseJson(body, 'the answer'), 'the answer');
  const inner = object(parseJson(base64(outer.response, 'response'), 'the decoded response'), 'response');
  const status = text(inner.status, 'status');
  if (status === SIGNATURE_FAILED)
    throw keyServerError(
      'signature',
      `rejected the request's signature (status ${SIGNATURE_FAILED}): check --signer, --aes_signing_key and --aes_signing_iv`,
    );
  if (status !== 'OK') throw keyServerError('status', `answered status "${printable(status)}" instead of "OK"`);
  const drmType = drmAType(list(inner.drm, 'drm'));
  const tracks = list(inner.tracks, 'tracks');
  if (tracks.length === 0) throw malformed('tracks is empty: no key pair');
  const keys = tracks.map((t, i) => trackKey(t, `tracks[${i}]`, drmType));
  const pairs = new Set(keys.map((k) => `${k.kid}:${k.key}`));
  if (pairs.size > 1)
    throw keyServerError(
      'several-keys',
      `answered ${pairs.size} different key pairs (tracks ${keys.map((k) => k.trackType).join(', ')}); one key pair encrypts every track here: several keys need CPIX`,
    );
  const chosen = keys.find((k) => k.trackType === wanted);
  if (chosen === undefined)
    throw malformed(
      `no track of type ${wanted}, which was asked for (tracks: ${keys.map((k) => k.trackType).join(', ')})`,
    );
  return chosen;
}

/** The `drm[].type` of the entry whose system id is drm_a's: the name its `pssh` entries carry. */
function drmAType(entries: unknown[]): string {
  const wanted = DRM_A.replace(/-/g, '');
  let found: string | undefined;
  entries.forEach((e, i) => {
    const entry = object(e, `drm[${i}]`);
    const type = text(entry.type, `drm[${i}].type`);
    const id = text(entry.system_id, `drm[${i}].system_id`);
    if (!/^[0-9a-fA-F]{32}$/.test(id)) throw malformed(`drm[${i}].system_id is not 32 hexadecimal digits`);
    if (id.toLowerCase() === wanted) found ??= type;
  });
  if (found === undefined) throw malformed(`drm lists no system ${wanted} (drm_a)`);
  return found;
}

function trackKey(value: unknown, at: string, drmType: string): AcquiredKey {
  const track = object(value, at);
  const type = text(track.type, `${at}.type`);
  if (!(KEY_TRACK_TYPES as readonly string[]).includes(type))
    throw malformed(`${at}.type "${printable(type)}" is none of ${KEY_TRACK_TYPES.join(', ')}`);
  const kid = sized(base64(track.key_id, `${at}.key_id`), `${at}.key_id`);
  const key = sized(base64(track.key, `${at}.key`), `${at}.key`);
  for (const name of ['entitled_key', 'content_groups']) {
    if (track[name] !== undefined) list(track[name], `${at}.${name}`);
  }
  if (Array.isArray(track.entitled_key) && track.entitled_key.length > 0)
    throw keyServerError('several-keys', `${at}.entitled_key is not empty: entitlement keys are not used here`);
  return {
    trackType: type as KeyTrackType,
    kid: kid.toString('hex'),
    key: key.toString('hex'),
    psshData: psshData(list(track.pssh, `${at}.pssh`), `${at}.pssh`, drmType),
  };
}

/** The `data` of the pssh entry of `drmType`, checked against its `boxes` when those are given. */
function psshData(entries: unknown[], at: string, drmType: string): string {
  const types = entries.map((e, i) => text(object(e, `${at}[${i}]`).drm_type, `${at}[${i}].drm_type`));
  const index = types.indexOf(drmType);
  if (index < 0) throw malformed(`${at} has no entry of drm_type "${printable(drmType)}"`);
  const entry = object(entries[index], `${at}[${index}]`);
  const data = text(entry.data, `${at}[${index}].data`);
  const bytes = base64(data, `${at}[${index}].data`);
  // The bounds of --drm_a.drm_specific_data (origin/options/drm-options.ts): what the .ism can hold.
  if (data.length < 4 || data.length > 8192) throw malformed(`${at}[${index}].data is not 4 to 8192 characters`);
  if (entry.boxes !== undefined) {
    const box = base64(entry.boxes, `${at}[${index}].boxes`);
    if (!Buffer.from(psshBoxData(box, `${at}[${index}].boxes`)).equals(bytes))
      throw malformed(`${at}[${index}].boxes holds other data than ${at}[${index}].data`);
  }
  return data;
}

/** The data of one `pssh` box of drm_a (ISO/IEC 23001-7 §8.1.1), every length checked. */
function psshBoxData(box: Buffer, at: string): Uint8Array {
  const bad = (): never => {
    throw malformed(`${at} is not one pssh box of drm_a`);
  };
  if (box.length < 32 || box.readUInt32BE(0) !== box.length || box.toString('latin1', 4, 8) !== 'pssh') bad();
  const version = box[8]!;
  if (version > 1 || box.subarray(12, 28).toString('hex') !== DRM_A.replace(/-/g, '')) bad();
  let pos = 28;
  if (version === 1) pos += 4 + 16 * box.readUInt32BE(28);
  if (pos + 4 > box.length) bad();
  const size = box.readUInt32BE(pos);
  if (pos + 4 + size !== box.length) bad();
  return box.subarray(pos + 4);
}

// Field readers: each names the field it refuses, never the value it found.

function malformed(why: string): Error {
  return keyServerError('malformed', `malformed answer: ${why}`);
}

function parseJson(bytes: Uint8Array, what: string): unknown {
  try {
    return JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    // Not the parser's message: it quotes the input, which may hold a key.
    throw malformed(`${what} is not JSON`);
  }
}

function object(v: unknown, at: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw malformed(`${at} is not a JSON object`);
  return v as Record<string, unknown>;
}

function list(v: unknown, at: string): unknown[] {
  if (v === undefined) throw malformed(`${at} is missing`);
  if (!Array.isArray(v)) throw malformed(`${at} is not an array`);
  return v;
}

function text(v: unknown, at: string): string {
  if (v === undefined) throw malformed(`${at} is missing`);
  if (typeof v !== 'string') throw malformed(`${at} is not a string`);
  return v;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function base64(v: unknown, at: string): Buffer {
  const s = text(v, at);
  if (s === '' || !BASE64.test(s)) throw malformed(`${at} is not Base64`);
  return Buffer.from(s, 'base64');
}

/** A KID or key: 16 bytes. */
function sized(bytes: Buffer, at: string): Buffer {
  if (bytes.length !== 16) throw malformed(`${at} is ${bytes.length} bytes, not 16`);
  return bytes;
}

/** A value the server chose, safe to print: at most 64 printable ASCII characters. */
function printable(s: string): string {
  const clean = s.replace(/[^\x20-\x7e]/g, '?');
  return clean.length > 64 ? `${clean.slice(0, 64)}…` : clean;
}
