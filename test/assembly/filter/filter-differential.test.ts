// 2 000 random valid trees: the free-form text compiles, its canonical text is what the tree
// predicts and is a fixed point, and the wasm evaluation equals the reference evaluator's.

import { FilterWasm, loadFilterWasm } from './filter-wasm';
import { TRACKS, expectedCanonical, holds, prng, randomTree, serialise } from './reference';

let f: FilterWasm;
beforeAll(() => {
  f = loadFilterWasm();
  f.setTracks(TRACKS);
});

test('2 000 random trees: round trip and evaluation agree with the reference', () => {
  const rand = prng(7);
  let kept = 0;
  let dropped = 0;
  for (let i = 0; i < 2000; i++) {
    const tree = randomTree(rand);
    const text = serialise(tree, rand);
    const h = f.compile(text);
    if (h === 0) throw new Error(`${text}\n${f.error().error}`);
    const canonical = f.canonical(h);
    expect([text, canonical]).toEqual([text, expectedCanonical(tree)]);
    const h2 = f.compile(canonical);
    expect(f.canonical(h2)).toBe(canonical);
    const expected = TRACKS.map((t) => holds(tree, t, TRACKS));
    expect([canonical, f.evaluate(h)]).toEqual([canonical, expected]);
    expect(f.evaluate(h2)).toEqual(expected);
    for (const k of expected)
      if (k) kept++;
      else dropped++;
    f.raw.release(h);
    f.raw.release(h2);
  }
  // the generator must exercise both outcomes
  expect(kept).toBeGreaterThan(2000);
  expect(dropped).toBeGreaterThan(2000);
});
