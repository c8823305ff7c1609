// The `prft` reader and writer (origin/media/prft.ts): hand-built boxes of both versions byte by
// byte, the round trip, bad boxes refused naming box and offset, an unknown version ignored, NTP
// time conversion (both eras), version 0's wrapped media time, the flags' DASH types; and the
// boxes ffmpeg's movenc writes (`-write_prft pts`: the NTP time is the frame's own PTS, so the
// mapping is exact).

import * as fs from 'node:fs';
import * as path from 'node:path';
import { OriginError } from '../../../origin/errors';
import {
  ntpToUnixMs,
  parsePrft,
  producerClock,
  ProducerReference,
  unixMsToNtp,
  unwrapMediaTime,
  writePrft,
} from '../../../origin/media/prft';
import { boxes } from '../../helpers/box-walk';
import { tempDir } from '../../helpers/fixtures';
import { run } from '../../helpers/process';

const at = { path: 'prft@100', offset: 108 };
/** 2020-01-01T00:00:00Z in NTP seconds (1900 epoch). */
const NTP_2020 = 3786825600n;

function thrown(f: () => unknown): OriginError {
  try {
    f();
  } catch (e) {
    if (e instanceof OriginError) return e;
    throw e;
  }
  throw new Error('did not throw');
}

test('version 1, by hand: reference track, NTP time, 64-bit media time, flags', () => {
  const box = Buffer.from(
    '00000020' + '70726674' + '01000018' + '00000001' + NTP_2020.toString(16) + '80000000' + '0000000a7d8c0000',
    'hex',
  );
  expect(box.byteLength).toBe(32);
  const p = parsePrft(box.subarray(8), at)!;
  expect(p).toEqual({
    version: 1,
    flags: 24,
    trackId: 1,
    ntp: (NTP_2020 << 32n) | 0x80000000n,
    mediaTime: 45056000000n,
  });
  // Half a second past 2020-01-01.
  expect(ntpToUnixMs(p.ntp)).toBe(Date.UTC(2020, 0, 1) + 500);
  expect(Buffer.from(writePrft(p)).equals(box)).toBe(true);
});

test('version 0: 32-bit media time, 28 bytes; round trip', () => {
  const p: ProducerReference = {
    version: 0,
    flags: 4,
    trackId: 7,
    ntp: unixMsToNtp(1_795_686_051_840),
    mediaTime: 0xfffffffen,
  };
  const box = writePrft(p);
  expect(box.byteLength).toBe(28);
  expect(Buffer.from(box.subarray(0, 12)).toString('hex')).toBe('0000001c7072667400000004');
  expect(parsePrft(box.subarray(8), at)).toEqual(p);
  expect(ntpToUnixMs(p.ntp)).toBe(1_795_686_051_840);
});

test('short, long and zero-track boxes are refused naming the box and offset; an unknown version is ignored', () => {
  const good = writePrft({ version: 1, flags: 24, trackId: 1, ntp: 1n, mediaTime: 2n }).subarray(8);
  const short = thrown(() => parsePrft(good.subarray(0, 20), at));
  expect(short.kind).toBe('corrupt-media');
  expect(short.message).toMatch(/prft@100.*prft version 1 has 24 bytes after its header, this one 20/);
  expect(thrown(() => parsePrft(Buffer.concat([good, Buffer.alloc(4)]), at)).message).toMatch(/this one 28/);
  expect(thrown(() => parsePrft(good.subarray(0, 2), at)).message).toMatch(/prft@100.*needs 3 bytes/);
  const zero = Buffer.from(good);
  zero.writeUInt32BE(0, 4);
  expect(thrown(() => parsePrft(zero, at)).message).toMatch(/reference_track_ID is 0/);
  const v2 = Buffer.from(good);
  v2[0] = 2;
  expect(parsePrft(v2, at)).toBeUndefined();
});

