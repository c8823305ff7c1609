// The pure MPEG-TS and packed-audio writers against the tests' own checker (ts-check.ts) and
// hand-computed bytes: timestamps, CRC, ADTS, Annex B, ID3, the PMT of each codec, and the
// packet counts continuity counters are derived from (property-based: any sizes, any flags).

import fc from 'fast-check';
import { OriginError } from '../../../../origin/errors';
import { ADTS_HEADER_SIZE, adtsConfigOf, adtsHeader } from '../../../../origin/segments/mpegts/adts';
import { ACCESS_UNIT_DELIMITER } from '../../../../origin/segments/mpegts/avc-annexb';
import { accessUnitParts } from './annexb-parts';
import type { AvcConfig, CodecConfig } from '../../../../origin/model/media';
import {
  planStream,
  planTsSegment,
  to90k,
  to90kPlus,
  TS_TIME_OFFSET,
  TsSample,
  tsStream,
  TsSegmentInput,
  writeTsSegment,
} from '../../../../origin/segments/mpegts/mpegts';
import { packedAudioSegment, timestampTag, TIMESTAMP_OWNER } from '../../../../origin/segments/packed-audio';
import { crc32Mpeg2 } from '../../../../origin/media/mpegts/crc32-mpeg';
import { adtsFrames, checkTs, crc32 } from './ts-check';

const SPS = Uint8Array.of(0x67, 0x42, 0xc0, 0x1e, 0xda, 0x02, 0x00);
const PPS = Uint8Array.of(0x68, 0xce, 0x3c, 0x80);
const AVC: AvcConfig = {
  kind: 'avc',
  lengthSize: 4,
  parameterSets: [SPS, PPS],
  spsCount: 1,
  record: new Uint8Array(0),
};
/** AAC-LC, 48 kHz (index 3), stereo: 00010 0011 0010 000. */
const AAC: CodecConfig = { kind: 'aac', asc: Uint8Array.of(0x11, 0x90) };

/** A length-prefixed sample of `size` bytes (0 or at least 5) made of NAL units of about 1000 bytes. */
function avcSample(size: number, seed: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  while (at < size) {
    const rest = size - at;
    const length = (rest > 1009 ? 1004 : rest) - 4;
    new DataView(out.buffer).setUint32(at, length);
    for (let i = 0; i < length; i++) out[at + 4 + i] = (seed + i * 7) & 0xff;
    at += 4 + length;
  }
  return out;
}

function sample(dts: number, pts: number, data: Uint8Array, keyframe: boolean, group = 0): TsSample {
  return {
    dts: BigInt(dts),
    pts: BigInt(pts),
    size: data.byteLength,
    keyframe,
    group,
    data,
    file: 'test.mp4',
    offset: 0,
  };
}

