// Server-manifest tracks ↔ track properties. Writing stores what the reference stores
// (docs/specs.md, reference §1.3) plus FrameRate and ScanType, which cannot always be derived later.
// Reading fills what a hand-written or reference manifest leaves out from CodecPrivateData
// (the AVC SPS gives profile, level, coded size, scan type and often the frame rate).

import { originError } from '../errors';
import { parseAudioSpecificConfig } from '../media/audio-config';
import { parseSps } from '../media/h264-sps';
import { TrackProperties, TrackType } from '../model/media';
import { formatRational, parseRational } from '../rational';
import { IsmParam, IsmTrack, TrackElement } from './server-manifest';

/** Smooth's default timescale (MS-SSTR §2.2.2.1): 100 ns units. */
export const DEFAULT_TIMESCALE = 10_000_000;

const ELEMENT_OF: Record<TrackType, TrackElement | undefined> = {
  video: 'video',
  audio: 'audio',
  textstream: 'textstream',
  // Timed metadata: a textstream element (MS's server manifest has no other for non-media
  // tracks), told apart by its FourCC (urim, evte).
  data: 'textstream',
};

/** FourCCs of timed-metadata tracks (media/moov.ts): their element is textstream, their type data. */
const DATA_FOURCCS = new Set(['URIM', 'EVTE']);

export function propertiesToIsmTrack(p: TrackProperties, src: string): IsmTrack {
  const element = ELEMENT_OF[p.type];
  if (element === undefined)
    throw originError(
      'unsupported-media',
      `track ${p.trackID} of type '${p.type}' cannot be stored in a server manifest yet`,
      { subject: src },
    );
  const params: IsmParam[] = [];
  const add = (name: string, value: string | number | undefined): void => {
    if (value !== undefined && value !== '') params.push({ name, value: String(value), valueType: 'data' });
  };
  add('trackID', p.trackID);
  add('trackName', p.trackName);
  add('TimeScale', p.TimeScale);
  if (p.type === 'video') {
    add('MaxWidth', p.MaxWidth);
    add('MaxHeight', p.MaxHeight);
    add('DisplayWidth', p.DisplayWidth);
    add('DisplayHeight', p.DisplayHeight);
    add('FrameRate', p.FrameRate ? formatRational(p.FrameRate) : undefined);
    add('ScanType', p.ScanType);
  }
  if (p.type === 'audio') {
    add('SamplingRate', p.SamplingRate);
    add('Channels', p.Channels);
    add('BitsPerSample', p.BitsPerSample);
    add('PacketSize', p.PacketSize);
    add('AudioTag', p.AudioTag);
  }
  add('FourCC', p.FourCC);
  add('CodecPrivateData', p.CodecPrivateData);
  add('Roles', p.Roles);
  add('InbandEvents', p.InbandEvents);
  return {
    element,
    src,
    systemBitrate: p.systemBitrate,
    systemLanguage: p.systemLanguage,
    extraAttributes: [],
    params,
  };
}

export function ismTrackToProperties(t: IsmTrack, index: number): TrackProperties {
  const where = `<${t.element}> #${index + 1} (src="${t.src}")`;
  const fail = (what: string): never => {
    throw originError('bad-request', what, { subject: where });
  };
  // Param names as the reference writes them; a different case is accepted too.
  const byName = new Map<string, string>();
  for (const p of t.params) byName.set(p.name.toLowerCase(), p.value);
  const text = (name: string): string | undefined => byName.get(name.toLowerCase());
  const int = (name: string): number | undefined => {
    const v = text(name);
    if (v === undefined || v === '') return undefined;
    if (!/^-?\d{1,15}$/.test(v)) fail(`param ${name}="${v}" is not an integer`);
    return Number(v);
  };
  const language = t.systemLanguage && t.systemLanguage !== '' ? t.systemLanguage : 'und';
  const fourcc = text('FourCC') ?? fail('no FourCC param');
  const type: TrackType = t.element === 'textstream' && DATA_FOURCCS.has(fourcc.toUpperCase()) ? 'data' : t.element;
  const cpd = (text('CodecPrivateData') ?? '').toUpperCase();
  if (cpd !== '' && !/^([0-9A-F]{2})+$/.test(cpd)) fail('param CodecPrivateData is not hexadecimal');
  const p: TrackProperties = {
    type,
    FourCC: fourcc,
    trackID: int('trackID') ?? fail('no trackID param'),
    trackName: text('trackName') ?? `${type}_${language}`,
    systemBitrate: t.systemBitrate,
    systemLanguage: language,
    TimeScale: int('TimeScale') ?? DEFAULT_TIMESCALE,
    CodecPrivateData: cpd,
    codecs: '',
    sampleEntry: '',
  };
  const roles = text('Roles');
  if (roles !== undefined) p.Roles = roles;
  const inband = text('InbandEvents');
  if (inband !== undefined) {
    if (inband !== 'emsg') fail(`param InbandEvents="${inband}" (the one value is emsg)`);
    p.InbandEvents = 'emsg';
  }
  if (type === 'video') readVideo(p, text, int, fail);
  if (type === 'audio') readAudio(p, int);
  deriveCodec(p, fail);
  return p;
}

