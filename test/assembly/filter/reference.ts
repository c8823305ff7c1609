// An independent model of the filter language for differential tests: test tracks, a tree type,
// a reference evaluator (BigInt arithmetic, written from the spec, not from assembly/filter/),
// the expected canonical text of a tree, a free-form serialiser (random spacing, case, aliases,
// redundant parentheses) and a seeded random generator of valid trees.

import type { Track } from './filter-wasm';

export const TRACKS: Track[] = [
  // 0: the fixtures' video_baseline_400k
  {
    type: 'video',
    FourCC: 'AVC1',
    trackID: 1,
    trackName: 'video_eng',
    MaxWidth: 512,
    MaxHeight: 288,
    DisplayWidth: 512,
    DisplayHeight: 288,
    TimeScale: 10000000,
    avc_level: 30,
    avc_profile: 66,
    systemBitrate: 410594,
    systemLanguage: 'eng',
    FrameRate: [24, 1],
    ScanType: 'progressive',
  },
  // 1: 29.97 fps main profile
  {
    type: 'video',
    FourCC: 'AVC1',
    trackID: 1,
    trackName: 'video_eng',
    MaxWidth: 640,
    MaxHeight: 360,
    DisplayWidth: 640,
    DisplayHeight: 360,
    TimeScale: 10000000,
    avc_level: 30,
    avc_profile: 77,
    systemBitrate: 612000,
    systemLanguage: 'eng',
    FrameRate: [30000, 1001],
    ScanType: 'progressive',
  },
  // 2: 720p high profile, frame rate set as an integer
  {
    type: 'video',
    FourCC: 'AVC1',
    trackID: 1,
    trackName: 'video_eng',
    MaxWidth: 1280,
    MaxHeight: 720,
    DisplayWidth: 1280,
    DisplayHeight: 720,
    TimeScale: 10000000,
    avc_level: 31,
    avc_profile: 100,
    systemBitrate: 1650000,
    systemLanguage: 'eng',
    FrameRate: 25,
    ScanType: 'progressive',
  },
  // 3: interlaced SD, anamorphic
  {
    type: 'video',
    FourCC: 'AVC1',
    trackID: 1,
    trackName: 'video_eng',
    MaxWidth: 720,
    MaxHeight: 576,
    DisplayWidth: 1024,
    DisplayHeight: 576,
    TimeScale: 10000000,
    avc_level: 30,
    avc_profile: 77,
    systemBitrate: 800000,
    systemLanguage: 'eng',
    FrameRate: [50, 2],
    ScanType: 'interlaced',
  },
  // 4: AAC-LC stereo 48 kHz
  {
    type: 'audio',
    FourCC: 'AACL',
    trackID: 1,
    trackName: 'audio_eng',
    AudioTag: 255,
    Channels: 2,
    SamplingRate: 48000,
    BitsPerSample: 16,
    TimeScale: 48000,
    systemBitrate: 128000,
    systemLanguage: 'eng',
  },
  // 5: AAC-LC 44.1 kHz Dutch
  {
    type: 'audio',
    FourCC: 'AACL',
    trackID: 1,
    trackName: 'audio_nld',
    AudioTag: 255,
    Channels: 2,
    SamplingRate: 44100,
    BitsPerSample: 16,
    TimeScale: 44100,
    systemBitrate: 64000,
    systemLanguage: 'nld',
  },
  // 6: AC-3 5.1
  {
    type: 'audio',
    FourCC: 'ac-3',
    trackID: 2,
    trackName: 'audio_eng_ac3',
    AudioTag: 8192,
    Channels: 6,
    SamplingRate: 48000,
    BitsPerSample: 16,
    TimeScale: 48000,
    systemBitrate: 384000,
    systemLanguage: 'eng',
  },
  // 7: TTML subtitles
  {
    type: 'textstream',
    FourCC: 'TTML',
    trackID: 1,
    trackName: 'textstream_eng',
    TimeScale: 10000000,
    systemBitrate: 1000,
    systemLanguage: 'eng',
    Roles: 'subtitle',
  },
  // 8: a name with a quote and a backslash, for escapes
  {
    type: 'textstream',
    FourCC: 'TTML',
    trackID: 3,
    trackName: 'text "nld" \\ x',
    TimeScale: 1000,
    systemBitrate: 1200,
    systemLanguage: 'nld',
    Roles: 'subtitle',
  },
];

