// Deterministic IVs (the same request gives the same bytes, for CDNs, ranges and retries), never
// one IV on two different samples under one key:
// - a track's base is HMAC-SHA-256 of the content key over the track's identity (its source, track
//   id and fragment table), so two tracks or two presentations that share a key get unrelated
//   bases; with `--iss.key_iv` the base is that value plus the track's position × 2^40;
// - cenc, 8-byte IVs (ISO/IEC 23001-7 §9.2: a counter block per IV; Smooth, whose players assume
//   8): sample k of source fragment f gets base + f × 2^12 + k (mod 2^64), so a track spans about
//   f × 4096 values of the 2^64 and no counter block repeats inside it (a fragment holds under
//   4096 samples; more is refused);
// - cenc, 16-byte IVs (DASH and HLS fMP4; §9.2: the IV is the whole initial counter block): the
//   samples of source fragment f run on one keystream, sample k's IV being
//   (base + f × 2^12) ‖ the blocks samples 0 … k-1 used, each rounded up to a whole block
//   (continuousIvs). The high half differs per fragment as above, the low half starts at 0 and
//   stays far below 2^64, so a 64-bit block counter (what the standard and ffmpeg increment) and a
//   128-bit one (OpenSSL's) agree, and no counter block repeats: one cipher per fragment can then
//   encrypt all its samples (drm/fragment-cipher.ts);
// - cbcs: one constant 16-byte IV per track (§10.4.1), from the same HMAC;
// - SAMPLE-AES MPEG-TS: one 16-byte IV for every segment of the presentation (the key lines carry
//   it; the IV restarts at every NAL unit and audio frame anyway, Apple's MPEG-2 stream encryption
//   §2.1), an HMAC of the key over its key id. One IV, not one per segment: ffmpeg's HLS demuxer
//   decrypts a segment's last video frame with the next segment's IV (measured).
// The HMAC is keyed with the content key, so the IVs, which are public, say nothing about it.

import { createHmac } from 'node:crypto';
import { originError } from '../errors';
import type { CencProtection, ContentKey } from '../model/protection';
import type { PresentationTrack } from '../model/presentation';

/** Samples a fragment may hold for its IVs to stay apart (2^12). */
export const MAX_SAMPLES_PER_FRAGMENT = 4096;

export interface TrackIvs {
  /** The 8-byte IV of sample `k` of source fragment `fragment` (cenc). */
  sampleIv(fragment: number, k: number): Uint8Array;
  /** The IVs of samples 0 … count-1 of source fragment `fragment`, 8 bytes each back to back (cenc). */
  fragmentIvs(fragment: number, count: number): Uint8Array;
  /** The constant IV (cbcs). */
  constantIv: Uint8Array;
}

/**
 * 16-byte IVs that make the samples of one fragment one CTR keystream: `high` (8 bytes, the
 * fragment's: sampleIv(fragment, 0)) ‖ the 64-bit count of blocks before each sample, where
 * sample k uses ceil(protected[k] / 16) blocks (§9.5.2: its protected bytes are one stream).
 */
export function continuousIvs(high: Uint8Array, protectedBytes: ArrayLike<number>): Uint8Array {
  const out = new Uint8Array(16 * protectedBytes.length);
  const view = new DataView(out.buffer);
  let blocks = 0;
  for (let k = 0; k < protectedBytes.length; k++) {
    out.set(high, 16 * k);
    // Below 2^53 (a fragment's bytes / 16): two 32-bit halves of a plain number.
    view.setUint32(16 * k + 8, Math.floor(blocks / 2 ** 32));
    view.setUint32(16 * k + 12, blocks >>> 0);
    blocks += Math.ceil(protectedBytes[k]! / 16);
  }
  return out;
}

/** The IV of SAMPLE-AES MPEG-TS and packed audio under `key` when `--hls.key_iv` gives none. */
export function sampleAesTsIv(key: ContentKey): Uint8Array {
  const mac = createHmac('sha256', key.key).update('streaming-origin sample-aes ts iv\0').update(key.kid);
  return Uint8Array.from(mac.digest().subarray(0, 16));
}

const cache = new WeakMap<PresentationTrack, WeakMap<CencProtection, TrackIvs>>();

/** The IVs of `track` under `p`, derived once per track and protection. */
export function trackIvs(track: PresentationTrack, p: CencProtection): TrackIvs {
  let byProtection = cache.get(track);
  if (byProtection === undefined) cache.set(track, (byProtection = new WeakMap()));
  let ivs = byProtection.get(p);
  if (ivs === undefined) byProtection.set(p, (ivs = derive(track, p)));
  return ivs;
}

function derive(track: PresentationTrack, p: CencProtection): TrackIvs {
  const f = track.fragments;
  const identity = JSON.stringify([
    track.src,
    track.properties.trackID,
    f.count,
    String(f.times[0] ?? 0n),
    f.count === 0 ? 0 : f.offsets[f.count - 1]! + f.sizes[f.count - 1]!,
  ]);
  const mac = createHmac('sha256', p.key.key).update('streaming-origin track ivs\0').update(p.key.kid).update(identity);
  const digest = mac.digest();
  const base =
    p.ivBase === undefined
      ? digest.readBigUInt64BE(0)
      : (Buffer.from(p.ivBase).readBigUInt64BE(0) + (BigInt(track.index) << 40n)) & 0xffffffffffffffffn;
  const constantIv = p.constantIv ?? Uint8Array.from(digest.subarray(8, 24));
  const tooMany = (fragment: number): Error =>
    originError(
      'unsupported-media',
      `fragment ${fragment} holds more than ${MAX_SAMPLES_PER_FRAGMENT} samples: too many to encrypt with distinct IVs`,
      { subject: track.src },
    );
  const first = (fragment: number): bigint => (base + (BigInt(fragment) << 12n)) & 0xffffffffffffffffn;
  return {
    constantIv,
    sampleIv(fragment: number, k: number): Uint8Array {
      if (k >= MAX_SAMPLES_PER_FRAGMENT) throw tooMany(fragment);
      const iv = Buffer.alloc(8);
      iv.writeBigUInt64BE((first(fragment) + BigInt(k)) & 0xffffffffffffffffn);
      return iv;
    },
    fragmentIvs(fragment: number, count: number): Uint8Array {
      if (count > MAX_SAMPLES_PER_FRAGMENT) throw tooMany(fragment);
      // first + k (mod 2^64) in two 32-bit halves: one BigInt a fragment, not several a sample.
      const start = first(fragment);
      let hi = Number(start >> 32n);
      let lo = Number(start & 0xffffffffn);
      const out = new Uint8Array(8 * count);
      const view = new DataView(out.buffer);
      for (let k = 0; k < count; k++) {
        view.setUint32(8 * k, hi);
        view.setUint32(8 * k + 4, lo);
        if (++lo > 0xffffffff) {
          lo = 0;
          hi = (hi + 1) >>> 0;
        }
      }
      return out;
    },
  };
}
