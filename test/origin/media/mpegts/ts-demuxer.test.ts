// The MPEG-TS demuxer (origin/media/mpegts/) on packets built here byte by byte (ISO/IEC 13818-1):
// PAT/PMT (written by our TS writer's section code), PES split over packets, H.264 access units to
// length-prefixed samples with an avcC that reads back, several ADTS frames per PES and one across
// two, the 33-bit wrap, and bad input: cut packets, lost sync, PES before the PMT, continuity
// breaks, refused stream types and scrambling, random bytes (an error or a result, never a hang).

import { isOriginError } from '../../../../origin/errors';
import { parseAudioSpecificConfig } from '../../../../origin/media/audio-config';
import { readSampleEntry } from '../../../../origin/media/codec-config';
import { TimestampLine } from '../../../../origin/media/mpegts/timestamp-line';
import { TsDemuxer } from '../../../../origin/media/mpegts/ts-demuxer';
import { avcStsd } from '../../../../origin/segments/fmp4/sample-entry';
import { writePat, writePmt } from '../../../../origin/segments/mpegts/ts-packets';

const VIDEO = 0x100;
const AUDIO = 0x101;
const ID3 = 0x102;
const PMT = 0x1000;
const SPS = Buffer.from('6742C01EDA0280BFE5C044000003000400000300C03C58BA80', 'hex'); // 640x360
const PPS = Buffer.from('68CE3C80', 'hex');
const START = [0, 0, 0, 1];

function psi(
  types: Array<[number, number, number[]?]> = [
    [0x1b, VIDEO],
    [0x0f, AUDIO],
    [0x15, ID3],
  ],
): Buffer {
  const out = Buffer.alloc(376);
  writePat(out, 0, PMT, 0);
  const streams = types.map(([streamType, pid, d]) => ({ streamType, pid, descriptors: Uint8Array.from(d ?? []) }));
  writePmt(out, 188, { pmtPid: PMT, pcrPid: VIDEO, streams }, 0);
  return out;
}

/** One TS packet; a short payload is padded with adaptation-field stuffing. */
function packet(pid: number, payload: Uint8Array, o: { start: boolean; cc: number; flag?: boolean }): Buffer {
  const b = Buffer.alloc(188, 0xff);
  b[0] = 0x47;
  b[1] = (o.start ? 0x40 : 0) | (pid >> 8);
  b[2] = pid & 0xff;
  const room = 184 - payload.byteLength;
  const af = room > 0 || o.flag === true;
  b[3] = (af ? 0x30 : 0x10) | (o.cc & 0x0f);
  if (af) {
    const length = Math.max(room, 2) - 1;
    b[4] = length;
    if (length > 0) b[5] = o.flag === true ? 0x80 : 0;
  }
  Buffer.from(payload).copy(b, 188 - payload.byteLength);
  return b;
}

function timestamp(prefix: number, v: number): number[] {
  return [
    (prefix << 4) | (Math.floor(v / 2 ** 30) << 1) | 1,
    Math.floor(v / 2 ** 22) & 0xff,
    ((Math.floor(v / 2 ** 15) & 0x7f) << 1) | 1,
    Math.floor(v / 2 ** 7) & 0xff,
    ((v & 0x7f) << 1) | 1,
  ];
}

/** A PES (stream_id `sid`, PTS and DTS) cut into packets with counters from `cc`. */
function pes(
  pid: number,
  es: Uint8Array,
  o: { pts?: number; dts?: number; cc: number; sid?: number; size?: number; flag?: boolean },
): Buffer[] {
  const times =
    o.pts === undefined
      ? []
      : o.dts === undefined
        ? timestamp(2, o.pts)
        : [...timestamp(3, o.pts), ...timestamp(1, o.dts)];
  const flags = o.pts === undefined ? 0 : o.dts === undefined ? 0x80 : 0xc0;
  const length = o.size ?? (pid === AUDIO ? 3 + times.length + es.byteLength : 0);
  const head = [
    0,
    0,
    1,
    o.sid ?? (pid === AUDIO ? 0xc0 : 0xe0),
    length >> 8,
    length & 0xff,
    0x80,
    flags,
    times.length,
    ...times,
  ];
  const all = Buffer.concat([Buffer.from(head), Buffer.from(es)]);
  const out: Buffer[] = [];
  for (let at = 0, cc = o.cc; at < all.byteLength; at += 184, cc++)
    out.push(packet(pid, all.subarray(at, at + 184), { start: at === 0, cc, flag: at === 0 && o.flag === true }));
  return out;
}

