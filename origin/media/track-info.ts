// Track properties from a `moov` box. mp4box (the chosen dependency) parses the box tree; the
// codec-specific payloads (avcC, esds, dac3, dec3) go through our narrow readers, which give the
// exact values the filter language needs (ISO/IEC 14496-12 §8.3–8.5, 14496-15 §5.3.3).

import { createFile, MP4BoxBuffer } from 'mp4box';
import { OriginError } from '../errors';
import { TrackProperties, TrackType } from '../model';
import { rational, Rational } from '../rational';
import { parseAudioSpecificConfig, parseDac3, parseDec3, AudioConfig } from './audio-config';
import { TrackDefaults } from './boxes';
import { parseSps } from './h264-sps';

/** The subset of mp4box's box objects we read; offsets are relative to the buffer given to it. */
interface RawBox {
  type: string;
  start: number;
  size: number;
  hdr_size: number;
  boxes?: RawBox[];
  [field: string]: unknown;
}

export interface MoovTrack {
  /** Everything but systemBitrate (needs the fragments) and a presentation-unique trackName. */
  properties: TrackProperties;
  defaults: TrackDefaults;
}

export const SUPPORTED_SAMPLE_ENTRIES = ['avc1', 'avc3', 'mp4a', 'ac-3', 'ec-3', 'stpp', 'wvtt'];

/** Parses a complete `moov` box (header included). */
export function readMoov(moov: Uint8Array, fileName: string): { tracks: MoovTrack[]; fragmented: boolean } {
  const buffer = MP4BoxBuffer.fromArrayBuffer(
    moov.buffer.slice(moov.byteOffset, moov.byteOffset + moov.byteLength) as ArrayBuffer,
    0,
  );
  const file = createFile();
  let failure: string | undefined;
  file.onError = (_module: string, message: string) => {
    failure = message;
  };
  // mp4box reports recoverable oddities (shaka-packager's stpp entry is one byte short) with
  // console.error and has no quieter level; collect them, and show them only if parsing fails.
  const notes: string[] = [];
  const consoleError = console.error;
  console.error = (...args: unknown[]) => notes.push(args.map(String).join(' '));
  try {
    file.appendBuffer(buffer);
    file.flush();
  } finally {
    console.error = consoleError;
  }
  const parsed = (file as unknown as { moov?: RawBox }).moov;
  if (failure !== undefined || parsed === undefined) {
    const why = [failure, ...notes].filter(Boolean).join('; ');
    throw new OriginError('corrupt-media', `moov does not parse${why ? `: ${why}` : ''}`, fileName);
  }
  const traks = (parsed['traks'] as RawBox[] | undefined) ?? [];
  const mvex = parsed['mvex'] as RawBox | undefined;
  const trexs = (mvex?.['trexs'] as RawBox[] | undefined) ?? [];
  const tracks = traks.map((trak, i) => readTrak(trak, moov, trexs, `${fileName}: moov/trak[${i}]`));
  return { tracks, fragmented: mvex !== undefined };
}

function child(box: RawBox | undefined, name: string, path: string): RawBox {
  const c = box?.[name] as RawBox | undefined;
  if (c === undefined) throw new OriginError('corrupt-media', `missing ${name} box`, path);
  return c;
}

function payloadOf(box: RawBox, moov: Uint8Array): Uint8Array {
  return moov.subarray(box.start + box.hdr_size, box.start + box.size);
}

function num(box: RawBox, field: string): number {
  const v = box[field];
  return typeof v === 'number' ? v : 0;
}