export const VARIABLES: Array<[string, 'n' | 's']> = [
  ['type', 's'],
  ['FourCC', 's'],
  ['trackID', 'n'],
  ['trackName', 's'],
  ['AudioTag', 'n'],
  ['Channels', 'n'],
  ['SamplingRate', 'n'],
  ['BitsPerSample', 'n'],
  ['MaxWidth', 'n'],
  ['MaxHeight', 'n'],
  ['DisplayWidth', 'n'],
  ['DisplayHeight', 'n'],
  ['TimeScale', 'n'],
  ['avc_level', 'n'],
  ['avc_profile', 'n'],
  ['systemBitrate', 'n'],
  ['systemLanguage', 's'],
  ['FrameRate', 'n'],
  ['ScanType', 's'],
  ['Roles', 's'],
];
const CONSTANTS: Record<string, bigint> = { AVC_PROFILE_BASELINE: 66n, AVC_PROFILE_MAIN: 77n, AVC_PROFILE_HIGH: 100n };

export type Op = '==' | '!=' | '<' | '<=' | '>' | '>=';
export type Val =
  | { k: 'var'; name: string; spelled: string }
  | { k: 'num'; n: bigint; d: bigint | null }
  | { k: 'str'; s: string }
  | { k: 'const'; name: string; spelled: string }
  | { k: 'count'; c: Cond };
export type Cond =
  | { k: 'bool'; v: boolean; spelled: string }
  | { k: 'not'; a: Cond }
  | { k: 'and' | 'or'; items: Cond[] }
  | { k: 'cmp'; op: Op; l: Val; r: Val };

type Value = { t: 'n'; n: bigint; d: bigint } | { t: 's'; s: string } | null;

function valueOf(v: Val, track: Track, all: Track[]): Value {
  switch (v.k) {
    case 'num':
      return { t: 'n', n: v.n, d: v.d ?? 1n };
    case 'str':
      return { t: 's', s: v.s };
    case 'const':
      return { t: 'n', n: CONSTANTS[v.name]!, d: 1n };
    case 'count':
      return { t: 'n', n: BigInt(all.filter((t) => holds(v.c, t, all)).length), d: 1n };
    case 'var': {
      const raw = track[v.name];
      if (raw === undefined) return null;
      if (typeof raw === 'string') return { t: 's', s: raw };
      if (Array.isArray(raw)) return { t: 'n', n: BigInt(raw[0]), d: BigInt(raw[1]) };
      return { t: 'n', n: BigInt(raw), d: 1n };
    }
  }
}

export function holds(c: Cond, track: Track, all: Track[]): boolean {
  switch (c.k) {
    case 'bool':
      return c.v;
    case 'not':
      return !holds(c.a, track, all);
    case 'and':
      return c.items.every((i) => holds(i, track, all));
    case 'or':
      return c.items.some((i) => holds(i, track, all));
    case 'cmp': {
      const a = valueOf(c.l, track, all);
      const b = valueOf(c.r, track, all);
      if (a === null || b === null) return false;
      if (a.t === 's' && b.t === 's') return c.op === '==' ? a.s === b.s : a.s !== b.s;
      if (a.t !== 'n' || b.t !== 'n') throw new Error('type mismatch in a generated tree');
      const diff = a.n * b.d - b.n * a.d; // denominators are positive
      return {
        '==': diff === 0n,
        '!=': diff !== 0n,
        '<': diff < 0n,
        '<=': diff <= 0n,
        '>': diff > 0n,
        '>=': diff >= 0n,
      }[c.op];
    }
  }
}

