// Property-based tests (fast-check) through the host FilterEngine:
//  1. 100 000 random strings (grammar pieces, any code point, lone surrogates, long repeats)
//     never trap, never hang, and either compile (then evaluate, and their canonical text is a
//     fixed point) or fail with a positioned syntax error;
//  2. random valid syntax trees: the canonical text of any free-form serialisation is the one the
//     tree predicts (parse(serialise(tree)) is the same tree), and the wasm evaluator agrees with
//     the TypeScript reference evaluator (reference.ts) on every track of the fixture
//     presentation plus the reference's own tracks (escapes, unreduced rationals).

import fc from 'fast-check';
import { createFilterEngine, FilterSyntaxError, WasmFilterEngine } from '../../../host-glue/filter/filter-engine';
import { TrackProperties } from '../../../origin/model/media';
import { packageFixturePresentation } from './fixture-presentation';
import { buildFilterWasm } from './filter-wasm';
import type { Track } from './filter-wasm';
import { Cond, expectedCanonical, holds, Op, prng, serialise, TRACKS, Val, VARIABLES } from './reference';

let engine: WasmFilterEngine;
let props: TrackProperties[];
let refs: Track[];

beforeAll(async () => {
  engine = createFilterEngine(buildFilterWasm());
  const fixture = (await packageFixturePresentation()).tracks;
  props = [...fixture, ...TRACKS.map(toProperties)];
  refs = [...fixture.map(toReference), ...TRACKS];
});

/** TrackProperties -> the reference's track record (FrameRate as [num, den]). */
function toReference(p: TrackProperties): Track {
  const out: Track = {};
  for (const [name] of VARIABLES) {
    const v = p[name as keyof TrackProperties];
    if (v === undefined) continue;
    out[name] = typeof v === 'object' ? [v.num, v.den] : v;
  }
  return out;
}

/** The reference's track record -> TrackProperties (the required fields it lacks filled in). */
function toProperties(t: Track): TrackProperties {
  const p: Record<string, unknown> = { CodecPrivateData: '', codecs: '', sampleEntry: '' };
  for (const [name, v] of Object.entries(t)) {
    p[name] = Array.isArray(v)
      ? { num: v[0], den: v[1] }
      : name === 'FrameRate'
        ? { num: Number(v), den: 1 }
        : typeof v === 'bigint'
          ? Number(v)
          : v;
  }
  return p as unknown as TrackProperties;
}

// --- valid trees (the generator both properties use) ----------------------------------------

const STRINGS = [
  'video',
  'audio',
  'textstream',
  'AVC1',
  'AACL',
  'ac-3',
  'ec-3',
  'TTML',
  'eng',
  'nld',
  'progressive',
  'interlaced',
  'subtitle',
  'video_eng',
  'audio_eng',
  'audio_eng_ac3',
  'textstream_nld',
  'text "nld" \\ x',
  'Video',
  '',
  'é✓',
];
const NUMBERS: Array<[bigint, bigint | null]> = [
  [24n, null],
  [25n, null],
  [25n, 1n],
  [50n, 2n],
  [30000n, 1001n],
  [2997n, 100n],
  [48000n, null],
  [2n, null],
  [6n, null],
  [66n, null],
  [77n, null],
  [100n, null],
  [30n, null],
  [31n, null],
  [1000n, null],
  [410594n, null],
  [618174n, null],
  [800000n, null],
  [127962n, null],
  [384000n, null],
  [10000000n, null],
  [0n, null],
  [1n, null],
  [9223372036854775807n, null],
  [9223372036854775807n, 9223372036854775806n],
];
const SPELLINGS: Record<string, string[]> = {
  SamplingRate: ['SamplingRate', 'SampleRate', 'samplerate'],
  avc_level: ['avc_level', 'AVC_LEVEL'],
  avc_profile: ['avc_profile', 'AVC_PROFILE'],
  FourCC: ['FourCC', 'fourcc'],
  systemBitrate: ['systemBitrate', 'systembitrate', 'SYSTEMBITRATE'],
};
const CONSTANTS = ['AVC_PROFILE_BASELINE', 'AVC_PROFILE_MAIN', 'AVC_PROFILE_HIGH'];
const OPS: Op[] = ['==', '!=', '<', '<=', '>', '>='];

const variable = (type: 'n' | 's'): fc.Arbitrary<Val> =>
  fc
    .constantFrom(...VARIABLES.filter(([, t]) => t === type).map(([n]) => n))
    .chain((name) =>
      fc
        .constantFrom(...(SPELLINGS[name] ?? [name, name.toUpperCase()]))
        .map((spelled): Val => ({ k: 'var', name, spelled })),
    );