describe('timestamps', () => {
  test('ticks to 90 kHz: exact, halves rounded up, no drift over hours', () => {
    expect(to90k(10_000_000n, 10_000_000)).toBe(90000n);
    expect(to90k(1n, 180000)).toBe(1n); // 0.5 → 1
    expect(to90k(-1n, 180000)).toBe(0n); // −0.5 → 0 (towards +∞)
    expect(to90k(-3n, 180000)).toBe(-1n); // −1.5 → −1
    expect(to90k(416_666n, 10_000_000)).toBe(3750n); // 3749.994 → 3750
    // 30 h of 10 MHz ticks plus one 24 fps frame: exact.
    const hours = 30n * 3600n * 10_000_000n;
    expect(to90k(hours + 416_667n, 10_000_000)).toBe(30n * 3600n * 90000n + 3750n);
    expect(to90k(1001n * 1000n, 30000)).toBe(3003000n);
  });

  test('to90kPlus is to90k plus the offset, on the number path and past it', () => {
    // The same value as the exact BigInt formula, for times on both sides of the number path's
    // 2^52 bound (10 MHz: about 6 h) and 2^53 sums, negative times and every kind of timescale.
    const exact = (ticks: bigint, timescale: number, plus: number): bigint => {
      const ts = BigInt(timescale);
      const num = 2n * ticks * 90000n + ts;
      const den = 2n * ts;
      const q = num / den;
      return (num % den !== 0n && num < 0n ? q - 1n : q) + BigInt(plus);
    };
    let seed = 7n;
    const next = (): bigint => (seed = (seed * 6364136223846793005n + 1442695040888963407n) % 2n ** 64n);
    for (const timescale of [90000, 48000, 44100, 10_000_000, 30000, 1, 4294967295]) {
      for (const plus of [0, TS_TIME_OFFSET, -TS_TIME_OFFSET, 2 ** 53 - 1]) {
        for (let i = 0; i < 300; i++) {
          const magnitude = [2n ** 20n, 2n ** 40n, 2n ** 50n, 2n ** 60n][i % 4]!;
          const ticks = (next() % (2n * magnitude)) - magnitude;
          expect({ ticks, timescale, plus, v: to90kPlus(ticks, timescale, plus) }).toEqual({
            ticks,
            timescale,
            plus,
            v: exact(ticks, timescale, plus),
          });
        }
      }
    }
    expect(to90kPlus(10_000_000n, 10_000_000, TS_TIME_OFFSET)).toBe(
      to90k(10_000_000n, 10_000_000) + BigInt(TS_TIME_OFFSET),
    );
  });

  test('PTS and DTS are written modulo 2^33', () => {
    const wrap = 1n << 33n;
    const data = avcSample(100, 1);
    const seg = Buffer.from(
      writeTsSegment({
        streams: [
          {
            stream: tsStream(AVC, undefined, 't'),
            samples: [sample(0, 0, data, true)].map((s) => ({ ...s, dts: wrap + 5n, pts: wrap + 3005n })),
            cc: 0,
          },
        ],
        patCc: 0,
        pmtCc: 0,
      }),
    );
    const r = checkTs([seg]);
    expect(r.pes.map((p) => [p.pts, p.dts])).toEqual([[3005n, 5n]]);
  });
});

describe('PSI', () => {
  test('CRC_32 is CRC-32/MPEG-2 (check value of "123456789")', () => {
    const text = Buffer.from('123456789');
    expect(crc32Mpeg2(text)).toBe(0x0376e6e7);
    expect(crc32(text)).toBe(0x0376e6e7);
  });

  test.each([
    ['avc + aac', [AVC, AAC], [0x1b, 0x0f]],
    [
      'avc + ac-3',
      [AVC, { kind: 'ac3', channels: 6, bsid: 8, sampleRate: 48000, record: new Uint8Array(0) }],
      [0x1b, 0x81],
    ],
    [
      'avc + e-ac-3',
      [AVC, { kind: 'ec3', channels: 6, bsid: 16, sampleRate: 48000, record: new Uint8Array(0) }],
      [0x1b, 0x87],
    ],
  ] as const)('%s: PMT stream types and descriptors', (_, codecs, types) => {
    const streams = codecs.map((c, i) => ({ stream: tsStream(c, 'eng', 't'), samples: [] as TsSample[], cc: i }));
    streams[0]!.samples = [sample(900000, 900000, avcSample(50, 2), true)];
    const r = checkTs([Buffer.from(writeTsSegment({ streams, patCc: 0, pmtCc: 0 }))]);
    expect(r.problems).toEqual([]);
    expect(r.streams.map((s) => s.streamType)).toEqual(types);
    expect(r.pcrPid).toBe(r.streams[0]!.pid);
    const audio = r.streams[1]!.descriptors;
    const lang = [0x0a, 4, ...Buffer.from('eng'), 0];
    if (types[1] === 0x81) expect([...audio]).toEqual([0x05, 4, ...Buffer.from('AC-3'), ...lang]);
    // E-AC-3 (ATSC A/52 Annex G): tag 0xCC, reserved+bsid_flag, reserved+full_service+5.1 (4), reserved+bsid 16.
    if (types[1] === 0x87) expect([...audio]).toEqual([0xcc, 3, 0xc0, 0xc4, 0x30, ...lang]);
    if (types[1] === 0x0f) expect([...audio]).toEqual(lang);
  });

  test('the audio stream carries no language descriptor for und', () => {
    expect(tsStream(AAC, 'und', 't').pmt.descriptors.byteLength).toBe(0);
  });
});