function readTrak(trak: RawBox, moov: Uint8Array, trexs: RawBox[], path: string): MoovTrack {
  const tkhd = child(trak, 'tkhd', path);
  const mdia = child(trak, 'mdia', path);
  const mdhd = child(mdia, 'mdhd', `${path}/mdia`);
  const hdlr = child(mdia, 'hdlr', `${path}/mdia`);
  const stsd = child(child(child(mdia, 'minf', `${path}/mdia`), 'stbl', `${path}/mdia/minf`), 'stsd', `${path}/mdia/minf/stbl`);
  const entries = (stsd['entries'] as RawBox[] | undefined) ?? [];
  const entry = entries[0];
  const entryPath = `${path}/mdia/minf/stbl/stsd`;
  if (entry === undefined) throw new OriginError('corrupt-media', 'no sample entry', entryPath);
  const trackID = num(tkhd, 'track_id');
  const timescale = num(mdhd, 'timescale');
  if (timescale <= 0) throw new OriginError('corrupt-media', 'timescale is 0', `${path}/mdia/mdhd`);
  const trex = trexs.find((t) => num(t, 'track_id') === trackID);
  const defaults: TrackDefaults = {
    defaultSampleDuration: trex ? num(trex, 'default_sample_duration') : 0,
    defaultSampleSize: trex ? num(trex, 'default_sample_size') : 0,
    defaultSampleFlags: trex ? num(trex, 'default_sample_flags') : 0,
  };
  const type = trackType(String(hdlr['handler'] ?? ''));
  const base: TrackProperties = {
    type,
    FourCC: '',
    trackID,
    trackName: '',
    systemBitrate: 0,
    systemLanguage: languageOf(mdhd, mdia),
    TimeScale: timescale,
    CodecPrivateData: '',
    codecs: '',
    sampleEntry: entry.type,
  };
  const sub = (name: string): RawBox | undefined => entry.boxes?.find((b) => b.type === name);
  const properties = describeEntry(base, entry, sub, moov, `${entryPath}/${entry.type}`);
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

/** mdhd language (§8.4.2.3: three 5-bit letters + 0x60), overridden by an extended `elng` tag. */
function languageOf(mdhd: RawBox, mdia: RawBox): string {
  const elng = mdia['elng'] as RawBox | undefined;
  const extended = elng?.['extended_language'];
  if (typeof extended === 'string' && /^[a-z]{3}$/.test(extended)) return extended;
  const packed = mdhd['language'];
  if (typeof packed === 'number' && packed !== 0) {
    const code = String.fromCharCode(((packed >> 10) & 31) + 0x60, ((packed >> 5) & 31) + 0x60, (packed & 31) + 0x60);
    if (/^[a-z]{3}$/.test(code)) return code;
  }
  if (typeof packed === 'string' && /^[a-z]{3}$/.test(packed)) return packed;
  return 'und';
}

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex').toUpperCase();
const hex2 = (n: number): string => n.toString(16).toUpperCase().padStart(2, '0');

function describeEntry(
  p: TrackProperties,
  entry: RawBox,
  sub: (name: string) => RawBox | undefined,
  moov: Uint8Array,
  path: string,
): TrackProperties {
  switch (entry.type) {
    case 'avc1':
    case 'avc3':
      return describeAvc(p, sub('avcC'), moov, path);
    case 'mp4a':
      return describeAac(p, entry, path);
    case 'ac-3':
    case 'ec-3': {
      const box = sub(entry.type === 'ac-3' ? 'dac3' : 'dec3');
      if (box === undefined) throw new OriginError('corrupt-media', `${entry.type} sample entry without its ${entry.type === 'ac-3' ? 'dac3' : 'dec3'} box`, path);
      const payload = payloadOf(box, moov);
      const config = entry.type === 'ac-3' ? parseDac3(payload) : parseDec3(payload);
      // AudioTag: WAVE_FORMAT_DOLBY_AC3 (0x2000) for AC-3; E-AC-3 is WAVE_FORMAT_EXTENSIBLE (0xFFFE) in Smooth.
      return audio({ ...p, FourCC: entry.type, codecs: entry.type, CodecPrivateData: hex(payload) }, config, entry.type === 'ac-3' ? 0x2000 : 0xfffe, entry);
    }
    case 'stpp':
      // ISO/IEC 14496-30 §5: TTML in ISO BMFF. The codecs string of the reference's MPDs.
      return { ...p, type: p.type === 'data' ? 'textstream' : p.type, FourCC: 'TTML', codecs: 'stpp.ttml.im1t', Roles: 'subtitle' };
    case 'wvtt':
      return { ...p, type: p.type === 'data' ? 'textstream' : p.type, FourCC: 'WVTT', codecs: 'wvtt', Roles: 'subtitle' };
    default:
      throw new OriginError(
        'unsupported-media',
        `unsupported codec '${entry.type}' (supported: ${SUPPORTED_SAMPLE_ENTRIES.join(', ')})`,
        path,
      );
  }
}

/** ISO/IEC 14496-15 §5.3.3.1 AVCDecoderConfigurationRecord. */
function describeAvc(p: TrackProperties, avcC: RawBox | undefined, moov: Uint8Array, path: string): TrackProperties {
  if (avcC === undefined) throw new OriginError('corrupt-media', 'avc1 sample entry without avcC', path);
  const b = payloadOf(avcC, moov);
  const fail = (what: string): never => {
    throw new OriginError('corrupt-media', what, `${path}/avcC`);
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

/** ISO/IEC 14496-1 §7.2.6.7: the DecoderSpecificInfo (tag 5) inside the esds descriptors. */
function findDecoderSpecificInfo(desc: unknown): Uint8Array | undefined {
  const d = desc as { tag?: number; data?: Uint8Array | Record<string, number>; descs?: unknown[] } | undefined;
  if (d === undefined || d === null) return undefined;
  if (d.tag === 5 && d.data !== undefined) return Uint8Array.from(Object.values(d.data));
  for (const c of d.descs ?? []) {
    const found = findDecoderSpecificInfo(c);
    if (found) return found;
  }
  return undefined;
}

function describeAac(p: TrackProperties, entry: RawBox, path: string): TrackProperties {
  const esds = entry['esds'] as RawBox | undefined;
  const asc = findDecoderSpecificInfo(esds?.['esd']);
  if (asc === undefined) throw new OriginError('corrupt-media', 'mp4a sample entry without an AudioSpecificConfig', `${path}/esds`);
  const config = parseAudioSpecificConfig(asc);
  if (config.objectType !== 2 && config.objectType !== 5 && config.objectType !== 29) {
    throw new OriginError('unsupported-media', `unsupported AAC audio object type ${config.objectType}`, `${path}/esds`);
  }
  // Smooth FourCC: AACL for AAC-LC, AACH for HE-AAC (MS-SSTR §2.2.2.5); AudioTag 255 = WAVE_FORMAT_RAW_AAC1.
  const fourcc = config.objectType === 2 ? 'AACL' : 'AACH';
  return audio({ ...p, FourCC: fourcc, codecs: `mp4a.40.${config.objectType}`, CodecPrivateData: hex(asc) }, config, 255, entry);
}

function audio(p: TrackProperties, config: AudioConfig, audioTag: number, entry: RawBox): TrackProperties {
  const bitsPerSample = num(entry, 'samplesize') || 16;
  const channels = config.channels || num(entry, 'channel_count');
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