const { cond } = fc.letrec<{ cond: Cond; number: Val }>((tie) => ({
  cond: fc.oneof(
    { maxDepth: 4, depthIdentifier: 'tree' },
    // leaves first: at the depth limit oneof takes the first
    fc.oneof(
      fc
        .tuple(variable('s'), fc.constantFrom<Op>('==', '!='), fc.constantFrom(...STRINGS), fc.boolean())
        .map(([v, op, s, flip]): Cond => ({
          k: 'cmp',
          op,
          l: flip ? { k: 'str', s } : v,
          r: flip ? v : { k: 'str', s },
        })),
      fc
        .tuple(variable('n'), fc.constantFrom(...OPS), tie('number'), fc.boolean())
        .map(([v, op, n, flip]): Cond => ({ k: 'cmp', op, l: flip ? n : v, r: flip ? v : n })),
      fc
        .constantFrom('true', 'false', 'TRUE', 'False')
        .map((spelled): Cond => ({ k: 'bool', v: spelled.toLowerCase() === 'true', spelled })),
    ),
    tie('cond').map((a): Cond => ({ k: 'not', a })),
    fc
      .tuple(fc.constantFrom<'and' | 'or'>('and', 'or'), fc.array(tie('cond'), { minLength: 2, maxLength: 4 }))
      .map(([k, items]): Cond => ({ k, items })),
  ),
  number: fc.oneof(
    { maxDepth: 2, depthIdentifier: 'tree' },
    fc.constantFrom(...NUMBERS).map(([n, d]): Val => ({ k: 'num', n, d })),
    fc
      .constantFrom(...CONSTANTS)
      .chain((name) =>
        fc.constantFrom(name, name.toLowerCase()).map((spelled): Val => ({ k: 'const', name, spelled })),
      ),
    variable('n'),
    tie('cond').map((c): Val => ({ k: 'count', c })),
  ),
}));

// --- 1. random strings ---------------------------------------------------------------------------

const PIECES = [
  'type',
  'FourCC',
  'Channels',
  'FrameRate',
  'SampleRate',
  'systemBitrate',
  'count',
  'true',
  'false',
  'AVC_PROFILE_MAIN',
  '==',
  '!=',
  '<',
  '<=',
  '>',
  '>=',
  '=',
  '!',
  '&&',
  '||',
  '&',
  '|',
  '(',
  ')',
  '/',
  '"',
  '\\',
  '"video"',
  '"a\\"b"',
  '30000',
  '1001',
  '0',
  '9223372036854775807',
  '99999999999999999999',
  ' ',
  '\t',
  '\n',
  '+',
  '%26',
  'x',
  '_',
  '.',
  '-',
  "'",
  '\u0000',
  'é',
  '✓',
  '\ud83d\ude00',
  '\ud800',
  '\udfff',
  '\uffff',
];

const unit = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...PIECES) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  // any UTF-16 code unit, lone surrogates included
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) },
);

/** A valid filter's text with one random edit: near the grammar, where the parser works hardest. */
const mutated = fc
  .tuple(
    fc.constant(null).chain(() => cond),
    fc.integer(),
    fc.nat(),
    fc.constantFrom(...PIECES),
    fc.constantFrom('insert', 'delete', 'replace', 'cut', 'none'),
  )
  .map(([tree, seed, at, piece, edit]) => {
    const text = serialise(tree, prng(seed));
    const i = at % (text.length + 1);
    if (edit === 'insert') return text.slice(0, i) + piece + text.slice(i);
    if (edit === 'delete') return text.slice(0, i) + text.slice(i + 1);
    if (edit === 'replace') return text.slice(0, i) + piece + text.slice(i + piece.length);
    return edit === 'cut' ? text.slice(0, i) : text;
  });

const randomText = fc.oneof(
  { weight: 10, arbitrary: mutated },
  { weight: 20, arbitrary: fc.string({ unit, maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 60 }) },
  // long and deep: past the 4 KiB and depth-64 limits, or right at them
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.string({ unit, minLength: 1, maxLength: 8 }), fc.integer({ min: 30, max: 700 }))
      .map(([s, n]) => s.repeat(n)),
  },
);

test('100 000 random strings never trap or hang: a canonical text or a positioned syntax error', () => {
  let compiled = 0;
  let refused = 0;
  const started = Date.now();
  fc.assert(
    fc.property(randomText, (text) => {
      let canonical: string;
      try {
        canonical = engine.canonical(text);
      } catch (e) {
        // Anything but a syntax error (OriginError 'internal' after a trap, a JS exception) fails.
        if (!(e instanceof FilterSyntaxError)) throw e;
        if (e.offset < 0 || e.offset > text.length || !/ at \d+/.test(e.message))
          throw new Error(`bad error for ${JSON.stringify(text)}: ${e.message}`, { cause: e });
        refused++;
        return;
      }
      compiled++;
      if (engine.select(text, props).length !== props.length) throw new Error('wrong result length');
      if (engine.canonical(canonical) !== canonical)
        throw new Error(`canonical text is not a fixed point: ${canonical}`);
    }),
    { numRuns: 100_000, seed: 20261121 },
  );
  expect(compiled + refused).toBe(100_000);
  expect(compiled).toBeGreaterThan(5000); // the generator reaches valid filters too (about 10 %)
  expect(Date.now() - started).toBeLessThan(60_000);
  // still healthy afterwards
  expect(engine.select('type=="audio"&&Channels==6', props).filter((k) => k).length).toBe(3);
}, 120_000);

// --- 2. random valid trees ---------------------------------------------------------------------

test('random valid trees: parse(serialise(tree)) is the tree, and the wasm agrees with the reference evaluator', () => {
  let kept = 0;
  let dropped = 0;
  fc.assert(
    fc.property(cond, fc.integer(), (tree, seed) => {
      const text = serialise(tree, prng(seed));
      const canonical = engine.canonical(text);
      expect([text, canonical]).toEqual([text, expectedCanonical(tree)]);
      expect(engine.canonical(canonical)).toBe(canonical);
      const expected = refs.map((t) => holds(tree, t, refs));
      expect([canonical, engine.select(text, props)]).toEqual([canonical, expected]);
      for (const k of expected)
        if (k) kept++;
        else dropped++;
    }),
    { numRuns: 3000, seed: 7 },
  );
  // the generator must exercise both outcomes
  expect(kept).toBeGreaterThan(3000);
  expect(dropped).toBeGreaterThan(3000);
}, 120_000);
