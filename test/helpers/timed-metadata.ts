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
