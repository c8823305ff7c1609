// What each DRM system carries: the `pssh` box (ISO/IEC 23001-7 §8.1) and the system-specific
// data inside it when we write it ourselves:
// - the W3C Common PSSH (version 1, the KIDs, no data): what a ClearKey CDM reads;
// - `drm_a`'s data: its protobuf (field 2 key_id, field 9 protection_scheme as a FourCC integer),
//   used when the license server gave none (`--drm_a.drm_specific_data` overrides it);
// - the PlayReady Object (PlayReady Header Specification §2: length, record count, one WRM
//   header record of UTF-16LE XML), WRMHEADER 4.0.0.0 for cenc and 4.3.0.0 for cbcs.
// Pure: values in, bytes out. Keys never leave here except as the PlayReady checksum (§3.4:
// the first 8 bytes of the KID encrypted with the key, which is what the format asks for).

import { createCipheriv } from 'node:crypto';
import type { CencScheme } from '../model/protection';
import { uuidBytes } from './systems';

/** §8.1.1 ProtectionSystemSpecificHeaderBox: version 1 when `kids` is given, else 0. */
export function psshBox(systemId: string, data: Uint8Array, kids?: readonly Uint8Array[]): Uint8Array {
  const v1 = kids !== undefined;
  const size = 8 + 4 + 16 + (v1 ? 4 + 16 * kids.length : 0) + 4 + data.byteLength;
  const out = Buffer.alloc(size);
  let at = out.writeUInt32BE(size, 0);
  at += out.write('pssh', at, 'latin1');
  at = out.writeUInt32BE(v1 ? 0x01000000 : 0, at);
  out.set(uuidBytes(systemId), at);
  at += 16;
  if (v1) {
    at = out.writeUInt32BE(kids.length, at);
    for (const kid of kids) {
      out.set(kid, at);
      at += 16;
    }
  }
  at = out.writeUInt32BE(data.byteLength, at);
  out.set(data, at);
  return out;
}

/**
 * The system-specific data of a whole `pssh` box (§8.1.1: after the KIDs of a version 1 box), or
 * undefined when its sizes do not add up to the box.
 */
export function psshData(box: Uint8Array): Uint8Array | undefined {
  const b = Buffer.from(box.buffer, box.byteOffset, box.byteLength);
  if (b.byteLength < 32 || b.readUInt32BE(0) !== b.byteLength) return undefined;
  const at = b[8]! >= 1 ? 32 + 16 * b.readUInt32BE(28) : 28;
  if (at + 4 > b.byteLength) return undefined;
  const size = b.readUInt32BE(at);
  return at + 4 + size === b.byteLength ? box.subarray(at + 4) : undefined;
}

/** A FourCC as the big-endian integer protobuf fields and `schm` carry ('cenc' = 0x63656e63). */
export function fourccInt(fourcc: string): number {
  return Buffer.from(fourcc, 'latin1').readUInt32BE(0);
}

/**
 * `drm_a`'s pssh data: key_id (field 2, bytes, repeated: one per key of a multi-key presentation,
 * as shaka-packager lists them) and protection_scheme (field 9, varint).
 */
export function drmAPsshData(kids: readonly Uint8Array[], scheme: CencScheme): Uint8Array {
  const varint: number[] = [];
  for (let v = fourccInt(scheme); ; v = Math.floor(v / 128)) {
    if (v < 128) {
      varint.push(v);
      break;
    }
    varint.push((v % 128) | 0x80);
  }
  return Uint8Array.from([...kids.flatMap((kid) => [0x12, kid.byteLength, ...kid]), 0x48, ...varint]);
}

/** A KID as the little-endian GUID PlayReady writes (the first three fields byte-swapped). */
export function guidLittleEndian(kid: Uint8Array): Uint8Array {
  const b = Uint8Array.from(kid);
  b.set([kid[3]!, kid[2]!, kid[1]!, kid[0]!, kid[5]!, kid[4]!, kid[7]!, kid[6]!], 0);
  return b;
}

/** The PlayReady Object for one key (PlayReady Header Specification v4.0 / v4.3). */
export function playReadyObject(kid: Uint8Array, key: Uint8Array, scheme: CencScheme, licenseUrl?: string): Uint8Array {
  const guid = guidLittleEndian(kid);
  const kidB64 = Buffer.from(guid).toString('base64');
  const la = licenseUrl === undefined ? '' : `<LA_URL>${escapeXml(licenseUrl)}</LA_URL>`;
  const ns = 'http://schemas.microsoft.com/DRM/2007/03/PlayReadyHeader';
  let xml: string;
  if (scheme === 'cenc') {
    // §3.4 CHECKSUM for AESCTR: the first 8 bytes of the GUID encrypted with the content key (ECB).
    const ecb = createCipheriv('aes-128-ecb', key, null).setAutoPadding(false);
    const checksum = Buffer.from(ecb.update(guid).subarray(0, 8)).toString('base64');
    ecb.final();
    xml =
      `<WRMHEADER xmlns="${ns}" version="4.0.0.0"><DATA><PROTECTINFO><KEYLEN>16</KEYLEN><ALGID>AESCTR</ALGID>` +
      `</PROTECTINFO><KID>${kidB64}</KID><CHECKSUM>${checksum}</CHECKSUM>${la}</DATA></WRMHEADER>`;
  } else {
    xml =
      `<WRMHEADER xmlns="${ns}" version="4.3.0.0"><DATA><PROTECTINFO><KIDS><KID ALGID="AESCBC" VALUE="${kidB64}">` +
      `</KID></KIDS></PROTECTINFO>${la}</DATA></WRMHEADER>`;
  }
  const record = Buffer.from(xml, 'utf16le');
  const out = Buffer.alloc(4 + 2 + 2 + 2 + record.byteLength);
  out.writeUInt32LE(out.byteLength, 0);
  out.writeUInt16LE(1, 4); // record count
  out.writeUInt16LE(1, 6); // record type 1: the rights management header
  out.writeUInt16LE(record.byteLength, 8);
  out.set(record, 10);
  return out;
}

function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
