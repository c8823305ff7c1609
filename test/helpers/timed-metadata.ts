// The timed-metadata fixtures (fixtures/make-timed-metadata.cjs): the events they carry, and
// the inband copy of a video fixture that the tests make instead of committing half a megabyte.

import { existsSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { media, ROOT, tempDir } from './fixtures';

export interface FixtureEvent {
  id: number;
  /** ms, on the fixture media's timeline (which starts at 0). */
  time: number;
  duration: number;
  timescale: number;
  scheme: string;
  value: string;
  /** message_data, hex. */
  data: string;
}

interface Script {
  eventsJson(): FixtureEvent[];
  crc32Mpeg2(bytes: Uint8Array): number;
  metadataFile(kind: 'urim' | 'evte'): Buffer;
  inbandCopy(input: string): Buffer;
}

/** The script itself (CommonJS, run by node as it is): the tests share its events and writers. */
export const SCRIPT = createRequire(__filename)(path.join(ROOT, 'fixtures', 'make-timed-metadata.cjs')) as Script;

export const EVENTS: readonly FixtureEvent[] = SCRIPT.eventsJson();
export const ID3_SCHEME = 'https://aomedia.org/emsg/ID3';
export const SCTE35_SCHEME = 'urn:scte:scte35:2013:bin';
export const META_URIM = media('meta_urim.mp4');
export const META_EVTE = media('meta_evte.mp4');

let inband: string | undefined;

/** video_baseline_400k.ismv with top-level emsg boxes before its moofs (made once per test file). */
export function inbandVideo(): string {
  if (inband !== undefined && existsSync(inband)) return inband;
  inband = path.join(tempDir('origin-emsg-'), 'video_emsg_400k.ismv');
  writeFileSync(inband, SCRIPT.inbandCopy(media('video_baseline_400k.ismv')));
  return inband;
}

/** The PES packets of PID 0x102: PTS and payload (our own reading of ISO/IEC 13818-1 §2.4.3, not the origin's). */
export function id3Pes(ts: Buffer): Array<{ pts: number; tag: string }> {
  const out: Array<{ pts: number; tag: string }> = [];
  let current: Buffer[] | undefined;
  const flush = (): void => {
    if (current === undefined) return;
    const pes = Buffer.concat(current);
    expect(pes.readUIntBE(0, 3)).toBe(1);
    expect(pes[3]).toBe(0xbd);
    expect(pes[7]! & 0xc0).toBe(0x80); // PTS only
    const p = pes.subarray(9);
    const pts = (p[0]! & 0x0e) * 2 ** 29 + p[1]! * 2 ** 22 + (p[2]! >> 1) * 2 ** 15 + p[3]! * 2 ** 7 + (p[4]! >> 1);
    out.push({ pts, tag: pes.subarray(9 + pes[8]!, 6 + pes.readUInt16BE(4)).toString('hex') });
    current = undefined;
  };
  for (let at = 0; at < ts.length; at += 188) {
    const pid = ts.readUInt16BE(at + 1) & 0x1fff;
    if (pid !== 0x102) continue;
    const start = (ts[at + 1]! & 0x40) !== 0;
    const hasAdaptation = (ts[at + 3]! & 0x20) !== 0;
    const payload = ts.subarray(at + 4 + (hasAdaptation ? 1 + ts[at + 4]! : 0), at + 188);
    if (start) flush();
    if (start) current = [];
    current?.push(payload);
  }
  flush();
  return out;
}