function readVideo(
  p: TrackProperties,
  text: (n: string) => string | undefined,
  int: (n: string) => number | undefined,
  fail: (what: string) => never,
): void {
  const set = <K extends keyof TrackProperties>(k: K, v: TrackProperties[K] | undefined): void => {
    if (v !== undefined) p[k] = v;
  };
  set('MaxWidth', int('MaxWidth'));
  set('MaxHeight', int('MaxHeight'));
  set('DisplayWidth', int('DisplayWidth'));
  set('DisplayHeight', int('DisplayHeight'));
  const fr = text('FrameRate');
  if (fr !== undefined) {
    const r = parseRational(fr);
    if (r === undefined || r.num <= 0)
      fail(`param FrameRate="${fr}" is not a positive integer or rational like 30000/1001`);
    p.FrameRate = r;
  }
  const scan = text('ScanType');
  if (scan !== undefined) {
    if (scan !== 'progressive' && scan !== 'interlaced')
      fail(`param ScanType="${scan}" must be progressive or interlaced`);
    p.ScanType = scan as 'progressive' | 'interlaced';
  }
}

function readAudio(p: TrackProperties, int: (n: string) => number | undefined): void {
  for (const k of ['SamplingRate', 'Channels', 'BitsPerSample', 'PacketSize', 'AudioTag'] as const) {
    const v = int(k);
    if (v !== undefined) p[k] = v;
  }
}

/** Fills codecs, sampleEntry and what the codec configuration implies, without overriding params. */
function deriveCodec(p: TrackProperties, fail: (what: string) => never): void {
  const bytes = Buffer.from(p.CodecPrivateData, 'hex');
  switch (p.FourCC.toUpperCase()) {
    case 'AVC1':
    case 'H264': {
      p.sampleEntry = 'avc1';
      // Annex-B: split on start codes, take the first SPS (nal_unit_type 7).
      const nals = splitAnnexB(bytes);
      const spsNal = nals.find((n) => (n[0]! & 0x1f) === 7);
      if (spsNal === undefined) {
        p.codecs = 'avc1';
        return;
      }
      const sps = parseSps(spsNal);
      const h = (n: number): string => n.toString(16).toUpperCase().padStart(2, '0');
      p.codecs = `avc1.${h(sps.profileIdc)}${h(sps.constraintFlags)}${h(sps.levelIdc)}`;
      p.avc_profile = sps.profileIdc;
      p.avc_level = sps.levelIdc;
      p.MaxWidth ??= sps.width;
      p.MaxHeight ??= sps.height;
      p.DisplayWidth ??= Math.round((sps.width * sps.sar.num) / sps.sar.den);
      p.DisplayHeight ??= sps.height;
      p.ScanType ??= sps.interlaced ? 'interlaced' : 'progressive';
      if (p.FrameRate === undefined && sps.frameRate) p.FrameRate = sps.frameRate;
      return;
    }
    case 'AACL':
    case 'AACH': {
      p.sampleEntry = 'mp4a';
      if (bytes.byteLength === 0) {
        p.codecs = p.FourCC.toUpperCase() === 'AACL' ? 'mp4a.40.2' : 'mp4a.40.5';
        return;
      }
      const asc = parseAudioSpecificConfig(bytes);
      p.codecs = `mp4a.40.${asc.objectType}`;
      p.SamplingRate ??= asc.sampleRate;
      p.Channels ??= asc.channels;
      return;
    }
    case 'AC-3':
    case 'EC-3':
      p.sampleEntry = p.FourCC.toLowerCase();
      p.codecs = p.sampleEntry;
      return;
    case 'TTML':
      p.sampleEntry = 'stpp';
      p.codecs = 'stpp.ttml.im1t';
      return;
    case 'WVTT':
      p.sampleEntry = 'wvtt';
      p.codecs = 'wvtt';
      return;
    case 'URIM':
    case 'EVTE':
      p.sampleEntry = p.FourCC.toLowerCase();
      p.codecs = p.sampleEntry;
      return;
    default:
      fail(`FourCC '${p.FourCC}' is not supported`);
  }
}

function splitAnnexB(bytes: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  let start = -1;
  for (let i = 0; i + 2 < bytes.byteLength; i++) {
    if (bytes[i] === 0 && bytes[i + 1] === 0 && bytes[i + 2] === 1) {
      if (start >= 0) out.push(trimZeros(bytes.subarray(start, i)));
      start = i + 3;
      i += 2;
    }
  }
  if (start >= 0 && start < bytes.byteLength) out.push(bytes.subarray(start));
  return out.filter((n) => n.byteLength > 0);
}

function trimZeros(nal: Uint8Array): Uint8Array {
  let end = nal.byteLength;
  while (end > 0 && nal[end - 1] === 0) end--;
  return nal.subarray(0, end);
}
