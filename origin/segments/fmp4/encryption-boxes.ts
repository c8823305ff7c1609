// The boxes common encryption adds to fMP4 output (ISO/IEC 23001-7, byte layouts checked against
// shaka-packager's output, test/origin/drm/shaka-packager.test.ts):
// - init segment: the sample entry renamed `encv`/`enca` with a `sinf` child (§8.12 ProtectionSchemeInfoBox:
//   `frma` original format, `schm` scheme, `schi` with `tenc` §8.2), and the `pssh` boxes (§8.1);
//   with a clear lead the original entry follows as entry 2 for the clear fragments (§9.1);
// - each encrypted traf: `saiz` (ISO/IEC 14496-12 §8.7.8), `saio` (§8.7.9, the offset of the
//   first `senc` entry from the moof, as default-base-is-moof makes the base) and `senc` (§7.2).
// Pure: values in, boxes out.

import { originError } from '../../errors';
import type { CencScheme } from '../../model/protection';
import type { Subsample } from '../../drm/subsamples';
import type { Pattern } from '../../drm/sample-cipher';
import { box, field, fullBox, Writable } from '../box-writer';

/** What an init segment's sample entry says about the encryption of its track. */
export interface TrackEncryption {
  scheme: CencScheme;
  kid: Uint8Array;
  /** cbcs: the constant IV; cenc: undefined (16-byte per-sample IVs, CENC_IV_SIZE). */
  constantIv: Uint8Array | undefined;
  /** cbcs: 1:9 for video, 0:0 for audio. */
  pattern: Pattern;
  /** Add the clear sample entry as entry 2 (clear-lead fragments use it). */
  clearEntry: boolean;
  /** `pssh` boxes, whole, in order. */
  pssh: readonly Uint8Array[];
}

/**
 * cenc's Per_Sample_IV_Size in DASH and HLS fMP4 (§9.2 allows 8 or 16): 16, so that a fragment's samples run on one keystream (drm/ivs.ts
 * continuousIvs). Smooth keeps 8: its players build the `tenc` themselves and assume 8.
 */
export const CENC_IV_SIZE = 16;

/**
 * The `stsd` (header included) with its first entry encrypted: renamed and given a `sinf`, the
 * original entry after it when `clearEntry`. Other entries of the source are refused.
 */
export function encryptedStsd(stsd: Uint8Array, handler: 'vide' | 'soun', e: TrackEncryption): Writable {
  const view = Buffer.from(stsd.buffer, stsd.byteOffset, stsd.byteLength);
  const count = view.readUInt32BE(12);
  const entrySize = view.readUInt32BE(16);
  if (count !== 1 || 16 + entrySize !== stsd.byteLength) {
    throw originError('unsupported-media', `an stsd with ${count} sample entries cannot be encrypted (one can)`, {
      subject: 'encryptedStsd',
    });
  }
  const entry = stsd.subarray(16);
  const original = view.toString('latin1', 20, 24);
  const encrypted = box(
    handler === 'vide' ? 'encv' : 'enca',
    field.bytes(entry.subarray(8)),
    box(
      'sinf',
      box('frma', field.fourcc(original)),
      fullBox('schm', 0, 0, field.fourcc(e.scheme), field.u32(0x00010000)),
      box('schi', tenc(e)),
    ),
  );
  const entries = e.clearEntry ? [encrypted, field.bytes(entry)] : [encrypted];
  return fullBox('stsd', 0, 0, field.u32(entries.length), ...entries);
}

/** §8.2 TrackEncryptionBox: v0 for cenc, v1 with the pattern and the constant IV for cbcs. */
function tenc(e: TrackEncryption): Writable {
  if (e.scheme === 'cenc') {
    return fullBox('tenc', 0, 0, field.u8(0), field.u8(0), field.u8(1), field.u8(CENC_IV_SIZE), field.bytes(e.kid));
  }
  const iv = e.constantIv!;
  return fullBox(
    'tenc',
    1,
    0,
    field.u8(0),
    field.u8((e.pattern.crypt << 4) | e.pattern.skip),
    field.u8(1), // default_isProtected
    field.u8(0), // default_Per_Sample_IV_Size: 0, the constant IV follows
    field.bytes(e.kid),
    field.u8(iv.byteLength),
    field.bytes(iv),
  );
}

