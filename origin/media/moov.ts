// The one reader of a source's `moov`: per track, what the filter language and the manifests see
// (TrackProperties) and what the segment writers need (TrackHeader: ids, handler, timescale,
// language, size, the exact `stsd` bytes, the `trex` defaults and the parsed decoder
// configuration). Read once when a media file is indexed (media/media-file.ts) and kept with the
// presentation's tracks, so no request parses a moov or an stsd again.
//
// Our own narrow reader, not mp4box: every error names the box path and the absolute file offset
// (CONTRIBUTING.md design rule 4), the `stsd` is copied byte for byte (an init segment's sample
// entries are the source's, shaka-packager's one-byte-short `stpp` entry included), and it costs a
// cold process a fraction of mp4box's time (docs/design/performance.md#own-moov-reader). mp4box
// stays the tests' independent judge.
//
// Boxes read: ISO/IEC 14496-12 §8.2.1 moov, §8.3.1 trak, §8.3.2 tkhd, §8.4.1 mdia, §8.4.2 mdhd,
// §8.4.3 hdlr, §8.4.6 elng, §8.4.4 minf, §8.5.1 stbl, §8.5.2 stsd (media/codec-config.ts reads
// its first entry), §8.8.1 mvex, §8.8.3 trex.

import { OriginError, originError } from '../errors';
import type { PresentationTrack } from '../model/presentation';
import { AvcConfig, HandlerType, TrackHeader, TrackProperties, TrackType, TrexDefaults } from '../model/media';
import { rational, Rational } from '../rational';
import { parseAudioSpecificConfig } from './audio-config';
import { BoxHeader, childBoxes, firstChildren, printable, readBoxHeader, requireChild, unpackLanguage } from './boxes';
import { ByteReader, corruptAt } from './byte-reader';
import { readSampleEntry, SampleEntry } from './codec-config';
import { parseSps } from './h264-sps';

const HANDLERS: readonly string[] = ['vide', 'soun', 'subt', 'text', 'meta'];
/** QuickTime's subtitle handler: written as the ISO one (§12.6). */
const HANDLER_ALIASES: Readonly<Record<string, HandlerType>> = { sbtl: 'subt' };

export const SUPPORTED_SAMPLE_ENTRIES = ['avc1', 'avc3', 'mp4a', 'ac-3', 'ec-3', 'stpp', 'wvtt', 'urim', 'evte'];

/** The URI of a `urim` track whose samples are emsg boxes (DASH-IF CMAF ingest, ISO/IEC 23009-1 §5.10.3.3). */
export const EMSG_TRACK_URI = 'urn:mpeg:dash:event:2012';

export interface MoovTrack {
  /** Everything but systemBitrate (needs the fragments) and a presentation-unique trackName. */
  properties: TrackProperties;
  header: TrackHeader;
}

export interface Moov {
  tracks: MoovTrack[];
  /** Whether the moov has an mvex (ISO/IEC 14496-12 §8.8.1): the only files we index. */
  fragmented: boolean;
}

/**
 * Reads a complete `moov` box (header included) whose first byte is at absolute file offset
 * `moovOffset`. Every error's subject is `<fileName>: <box path>`.
 */
export function readMoov(moov: Uint8Array, fileName: string, moovOffset = 0): Moov {
  try {
    return readAll(moov, moovOffset);
  } catch (e) {
    throw inFile(e, fileName);
  }
}

/** The headers of a fragmented moov's tracks by track id (init segments, tests). */
export function readTrackHeaders(moov: Uint8Array, fileName: string, moovOffset = 0): Map<number, TrackHeader> {
  const { tracks, fragmented } = readMoov(moov, fileName, moovOffset);
  if (!fragmented) {
    throw originError('unsupported-media', 'not a fragmented MP4 (moov has no mvex)', { subject: `${fileName}: moov` });
  }
  return new Map(tracks.map((t) => [t.header.trackID, t.header]));
}

