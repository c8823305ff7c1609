// The fMP4 initialisation segment of one track (ISO/IEC 23009-1 §6.3.3 for DASH, RFC 8216
// §3.3 EXT-X-MAP for HLS, ISO/IEC 23000-19 §7.3 CMAF header): `ftyp` + a `moov` that describes
// the track and holds no samples, with `mvex` so that the media segments' movie fragments are
// legal (ISO/IEC 14496-12 §8.8.1). Pure: TrackHeader in, bytes out.
//
// What is copied from the source and what is fixed here:
// - copied: the `stsd` box byte for byte (codec configuration, pasp, ...), track id, timescale,
//   language, tkhd size, trex defaults (a reboxed trun may rely on them);
// - fixed: creation/modification times 0 and durations 0 (§8.2.2.3: 0 = unknown; the MPD or
//   playlist carries the duration), identity matrices, handler names, empty sample tables.

import { originError } from '../../errors';
import { box, brandBox, field, fullBox, serialize, Writable } from '../box-writer';
import type { HandlerType, TrackHeader } from '../../model/media';
import { encryptedStsd, TrackEncryption } from './encryption-boxes';

/**
 * Brands (§4.3, Annex E):
 * - major and compatible `iso6`: the 14496-12 edition whose movie-fragment toolset this output
 *   uses (`tfdt` v1, `default-base-is-moof`, `trun` v1 with signed composition offsets as ffmpeg's
 *   ismv muxer writes them); shaka-packager labels its DASH output with it as well;
 * - `cmfc`: the CMAF structural brand (ISO/IEC 23000-19 §7.2): one track per file, `tfdt` and
 *   default-base-is-moof in every fragment, no samples in the moov. It is what HLS fMP4 (Apple's
 *   authoring spec asks for CMAF) and DASH-IF players expect;
 * - `dash`: ISO/IEC 23009-1 §6.3.4.1, segments in the ISO BMFF DASH format.
 * No `isml`/`piff`: the output is not a Smooth file, and `msdh`/`msix` belong in `styp`.
 * Players (MSE, hls.js, dash.js, shaka, ffmpeg) do not gate on brands; these are honest labels.
 */
export const INIT_MAJOR_BRAND = 'iso6';
export const INIT_COMPATIBLE_BRANDS: readonly string[] = ['iso6', 'cmfc', 'dash'];

/** §8.2.2 / §8.3.2: the identity transformation matrix (16.16, except the 2.30 `w` column). */
const UNITY_MATRIX = [0x00010000, 0, 0, 0, 0x00010000, 0, 0, 0, 0x40000000];

/** tkhd flags (§8.3.2.3): track_enabled | track_in_movie. */
const TKHD_ENABLED_IN_MOVIE = 0x000003;

/** hdlr names: for people reading box dumps only (§8.4.3.3: "human-readable name"). */
const HANDLER_NAMES: Record<HandlerType, string> = {
  vide: 'VideoHandler',
  soun: 'SoundHandler',
  subt: 'SubtitleHandler',
  text: 'TextHandler',
  meta: 'MetaHandler',
};

/** `encryption`: the track's common encryption (encryption-boxes.ts), for protected output. */
export function writeInitSegment(
  h: TrackHeader,
  opts: { trackId?: number; encryption?: TrackEncryption } = {},
): Uint8Array {
  const trackId = opts.trackId ?? h.trackID;
  if (!Number.isInteger(trackId) || trackId < 1 || trackId > 0xffffffff) {
    throw originError('internal', `track id ${trackId} is not in 1..2^32-1 (§8.3.2: it cannot be zero)`, {
      subject: 'writeInitSegment',
    });
  }
  return serialize(
    brandBox('ftyp', INIT_MAJOR_BRAND, 0, INIT_COMPATIBLE_BRANDS),
    moov([{ h, trackId }], opts.encryption),
  );
}

/**
 * The same header for several clear tracks in one file (what `origin capture` writes: one
 * fragmented MP4 holding every captured track, ISO/IEC 14496-12 §8.8.1); the movie timescale is the
 * first track's.
 */
export function writeMultiTrackInit(tracks: ReadonlyArray<{ header: TrackHeader; trackId: number }>): Uint8Array {
  if (tracks.length === 0) throw originError('internal', 'no tracks', { subject: 'writeMultiTrackInit' });
  for (const t of tracks) writeInitSegment(t.header, { trackId: t.trackId }); // checks each id
  const all = tracks.map((t) => ({ h: t.header, trackId: t.trackId }));
  return serialize(brandBox('ftyp', INIT_MAJOR_BRAND, 0, INIT_COMPATIBLE_BRANDS), moov(all, undefined));
}

function matrix(): Writable {
  return field.group(...UNITY_MATRIX.map((v) => field.i32(v)));
}

function moov(
  tracks: ReadonlyArray<{ h: TrackHeader; trackId: number }>,
  encryption: TrackEncryption | undefined,
): Writable {
  const h = tracks[0]!.h;
  const trackId = Math.max(...tracks.map((t) => t.trackId));
  // §8.2.2 MovieHeaderBox, version 1 (64-bit times). The movie timescale is the track's, so a
  // reader converting between the two has nothing to round.
  const mvhd = fullBox(
    'mvhd',
    1,
    0,
    field.u64(0n), // creation_time
    field.u64(0n), // modification_time
    field.u32(h.timescale),
    field.u64(0n), // duration: unknown / fragments only
    field.fixed16_16(1), // rate
    field.fixed8_8(1), // volume
    field.zeros(2 + 8), // reserved
    matrix(),
    field.zeros(24), // pre_defined
    // §8.2.2.3: all ones when the largest possible id is in use ("search for an unused one").
    field.u32(Math.min(trackId + 1, 0xffffffff)), // next_track_ID
  );
  // §8.1 (ISO/IEC 23001-7): pssh boxes in the moov, after mvex as shaka-packager places them.
  const pssh = (encryption?.pssh ?? []).map((b) => field.bytes(b));
  const traks = tracks.map((t) => trak(t.h, t.trackId, encryption));
  return box('moov', mvhd, ...traks, box('mvex', ...tracks.map((t) => trex(t.h, t.trackId))), ...pssh);
}