describe('ADTS', () => {
  test('header fields from the AudioSpecificConfig', () => {
    const h = adtsHeader(adtsConfigOf(Uint8Array.of(0x11, 0x90), 't'), 300);
    expect(h[0]).toBe(0xff);
    expect(h[1]).toBe(0xf1); // MPEG-4, layer 0, no CRC
    expect(h[2]! >> 6).toBe(1); // LC
    expect((h[2]! >> 2) & 0xf).toBe(3); // 48 kHz
    expect(((h[2]! & 1) << 2) | (h[3]! >> 6)).toBe(2); // stereo
    expect(((h[3]! & 3) << 11) | (h[4]! << 3) | (h[5]! >> 5)).toBe(307);
  });

  test('HE-AAC (explicit SBR) is written as its AAC-LC core at the core rate', () => {
    // aot 5, core index 6 (24 kHz), 2 channels, extension index 3 (48 kHz), core aot 2.
    const bits = '00101' + '0110' + '0010' + '0011' + '00010' + '000';
    const asc = Uint8Array.from(bits.match(/.{8}/g)!.map((b) => parseInt(b, 2)));
    expect(adtsConfigOf(asc, 't')).toEqual({ profile: 1, samplingFrequencyIndex: 6, channelConfiguration: 2 });
  });

  test.each([
    ['an explicit sampling frequency', '00010' + '1111' + '000000000000000000000000' + '0010' + '000'],
    ['a program config element', '00010' + '0011' + '0000' + '000'],
    ['an object type without ADTS profile (ER AAC LD, 23)', '10111' + '0011' + '0010' + '000'],
  ])('%s is refused (415)', (_, bits) => {
    const padded = bits.padEnd(Math.ceil(bits.length / 8) * 8, '0');
    const asc = Uint8Array.from(padded.match(/.{8}/g)!.map((b) => parseInt(b, 2)));
    expect(() => adtsConfigOf(asc, 't')).toThrow(expect.objectContaining({ kind: 'unsupported-media' }));
  });
});