test('NTP times: milliseconds floored; seconds with the high bit clear are era 1 (from 2036)', () => {
  expect(ntpToUnixMs(NTP_2020 << 32n)).toBe(Date.UTC(2020, 0, 1));
  expect(ntpToUnixMs((NTP_2020 << 32n) | 0xffffffffn)).toBe(Date.UTC(2020, 0, 1) + 999);
  // Era 1: NTP seconds 0 is 2036-02-07T06:28:16Z.
  expect(new Date(ntpToUnixMs(0n)).toISOString()).toBe('2036-02-07T06:28:16.000Z');
  expect(ntpToUnixMs(unixMsToNtp(Date.UTC(2040, 5, 1, 12, 0, 0, 250)))).toBe(Date.UTC(2040, 5, 1, 12, 0, 0, 250));
});

test('a version 0 media time wraps at 2^32: the value nearest the fragment time is meant', () => {
  const full = 1_795_686_051n * 25n; // a UTC time at 25 Hz: past 2^32
  const p: ProducerReference = { version: 0, flags: 24, trackId: 1, ntp: 0n, mediaTime: full & 0xffffffffn };
  expect(unwrapMediaTime(p, full + 48n)).toBe(full);
  expect(unwrapMediaTime(p, full - 48n)).toBe(full);
  // Across a wrap of the low 32 bits.
  const edge = (full | 0xffffffffn) + 1n;
  const q = { ...p, mediaTime: (edge - 2n) & 0xffffffffn };
  expect(unwrapMediaTime(q, edge + 10n)).toBe(edge - 2n);
  expect(unwrapMediaTime({ ...p, version: 1, mediaTime: 5n }, full)).toBe(5n);
});

test('flags → ProducerReferenceTime@type: the encoder instants, captured (24), none for arbitrary (8)', () => {
  expect([0, 1, 2, 4].map(producerClock)).toEqual(['encoder', 'encoder', 'encoder', 'encoder']);
  expect(producerClock(24)).toBe('captured');
  expect(producerClock(8)).toBeUndefined();
  expect(producerClock(16)).toBeUndefined();
  expect(producerClock(3)).toBeUndefined();
});

test('ffmpeg movenc `-write_prft pts`: version 1, flags 24, track 1, one per fragment, NTP time = PTS', async () => {
  const out = path.join(tempDir('origin-prft-'), 'v.mp4');
  const t0 = '1795686051.84';
  const r = await run('ffmpeg', [
    ...['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=size=160x90:rate=25', '-t', '3.84'],
    ...['-c:v', 'libx264', '-preset', 'veryfast', '-g', '48', '-keyint_min', '48', '-sc_threshold', '0'],
    ...['-video_track_timescale', '25', '-output_ts_offset', t0, '-write_prft', 'pts'],
    ...['-movflags', '+cmaf+frag_keyframe+empty_moov+separate_moof+default_base_moof+frag_discont', '-f', 'mp4', out],
  ]);
  expect(r.stderr).toBe('');
  const file = fs.readFileSync(out);
  const top = boxes(file);
  const prft = top.filter((b) => b.type === 'prft');
  expect(prft.length).toBe(top.filter((b) => b.type === 'moof').length);
  expect(prft.length).toBe(2);
  const parsed = prft.map((b) => parsePrft(b.body, { path: 'prft', offset: 0 })!);
  expect(parsed.map((p) => [p.version, p.flags, p.trackId])).toEqual([
    [1, 24, 1],
    [1, 24, 1],
  ]);
  // Media times on the UTC grid at 25 Hz, 48 frames apart; the NTP time is the PTS itself.
  expect(parsed.map((p) => p.mediaTime)).toEqual([44892151296n, 44892151344n]);
  // ffmpeg floors the microseconds' NTP fraction: a millisecond may read 1 ms early.
  for (const p of parsed) expect(Number(p.mediaTime * 40n) - ntpToUnixMs(p.ntp)).toBeGreaterThanOrEqual(0);
  for (const p of parsed) expect(Number(p.mediaTime * 40n) - ntpToUnixMs(p.ntp)).toBeLessThanOrEqual(1);
});
