// Track properties from a `moov` box, with a narrow reader of our own: the boxes below are all
// the properties need, and this runs on a presentation's first request, where parsing the whole
// moov with mp4box cost a cold process about 10 ms for five files (docs/design/performance.md#own-moov-reader).
// mp4box stays the tests' independent judge of the MP4 we write. The codec-specific payloads
// (avcC, esds, dac3, dec3) go through our readers, which give the exact values the filter
// language needs.
//
// Boxes read: ISO/IEC 14496-12 §8.2.1 moov, §8.3.1 trak, §8.3.2 tkhd, §8.4.1 mdia, §8.4.2 mdhd,
// §8.4.3 hdlr, §8.4.6 elng, §8.4.4 minf, §8.5.1 stbl, §8.5.2 stsd and its first sample entry
// (§12.1.3 visual, §12.2.3 audio), §8.8.1 mvex, §8.8.3 trex; ISO/IEC 14496-15 §5.3.3 avcC;
// ISO/IEC 14496-14 §5.6 esds; ETSI TS 102 366 Annex F dac3/dec3.

import { originError } from '../errors';
import { TrackProperties, TrackType } from '../model/media';
import { rational, Rational } from '../rational';
import { parseAudioSpecificConfig, parseDac3, parseDec3, AudioConfig } from './audio-config';
import {
  BoxHeader,
  childBoxes,
  FirstChildren,
  firstChildren,
  readBoxHeader,
  requireChild,
  TrexDefaults,
  unpackLanguage,
} from './boxes';
import { ByteReader, corruptAt } from './byte-reader';
import { parseSps } from './h264-sps';

export interface MoovTrack {
  /** Everything but systemBitrate (needs the fragments) and a presentation-unique trackName. */
  properties: TrackProperties;
  defaults: TrexDefaults;
}

export const SUPPORTED_SAMPLE_ENTRIES = ['avc1', 'avc3', 'mp4a', 'ac-3', 'ec-3', 'stpp', 'wvtt'];

/** A box found in a container: its absolute start, header size, and payload view. */
type Found = BoxHeader & { payload: Uint8Array };

const reader = (box: Found, path: string): ByteReader => new ByteReader(box.payload, path, box.start + box.headerSize);

/** Parses a complete `moov` box (header included); `fileName` prefixes every error's box path. */
export function readMoov(moov: Uint8Array, fileName: string): { tracks: MoovTrack[]; fragmented: boolean } {
  const top = readBoxHeader(moov, 0, 0, moov.byteLength, `${fileName}: moov`);
  if (top === undefined || top.type !== 'moov' || top.size !== moov.byteLength)
    throw originError('corrupt-media', 'moov does not parse: not one complete moov box', { subject: fileName });
  const traks: Found[] = [];
  let mvex: Found | undefined;
  for (const c of childBoxes(moov.subarray(top.headerSize, top.size), top.headerSize, `${fileName}: moov`)) {
    if (c.type === 'trak') traks.push(c);
    else if (c.type === 'mvex' && mvex === undefined) mvex = c;
  }
  const trexes = new Map<number, TrexDefaults>();
  if (mvex !== undefined) {
    for (const c of childBoxes(mvex.payload, mvex.start + mvex.headerSize, `${fileName}: moov/mvex`)) {
      if (c.type !== 'trex') continue;
      const r = reader(c, `${fileName}: moov/mvex/trex`);
      r.skip(4); // version + flags
      const id = r.u32();
      const defaultSampleDescriptionIndex = r.u32();
      if (!trexes.has(id))
        trexes.set(id, {
          defaultSampleDescriptionIndex,
          defaultSampleDuration: r.u32(),
          defaultSampleSize: r.u32(),
          defaultSampleFlags: r.u32(),
        });
    }
  }
  const tracks = traks.map((trak, i) => readTrak(trak, trexes, `${fileName}: moov/trak[${i}]`));
  return { tracks, fragmented: mvex !== undefined };
}