const nal = (type: number, size: number): Buffer => Buffer.concat([Buffer.from([type]), Buffer.alloc(size - 1, 0x5a)]);
const annexB = (...nals: Buffer[]): Buffer => Buffer.concat(nals.flatMap((n) => [Buffer.from(START), n]));
const AUD = Buffer.from([0x09, 0xf0]);

/** An ADTS frame (AAC LC, 48 kHz index 3, stereo) around `size` bytes of payload. */
function adts(size: number, fill = 0x21): Buffer {
  const length = size + 7;
  const h = [
    0xff,
    0xf1,
    (1 << 6) | (3 << 2),
    (2 << 6) | (length >> 11),
    (length >> 3) & 0xff,
    ((length & 7) << 5) | 0x1f,
    0xfc,
  ];
  return Buffer.concat([Buffer.from(h), Buffer.alloc(size, fill)]);
}

function demux(...parts: Buffer[]): ReturnType<TsDemuxer['demux']> {
  return new TsDemuxer().demux(Buffer.concat(parts), 'seg.ts');
}

test('H.264 and AAC: access units as length-prefixed samples, ADTS frames as raw AAC, the ID3 stream skipped', () => {
  const idr = annexB(AUD, SPS, PPS, nal(0x65, 300));
  const p = annexB(AUD, nal(0x41, 40));
  const audio = Buffer.concat([adts(100, 1), adts(120, 2), adts(90, 3)]);
  const r = demux(
    psi(),
    ...pes(VIDEO, idr, { pts: 133200, dts: 126000, cc: 0 }),
    ...pes(AUDIO, audio, { pts: 126000, cc: 0 }),
    ...pes(ID3, Buffer.from('ID3 tag'), { pts: 126000, cc: 0, sid: 0xbd, size: 10 }),
    ...pes(VIDEO, p, { pts: 136800, dts: 129600, cc: 2 }),
  );
  expect(r.discontinuities).toEqual([]);
  const [video, aac] = r.tracks;
  expect(r.tracks.map((t) => [t.pid, t.codec, t.timescale])).toEqual([
    [VIDEO, 'h264', 90000],
    [AUDIO, 'aac', 48000],
  ]);
  expect(video!.samples.map((s) => [s.time, s.duration, s.compositionOffset, s.sync, s.data.byteLength])).toEqual([
    [126000n, 3600, 7200, true, 304],
    [129600n, 3600, 7200, false, 44],
  ]);
  // AUD, SPS and PPS left the sample: one 4-byte length and the IDR slice.
  expect(Buffer.from(video!.samples[0]!.data.subarray(0, 5))).toEqual(Buffer.from([0, 0, 1, 0x2c, 0x65]));
  // The avcC reads back through the one sample-entry reader.
  const config = video!.config!;
  const entry = readSampleEntry(avcStsd(config as never, 640, 360), 'stsd');
  expect(entry.codec).toMatchObject({ kind: 'avc', lengthSize: 4, spsCount: 1 });
  expect(entry.codec?.kind === 'avc' && entry.codec.parameterSets.map((n) => Buffer.from(n))).toEqual([SPS, PPS]);
  // 126000 ticks of 90 kHz = 1.4 s = 67200 samples at 48 kHz, then 1024 apart.
  expect(aac!.samples.map((s) => [s.time, s.duration, s.data.byteLength, s.data[0]])).toEqual([
    [67200n, 1024, 100, 1],
    [68224n, 1024, 120, 2],
    [69248n, 1024, 90, 3],
  ]);
  expect(aac!.config?.kind === 'aac' && parseAudioSpecificConfig(aac!.config.asc)).toEqual({
    objectType: 2,
    sampleRate: 48000,
    channels: 2,
  });
});

