// What the fixture script encoded for every fixture track (fixtures/README.md), written out
// literally: the expectations of the property and packaging tests.

import { TrackProperties } from '../../origin/model/media';

export interface Expected {
  file: string;
  target: number; // encode target, bit/s
  props: Partial<Omit<TrackProperties, 'FrameRate'>> & { FrameRate?: string };
}

interface VideoFacts {
  profile: number;
  level: number;
  /** Coded width and height. */
  max: [number, number];
  display: [number, number];
  rate: string;
  scan: 'progressive' | 'interlaced';
  codecs: string;
}

const video = ({ profile, level, max: [mw, mh], display: [dw, dh], rate, scan, codecs }: VideoFacts) => ({
  type: 'video' as const,
  FourCC: 'AVC1',
  sampleEntry: 'avc1',
  codecs,
  avc_profile: profile,
  avc_level: level,
  MaxWidth: mw,
  MaxHeight: mh,
  DisplayWidth: dw,
  DisplayHeight: dh,
  FrameRate: rate,
  ScanType: scan,
  TimeScale: 10_000_000,
  systemLanguage: 'eng',
  trackID: 1,
});
const aac = (lang: string) => ({
  type: 'audio' as const,
  FourCC: 'AACL',
  sampleEntry: 'mp4a',
  codecs: 'mp4a.40.2',
  AudioTag: 255,
  Channels: 2,
  SamplingRate: 48000,
  BitsPerSample: 16,
  PacketSize: 4,
  TimeScale: 10_000_000,
  systemLanguage: lang,
  trackID: 1,
});
const dolby = (fourcc: 'ac-3' | 'ec-3', tag: number) => ({
  type: 'audio' as const,
  FourCC: fourcc,
  sampleEntry: fourcc,
  codecs: fourcc,
  AudioTag: tag,
  Channels: 6,
  SamplingRate: 48000,
  BitsPerSample: 16,
  PacketSize: 12,
  TimeScale: 10_000_000,
  systemLanguage: 'eng',
  trackID: 1,
});
const ttml = (lang: string) => ({
  type: 'textstream' as const,
  FourCC: 'TTML',
  sampleEntry: 'stpp',
  codecs: 'stpp.ttml.im1t',
  TimeScale: 1000,
  systemLanguage: lang,
  trackID: 1,
  Roles: 'subtitle',
});

export const EXPECTED: Expected[] = [
  {
    file: 'video_baseline_400k.ismv',
    target: 400_000,
    props: video({
      profile: 66,
      level: 30,
      max: [512, 288],
      display: [512, 288],
      rate: '24',
      scan: 'progressive',
      codecs: 'avc1.42C01E',
    }),
  },
  {
    file: 'video_main_900k.ismv',
    target: 900_000,
    props: video({
      profile: 77,
      level: 30,
      max: [640, 360],
      display: [640, 360],
      rate: '24',
      scan: 'progressive',
      codecs: 'avc1.4D401E',
    }),
  },
  {
    file: 'video_high_1600k.ismv',
    target: 1_600_000,
    props: video({
      profile: 100,
      level: 31,
      max: [1280, 720],
      display: [1280, 720],
      rate: '24',
      scan: 'progressive',
      codecs: 'avc1.64001F',
    }),
  },
  {
    file: 'video_sar_500k.ismv',
    target: 500_000,
    props: video({
      profile: 77,
      level: 30,
      max: [480, 360],
      display: [640, 360],
      rate: '24',
      scan: 'progressive',
      codecs: 'avc1.4D401E',
    }),
  },
  {
    file: 'video_2997_600k.ismv',
    target: 600_000,
    props: video({
      profile: 77,
      level: 30,
      max: [640, 360],
      display: [640, 360],
      rate: '30000/1001',
      scan: 'progressive',
      codecs: 'avc1.4D401E',
    }),
  },
  {
    file: 'video_interlaced_800k.ismv',
    target: 800_000,
    props: video({
      profile: 100,
      level: 30,
      max: [720, 576],
      display: [720, 576],
      rate: '25',
      scan: 'interlaced',
      codecs: 'avc1.64001E',
    }),
  },
  { file: 'audio_eng_64k.isma', target: 64_000, props: aac('eng') },
  { file: 'audio_eng_128k.isma', target: 128_000, props: aac('eng') },
  { file: 'audio_nld_128k.isma', target: 128_000, props: aac('nld') },
  { file: 'audio_ac3_384k.isma', target: 384_000, props: dolby('ac-3', 0x2000) },
  { file: 'audio_eac3_256k.isma', target: 256_000, props: dolby('ec-3', 0xfffe) },
  { file: 'text_eng.ismt', target: 0, props: ttml('eng') },
  { file: 'text_nld.ismt', target: 0, props: ttml('nld') },
];

export function comparable(p: TrackProperties): Record<string, unknown> {
  const { FrameRate, ...rest } = p;
  return {
    ...rest,
    ...(FrameRate
      ? { FrameRate: FrameRate.den === 1 ? String(FrameRate.num) : `${FrameRate.num}/${FrameRate.den}` }
      : {}),
  };
}
