// The F4F fragment writer on synthetic samples: the box sequence, every afra field, the moof's
// description of the mdat (each trun points at exactly its sample's bytes), the tag order and
// timestamps on the FLV clock, the decode delay, and what it refuses.

import { OriginError } from '../../../../origin/errors';
import { F4fInput, FlvSample, writeF4fFragment } from '../../../../origin/segments/f4f/fragment';
import { FlvTag, parseFragment } from './f4f-reader';

const V = 90000;
const A = 48000;
const bytes = (n: number, fill: number) => new Uint8Array(n).fill(fill);
const avcc = bytes(20, 0xa1);
const asc = new Uint8Array([0x11, 0x90]);

function video(times: number[], sync: boolean[], cto: number[]): FlvSample[] {
  return times.map((t, i) => ({
    time: BigInt(t),
    compositionOffset: cto[i]!,
    duration: 3750,
    sync: sync[i]!,
    data: bytes(100 + i, 0x10 + i),
  }));
}

function audio(times: number[]): FlvSample[] {
  return times.map((t, i) => ({
    time: BigInt(t),
    compositionOffset: 0,
    duration: 1024,
    sync: true,
    data: bytes(30 + i, 0x80 + i),
  }));
}

function input(over: Partial<F4fInput> = {}): F4fInput {
  return {
    fragmentNumber: 3,
    timescale: V,
    decodeDelay: { ticks: 0n, timescale: 1 },
    video: {
      timescale: V,
      sequenceHeader: avcc,
      samples: video([0, 3750, 7500, 11250], [true, false, true, false], [0, 3750, 0, 0]),
    },
    audio: { timescale: A, sequenceHeader: asc, samples: audio([0, 1024, 2048]) },
    ...over,
  };
}

/** `v`/`a` + `h` (sequence header) or the sample's first byte, with the timestamp: a readable order. */
function describe(tags: FlvTag[]): string[] {
  return tags.map((t) => {
    const kind = t.tagType === 9 ? 'v' : 'a';
    const header = (t.tagType === 9 ? t.avcPacketType : t.aacPacketType) === 0;
    return `${kind}${header ? 'h' : t.body[0]!.toString(16)}@${t.timestamp}`;
  });
}

test('boxes are afra, moof, mdat; tags in clock order with sequence headers where a decoder needs them', () => {
  const f = parseFragment(writeF4fFragment(input()));
  expect(f.boxTypes).toEqual(['afra', 'moof', 'mdat']);
  // Video first on the tie at 0; audio 2048/48000 s = 42.7 ms after video 3750/90000 s = 41.7 ms.
  expect(describe(f.tags)).toEqual([
    'vh@0',
    'v10@0',
    'ah@0',
    'a80@0',
    'a81@21',
    'v11@42',
    'a82@43',
    'vh@83',
    'v12@83',
    'v13@125',
  ]);
  const timestamps = f.tags.map((t) => t.timestamp);
  expect(timestamps).toEqual([...timestamps].sort((a, b) => a - b));
  // Key frames and sequence headers carry FrameType 1; the inter frames 2; composition times in ms:
  // presentation and decode times are each rounded, 83 (83.3) − 42 (41.7) = 41.
  const videoTags = f.tags.filter((t) => t.tagType === 9);
  expect(videoTags.map((t) => [t.frameType, t.avcPacketType, t.compositionTime])).toEqual([
    [1, 0, 0],
    [1, 1, 0],
    [2, 1, 41],
    [1, 0, 0],
    [1, 1, 0],
    [2, 1, 0],
  ]);
  expect(videoTags[0]!.body).toEqual(avcc);
  expect(f.tags.find((t) => t.tagType === 8 && t.aacPacketType === 0)!.body).toEqual(asc);
});

test('every afra field: one entry per key frame, pointing at the sequence header before it', () => {
  const out = writeF4fFragment(input());
  const f = parseFragment(out);
  expect({ ...f.afra, entries: undefined }).toEqual({
    version: 0,
    flags: 0,
    longIds: 0,
    longOffsets: 0,
    globalEntries: 0,
    reserved: 0,
    timeScale: V,
    entries: undefined,
  });
  expect(f.afra.entries.map((e) => e.time)).toEqual([0n, 7500n]);
  for (const e of f.afra.entries) {
    // Offsets count from the fragment's first byte.
    const tag = f.tags.find((t) => t.start + f.mdatPayloadStart === e.offset);
    expect(tag).toMatchObject({ tagType: 9, avcPacketType: 0 });
    const next = f.tags[f.tags.indexOf(tag!) + 1]!;
    expect(next).toMatchObject({
      tagType: 9,
      avcPacketType: 1,
      frameType: 1,
      timestamp: Math.round((Number(e.time) / V) * 1000),
    });
  }
});