test('an ADTS frame running on into the next PES is carried; a PTS within half a frame continues the line', () => {
  const frames = Buffer.concat([adts(100, 1), adts(100, 2), adts(100, 3)]);
  const cut = 150;
  // The second PES's PTS is that of the frame that starts in it (frame 3), a tick off.
  const r = demux(
    psi(),
    ...pes(AUDIO, frames.subarray(0, cut), { pts: 90000, cc: 0 }),
    ...pes(AUDIO, frames.subarray(cut), { pts: 90000 + 2 * 1920 + 1, cc: 1 }),
  );
  expect(r.tracks[1]!.samples.map((s) => [s.time, s.data[0], s.data.byteLength])).toEqual([
    [48000n, 1, 100],
    [49024n, 2, 100],
    [50048n, 3, 100],
  ]);
});

test('33-bit wrap: PTS and DTS keep counting up across it, across segments, on a shared line', () => {
  const line = new TimestampLine();
  const d = new TsDemuxer(line);
  const top = 2 ** 33 - 3600;
  const seg = (pts: number, dts: number, cc: number): Buffer =>
    Buffer.concat([psi(), ...pes(VIDEO, annexB(SPS, PPS, nal(0x65, 20)), { pts, dts, cc })]);
  const a = d.demux(
    Buffer.concat([seg(top, top - 3600, 0), ...pes(VIDEO, annexB(nal(0x41, 9)), { pts: 3600, dts: 0, cc: 1 })]),
    'a',
  );
  expect(a.tracks[0]!.samples.map((s) => [s.time, s.compositionOffset])).toEqual([
    [2n ** 33n - 7200n, 3600],
    [2n ** 33n, 3600],
  ]);
  const b = d.demux(seg(7200, 3600, 2), 'b');
  expect(b.tracks[0]!.samples[0]!.time).toBe(2n ** 33n + 3600n);
  // A PTS behind the last value (a B-frame) stays behind, on the same lap.
  expect(line.place(100)).toBe(2n ** 33n + 100n);
  expect(line.place(2 ** 33 - 10)).toBe(2n ** 33n - 10n);
});

test('PES before the PAT and PMT are skipped and counted; the PMT of an earlier segment holds', () => {
  const d = new TsDemuxer();
  const early = pes(VIDEO, annexB(SPS, PPS, nal(0x65, 400)), { pts: 3600, dts: 0, cc: 0 });
  const r = d.demux(
    Buffer.concat([...early, psi(), ...pes(VIDEO, annexB(nal(0x41, 10)), { pts: 7200, dts: 3600, cc: 3 })]),
    's',
  );
  expect(r.skipped).toBe(early.length);
  expect(r.tracks[0]!.samples.map((s) => s.time)).toEqual([3600n]);
  expect(r.tracks[0]!.config).toBeUndefined(); // its SPS/PPS went with the skipped PES
  const next = d.demux(
    Buffer.concat(pes(VIDEO, annexB(SPS, PPS, nal(0x65, 10)), { pts: 10800, dts: 7200, cc: 4 })),
    't',
  );
  expect(next.program).toBe(true);
  expect(next.tracks[0]!.config?.kind).toBe('avc');
  expect(new TsDemuxer().demux(Buffer.concat(early), 'u')).toMatchObject({ program: false, tracks: [], skipped: 3 });
});

test('a continuity break drops the PES in progress and is reported; a flagged one or a duplicate is not', () => {
  const au = pes(VIDEO, annexB(SPS, PPS, nal(0x65, 400)), { pts: 3600, dts: 0, cc: 0 });
  expect(au.length).toBe(3);
  const lost = demux(psi(), au[0]!, au[2]!, ...pes(VIDEO, annexB(nal(0x41, 9)), { pts: 7200, dts: 3600, cc: 3 }));
  expect(lost.discontinuities).toEqual([
    { pid: VIDEO, offset: 3 * 188, message: 'continuity counter 2 after 0: the PES in progress is dropped' },
  ]);
  expect(lost.tracks[0]!.samples.map((s) => s.time)).toEqual([3600n]);
  const dup = demux(psi(), au[0]!, au[1]!, au[1]!, au[2]!);
  expect([dup.discontinuities, dup.tracks[0]!.samples.length]).toEqual([[], 1]);
  // A counter that restarts with the adaptation field's discontinuity_indicator.
  const restart = pes(VIDEO, annexB(nal(0x41, 9)), { pts: 7200, dts: 3600, cc: 9, flag: true });
  expect(demux(psi(), ...au, ...restart).discontinuities).toEqual([]);
  // A PES whose declared length is not all there.
  const short = pes(AUDIO, adts(50), { pts: 0, cc: 0, size: 400 });
  expect(demux(psi(), ...short).discontinuities[0]!.message).toMatch(/a PES cut short/);
});

