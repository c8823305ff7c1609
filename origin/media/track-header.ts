// What an fMP4 init segment needs from a source `moov`, per track: ids, handler, timescale,
// language, size, the exact `stsd` bytes and the `trex` defaults. A narrow reader of its own
// (not mp4box) so that every error names the box path and the absolute file offset (house
// style §4) and the `stsd` is copied byte for byte: the output's sample entries are the
// source's, never a re-serialisation (shaka-packager's one-byte-short `stpp` entry included).
//
// Boxes read: ISO/IEC 14496-12 §8.2.1 moov, §8.3.1 trak, §8.3.2 tkhd, §8.4.1 mdia, §8.4.2 mdhd,
// §8.4.3 hdlr, §8.4.4 minf, §8.5.1 stbl, §8.5.2 stsd, §8.8.1 mvex, §8.8.3 trex.

import { OriginError, originError } from '../errors';
import {
  childBoxes,
  firstChildren,
  printable,
  readBoxHeader,
  requireChild,
  TrexDefaults,
  unpackLanguage,
} from './boxes';
import { ByteReader, corruptAt } from './byte-reader';
import type { PresentationTrack } from '../model/presentation';

/** Handler types (§8.4.3.3, §12.*) that an fMP4 output can carry. */
export type HandlerType = 'vide' | 'soun' | 'subt' | 'text' | 'meta';
const HANDLERS: readonly string[] = ['vide', 'soun', 'subt', 'text', 'meta'];

export interface TrackHeader {
  trackID: number;
  handler: HandlerType;
  /** Ticks per second of every time of this track (mdhd). */
  timescale: number;
  /** ISO 639-2/T from mdhd, `und` when unset. */
  language: string;
  /** tkhd width/height (16.16 fixed point), integer part, in pixels; 0 for non-visual tracks. */
  width: number;
  height: number;
  /** The complete source `stsd` box, header included, copied out of the moov. */
  stsd: Uint8Array;
  trexDefaults: TrexDefaults;
  /** Type of the first sample entry (avc1, mp4a, ac-3, ec-3, stpp, wvtt, ...). */
  sampleEntry: string;
}

/**
 * Reads every track of a complete `moov` box (header included). `moovOffset` is the box's
 * absolute file offset, for error messages. Returns the headers by track id.
 */
export function readTrackHeaders(moov: Uint8Array, fileName: string, moovOffset = 0): Map<number, TrackHeader> {
  try {
    return readAll(moov, moovOffset);
  } catch (e) {
    throw inFile(e, fileName);
  }
}

/** The headers of every track of a moov, by track id: parsed once per loaded moov. */
const headerCache = new WeakMap<Uint8Array, Map<number, TrackHeader>>();

/** Every track header of the moov `track` comes from (readTrackHeaders, kept with the moov). */
export function trackHeadersOf(track: PresentationTrack): Map<number, TrackHeader> {
  let headers = headerCache.get(track.moov);
  if (headers === undefined) {
    headers = readTrackHeaders(track.moov, track.src);
    headerCache.set(track.moov, headers);
  }
  return headers;
}

/** The track's moov description (stsd, trex defaults), parsed once per moov. */
export function trackHeaderOf(track: PresentationTrack): TrackHeader {
  const h = trackHeadersOf(track).get(track.properties.trackID);
  if (h === undefined)
    throw originError('corrupt-media', `no trak for track ${track.properties.trackID}`, { subject: track.src });
  return h;
}

/**
 * The same error with the file name before its box path ("a.ismv: moov/trak[0]/tkhd"). Not
 * OriginError.within, which would repeat the old subject inside the message.
 */
export function inFile(e: unknown, fileName: string): unknown {
  if (!(e instanceof OriginError) || e.subject?.startsWith(fileName)) return e;
  const prefix = e.subject === undefined ? '' : `${e.subject}: `;
  const message = e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message;
  return originError(e.code, message, { subject: e.subject === undefined ? fileName : `${fileName}: ${e.subject}` });
}

function readAll(moov: Uint8Array, base: number): Map<number, TrackHeader> {
  const top = readBoxHeader(moov, 0, base, base + moov.byteLength, 'moov');
  if (top === undefined || top.type !== 'moov') throw corruptAt('moov', base, 'expected a moov box');
  if (top.size !== moov.byteLength)
    throw corruptAt('moov', base, `moov declares ${top.size} bytes but ${moov.byteLength} were given`);
  const payloadBase = base + top.headerSize;
  const traks: Array<{ payload: Uint8Array; start: number }> = [];
  let mvex: { payload: Uint8Array; start: number; headerSize: number } | undefined;
  for (const c of childBoxes(moov.subarray(top.headerSize), payloadBase, 'moov')) {
    if (c.type === 'trak') traks.push({ payload: c.payload, start: c.start + c.headerSize });
    else if (c.type === 'mvex' && mvex === undefined) mvex = c;
  }
  if (mvex === undefined) {
    throw originError('unsupported-media', 'not a fragmented MP4 (moov has no mvex)', { subject: 'moov' });
  }
  const trexes = readTrexes(mvex.payload, mvex.start + mvex.headerSize);
  const out = new Map<number, TrackHeader>();
  traks.forEach((trak, i) => {
    const path = `moov/trak[${i}]`;
    const h = readTrak(trak.payload, trak.start, path, trexes);
    if (out.has(h.trackID)) throw corruptAt(`${path}/tkhd`, trak.start, `track_ID ${h.trackID} is used twice`);
    out.set(h.trackID, h);
  });
  return out;
}