function readTrak(trak: Found, trexes: Map<number, TrexDefaults>, path: string): MoovTrack {
  const boxes = firstChildren(trak.payload, trak.start + trak.headerSize, path);
  const tkhd = reader(requireChild(boxes, 'tkhd', path, trak.start), `${path}/tkhd`);
  const tkhdVersion = tkhd.u8();
  tkhd.skip(3 + (tkhdVersion === 1 ? 16 : 8)); // flags, creation_time, modification_time
  const trackID = tkhd.u32();
  const mdiaPath = `${path}/mdia`;
  const mdiaBox = requireChild(boxes, 'mdia', path, trak.start);
  const mdia = firstChildren(mdiaBox.payload, mdiaBox.start + mdiaBox.headerSize, mdiaPath);
  const mdhd = reader(requireChild(mdia, 'mdhd', mdiaPath, mdiaBox.start), `${mdiaPath}/mdhd`);
  const mdhdVersion = mdhd.u8();
  mdhd.skip(3 + (mdhdVersion === 1 ? 16 : 8));
  const timescale = mdhd.u32();
  if (timescale <= 0) throw originError('corrupt-media', 'timescale is 0', { subject: `${mdiaPath}/mdhd` });
  mdhd.skip(mdhdVersion === 1 ? 8 : 4); // duration
  const packedLanguage = mdhd.u16() & 0x7fff;
  const hdlr = reader(requireChild(mdia, 'hdlr', mdiaPath, mdiaBox.start), `${mdiaPath}/hdlr`);
  hdlr.skip(8); // version + flags, pre_defined
  const type = trackType(hdlr.fourcc());
  const minfBox = requireChild(mdia, 'minf', mdiaPath, mdiaBox.start);
  const minf = firstChildren(minfBox.payload, minfBox.start + minfBox.headerSize, `${mdiaPath}/minf`);
  const stblPath = `${mdiaPath}/minf/stbl`;
  const stblBox = requireChild(minf, 'stbl', `${mdiaPath}/minf`, minfBox.start);
  const stbl = firstChildren(stblBox.payload, stblBox.start + stblBox.headerSize, stblPath);
  const stsdBox = requireChild(stbl, 'stsd', stblPath, stblBox.start);
  const entryPath = `${stblPath}/stsd`;
  const stsd = reader(stsdBox, entryPath);
  stsd.skip(4); // version + flags
  if (stsd.u32() === 0) throw originError('corrupt-media', 'no sample entry', { subject: entryPath });
  const entry = childBoxes(stsdBox.payload.subarray(8), stsdBox.start + stsdBox.headerSize + 8, entryPath).next().value;
  if (entry === undefined) throw originError('corrupt-media', 'no sample entry', { subject: entryPath });
  // No trex (a file that is not fragmented): nothing to fall back on, the first sample entry.
  const defaults = trexes.get(trackID) ?? {
    defaultSampleDescriptionIndex: 1,
    defaultSampleDuration: 0,
    defaultSampleSize: 0,
    defaultSampleFlags: 0,
  };
  const base: TrackProperties = {
    type,
    FourCC: '',
    trackID,
    trackName: '',
    systemBitrate: 0,
    systemLanguage: languageOf(packedLanguage, mdia.get('elng')),
    TimeScale: timescale,
    CodecPrivateData: '',
    codecs: '',
    sampleEntry: entry.type,
  };
  const properties = describeEntry(base, entry, `${entryPath}/${entry.type}`);
  properties.trackName = `${type}_${properties.systemLanguage}`;
  return { properties, defaults };
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

/** mdhd language (§8.4.2.3: three 5-bit letters + 0x60), overridden by an extended `elng` tag (§8.4.6). */
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

/** §12.1.3 VisualSampleEntry: 8 bytes of SampleEntry, then 70 bytes of fields before the child boxes. */
const VISUAL_ENTRY_FIELDS = 78;
/** §12.2.3 AudioSampleEntry (version 0): 8 + 20 bytes; QuickTime's sound description versions 1 and 2 add 16 and 36. */
const AUDIO_ENTRY_FIELDS = 28;

/** The child boxes of a sample entry after its `fields` bytes. */
function entryChildren(entry: Found, fields: number, path: string): FirstChildren {
  if (entry.payload.byteLength < fields)
    throw corruptAt(
      path,
      entry.start,
      `sample entry of ${entry.payload.byteLength} bytes is shorter than its ${fields} bytes of fields`,
    );
  return firstChildren(entry.payload.subarray(fields), entry.start + entry.headerSize + fields, path);
}

/** channelcount, samplesize and the child boxes of an audio sample entry. */
function audioEntry(entry: Found, path: string): { channelCount: number; sampleSize: number; boxes: FirstChildren } {
  const r = new ByteReader(entry.payload, path, entry.start + entry.headerSize);
  r.skip(8); // SampleEntry: reserved, data_reference_index
  const version = r.u16(); // reserved in ISO BMFF; the sound description version in QuickTime
  r.skip(6);
  const channelCount = r.u16();
  const sampleSize = r.u16();
  const extra = version === 1 ? 16 : version === 2 ? 36 : 0;
  return { channelCount, sampleSize, boxes: entryChildren(entry, AUDIO_ENTRY_FIELDS + extra, path) };
}

function describeEntry(p: TrackProperties, entry: Found & { type: string }, path: string): TrackProperties {
  switch (entry.type) {
    case 'avc1':
    case 'avc3':
      return describeAvc(p, entryChildren(entry, VISUAL_ENTRY_FIELDS, path).get('avcC'), path);
    case 'mp4a':
      return describeAac(p, audioEntry(entry, path), path);
    case 'ac-3':
    case 'ec-3': {
      const a = audioEntry(entry, path);
      const box = a.boxes.get(entry.type === 'ac-3' ? 'dac3' : 'dec3');
      if (box === undefined)
        throw originError(
          'corrupt-media',
          `${entry.type} sample entry without its ${entry.type === 'ac-3' ? 'dac3' : 'dec3'} box`,
          { subject: path },
        );
      const config = entry.type === 'ac-3' ? parseDac3(box.payload) : parseDec3(box.payload);
      // AudioTag: WAVE_FORMAT_DOLBY_AC3 (0x2000) for AC-3; E-AC-3 is WAVE_FORMAT_EXTENSIBLE (0xFFFE) in Smooth.
      return audio(
        { ...p, FourCC: entry.type, codecs: entry.type, CodecPrivateData: hex(box.payload) },
        config,
        entry.type === 'ac-3' ? 0x2000 : 0xfffe,
        a,
      );
    }
    case 'stpp':
      // ISO/IEC 14496-30 §5: TTML in ISO BMFF. The codecs string of the reference's MPDs.
      return {
        ...p,
        type: p.type === 'data' ? 'textstream' : p.type,
        FourCC: 'TTML',
        codecs: 'stpp.ttml.im1t',
        Roles: 'subtitle',
      };
    case 'wvtt':
      return {
        ...p,
        type: p.type === 'data' ? 'textstream' : p.type,
        FourCC: 'WVTT',
        codecs: 'wvtt',
        Roles: 'subtitle',
      };
    default:
      throw originError(
        'unsupported-media',
        `unsupported codec '${entry.type}' (supported: ${SUPPORTED_SAMPLE_ENTRIES.join(', ')})`,
        { subject: path },
      );
  }
}

/** ISO/IEC 14496-15 §5.3.3.1 AVCDecoderConfigurationRecord. */
function describeAvc(p: TrackProperties, avcC: Found | undefined, path: string): TrackProperties {
  if (avcC === undefined) throw originError('corrupt-media', 'avc1 sample entry without avcC', { subject: path });
  const b = avcC.payload;
  const fail = (what: string): never => {
    throw originError('corrupt-media', what, { subject: `${path}/avcC` });
  };
  if (b.byteLength < 7 || b[0] !== 1) fail('not an AVCDecoderConfigurationRecord version 1');
  const sets: { sps: Uint8Array[]; pps: Uint8Array[] } = { sps: [], pps: [] };
  let at = 5;
  const take = (into: Uint8Array[], count: number): void => {
    for (let i = 0; i < count; i++) {
      if (at + 2 > b.byteLength) fail('parameter set length past the end');
      const len = (b[at]! << 8) | b[at + 1]!;
      if (at + 2 + len > b.byteLength) fail('parameter set past the end');
      into.push(b.subarray(at + 2, at + 2 + len));
      at += 2 + len;
    }
  };
  take(sets.sps, b[at++]! & 0x1f);
  if (at >= b.byteLength) fail('no PPS count');
  take(sets.pps, b[at++]!);
  const first = sets.sps[0];
  if (first === undefined) fail('no SPS');
  const sps = parseSps(first!);
  const displayWidth = Math.round((sps.width * sps.sar.num) / sps.sar.den);
  const startCode = '00000001';
  return {
    ...p,
    FourCC: 'AVC1',
    codecs: `${p.sampleEntry}.${hex2(sps.profileIdc)}${hex2(sps.constraintFlags)}${hex2(sps.levelIdc)}`,
    // Smooth CodecPrivateData for AVC: Annex-B start codes before each SPS and PPS (MS-SSTR §2.2.2.5).
    CodecPrivateData: [...sets.sps, ...sets.pps].map((s) => startCode + hex(s)).join(''),
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

/**
 * ISO/IEC 14496-1 §7.2.6.5–7.2.6.7 inside an `esds` (ISO/IEC 14496-14 §5.6): ES_Descriptor (tag 3)
 * → DecoderConfigDescriptor (tag 4) → DecoderSpecificInfo (tag 5), the AudioSpecificConfig.
 */
function decoderSpecificInfo(esds: Uint8Array): Uint8Array | undefined {
  let at = 4; // version + flags
  const descriptor = (tag: number): { end: number } | undefined => {
    if (at >= esds.byteLength || esds[at] !== tag) return undefined;
    at++;
    // §8.3.3 expandable size: up to four bytes of 7 bits, high bit = more follows.
    let size = 0;
    for (let i = 0; i < 4; i++) {
      if (at >= esds.byteLength) return undefined;
      const b = esds[at++]!;
      size = (size << 7) | (b & 0x7f);
      if ((b & 0x80) === 0) break;
    }
    return at + size <= esds.byteLength ? { end: at + size } : undefined;
  };
  const es = descriptor(3);
  if (es === undefined || at + 3 > es.end) return undefined;
  const flags = esds[at + 2]!;
  at += 3; // ES_ID, flags
  if (flags & 0x80) at += 2; // dependsOn_ES_ID
  if (flags & 0x40) at += 1 + (esds[at] ?? 0); // URL
  if (flags & 0x20) at += 2; // OCR_ES_Id
  const config = descriptor(4);
  if (config === undefined) return undefined;
  at += 13; // objectTypeIndication, streamType, bufferSizeDB, maxBitrate, avgBitrate
  const info = descriptor(5);
  return info === undefined ? undefined : esds.subarray(at, info.end);
}

function describeAac(p: TrackProperties, a: ReturnType<typeof audioEntry>, path: string): TrackProperties {
  const esds = a.boxes.get('esds');
  const asc = esds === undefined ? undefined : decoderSpecificInfo(esds.payload);
  if (asc === undefined || asc.byteLength === 0)
    throw originError('corrupt-media', 'mp4a sample entry without an AudioSpecificConfig', { subject: `${path}/esds` });
  const config = parseAudioSpecificConfig(asc);
  if (config.objectType !== 2 && config.objectType !== 5 && config.objectType !== 29) {
    throw originError('unsupported-media', `unsupported AAC audio object type ${config.objectType}`, {
      subject: `${path}/esds`,
    });
  }
  // Smooth FourCC: AACL for AAC-LC, AACH for HE-AAC (MS-SSTR §2.2.2.5); AudioTag 255 = WAVE_FORMAT_RAW_AAC1.
  const fourcc = config.objectType === 2 ? 'AACL' : 'AACH';
  return audio(
    { ...p, FourCC: fourcc, codecs: `mp4a.40.${config.objectType}`, CodecPrivateData: hex(asc) },
    config,
    255,
    a,
  );
}

function audio(
  p: TrackProperties,
  config: AudioConfig,
  audioTag: number,
  entry: { channelCount: number; sampleSize: number },
): TrackProperties {
  const bitsPerSample = entry.sampleSize || 16;
  const channels = config.channels || entry.channelCount;
  return {
    ...p,
    AudioTag: audioTag,
    Channels: channels,
    SamplingRate: config.sampleRate,
    BitsPerSample: bitsPerSample,
    PacketSize: (channels * bitsPerSample) / 8,
  };
}

/** Frame rate from fragment sample timing: timescale × samples / duration, exact (used when the SPS has no VUI timing). */
export function frameRateFromTiming(timescale: number, samples: number, duration: number): Rational | undefined {
  if (samples <= 0 || duration <= 0) return undefined;
  return rational(timescale * samples, duration);
}