test('bad bytes: a cut packet, a lost sync byte, an overrunning adaptation field, a bad CRC', () => {
  const good = Buffer.concat([psi(), ...pes(VIDEO, annexB(SPS, PPS, nal(0x65, 500)), { pts: 3600, dts: 0, cc: 0 })]);
  const err = (b: Buffer): string => {
    try {
      new TsDemuxer().demux(b, 'seg.ts');
    } catch (e) {
      expect(isOriginError(e) && e.code).toBe('corrupt-media');
      return (e as Error).message;
    }
    return 'no error';
  };
  expect(err(good.subarray(0, good.byteLength - 10))).toBe(
    'seg.ts: byte 940: a truncated packet: 178 bytes where 188 are due',
  );
  const sync = Buffer.from(good);
  sync[376] = 0x48;
  expect(err(sync)).toBe('seg.ts: byte 376: lost sync: 0x48 where the sync byte 0x47 is due');
  const af = Buffer.from(good);
  af[376 + 3] = 0x30;
  af[376 + 4] = 190;
  expect(err(af)).toMatch(/byte 376: an adaptation field of 190 bytes overruns/);
  const crc = Buffer.from(good);
  crc[188 + 20] = crc[188 + 20]! ^ 1;
  expect(err(crc)).toMatch(/byte 188: PID 0x1000: a PSI section whose CRC_32 fails/);
});

test('refused by name: SAMPLE-AES and other codecs in the PMT, scrambled packets; ID3 and others skipped', () => {
  const refusal = (b: Buffer): string => {
    try {
      new TsDemuxer().demux(b, 'seg.ts');
    } catch (e) {
      expect(isOriginError(e) && e.code).toBe('unsupported-media');
      return (e as Error).message;
    }
    return 'no error';
  };
  expect(refusal(psi([[0xdb, VIDEO]]))).toBe(
    'seg.ts: PID 0x0100: encryption (SAMPLE-AES H.264) (stream_type 0xDB) is not supported',
  );
  expect(refusal(psi([[0xcf, AUDIO]]))).toMatch(/SAMPLE-AES AAC/);
  expect(refusal(psi([[0x24, VIDEO]]))).toMatch(/HEVC \(stream_type 0x24\)/);
  expect(refusal(psi([[0x81, AUDIO]]))).toMatch(/AC-3/);
  const scrambled = pes(VIDEO, annexB(nal(0x65, 10)), { pts: 0, cc: 0 });
  scrambled[0]![3] = scrambled[0]![3]! | 0x80;
  expect(refusal(Buffer.concat([psi(), ...scrambled]))).toMatch(/scrambled packets/);
  const skipped = demux(
    psi([
      [0x15, ID3],
      [0x86, 0x103],
      [0x1b, VIDEO, [0x0a, 4, 0x65, 0x6e, 0x67, 0]],
    ]),
  );
  expect(skipped.tracks.map((t) => [t.pid, t.language])).toEqual([[VIDEO, 'eng']]);
});

test('random bytes with sync bytes every 188: an OriginError or a result, never a hang or a RangeError', () => {
  let seed = 7;
  const rand = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let round = 0; round < 300; round++) {
    const b = Buffer.concat([psi(), ...pes(VIDEO, annexB(SPS, PPS, nal(0x65, 700)), { pts: 3600, dts: 0, cc: 0 })]);
    for (let k = 0; k < 6; k++) {
      const at = Math.floor(rand() * b.byteLength);
      if (at % 188 !== 0) b[at] = Math.floor(rand() * 256);
    }
    try {
      new TsDemuxer().demux(b, 'fuzz.ts');
    } catch (e) {
      if (!isOriginError(e)) throw e;
    }
  }
});