/** The sample auxiliary information of one encrypted sample (§7.2.2). */
export interface SampleAuxInfo {
  /** Empty for cbcs (constant IV). */
  iv: Uint8Array;
  /** undefined: the whole sample is protected (audio). */
  subsamples: readonly Subsample[] | undefined;
}

/** Where the saio of one traf must point: patched once the moof is serialized. */
export interface AuxOffsets {
  saioField: number;
  sencStart: number;
}

/**
 * saiz, saio and senc for the samples of one traf, in shaka-packager's order. cbcs samples with
 * neither IV nor subsamples (audio) get a `senc` with no entries and no saiz/saio, as shaka
 * writes them. `offsets` is filled while the moof is written; patchSaio completes it.
 */
/** PIFF 1.1's SampleEncryptionBox usertype (Smooth Streaming's `senc` before CENC had one). */
export const PIFF_SAMPLE_ENCRYPTION = 'a2394f525a9b4f14a2446c427c648df4';

export function auxInfoBoxes(samples: readonly SampleAuxInfo[], offsets: AuxOffsets, piff = false): Writable[] {
  const withSubsamples = samples.some((s) => s.subsamples !== undefined);
  const sizes = samples.map((s) => s.iv.byteLength + (withSubsamples ? 2 + 6 * (s.subsamples?.length ?? 0) : 0));
  // The entries written straight into one buffer: a Writable per field costs more than the cipher.
  const entries = new Uint8Array(sizes.reduce((n, x) => n + x, 0));
  const view = new DataView(entries.buffer);
  let at = 0;
  for (const s of samples) {
    entries.set(s.iv, at);
    at += s.iv.byteLength;
    if (!withSubsamples) continue;
    const list = s.subsamples ?? [];
    view.setUint16(at, list.length);
    at += 2;
    for (const x of list) {
      view.setUint16(at, x.clear);
      view.setUint32(at + 2, x.protected);
      at += 6;
    }
  }
  const flags = withSubsamples ? 0x2 : 0;
  // Smooth (PIFF): the same box as a `uuid` with the PIFF usertype, 16 bytes longer before its entries.
  const senc = piff
    ? box(
        'uuid',
        field.bytes(Buffer.from(PIFF_SAMPLE_ENCRYPTION, 'hex')),
        field.u8(0),
        field.u24(flags),
        field.u32(samples.length),
        field.bytes(entries),
      )
    : fullBox('senc', 0, flags, field.u32(samples.length), field.bytes(entries));
  const sencMarked: Writable = {
    size: senc.size,
    write: (w) => {
      offsets.sencStart = w.offset + (piff ? 16 : 0);
      senc.write(w);
    },
  };
  if (sizes.every((n) => n === 0)) return [sencMarked];
  const uniform = sizes.every((n) => n === sizes[0]) && sizes[0]! <= 0xff;
  const saiz = uniform
    ? fullBox('saiz', 0, 0, field.u8(sizes[0]!), field.u32(samples.length))
    : fullBox('saiz', 0, 0, field.u8(0), field.u32(samples.length), ...sizes.map((n) => field.u8(checkByte(n))));
  const offsetField: Writable = {
    size: 4,
    write: (w) => {
      offsets.saioField = w.offset;
      w.u32(0);
    },
  };
  const saio = fullBox('saio', 0, 0, field.u32(1), offsetField);
  return [saiz, saio, sencMarked];
}

/** Writes each saio's offset (the first senc entry, relative to the moof start) into the moof. */
export function patchSaio(moof: Uint8Array, all: readonly AuxOffsets[]): void {
  const view = new DataView(moof.buffer, moof.byteOffset, moof.byteLength);
  for (const o of all) {
    if (o.saioField > 0) view.setUint32(o.saioField, o.sencStart + 16); // header, version + flags, sample_count
  }
}

function checkByte(n: number): number {
  if (n > 0xff) {
    throw originError('unsupported-media', `a sample's ${n} bytes of auxiliary information exceed saiz's 255`, {
      subject: 'saiz',
    });
  }
  return n;
}