const quoteStr = (s: string): string => '"' + s.replace(/[\\"]/g, (m) => '\\' + m) + '"';

function valText(v: Val, canonical: boolean): string {
  switch (v.k) {
    case 'var':
      return canonical ? v.name : v.spelled;
    case 'const':
      return canonical ? v.name : v.spelled;
    case 'num':
      return v.d === null ? `${v.n}` : `${v.n}/${v.d}`;
    case 'str':
      return quoteStr(v.s);
    case 'count':
      return `count(${canonical ? expectedCanonical(v.c) : serialise(v.c, () => 0)})`;
  }
}

function flat(c: Cond, kind: 'and' | 'or'): Cond[] {
  return c.k === kind ? c.items.flatMap((i) => flat(i, kind)) : [c];
}

/** The canonical text the parser header promises, computed from the tree. */
export function expectedCanonical(c: Cond): string {
  switch (c.k) {
    case 'bool':
      return c.v ? 'true' : 'false';
    case 'not': {
      const inner = c.a.k === 'and' || c.a.k === 'or' ? flat(c.a, c.a.k) : [c.a];
      const only = inner.length === 1 ? inner[0]! : c.a;
      const text = expectedCanonical(only);
      return only.k === 'bool' || only.k === 'not' ? '!' + text : `!(${text})`;
    }
    case 'and':
    case 'or': {
      const items = flat(c, c.k);
      if (items.length === 1) return expectedCanonical(items[0]!);
      return items
        .map((i) => {
          const one = i.k === 'and' || i.k === 'or' ? flat(i, i.k) : [i];
          const t = expectedCanonical(one.length === 1 ? one[0]! : i);
          return one.length > 1 ? `(${t})` : t;
        })
        .join(c.k === 'and' ? '&&' : '||');
    }
    case 'cmp':
      return valText(c.l, true) + c.op + valText(c.r, true);
  }
}

/** Free-form text of a tree: `rand()` in [0,1) picks spacing and redundant parentheses. */
export function serialise(c: Cond, rand: () => number): string {
  const sp = (): string => (rand() < 0.3 ? ' ' : rand() < 0.05 ? '\n\t ' : '');
  const wrap = (t: string): string => (rand() < 0.1 ? `(${sp()}${t}${sp()})` : t);
  switch (c.k) {
    case 'bool':
      return wrap(c.spelled);
    case 'not':
      return '!' + sp() + `(${serialise(c.a, rand)})`;
    case 'and':
    case 'or':
      return '(' + c.items.map((i) => serialise(i, rand)).join(sp() + (c.k === 'and' ? '&&' : '||') + sp()) + ')';
    case 'cmp':
      return wrap(valText(c.l, false) + sp() + c.op + sp() + valText(c.r, false));
  }
}

export function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    // mulberry32
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const STRINGS = [
  'video',
  'audio',
  'textstream',
  'AVC1',
  'AACL',
  'ac-3',
  'TTML',
  'eng',
  'nld',
  'progressive',
  'interlaced',
  'subtitle',
  'video_eng',
  'audio_nld',
  'text "nld" \\ x',
  'Video',
  '',
];
const NUMBERS: Array<[bigint, bigint | null]> = [
  [24n, null],
  [25n, null],
  [25n, 1n],
  [50n, 2n],
  [30000n, 1001n],
  [2997n, 100n],
  [48000n, null],
  [44100n, null],
  [2n, null],
  [6n, null],
  [66n, null],
  [77n, null],
  [100n, null],
  [30n, null],
  [31n, null],
  [410594n, null],
  [612000n, null],
  [128000n, null],
  [720n, null],
  [1n, null],
  [0n, null],
  [9223372036854775807n, null],
  [9223372036854775807n, 9223372036854775806n],
];
const ALIASES: Record<string, string[]> = {
  SamplingRate: ['SampleRate', 'samplerate'],
  avc_level: ['AVC_LEVEL'],
  avc_profile: ['AVC_PROFILE'],
  FourCC: ['fourcc'],
  systemBitrate: ['systembitrate', 'SYSTEMBITRATE'],
};

export function randomTree(rand: () => number, depth = 0): Cond {
  const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const spell = (name: string): string => (rand() < 0.3 ? pick(ALIASES[name] ?? [name.toUpperCase()]) : name);
  const r = rand();
  if (depth >= 4 || r < 0.4) {
    if (rand() < 0.05) {
      const v = rand() < 0.5;
      return { k: 'bool', v, spelled: pick(v ? ['true', 'TRUE', 'True'] : ['false', 'FALSE', 'False']) };
    }
    const [name, type] = pick(VARIABLES);
    const left: Val = { k: 'var', name, spelled: spell(name) };
    if (type === 's') {
      const right: Val = { k: 'str', s: pick(STRINGS) };
      const op: Op = rand() < 0.5 ? '==' : '!=';
      return rand() < 0.2 ? { k: 'cmp', op, l: right, r: left } : { k: 'cmp', op, l: left, r: right };
    }
    const op = pick<Op>(['==', '!=', '<', '<=', '>', '>=']);
    let right: Val;
    const q = rand();
    if (q < 0.1) {
      const c = pick(Object.keys(CONSTANTS));
      right = { k: 'const', name: c, spelled: rand() < 0.5 ? c : c.toLowerCase() };
    } else if (q < 0.15 && depth < 3) {
      right = { k: 'count', c: randomTree(rand, depth + 1) };
    } else if (q < 0.25) {
      const [other] = pick(VARIABLES.filter((v) => v[1] === 'n'));
      right = { k: 'var', name: other, spelled: spell(other) };
    } else {
      const [n, d] = pick(NUMBERS);
      right = { k: 'num', n, d };
    }
    return { k: 'cmp', op, l: left, r: right };
  }
  if (r < 0.55) return { k: 'not', a: randomTree(rand, depth + 1) };
  const n = 2 + Math.floor(rand() * 3);
  const items = Array.from({ length: n }, () => randomTree(rand, depth + 1));
  return { k: rand() < 0.5 ? 'and' : 'or', items };
}