function readTrexes(payload: Uint8Array, base: number): Map<number, TrexDefaults> {
  const out = new Map<number, TrexDefaults>();
  let i = 0;
  for (const c of childBoxes(payload, base, 'moov/mvex')) {
    if (c.type !== 'trex') continue;
    const r = new ByteReader(c.payload, `moov/mvex/trex[${i++}]`, c.start + c.headerSize);
    r.skip(4); // version + flags
    const trackId = r.u32();
    out.set(trackId, {
      defaultSampleDescriptionIndex: r.u32(),
      defaultSampleDuration: r.u32(),
      defaultSampleSize: r.u32(),
      defaultSampleFlags: r.u32(),
    });
  }
  return out;
}

function readTrak(payload: Uint8Array, base: number, path: string, trexes: Map<number, TrexDefaults>): TrackHeader {
  const trak = firstChildren(payload, base, path);
  const tkhdBox = requireChild(trak, 'tkhd', path, base);
  const tkhd = readTkhd(new ByteReader(tkhdBox.payload, `${path}/tkhd`, tkhdBox.start + tkhdBox.headerSize));
  const mdiaBox = requireChild(trak, 'mdia', path, base);
  const mdiaPath = `${path}/mdia`;
  const mdia = firstChildren(mdiaBox.payload, mdiaBox.start + mdiaBox.headerSize, mdiaPath);
  const mdhdBox = requireChild(mdia, 'mdhd', mdiaPath, mdiaBox.start);
  const mdhd = readMdhd(new ByteReader(mdhdBox.payload, `${mdiaPath}/mdhd`, mdhdBox.start + mdhdBox.headerSize));
  const hdlrBox = requireChild(mdia, 'hdlr', mdiaPath, mdiaBox.start);
  const handler = readHdlr(new ByteReader(hdlrBox.payload, `${mdiaPath}/hdlr`, hdlrBox.start + hdlrBox.headerSize));
  const minfBox = requireChild(mdia, 'minf', mdiaPath, mdiaBox.start);
  const minf = firstChildren(minfBox.payload, minfBox.start + minfBox.headerSize, `${mdiaPath}/minf`);
  const stblBox = requireChild(minf, 'stbl', `${mdiaPath}/minf`, minfBox.start);
  const stblPath = `${mdiaPath}/minf/stbl`;
  const stbl = firstChildren(stblBox.payload, stblBox.start + stblBox.headerSize, stblPath);
  const stsdBox = requireChild(stbl, 'stsd', stblPath, stblBox.start);
  // The stsd box lies inside `payload`, whose first byte is at absolute offset `base`.
  // Uint8Array.from copies (Buffer#slice would not).
  const stsd = Uint8Array.from(payload.subarray(stsdBox.start - base, stsdBox.start - base + stsdBox.size));
  const sampleEntry = firstSampleEntry(stsdBox.payload, stsdBox.start + stsdBox.headerSize, `${stblPath}/stsd`);
  const trexDefaults = trexes.get(tkhd.trackID);
  if (trexDefaults === undefined) throw corruptAt('moov/mvex', base, `no trex for track ${tkhd.trackID}`);
  return { ...tkhd, handler, timescale: mdhd.timescale, language: mdhd.language, stsd, trexDefaults, sampleEntry };
}

/** §8.3.2 TrackHeaderBox. */
function readTkhd(r: ByteReader): { trackID: number; width: number; height: number } {
  const version = r.u8();
  r.skip(3);
  r.skip(version === 1 ? 16 : 8); // creation_time, modification_time
  const trackID = r.u32();
  if (trackID === 0) r.fail('track_ID is 0 (§8.3.2: it cannot be zero)');
  r.skip(4 + (version === 1 ? 8 : 4)); // reserved, duration
  r.skip(8 + 2 + 2 + 2 + 2 + 36); // reserved, layer, alternate_group, volume, reserved, matrix
  // 16.16 fixed point; the integer part is the pixel size players use.
  const width = r.u32() >>> 16;
  const height = r.u32() >>> 16;
  return { trackID, width, height };
}

/** §8.4.2 MediaHeaderBox: timescale and the packed ISO 639-2/T language (§8.4.2.3). */
function readMdhd(r: ByteReader): { timescale: number; language: string } {
  const version = r.u8();
  r.skip(3);
  r.skip(version === 1 ? 16 : 8);
  const timescale = r.u32();
  if (timescale === 0) r.fail('timescale is 0');
  r.skip(version === 1 ? 8 : 4);
  return { timescale, language: unpackLanguage(r.u16() & 0x7fff) };
}

export { unpackLanguage };

/** §8.4.3 HandlerBox: only the handler types an fMP4 output knows how to describe. */
function readHdlr(r: ByteReader): HandlerType {
  r.skip(4 + 4); // version + flags, pre_defined
  const at = r.offset;
  const type = r.fourcc();
  if (!HANDLERS.includes(type)) {
    throw originError(
      'unsupported-media',
      `handler '${printable(type)}' is not one of ${HANDLERS.join(', ')} (at file offset ${r.base + at})`,
      { subject: r.path },
    );
  }
  return type as HandlerType;
}

/** §8.5.2 SampleDescriptionBox: checks the entries parse and returns the first entry's type. */
function firstSampleEntry(payload: Uint8Array, base: number, path: string): string {
  const r = new ByteReader(payload, path, base);
  r.skip(4); // version + flags
  const count = r.u32();
  if (count === 0) r.fail('entry_count is 0: no sample entry');
  const entries = [...childBoxes(payload.subarray(8), base + 8, path)];
  if (entries.length !== count) r.fail(`entry_count ${count} but ${entries.length} sample entries follow`);
  return entries[0]!.type;
}
