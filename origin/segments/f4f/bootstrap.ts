// The HDS bootstrap: an `abst` box holding one segment run table (`asrt`) and one fragment run
// table (`afrt`), as the Adobe Flash Video File Format Specification 10.1 defines them (F4V
// boxes: Bootstrap Info box, Segment Run Table box, Fragment Run Table box). The F4M manifest
// carries it inline in base64; a client turns a time into a fragment number with it and asks for
// `<media url>Seg1-Frag<n>`. Pure: a fragment timeline in, box bytes out.
//
// What the origin writes (VOD, one quality, named access):
// - abst: BootstrapinfoVersion 1, Profile 0 (named), Live 0, Update 0, the timeline's timescale,
//   CurrentMediaTime = the end of the last fragment (the "latest available" time of a finished
//   presentation), SmpteTimeCodeOffset 0, MovieIdentifier = the presentation name, no server,
//   quality, DRM or metadata strings;
// - asrt: one entry, segment 1 holding every fragment (the reference's `Seg1-Frag<n>` URLs);
// - afrt: the same timescale; one entry per run of fragments of equal duration that follow each
//   other without a gap (the count of a run is the next entry's FirstFragment minus its own), as
//   DASH's `<S r>` folds the same segments. Fragments are numbered from 1. Durations are exact
//   ticks of the media's timescale: the same numbers as DASH `<S d>` and Smooth `<c d>`.
//
// Live (a channel that has not ended), as ffmpeg's hdsenc writes it: the Live bit set (byte
// 0x20: Profile 0, Live 1, Update 0), CurrentMediaTime the end of the newest fragment listed,
// asrt FragmentsPerSegment 0xFFFFFFFF (segment 1 is open-ended), and the afrt numbering the
// window's fragments from `firstFragment`, a number that stays with its fragment as the window
// slides (the channel's numbering, model/view.ts firstNumber), not from 1.

import { originError } from '../../errors';
import { field, fullBox, serialize, Writable } from '../box-writer';

export interface FragmentTiming {
  /** Start, ticks of the timeline's timescale (the segment's output time). */
  time: bigint;
  /** Ticks; must fit 32 bits (afrt FragmentDuration is UI32). */
  duration: bigint;
}

export interface BootstrapInput {
  movieIdentifier: string;
  /** Ticks per second of every time in the boxes. */
  timescale: number;
  fragments: readonly FragmentTiming[];
  /** A live bootstrap (the Live bit, an open segment). Default false. */
  live?: boolean;
  /** The number of `fragments[0]` (default 1). */
  firstFragment?: number;
}

/** One afrt entry (FRAGMENTRUNENTRY). */
export interface FragmentRun {
  firstFragment: number;
  firstFragmentTimestamp: bigint;
  fragmentDuration: number;
}

const U32_MAX = 0xffffffff;

/** Folds fragments into runs: a new run where the duration changes or the timeline has a gap. */
export function fragmentRuns(fragments: readonly FragmentTiming[], firstFragment = 1): FragmentRun[] {
  const runs: FragmentRun[] = [];
  let expected: bigint | undefined;
  let current: FragmentRun | undefined;
  fragments.forEach((f, i) => {
    if (f.duration <= 0n || f.duration > BigInt(U32_MAX)) {
      // A zero FragmentDuration means a discontinuity entry, so a real fragment cannot have it.
      throw originError(
        'unsupported-media',
        `fragment ${i + 1} lasts ${f.duration} ticks: an afrt FragmentDuration is 1..2^32-1`,
        { subject: 'hds' },
      );
    }
    if (current === undefined || f.time !== expected || BigInt(current.fragmentDuration) !== f.duration) {
      current = {
        firstFragment: firstFragment + i,
        firstFragmentTimestamp: f.time,
        fragmentDuration: Number(f.duration),
      };
      runs.push(current);
    }
    expected = f.time + f.duration;
  });
  return runs;
}

/** Segment 1 of a live bootstrap: FragmentsPerSegment 0xFFFFFFFF, the segment has no end yet. */
const OPEN_SEGMENT = U32_MAX;

/** asrt with one entry: segment 1 holds `fragmentCount` fragments. */
function segmentRunTable(fragmentCount: number): Writable {
  return fullBox(
    'asrt',
    0,
    0, // flags 0: a full table, not an update
    field.u8(0), // QualityEntryCount: one quality, no URL modifiers
    field.u32(1), // SegmentRunEntryCount
    field.u32(1), // FirstSegment
    field.u32(fragmentCount), // FragmentsPerSegment
  );
}

function fragmentRunTable(timescale: number, runs: readonly FragmentRun[]): Writable {
  return fullBox(
    'afrt',
    0,
    0,
    field.u32(timescale),
    field.u8(0), // QualityEntryCount
    field.u32(runs.length), // FragmentRunEntryCount
    ...runs.map((r) =>
      field.group(field.u32(r.firstFragment), field.u64(r.firstFragmentTimestamp), field.u32(r.fragmentDuration)),
    ),
  );
}

export function bootstrapBox(b: BootstrapInput): Writable {
  const last = b.fragments[b.fragments.length - 1];
  if (last === undefined) throw originError('internal', 'a bootstrap needs at least one fragment', { subject: 'hds' });
  if (!Number.isInteger(b.timescale) || b.timescale < 1 || b.timescale > U32_MAX) {
    throw originError('internal', `timescale ${b.timescale} is not a 32-bit positive integer`, { subject: 'hds' });
  }
  const first = b.firstFragment ?? 1;
  if (!Number.isInteger(first) || first < 1 || first + b.fragments.length - 1 > U32_MAX) {
    throw originError('internal', `fragment numbers from ${first} do not fit 1..2^32-1`, { subject: 'hds' });
  }
  const live = b.live === true;
  const runs = fragmentRuns(b.fragments, first);
  return fullBox(
    'abst',
    0,
    0,
    field.u32(1), // BootstrapinfoVersion
    field.u8(live ? 0x20 : 0), // Profile (2 bits) 0 = named, Live (1), Update (1) 0, Reserved (4)
    field.u32(b.timescale),
    field.u64(last.time + last.duration), // CurrentMediaTime
    field.u64(0n), // SmpteTimeCodeOffset
    field.cstring(b.movieIdentifier),
    field.u8(0), // ServerEntryCount
    field.u8(0), // QualityEntryCount
    field.cstring(''), // DrmData
    field.cstring(''), // MetaData
    field.u8(1), // SegmentRunTableCount
    segmentRunTable(live ? OPEN_SEGMENT : first + b.fragments.length - 1),
    field.u8(1), // FragmentRunTableCount
    fragmentRunTable(b.timescale, runs),
  );
}

/** The abst box's bytes (what the F4M `<bootstrapInfo>` holds in base64). */
export function writeBootstrap(b: BootstrapInput): Uint8Array {
  if (b.movieIdentifier.includes('\0'))
    throw originError('internal', 'MovieIdentifier contains NUL', { subject: 'hds' });
  return serialize(bootstrapBox(b));
}
