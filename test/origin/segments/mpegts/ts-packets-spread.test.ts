// packetizePes (origin/segments/mpegts/ts-packets.ts) over more packets than a PES needs, as
// SAMPLE-AES asks to keep continuity counters (mpegts/sample-aes-streams.ts keepContinuity): read
// back packet by packet, the payloads join into the PES, every packet carries payload (so every
// counter advances), the stuffing sits in adaptation fields; with the minimum count every packet
// but the last is full.

import { randomBytes } from 'node:crypto';
import { packetizePes, pesPacketCount } from '../../../../origin/segments/mpegts/ts-packets';

function readBack(out: Buffer): { payload: Buffer; ccs: number[]; payloadSizes: number[] } {
  const parts: Buffer[] = [];
  const ccs: number[] = [];
  const payloadSizes: number[] = [];
  for (let at = 0; at < out.length; at += 188) {
    const p = out.subarray(at, at + 188);
    expect(p[0]).toBe(0x47);
    expect(((p[1]! & 0x1f) << 8) | p[2]!).toBe(0x100);
    expect((p[1]! & 0x40) !== 0).toBe(at === 0);
    const afc = (p[3]! >> 4) & 3;
    expect(afc & 1).toBe(1);
    ccs.push(p[3]! & 0x0f);
    const start = afc & 2 ? 5 + p[4]! : 4;
    if (afc & 2 && p[4]! > 1) expect([...p.subarray(at === 0 ? 12 : 6, start)].every((b) => b === 0xff)).toBe(true);
    parts.push(p.subarray(start));
    payloadSizes.push(188 - start);
  }
  return { payload: Buffer.concat(parts), ccs, payloadSizes };
}

test.each([
  [100, 0],
  [100, 1],
  [5000, 0],
  [5000, 15],
  [184 * 3 - 8, 0],
  [184 * 3 - 8, 7],
])('a PES of %i bytes over %i packets more than it needs', (length, extra) => {
  const pes = randomBytes(length);
  const minimum = pesPacketCount(length, 8);
  const packets = minimum + extra;
  const out = Buffer.alloc(packets * 188);
  pes.copy(out, out.length - length); // the writer puts the PES at the end of its span
  packetizePes(out, 0, { pid: 0x100, cc: 14, packets, length, pcr: 900000n, randomAccess: true });
  const r = readBack(out);
  expect(r.payload.equals(pes)).toBe(true);
  expect(r.ccs).toEqual([...Array(packets).keys()].map((i) => (14 + i) & 0x0f));
  expect(r.payloadSizes.every((n) => n >= 1)).toBe(true);
  if (extra === 0) expect(r.payloadSizes.slice(1, -1).every((n) => n === 184)).toBe(true);
  else expect(r.payloadSizes.slice(-extra)).toEqual(Array(extra).fill(1));
});