/** The track's moov description (stsd, trex defaults, codec), read when its source was indexed. */
export function trackHeaderOf(track: PresentationTrack): TrackHeader {
  const h = track.headers.get(track.properties.trackID);
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

type Found = BoxHeader & { payload: Uint8Array };

const reader = (box: Found, path: string): ByteReader => new ByteReader(box.payload, path, box.start + box.headerSize);

const NO_TREX: TrexDefaults = {
  defaultSampleDescriptionIndex: 1,
  defaultSampleDuration: 0,
  defaultSampleSize: 0,
  defaultSampleFlags: 0,
};

function readAll(moov: Uint8Array, base: number): Moov {
  const top = readBoxHeader(moov, 0, base, base + moov.byteLength, 'moov');
  if (top === undefined || top.type !== 'moov') throw corruptAt('moov', base, 'expected a moov box');
  if (top.size !== moov.byteLength)
    throw corruptAt('moov', base, `moov declares ${top.size} bytes but ${moov.byteLength} were given`);
  const traks: Found[] = [];
  let mvex: Found | undefined;
  for (const c of childBoxes(moov.subarray(top.headerSize), base + top.headerSize, 'moov')) {
    if (c.type === 'trak') traks.push(c);
    else if (c.type === 'mvex' && mvex === undefined) mvex = c;
  }
  const trexes = mvex === undefined ? undefined : readTrexes(mvex);
  const tracks: MoovTrack[] = [];
  const ids = new Set<number>();
  traks.forEach((trak, i) => {
    const path = `moov/trak[${i}]`;
    const t = readTrak(trak, path, trexes);
    if (ids.has(t.header.trackID))
      throw corruptAt(`${path}/tkhd`, trak.start, `track_ID ${t.header.trackID} is used twice`);
    ids.add(t.header.trackID);
    tracks.push(t);
  });
  return { tracks, fragmented: mvex !== undefined };
}

/** §8.8.3: one TrackExtendsBox per track of a fragmented file. */
function readTrexes(mvex: Found): Map<number, TrexDefaults> {
  const out = new Map<number, TrexDefaults>();
  let i = 0;
  for (const c of childBoxes(mvex.payload, mvex.start + mvex.headerSize, 'moov/mvex')) {
    if (c.type !== 'trex') continue;
    const r = reader(c, `moov/mvex/trex[${i++}]`);
    r.skip(4); // version + flags
    const trackId = r.u32();
    if (out.has(trackId))
      throw corruptAt(r.path, c.start, `a second trex for track ${trackId} (§8.8.3: one per track)`);
    out.set(trackId, {
      defaultSampleDescriptionIndex: r.u32(),
      defaultSampleDuration: r.u32(),
      defaultSampleSize: r.u32(),
      defaultSampleFlags: r.u32(),
    });
  }
  return out;
}

function readTrak(trak: Found, path: string, trexes: Map<number, TrexDefaults> | undefined): MoovTrack {
  const boxes = firstChildren(trak.payload, trak.start + trak.headerSize, path);
  const tkhd = readTkhd(reader(requireChild(boxes, 'tkhd', path, trak.start + trak.headerSize), `${path}/tkhd`));
  const mdiaPath = `${path}/mdia`;
  const mdiaBox = requireChild(boxes, 'mdia', path, trak.start + trak.headerSize);
  const mdia = firstChildren(mdiaBox.payload, mdiaBox.start + mdiaBox.headerSize, mdiaPath);
  const mdhd = readMdhd(reader(requireChild(mdia, 'mdhd', mdiaPath, mdiaBox.start), `${mdiaPath}/mdhd`));
  const hdlr = reader(requireChild(mdia, 'hdlr', mdiaPath, mdiaBox.start), `${mdiaPath}/hdlr`);
  hdlr.skip(4 + 4); // version + flags, pre_defined
  const handlerAt = hdlr.base + hdlr.offset;
  const handler = hdlr.fourcc();
  const minfBox = requireChild(mdia, 'minf', mdiaPath, mdiaBox.start);
  const minf = firstChildren(minfBox.payload, minfBox.start + minfBox.headerSize, `${mdiaPath}/minf`);
  const stblPath = `${mdiaPath}/minf/stbl`;
  const stblBox = requireChild(minf, 'stbl', `${mdiaPath}/minf`, minfBox.start);
  const stbl = firstChildren(stblBox.payload, stblBox.start + stblBox.headerSize, stblPath);
  const stsdBox = requireChild(stbl, 'stsd', stblPath, stblBox.start);
  // The stsd's bytes, header included; Uint8Array.from copies (the moov's buffer is not kept alive).
  const at = stsdBox.start - (trak.start + trak.headerSize);
  const stsd = Uint8Array.from(trak.payload.subarray(at, at + stsdBox.size));
  const entry = readSampleEntry(stsd, `${stblPath}/stsd`, stsdBox.start);
  const entryPath = `${stblPath}/stsd/${entry.type}`;

  let trexDefaults = NO_TREX;
  if (trexes !== undefined) {
    const found = trexes.get(tkhd.trackID);
    if (found === undefined) throw corruptAt('moov/mvex', trak.start, `no trex for track ${tkhd.trackID}`);
    trexDefaults = found;
  }
  const base: TrackProperties = {
    type: trackType(handler),
    FourCC: '',
    trackID: tkhd.trackID,
    trackName: '',
    systemBitrate: 0,
    systemLanguage: languageOf(mdhd.packedLanguage, mdia.get('elng')),
    TimeScale: mdhd.timescale,
    CodecPrivateData: '',
    codecs: '',
    sampleEntry: entry.type,
  };
  const handlerType = HANDLER_ALIASES[handler] ?? handler;
  if (!HANDLERS.includes(handlerType)) {
    throw originError(
      'unsupported-media',
      `handler '${printable(handler)}' is not one of ${HANDLERS.join(', ')} (at file offset ${handlerAt})`,
      { subject: `${mdiaPath}/hdlr` },
    );
  }
  const properties = describe(base, entry, entryPath);
  properties.trackName = `${properties.type}_${properties.systemLanguage}`;
  const header: TrackHeader = {
    ...tkhd,
    handler: handlerType as HandlerType,
    timescale: mdhd.timescale,
    language: unpackLanguage(mdhd.packedLanguage),
    stsd,
    trexDefaults,
    sampleEntry: entry.type,
    codec: entry.codec,
  };
  return { properties, header };
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
function readMdhd(r: ByteReader): { timescale: number; packedLanguage: number } {
  const version = r.u8();
  r.skip(3);
  r.skip(version === 1 ? 16 : 8);
  const timescale = r.u32();
  if (timescale === 0) r.fail('timescale is 0');
  r.skip(version === 1 ? 8 : 4); // duration
  return { timescale, packedLanguage: r.u16() & 0x7fff };
}

function trackType(handler: string): TrackType {
  switch (handler) {
    case 'vide':
      return 'video';
    case 'soun':
      return 'audio';
    case 'text':
    case 'subt':
    case 'sbtl':
      return 'textstream';
    default:
      return 'data';
  }
}

/** mdhd language (§8.4.2.3), overridden by an extended `elng` tag (§8.4.6). */
function languageOf(packed: number, elng: Found | undefined): string {
  if (elng !== undefined && elng.payload.byteLength > 4) {
    const tag = elng.payload.subarray(4);
    const end = tag.indexOf(0);
    const extended = Buffer.from(end < 0 ? tag : tag.subarray(0, end)).toString('latin1');
    if (/^[a-z]{3}$/.test(extended)) return extended;
  }
  return unpackLanguage(packed);
}

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex').toUpperCase();
const hex2 = (n: number): string => n.toString(16).toUpperCase().padStart(2, '0');

/** The track type each sample entry belongs to (ISO/IEC 14496-12 §8.5.2.2: the entry follows the handler). */
const ENTRY_TYPE: Record<string, readonly TrackType[]> = {
  avc: ['video'],
  aac: ['audio'],
  ac3: ['audio'],
  ec3: ['audio'],
  stpp: ['textstream', 'data'],
  wvtt: ['textstream', 'data'],
};

/**
 * The filter-visible properties of a sample entry. A sample entry of another kind than the
 * handler's (`avc1` under `soun`) is refused here: every later step trusts the type, and an MPEG-TS
 * writer handed "video" samples of AAC would fail its own invariant checks instead.
 */
function describe(p: TrackProperties, entry: SampleEntry, path: string): TrackProperties {
  const codec = entry.codec;
  const allowed = ENTRY_TYPE[codec?.kind ?? entry.type];
  if (allowed !== undefined && !allowed.includes(p.type)) {
    throw originError('corrupt-media', `sample entry ${printable(entry.type)} in a track of type ${p.type}`, {
      subject: path,
    });
  }
  switch (codec?.kind) {
    case 'avc':
      return describeAvc(p, codec);
    case 'aac': {
      const config = parseAudioSpecificConfig(codec.asc);
      if (config.objectType !== 2 && config.objectType !== 5 && config.objectType !== 29) {
        throw originError('unsupported-media', `unsupported AAC audio object type ${config.objectType}`, {
          subject: `${path}/esds`,
        });
      }
      // Smooth FourCC: AACL for AAC-LC, AACH for HE-AAC (MS-SSTR §2.2.2.5); AudioTag 255 = WAVE_FORMAT_RAW_AAC1.
      const fourcc = config.objectType === 2 ? 'AACL' : 'AACH';
      const described = {
        ...p,
        FourCC: fourcc,
        codecs: `mp4a.40.${config.objectType}`,
        CodecPrivateData: hex(codec.asc),
      };
      return audio(described, config.channels, config.sampleRate, 255, entry);
    }
    case 'ac3':
    case 'ec3': {
      // AudioTag: WAVE_FORMAT_DOLBY_AC3 (0x2000) for AC-3; E-AC-3 is WAVE_FORMAT_EXTENSIBLE (0xFFFE) in Smooth.
      const described = { ...p, FourCC: entry.type, codecs: entry.type, CodecPrivateData: hex(codec.record) };
      return audio(described, codec.channels, codec.sampleRate, codec.kind === 'ac3' ? 0x2000 : 0xfffe, entry);
    }
    case undefined:
      break;
  }
  switch (entry.type) {
    case 'stpp':
      // ISO/IEC 14496-30 §5: TTML in ISO BMFF. The codecs string of the reference's MPDs.
      return { ...p, type: textType(p), FourCC: 'TTML', codecs: 'stpp.ttml.im1t', Roles: 'subtitle' };
    case 'wvtt':
      return { ...p, type: textType(p), FourCC: 'WVTT', codecs: 'wvtt', Roles: 'subtitle' };
    case 'urim':
      // Timed metadata (model/timed-metadata.ts): a data track whatever its handler says.
      if (entry.uri !== EMSG_TRACK_URI)
        throw originError(
          'unsupported-media',
          `urim track with URI '${entry.uri ?? ''}' (supported: ${EMSG_TRACK_URI}, samples of emsg boxes)`,
          { subject: `${path}/uri ` },
        );
      return { ...p, type: 'data', FourCC: 'urim', codecs: 'urim' };
    case 'evte':
      // ISO/IEC 23001-18 event message track.
      return { ...p, type: 'data', FourCC: 'evte', codecs: 'evte' };
    default:
      throw originError(
        'unsupported-media',
        `unsupported codec '${printable(entry.type)}' (supported: ${SUPPORTED_SAMPLE_ENTRIES.join(', ')})`,
        { subject: path },
      );
  }
}

const textType = (p: TrackProperties): TrackType => (p.type === 'data' ? 'textstream' : p.type);

/** Properties from the SPS (ISO/IEC 14496-10 §7.3.2.1.1) of an AVCDecoderConfigurationRecord. */
function describeAvc(p: TrackProperties, avc: AvcConfig): TrackProperties {
  const sps = parseSps(avc.parameterSets[0]!);
  const displayWidth = Math.round((sps.width * sps.sar.num) / sps.sar.den);
  const startCode = '00000001';
  return {
    ...p,
    FourCC: 'AVC1',
    codecs: `${p.sampleEntry}.${hex2(sps.profileIdc)}${hex2(sps.constraintFlags)}${hex2(sps.levelIdc)}`,
    // Smooth CodecPrivateData for AVC: Annex-B start codes before each SPS and PPS (MS-SSTR §2.2.2.5).
    CodecPrivateData: avc.parameterSets.map((s) => startCode + hex(s)).join(''),
    MaxWidth: sps.width,
    MaxHeight: sps.height,
    DisplayWidth: displayWidth,
    DisplayHeight: sps.height,
    avc_profile: sps.profileIdc,
    avc_level: sps.levelIdc,
    ScanType: sps.interlaced ? 'interlaced' : 'progressive',
    ...(sps.frameRate ? { FrameRate: sps.frameRate } : {}),
  };
}

function audio(
  p: TrackProperties,
  configChannels: number,
  sampleRate: number,
  audioTag: number,
  entry: SampleEntry,
): TrackProperties {
  const bitsPerSample = entry.audio?.sampleSize || 16;
  const channels = configChannels || (entry.audio?.channelCount ?? 0);
  return {
    ...p,
    AudioTag: audioTag,
    Channels: channels,
    SamplingRate: sampleRate,
    BitsPerSample: bitsPerSample,
    PacketSize: (channels * bitsPerSample) / 8,
  };
}

/** Frame rate from fragment sample timing: timescale × samples / duration, exact (used when the SPS has no VUI timing). */
export function frameRateFromTiming(timescale: number, samples: number, duration: number): Rational | undefined {
  if (samples <= 0 || duration <= 0) return undefined;
  return rational(timescale * samples, duration);
}