function trak(h: TrackHeader, trackId: number, encryption: TrackEncryption | undefined): Writable {
  // §8.3.2.3: volume 1.0 for audio, 0 otherwise; width/height are the visual (or text
  // rendering area) size and 0 for non-visual tracks.
  const audio = h.handler === 'soun';
  const visual = h.handler === 'vide' || h.handler === 'subt' || h.handler === 'text';
  const tkhd = fullBox(
    'tkhd',
    0,
    TKHD_ENABLED_IN_MOVIE,
    field.u32(0), // creation_time
    field.u32(0), // modification_time
    field.u32(trackId),
    field.u32(0), // reserved
    field.u32(0), // duration
    field.zeros(8), // reserved
    field.i16(0), // layer
    field.i16(0), // alternate_group
    field.fixed8_8(audio ? 1 : 0),
    field.u16(0), // reserved
    matrix(),
    field.fixed16_16(visual ? h.width : 0),
    field.fixed16_16(visual ? h.height : 0),
  );
  return box('trak', tkhd, box('mdia', mdhd(h), hdlr(h.handler), minf(h, encryption)));
}

/** §8.4.2 MediaHeaderBox, version 0: the times are 0, the timescale is the source's. */
function mdhd(h: TrackHeader): Writable {
  return fullBox(
    'mdhd',
    0,
    0,
    field.u32(0), // creation_time
    field.u32(0), // modification_time
    field.u32(h.timescale),
    field.u32(0), // duration
    field.u16(packLanguage(h.language)),
    field.u16(0), // pre_defined
  );
}

/** §8.4.2.3: three lower-case letters, 5 bits each as (char - 0x60); anything else is `und`. */
export function packLanguage(language: string): number {
  const code = /^[a-z]{3}$/.test(language) ? language : 'und';
  return ((code.charCodeAt(0) - 0x60) << 10) | ((code.charCodeAt(1) - 0x60) << 5) | (code.charCodeAt(2) - 0x60);
}

/** §8.4.3 HandlerBox. */
function hdlr(handler: HandlerType): Writable {
  return fullBox(
    'hdlr',
    0,
    0,
    field.u32(0),
    field.fourcc(handler),
    field.zeros(12),
    field.cstring(HANDLER_NAMES[handler]),
  );
}

function minf(h: TrackHeader, encryption: TrackEncryption | undefined): Writable {
  // §8.7.2 DataReferenceBox with one `url ` entry, flags 1: the media is in this same file.
  const dinf = box('dinf', fullBox('dref', 0, 0, field.u32(1), fullBox('url ', 0, 0x000001)));
  // §8.5.1: the sample table is mandatory even in a fragmented file; the samples live in the
  // movie fragments, so every table but the copied stsd is empty.
  const stbl = box(
    'stbl',
    encryption === undefined ? field.bytes(h.stsd) : encryptedStsd(h.stsd, protectedHandler(h), encryption),
    fullBox('stts', 0, 0, field.u32(0)), // §8.6.1.2
    fullBox('stsc', 0, 0, field.u32(0)), // §8.7.4
    fullBox('stsz', 0, 0, field.u32(0), field.u32(0)), // §8.7.3: sample_size, sample_count
    fullBox('stco', 0, 0, field.u32(0)), // §8.7.5
  );
  return box('minf', mediaHeader(h.handler), dinf, stbl);
}

/** The media information header each handler requires. */
function mediaHeader(handler: HandlerType): Writable {
  switch (handler) {
    case 'vide': // §12.1.2 VideoMediaHeaderBox: flags 1 (a legacy constant), copy mode, no opcolor.
      return fullBox('vmhd', 0, 0x000001, field.u16(0), field.u16(0), field.u16(0), field.u16(0));
    case 'soun': // §12.2.2 SoundMediaHeaderBox: centred balance.
      return fullBox('smhd', 0, 0, field.fixed8_8(0), field.u16(0));
    case 'subt': // §12.6.2 SubtitleMediaHeaderBox.
      return fullBox('sthd', 0, 0);
    case 'text': // §12.5.2: text tracks use the null media header.
    case 'meta': // §12.3.2: timed metadata tracks use the null media header.
      return fullBox('nmhd', 0, 0);
  }
}

/** §8.8.3 TrackExtendsBox: the source's defaults, so reboxed fragments may keep relying on them. */
function trex(h: TrackHeader, trackId: number): Writable {
  const d = h.trexDefaults;
  return fullBox(
    'trex',
    0,
    0,
    field.u32(trackId),
    field.u32(d.defaultSampleDescriptionIndex),
    field.u32(d.defaultSampleDuration),
    field.u32(d.defaultSampleSize),
    field.u32(d.defaultSampleFlags),
  );
}

/** Only video and audio tracks are encrypted (text never is: ISO/IEC 23001-7 covers its samples, players do not). */
function protectedHandler(h: TrackHeader): 'vide' | 'soun' {
  if (h.handler === 'vide' || h.handler === 'soun') return h.handler;
  throw originError('internal', `a ${h.handler} track is never encrypted`, { subject: 'writeInitSegment' });
}
