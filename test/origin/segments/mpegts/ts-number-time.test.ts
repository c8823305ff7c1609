// to90k and the PTS/DTS/PCR fields take a number fast path when every intermediate is an exact
// integer, and fall back to BigInt otherwise. Both paths must give exactly what the BigInt
// arithmetic gives: checked against reference implementations written here, at random and at
// the edges (negative times, the 2^33 wrap, the fast path's limits, times past 2^53).

import fc from 'fast-check';
import { to90k } from '../../../../origin/segments/mpegts/mpegts';
import { writePcrPacket, writePesHeader } from '../../../../origin/segments/mpegts/ts-packets';

/** round(ticks × 90000 / timescale), halves towards +∞, all in BigInt. */
function reference90k(ticks: bigint, timescale: number): bigint {
  const ts = BigInt(timescale);
  const num = 2n * ticks * 90000n + ts;
  const den = 2n * ts;
  const q = num / den;
  return num % den !== 0n && num < 0n ? q - 1n : q;
}

const WRAP = 1n << 33n;
const wrapped = (v: bigint): bigint => ((v % WRAP) + WRAP) % WRAP;

/** §2.4.3.7 PTS field bytes of `v`, prefix 0b0010, by BigInt shifts. */
function referenceTimestamp(v: bigint): number[] {
  const w = wrapped(v);
  const high = Number(w >> 30n);
  const mid = Number((w >> 15n) & 0x7fffn);
  const low = Number(w & 0x7fffn);
  return [(0b0010 << 4) | (high << 1) | 1, mid >> 7, ((mid & 0x7f) << 1) | 1, low >> 7, ((low & 0x7f) << 1) | 1];
}

/** §2.4.3.5 program_clock_reference bytes of `v`, by BigInt shifts. */
function referencePcr(v: bigint): number[] {
  const w = wrapped(v);
  const high = Number(w >> 1n);
  return [high >>> 24, (high >>> 16) & 0xff, (high >>> 8) & 0xff, high & 0xff, (Number(w & 1n) << 7) | 0x7e, 0];
}

const timescales = fc.oneof(
  fc.constantFrom(1, 1000, 25, 30000, 44100, 48000, 90000, 180000, 10_000_000, 2 ** 32 - 1),
  fc.integer({ min: 1, max: 2 ** 32 - 1 }),
);
const ticks = fc.oneof(
  fc.bigInt({ min: -(1n << 40n), max: 1n << 40n }),
  fc.bigInt({ min: -(1n << 70n), max: 1n << 70n }),
  fc.constantFrom(0n, -1n, 1n, (1n << 53n) - 1n, 1n << 53n, -(1n << 53n), 25_019_997_150n, 25_019_997_151n),
);

test('to90k equals the BigInt arithmetic on both sides of its fast path', () => {
  fc.assert(
    fc.property(ticks, timescales, (t, ts) => {
      expect(to90k(t, ts)).toBe(reference90k(t, ts));
    }),
    { numRuns: 20000 },
  );
  // Around the fast path's limit (|2·t·90000 + ts| < 2^52) at 10 MHz.
  const limit = (1n << 52n) / 180000n;
  for (let d = -3n; d <= 3n; d++)
    for (const t of [limit + d, -limit + d]) expect(to90k(t, 10_000_000)).toBe(reference90k(t, 10_000_000));
});

const times = fc.oneof(
  fc.bigInt({ min: -(1n << 35n), max: 1n << 35n }),
  fc.bigInt({ min: -(1n << 60n), max: 1n << 60n }),
  fc.constantFrom(0n, -1n, WRAP - 1n, WRAP, WRAP + 1n, -WRAP, (1n << 53n) - 1n, 1n << 53n, -(1n << 53n) - 1n),
);

test('PTS, DTS and PCR fields equal the BigInt shifts, modulo 2^33', () => {
  fc.assert(
    fc.property(times, times, (pts, dts) => {
      const out = new Uint8Array(19);
      writePesHeader(out, 0, { streamId: 0xe0, role: 'video' }, { payload: 100, pts, dts, withDts: true });
      // With a DTS the PTS prefix is 0b0011 and the DTS one 0b0001 (§2.4.3.7).
      const p = referenceTimestamp(pts);
      p[0] = (p[0]! & 0x0f) | 0x30;
      expect([...out.subarray(9, 14)]).toEqual(p);
      const d = referenceTimestamp(dts);
      d[0] = (d[0]! & 0x0f) | 0x10;
      expect([...out.subarray(14, 19)]).toEqual(d);
      const packet = new Uint8Array(188);
      writePcrPacket(packet, 0, 0x100, 0, pts);
      expect([...packet.subarray(6, 12)]).toEqual(referencePcr(pts));
    }),
    { numRuns: 5000 },
  );
});
