// The ProducerReferenceTimeBox `prft` (ISO/IEC 14496-12 §8.16.5), read and written without I/O.
//
//   FullBox('prft', version, flags) {
//     unsigned int(32) reference_track_ID;
//     unsigned int(64) ntp_timestamp;                   // RFC 5905 §6: seconds since 1900 . 2^-32
//     if (version == 0) unsigned int(32) media_time;    // reference track's timescale
//     else              unsigned int(64) media_time;
//   }
//
// It maps a media time of the reference track to the wall-clock (UTC) time it was produced at.
// The flags (§8.16.5.3) say which instant the UTC time is:
//   0  the frame at media_time was input to the encoder      1  it was output from the encoder
//   2  the following moof was finalised                      4  it was written to file
//   8  the association is arbitrary but consistent in the track (no wall-clock meaning)
//   24 a consistent, small (ideally zero) offset from the real time of what the media depicts
// ffmpeg's movenc (`-write_prft wallclock|pts`) writes version 1 and flags 24, the NTP time of
// the moof's writing (wallclock) or the frame's own PTS (pts), and the media_time of the first
// frame of the first track of the following moof.
// A version other than 0 and 1 is not this box: parsePrft answers undefined (§4.2: a reader
// ignores a box of a version it does not know). Everything else is checked; errors name the box
// and its offset (corrupt-media, which the ingest answers as 400 ingest-bad-box).

import { ByteReader } from './byte-reader';

export interface ProducerReference {
  /** reference_track_ID: the track whose media_time this is. */
  trackId: number;
  /** ntp_timestamp, 64-bit NTP (RFC 5905 §6): seconds since 1900 in the high 32 bits, fraction in the low. */
  ntp: bigint;
  /** media_time, the reference track's timescale (a version 0 box's 32 bits as sent). */
  mediaTime: bigint;
  /** The box's flags: which instant the UTC time is (above). */
  flags: number;
  /** 0: 32-bit media_time; 1: 64-bit. */
  version: 0 | 1;
}

/** Payload bytes (after the 8-byte box header) of each version. */
const PAYLOAD_BYTES = { 0: 20, 1: 24 } as const;

/** A `prft` box's payload (after its 8-byte header); undefined for a version this reader does not know. */
export function parsePrft(payload: Uint8Array, at: { path: string; offset: number }): ProducerReference | undefined {
  const r = new ByteReader(payload, at.path, at.offset);
  const version = r.u8();
  const flags = r.u24();
  if (version !== 0 && version !== 1) return undefined;
  if (payload.byteLength !== PAYLOAD_BYTES[version])
    r.fail(
      `prft version ${version} has ${PAYLOAD_BYTES[version]} bytes after its header, this one ${payload.byteLength}`,
    );
  const trackId = r.u32();
  if (trackId === 0) r.fail('prft reference_track_ID is 0 (track IDs start at 1)');
  const ntp = r.u64Big();
  const mediaTime = version === 0 ? BigInt(r.u32()) : r.u64Big();
  return { trackId, ntp, mediaTime, flags, version };
}

/** The whole `prft` box of a reference (version 0 keeps the low 32 bits of media_time). */
export function writePrft(p: ProducerReference): Uint8Array {
  const size = 8 + PAYLOAD_BYTES[p.version];
  const b = new Uint8Array(size);
  const v = new DataView(b.buffer);
  v.setUint32(0, size);
  b.set([0x70, 0x72, 0x66, 0x74], 4); // 'prft'
  v.setUint32(8, ((p.version << 24) | (p.flags & 0xffffff)) >>> 0);
  v.setUint32(12, p.trackId);
  v.setBigUint64(16, p.ntp);
  if (p.version === 0) v.setUint32(24, Number(p.mediaTime & 0xffffffffn));
  else v.setBigUint64(24, p.mediaTime);
  return b;
}

/** Seconds from the NTP prime epoch (1900-01-01) to the Unix epoch (RFC 868, RFC 5905 §6). */
const NTP_UNIX_SECONDS = 2208988800n;

/**
 * An NTP timestamp as milliseconds since 1970, floored. Seconds with the high bit clear are read in
 * era 1 (from 2036-02-07), as RFC 4330 §3 says a client should: no encoder stamps a time before 1968.
 */
export function ntpToUnixMs(ntp: bigint): number {
  let seconds = ntp >> 32n;
  if (seconds < 0x80000000n) seconds += 0x100000000n;
  const fractionMs = ((ntp & 0xffffffffn) * 1000n) >> 32n;
  return Number((seconds - NTP_UNIX_SECONDS) * 1000n + fractionMs);
}

/**
 * Milliseconds since 1970 as an NTP timestamp (era 0 or 1 by the same rule), for writers and
 * tests; the fraction rounded up, so that ntpToUnixMs gives the milliseconds back.
 */
export function unixMsToNtp(ms: number): bigint {
  const whole = BigInt(Math.floor(ms));
  const seconds = (whole / 1000n + NTP_UNIX_SECONDS) & 0xffffffffn;
  const fraction = (((whole % 1000n) << 32n) + 999n) / 1000n;
  return (seconds << 32n) | fraction;
}

/**
 * ISO/IEC 23009-1 §5.12.3 ProducerReferenceTime@type of a prft's flags: "encoder" for the
 * encoder's instants (0, 1, 2, 4), "captured" for 24 (the time of what the media depicts);
 * undefined for 8 (arbitrary: no wall-clock time) and for flags §8.16.5.3 does not define.
 */
export function producerClock(flags: number): 'encoder' | 'captured' | undefined {
  if (flags === 0 || flags === 1 || flags === 2 || flags === 4) return 'encoder';
  if (flags === 24) return 'captured';
  return undefined;
}

/**
 * The full 64-bit media time a version 0 box's 32 bits stand for: the value with those low bits
 * nearest `near` (a UTC media time at 25 Hz is past 2^32, so version 0 wraps). Version 1: as sent.
 */
export function unwrapMediaTime(p: ProducerReference, near: bigint): bigint {
  if (p.version === 1) return p.mediaTime;
  const span = 0x100000000n;
  const base = near - (near & (span - 1n)) + p.mediaTime;
  const candidates = [base - span, base, base + span];
  const dist = (x: bigint): bigint => (x > near ? x - near : near - x);
  return candidates.reduce((a, b) => (dist(b) < dist(a) ? b : a));
}