describe('Annex B', () => {
  test('length fields become start codes of the same size; AUD first; SPS and PPS on keyframes', () => {
    const s = Uint8Array.of(0, 0, 0, 2, 0x65, 0xaa, 0, 0, 0, 1, 0x06);
    const key = Buffer.concat(
      accessUnitParts(s, true, AVC, Buffer.from([0, 0, 0, 1, ...SPS, 0, 0, 0, 1, ...PPS]), { file: 'f', offset: 0 }),
    );
    expect([...key]).toEqual([
      ...ACCESS_UNIT_DELIMITER,
      0,
      0,
      0,
      1,
      ...SPS,
      0,
      0,
      0,
      1,
      ...PPS,
      0,
      0,
      0,
      1,
      0x65,
      0xaa,
      0,
      0,
      0,
      1,
      0x06,
    ]);
    const other = Buffer.concat(accessUnitParts(s, false, AVC, new Uint8Array(), { file: 'f', offset: 0 }));
    expect(other.byteLength).toBe(ACCESS_UNIT_DELIMITER.byteLength + s.byteLength);
    const three = Buffer.concat(
      accessUnitParts(Uint8Array.of(0, 0, 2, 0x41, 0x01), false, { ...AVC, lengthSize: 3 }, new Uint8Array(), {
        file: 'f',
        offset: 0,
      }),
    );
    expect([...three]).toEqual([...ACCESS_UNIT_DELIMITER, 0, 0, 1, 0x41, 0x01]);
  });

  test.each([
    ['a NAL past the sample end', Uint8Array.of(0, 0, 0, 9, 0x65), 'at file offset 1000'],
    ['a truncated length field', Uint8Array.of(0, 0, 0, 1, 0x65, 0, 0), 'at file offset 1005'],
    ['a NAL of length 0', Uint8Array.of(0, 0, 0, 0), 'at file offset 1000'],
  ])('%s is corrupt media naming file and offset', (_, s, where) => {
    let error: unknown;
    try {
      accessUnitParts(s, false, AVC, new Uint8Array(), { file: 'v.ismv', offset: 1000 });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(OriginError);
    expect((error as OriginError).kind).toBe('corrupt-media');
    expect((error as OriginError).message).toContain('v.ismv');
    expect((error as OriginError).message).toContain(where);
  });

  test('1- and 2-byte NAL lengths are refused (415): no start code keeps the size', () => {
    expect(() => tsStream({ ...AVC, lengthSize: 2 }, undefined, 't')).toThrow(
      expect.objectContaining({ kind: 'unsupported-media' }),
    );
  });
});

describe('packed audio', () => {
  test('ID3v2.4 PRIV transportStreamTimestamp, then ADTS frames', () => {
    const frames = [Uint8Array.of(1, 2, 3), Uint8Array.of(4, 5)];
    const pts = (1n << 33n) + 900123n; // written modulo 2^33
    const out = Buffer.from(
      packedAudioSegment({ kind: 'aac', adts: adtsConfigOf(Uint8Array.of(0x11, 0x90), 't') }, pts, frames),
    );
    expect(out.subarray(0, 6).toString('latin1')).toBe('ID3\x04\x00\x00');
    const tagSize = (out[6]! << 21) | (out[7]! << 14) | (out[8]! << 7) | out[9]!;
    expect(out.subarray(10, 14).toString('latin1')).toBe('PRIV');
    const frameSize = (out[14]! << 21) | (out[15]! << 14) | (out[16]! << 7) | out[17]!;
    expect(frameSize).toBe(TIMESTAMP_OWNER.length + 1 + 8);
    expect(tagSize).toBe(10 + frameSize);
    expect(out.subarray(20, 20 + TIMESTAMP_OWNER.length + 1).toString('latin1')).toBe(`${TIMESTAMP_OWNER}\0`);
    expect(out.readBigUInt64BE(20 + TIMESTAMP_OWNER.length + 1)).toBe(900123n);
    const body = out.subarray(10 + tagSize);
    const { frames: parsed, problems } = adtsFrames(body);
    expect(problems).toEqual([]);
    expect(parsed.map((f) => [...f.subarray(ADTS_HEADER_SIZE)])).toEqual([
      [1, 2, 3],
      [4, 5],
    ]);
  });

  test('AC-3 frames follow the tag unchanged', () => {
    const out = Buffer.from(packedAudioSegment({ kind: 'ac3' }, 900000n, [Uint8Array.of(0x0b, 0x77, 9)]));
    expect([...out.subarray(timestampTag(0n).byteLength)]).toEqual([0x0b, 0x77, 9]);
  });
});

/** Video frames (24 fps with B-frame-like offsets) and AAC frames over `seconds`, on the TS clock. */
function content(sizes: { video: number[]; audio: number[]; keyEvery: number; start: number }): {
  video: TsSample[];
  audio: TsSample[];
} {
  const video = sizes.video.map((size, i) => {
    const dts = sizes.start + i * 3750;
    const pts = dts + (i % 3) * 3750; // PTS ≥ DTS, sometimes equal
    return sample(dts, pts, avcSample(size, i), i % sizes.keyEvery === 0);
  });
  const audio = sizes.audio.map((size, i) => {
    const t = sizes.start + 7500 + Math.floor((i * 1024 * 90000) / 48000);
    return sample(
      t,
      t,
      Uint8Array.from({ length: size }, (_, k) => (k + i) & 0xff),
      true,
      Math.floor(i / 10),
    );
  });
  return { video, audio };
}

describe('segments', () => {
  const video = tsStream(AVC, undefined, 'v');
  const audio = tsStream(AAC, 'eng', 'a');

  test('planned packet counts are what is written, and counters continue across segments (any sizes)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 5, max: 6000 })), { minLength: 1, maxLength: 40 }),
        fc.array(fc.integer({ min: 1, max: 1500 }), { minLength: 0, maxLength: 60 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 0, max: 15 }),
        (videoSizes, audioSizes, keyEvery, startCc) => {
          const { video: v, audio: a } = content({
            video: videoSizes,
            audio: audioSizes,
            keyEvery,
            start: TS_TIME_OFFSET,
          });
          // Two consecutive segments: the second's counters are the first's plus its packet counts.
          // Cut the audio where the second segment's video presents (its DTS + a decode delay of
          // 7500): audio of the first segment may then decode after the second's first video.
          const cut = Math.ceil(v.length / 2);
          const cutTime = v[cut] !== undefined ? v[cut]!.dts + 7500n : undefined;
          const a1 = a.filter((s) => cutTime === undefined || s.dts < cutTime);
          const a2 = a.filter((s) => cutTime !== undefined && s.dts >= cutTime);
          const first: TsSegmentInput = {
            streams: [
              { stream: video, samples: v.slice(0, cut), cc: startCc },
              { stream: audio, samples: a1, cc: startCc },
            ],
            patCc: 0,
            pmtCc: 0,
          };
          const plan1 = planTsSegment(first);
          const vPackets = planStream(video, v.slice(0, cut), true).reduce((s, u) => s + u.packets, 0);
          const aPackets = planStream(audio, a1, false).reduce((s, u) => s + u.packets, 0);
          expect(plan1.streamPackets).toEqual([vPackets, aPackets]);
          const second: TsSegmentInput = {
            streams: [
              { stream: video, samples: v.slice(cut), cc: (startCc + vPackets) & 15 },
              { stream: audio, samples: a2, cc: (startCc + aPackets) & 15 },
            ],
            patCc: 1,
            pmtCc: 1,
          };
          if (v[cut] !== undefined) first.nextPcr = v[cut]!.dts - 9000n;
          const segments = [writeTsSegment(first), ...(cut < v.length ? [writeTsSegment(second)] : [])].map((b) =>
            Buffer.from(b),
          );
          expect(segments[0]!.byteLength).toBe(planTsSegment(first).size);
          const r = checkTs(segments);
          expect(r.problems).toEqual([]);
          // Every frame is there, in order, with its bytes.
          const vp = r.pes.filter((p) => p.pid === video.pid);
          expect(vp.map((p) => p.dts)).toEqual(v.map((s) => s.dts));
          expect(vp.map((p) => p.pts)).toEqual(v.map((s) => s.pts));
          vp.forEach((p, i) => {
            const s = v[i]!;
            const expected = Buffer.concat(
              accessUnitParts(s.data!, s.keyframe, AVC, video.parameterSets!, { file: 'f', offset: 0 }),
            );
            expect(p.payload.equals(expected)).toBe(true);
          });
          const frames = r.pes
            .filter((p) => p.pid === audio.pid)
            .flatMap((p) => adtsFrames(p.payload).frames.map((f) => [...f.subarray(7)]));
          expect(frames).toEqual(a.map((s) => [...s.data!]));
        },
      ),
      { numRuns: 150 },
    );
  });

  test('audio frames share a PES up to 100 ms and never across groups', () => {
    const { audio: a } = content({ video: [], audio: Array.from({ length: 40 }, () => 200), keyEvery: 1, start: 0 });
    const units = planStream(audio, a, false);
    for (const u of units) {
      const frames = a.slice(u.first, u.first + u.count);
      expect(new Set(frames.map((f) => f.group)).size).toBe(1);
      expect(frames[frames.length - 1]!.dts - frames[0]!.dts).toBeLessThan(9000n);
    }
    expect(units.length).toBeGreaterThan(4); // 40 frames of 21.3 ms in groups of 10
    expect(units.reduce((s, u) => s + u.count, 0)).toBe(40);
  });

  test('PCRs fill gaps over 100 ms and reach the next segment', () => {
    // Two frames 1 s apart: the PCR must step through the second in ≤ 100 ms steps.
    const v = [sample(900000, 900000, avcSample(300, 1), true), sample(990000, 990000, avcSample(300, 2), false)];
    const seg = Buffer.from(
      writeTsSegment({ streams: [{ stream: video, samples: v, cc: 0 }], patCc: 0, pmtCc: 0, nextPcr: 1170000n }),
    );
    const r = checkTs([seg]);
    expect(r.problems).toEqual([]);
    expect(r.pcrs[0]).toBe(891000n);
    expect(r.pcrs[r.pcrs.length - 1]).toBeGreaterThanOrEqual(1170000n - 9000n);
    expect(r.pcrs.length).toBeGreaterThanOrEqual(Math.ceil((1170000 - 891000) / 9000));
  });

  test('PTS before DTS is a bug, not output', () => {
    expect(() => planStream(video, [sample(100, 99, avcSample(10, 1), true)], true)).toThrow(OriginError);
  });
});

