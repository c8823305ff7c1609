// Slice header lengths (media/h264-slice.ts) against an independent reader: ffmpeg's
// trace_headers bitstream filter prints every slice header syntax element with its bit position.
// For the first slices of every H.264 fixture (CAVLC and CABAC, I/P/B, weighted prediction,
// field coding), the header ends in the byte ours says it does.

import { readFragmentMoof } from '../../../origin/segments/fmp4/media-segment';
import { samplesOfMoof } from '../../../origin/media/samples';
import { ParameterSets, parsePps, sliceHeaderBytes } from '../../../origin/media/h264-slice';
import { media } from '../../helpers/fixtures';
import { runSync } from '../../helpers/process';
import { openFixture } from '../segments/fmp4/fixture-segments';
import { thrownOriginError } from '../../helpers/errors';

const VIDEO = [
  'video_baseline_400k.ismv',
  'video_main_900k.ismv',
  'video_high_1600k.ismv',
  'video_sar_500k.ismv',
  'video_2997_600k.ismv',
  'video_interlaced_800k.ismv',
];
const FRAMES = 60;

/** End bit (exclusive, from the NAL header's first bit) of each slice header ffmpeg traces. */
function tracedHeaderEnds(file: string): number[] {
  const r = runSync('ffmpeg', [
    '-nostdin',
    '-i',
    media(file),
    '-map',
    '0:v:0',
    '-frames:v',
    String(FRAMES),
    '-c',
    'copy',
    '-bsf:v',
    'trace_headers',
    '-f',
    'null',
    '-',
  ]);
  const ends: number[] = [];
  let inSlice = false;
  for (const line of r.stderr.split('\n')) {
    const text = line.replace(/^\[trace_headers @ [^\]]*\] /, '');
    if (!line.startsWith('[trace_headers')) continue;
    if (/^Slice Header$/.test(text)) {
      inSlice = true;
      ends.push(0);
      continue;
    }
    const m = /^(\d+)\s+(\S+)\s+([01]+) = /.exec(text);
    if (m === null) {
      inSlice = false;
      continue;
    }
    if (!inSlice || m[2] === 'cabac_alignment_one_bit') continue;
    ends[ends.length - 1] = Number(m[1]) + m[3]!.length;
  }
  return ends;
}

/** The slice NAL units of the first FRAMES samples, in decode order, with the track's parameter sets. */
async function sliceNals(file: string): Promise<{ nals: Uint8Array[]; sets: ParameterSets }> {
  const f = await openFixture(file);
  try {
    const h = [...f.headers.values()][0]!;
    if (h.codec?.kind !== 'avc') throw new Error('not H.264');
    const sets = new ParameterSets(h.codec.parameterSets);
    const table = f.file.tracks[0]!.fragments;
    const nals: Uint8Array[] = [];
    let samples = 0;
    for (let i = 0; i < table.count && samples < FRAMES; i++) {
      const moof = await readFragmentMoof(f.source, table.offsets[i]!);
      const list = samplesOfMoof(moof, table.offsets[i]!, {
        trackId: h.trackID,
        trex: h.trexDefaults,
        baseTime: table.times[i]!,
        fragment: i,
        shift: 0n,
        fileSize: f.source.size,
      });
      for (const s of list) {
        if (samples++ >= FRAMES) break;
        const bytes = await f.source.read(s.offset, s.size);
        for (let at = 0; at < bytes.byteLength;) {
          const length = Buffer.from(bytes.buffer, bytes.byteOffset).readUInt32BE(at);
          const nal = bytes.subarray(at + 4, at + 4 + length);
          const type = nal[0]! & 0x1f;
          if (type === 1 || type === 5) nals.push(nal);
          if (type === 7 || type === 8) sets.add(nal);
          at += 4 + length;
        }
      }
    }
    return { nals, sets };
  } finally {
    await f.source.close();
  }
}

const hasEpb = (b: Uint8Array): boolean => b.some((x, i) => i >= 2 && x === 3 && b[i - 1] === 0 && b[i - 2] === 0);

describe.each(VIDEO)('%s', (file) => {
  test('every traced slice header ends in the byte sliceHeaderBytes gives', async () => {
    const ends = tracedHeaderEnds(file);
    const { nals, sets } = await sliceNals(file);
    expect(ends.length).toBeGreaterThanOrEqual(FRAMES);
    expect(nals.length).toBe(ends.length);
    let compared = 0;
    nals.forEach((nal, i) => {
      const expected = Math.ceil(ends[i]! / 8);
      // trace_headers counts unescaped bits: compare where the header holds no emulation prevention.
      if (hasEpb(nal.subarray(0, expected + 2))) return;
      expect([i, sliceHeaderBytes(nal, sets)]).toEqual([i, expected]);
      compared++;
    });
    expect(compared).toBeGreaterThan(nals.length * 0.9);
  }, 60_000);
});

test('a slice naming a parameter set the stream lacks is corrupt, not a crash', () => {
  const sets = new ParameterSets([]);
  // first_mb 0, slice_type 7 (I), pps_id 3: ue(v) codes 1, 0001000, 00100.
  const nal = Uint8Array.from([0x65, 0b10001000, 0b00100000, 0]);
  const e = thrownOriginError(() => sliceHeaderBytes(nal, sets));
  expect([e.kind, e.message]).toEqual(['corrupt-media', expect.stringContaining('parameter set 3')]);
});

test('FMO (slice groups) is refused by name', () => {
  // pps_id 0, sps_id 0, entropy 0, bottom_field 0, num_slice_groups_minus1 = 1 (ue 010).
  const e = thrownOriginError(() => parsePps(Uint8Array.from([0x68, 0b11000100, 0, 0])));
  expect([e.kind, e.message]).toEqual(['unsupported-media', expect.stringContaining('slice groups')]);
});