test('the moof describes the mdat: mfhd, one traf per stream, one trun per sample at its bytes', () => {
  const out = writeF4fFragment(input());
  const f = parseFragment(out);
  const i = input();
  expect(f.moof.sequenceNumber).toBe(3);
  expect(f.moof.trafs.map((t) => [t.tfhd.trackId, t.tfhd.flags, t.baseMediaDecodeTime, t.truns.length])).toEqual([
    [1, 0x020000, 0n, 4],
    [2, 0x020000, 0n, 3],
  ]);
  const streams = [i.video!, i.audio!];
  f.moof.trafs.forEach((traf, k) => {
    traf.truns.forEach((run, j) => {
      const sample = streams[k]!.samples[j]!;
      expect(run.sampleCount).toBe(1);
      const s = run.samples[0]!;
      expect([s.duration, s.size]).toEqual([sample.duration, sample.data.byteLength]);
      // default-base-is-moof: data_offset counts from the moof's first byte.
      const at = f.moofStart + run.dataOffset!;
      expect(out.subarray(at, at + s.size!)).toEqual(sample.data);
      if (k === 0) {
        expect(run.version).toBe(1);
        expect(s.compositionOffset).toBe(sample.compositionOffset);
        expect(s.flags).toBe(sample.sync ? 0x02000000 : 0x01010000);
      } else {
        expect([s.flags, s.compositionOffset]).toEqual([undefined, undefined]);
      }
    });
  });
});

test('a decode delay makes composition times non-negative and moves the audio by the same amount', () => {
  const i = input({
    decodeDelay: { ticks: 3750n, timescale: V },
    video: {
      timescale: V,
      sequenceHeader: avcc,
      samples: video([0, 3750, 7500, 11250], [true, false, false, false], [3750, 7500, -3750, 0]),
    },
  });
  const f = parseFragment(writeF4fFragment(i));
  // Video decode times stay; presentation = decode + offset + 41.7 ms; audio at its time + 41.7 ms.
  // Audio 0 lands on video 1's instant (41.7 ms): video first on the tie.
  expect(describe(f.tags)).toEqual([
    'vh@0',
    'v10@0',
    'v11@42',
    'ah@42',
    'a80@42',
    'a81@63',
    'v12@83',
    'a82@84',
    'v13@125',
  ]);
  const pts = f.tags
    .filter((t) => t.tagType === 9 && t.avcPacketType === 1)
    .map((t) => t.timestamp + t.compositionTime!);
  // Presentation times in ms: (decode + offset)/90 kHz + 41.7 ms, rounded.
  expect(pts).toEqual([83, 167, 83, 167]);
  expect(f.tags.every((t) => t.tagType !== 9 || t.compositionTime! >= 0)).toBe(true);
});

test('an audio-only fragment: one afra entry at the AAC sequence header, one traf as track 1', () => {
  const out = writeF4fFragment({
    fragmentNumber: 1,
    timescale: A,
    decodeDelay: { ticks: 0n, timescale: 1 },
    audio: { timescale: A, sequenceHeader: asc, samples: audio([48000, 49024]) },
  });
  const f = parseFragment(out);
  expect(describe(f.tags)).toEqual(['ah@1000', 'a80@1000', 'a81@1021']);
  expect(f.afra.timeScale).toBe(A);
  expect(f.afra.entries).toEqual([{ time: 48000n, offset: f.mdatPayloadStart }]);
  expect(f.moof.trafs.map((t) => [t.tfhd.trackId, t.baseMediaDecodeTime])).toEqual([[1, 48000n]]);
});

test('a fragment whose first video sample is no key frame still starts with the AVC sequence header, without an afra entry for it', () => {
  const f = parseFragment(
    writeF4fFragment(
      input({
        audio: undefined,
        video: { timescale: V, sequenceHeader: avcc, samples: video([0, 3750], [false, true], [0, 0]) },
      }),
    ),
  );
  expect(describe(f.tags)).toEqual(['vh@0', 'v10@0', 'vh@42', 'v11@42']);
  expect(f.afra.entries.map((e) => e.time)).toEqual([3750n]);
});

test.each([
  ['fragment number 0', input({ fragmentNumber: 0 })],
  [
    'a composition offset below the decode delay',
    input({ video: { timescale: V, sequenceHeader: avcc, samples: video([0], [true], [-1]) } }),
  ],
  ['a negative output time', input({ audio: { timescale: A, sequenceHeader: asc, samples: audio([-1]) } })],
])('refuses %s', (_what, i) => {
  expect(() => writeF4fFragment(i)).toThrow(OriginError);
});

test('a fragment over the 64 MiB bound is refused before anything is allocated for it', () => {
  const big = new Uint8Array(8 << 20);
  const samples = Array.from({ length: 9 }, (_, k) => ({
    time: BigInt(k * 3750),
    compositionOffset: 0,
    duration: 3750,
    sync: k === 0,
    data: big,
  }));
  let error: unknown;
  try {
    writeF4fFragment(input({ audio: undefined, video: { timescale: V, sequenceHeader: avcc, samples } }));
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(OriginError);
  expect((error as OriginError).code).toBe('segment-too-large');
});