describe('the checker finds what is broken', () => {
  const video = tsStream(AVC, undefined, 'v');
  const audio = tsStream(AAC, 'eng', 'a');
  const { video: v, audio: a } = content({
    video: Array.from({ length: 24 }, (_, i) => (i % 12 === 0 ? 9000 : 1500)),
    audio: Array.from({ length: 47 }, () => 300),
    keyEvery: 12,
    start: TS_TIME_OFFSET,
  });
  const good = (): Buffer =>
    Buffer.from(
      writeTsSegment({
        streams: [
          { stream: video, samples: v, cc: 0 },
          { stream: audio, samples: a, cc: 0 },
        ],
        patCc: 0,
        pmtCc: 0,
      }),
    );

  test('the intact segment passes', () => {
    expect(checkTs([good()]).problems).toEqual([]);
  });

  test.each([
    [
      'a dropped packet',
      (b: Buffer) => Buffer.concat([b.subarray(0, 188 * 5), b.subarray(188 * 6)]),
      /continuity counter|PES_packet_length/,
    ],
    [
      'a damaged PAT CRC',
      (b: Buffer) => {
        b[20] = b[20]! ^ 0xff;
        return b;
      },
      /CRC_32 mismatch/,
    ],
    [
      'a lost sync byte',
      (b: Buffer) => {
        b[188 * 7] = 0x46;
        return b;
      },
      /sync byte/,
    ],
    ['a segment without PAT and PMT', (b: Buffer) => b.subarray(376), /before the PAT and PMT|no PAT and PMT/],
  ])('%s', (_, damage, message) => {
    const problems = checkTs([damage(good())]).problems;
    expect(problems.join('\n')).toMatch(message);
  });

  test('counters that restart at 0 in the next segment', () => {
    expect(checkTs([good(), good()]).problems.join('\n')).toMatch(/continuity counter/);
  });

  test('a PCR gap over 100 ms', () => {
    const far = v.map((s, i) => ({ ...s, dts: s.dts + BigInt(i) * 9000n, pts: s.pts + BigInt(i) * 9000n }));
    const seg = Buffer.from(writeTsSegment({ streams: [{ stream: video, samples: far, cc: 0 }], patCc: 0, pmtCc: 0 }));
    // Remove the PCR-only packets the writer adds to fill the gaps.
    const kept: Buffer[] = [];
    for (let at = 0; at < seg.byteLength; at += 188)
      if (((seg[at + 3]! >> 4) & 3) !== 2) kept.push(seg.subarray(at, at + 188));
    expect(checkTs([seg]).problems).toEqual([]);
    expect(checkTs([Buffer.concat(kept)]).problems.join('\n')).toMatch(/PCR gap/);
  });
});
