// The source's edit lists, carried into the capture (ISO/IEC 14496-12 §8.6.6 EditListBox). An
// encoder with B-frames starts its video's composition times after its decode times (ffmpeg: two
// frames) and an AAC encoder primes its first frame; both say so in an `elst` whose media_time
// is where presentation starts, so that a player shows the first keyframe at 0 and drops the
// priming. The capture copies samples and their decode times unchanged (rebased by the same
// seconds on every track), so writing each track's edit into the output keeps every frame at the
// presentation time it had in the source, less the rebase: the first keyframe at 0 (its
// composition offset being the edit's media_time, as encoders write it), or with --copy_ts at its
// source time. Taken: an optional empty edit (a delay) then one edit at rate 1, or no edit list;
// anything else is refused, naming it. Pure: bytes in, bytes out.

import { childBoxes } from '../media/boxes';
import { box, field, fullBox, serialize, Writable } from '../segments/box-writer';
import { refuse } from './capture-model';

export interface Edit {
  /** An empty edit first (§8.6.6.1 media_time −1): the track starts this late, in `movieTimescale`. */
  delay: bigint;
  movieTimescale: number;
  /** Where presentation starts in the media, its timescale (the composition time shown at 0). */
  mediaTime: bigint;
}

/** The edit of each track (by tkhd track_ID) of an init segment's moov; tracks without one absent. */
export function readEdits(init: Uint8Array, name: string): Map<number, Edit> {
  const out = new Map<number, Edit>();
  const moov = [...childBoxes(init, 0, name)].find((b) => b.type === 'moov');
  if (moov === undefined) return out;
  const kids = [...childBoxes(moov.payload, moov.start + moov.headerSize, `${name}: moov`)];
  const mvhd = kids.find((b) => b.type === 'mvhd');
  if (mvhd === undefined) return out;
  const mv = view(mvhd.payload);
  const movieTimescale = mv.getUint32(mvhd.payload[0] === 1 ? 20 : 12);
  for (const trak of kids.filter((b) => b.type === 'trak')) {
    const parts = [...childBoxes(trak.payload, trak.start + trak.headerSize, `${name}: trak`)];
    const tkhd = parts.find((b) => b.type === 'tkhd');
    const elst = parts
      .filter((b) => b.type === 'edts')
      .flatMap((e) => [...childBoxes(e.payload, e.start + e.headerSize, `${name}: edts`)])
      .find((b) => b.type === 'elst');
    if (tkhd === undefined || elst === undefined) continue;
    const trackId = view(tkhd.payload).getUint32(tkhd.payload[0] === 1 ? 20 : 12);
    const edit = parseElst(elst.payload, movieTimescale, `${name}: trak ${trackId} elst`);
    if (edit !== undefined) out.set(trackId, edit);
  }
  return out;
}

function parseElst(p: Uint8Array, movieTimescale: number, where: string): Edit | undefined {
  const v = view(p);
  const wide = p[0] === 1;
  const entry = wide ? 20 : 12;
  const count = p.byteLength >= 8 ? v.getUint32(4) : 0;
  if (p.byteLength < 8 + count * entry) throw refuse('a truncated edit list', where);
  const entries = Array.from({ length: count }, (_, i) => {
    const at = 8 + i * entry;
    const duration = wide ? v.getBigUint64(at) : BigInt(v.getUint32(at));
    const mediaTime = wide ? v.getBigInt64(at + 8) : BigInt(v.getInt32(at + 4));
    const rate = v.getInt16(at + (wide ? 16 : 8));
    return { duration, mediaTime, rate };
  });
  const [first, second] = entries;
  if (first === undefined) return undefined;
  const empty = first.mediaTime === -1n;
  const media = empty ? second : first;
  if (entries.length > (empty ? 2 : 1) || media === undefined || media.mediaTime < 0n || media.rate !== 1)
    throw refuse(`an edit list other than [an empty edit,] one edit at rate 1 (${count} entries)`, where);
  return { delay: empty ? first.duration : 0n, movieTimescale, mediaTime: media.mediaTime };
}

/** `init` (ftyp + moov as writeMultiTrackInit writes it) with an edts/elst in each track that has an edit. */
export function withEdits(init: Uint8Array, edits: ReadonlyMap<number, Edit>): Uint8Array {
  if (edits.size === 0) return init;
  const nodes: Writable[] = [];
  for (const top of childBoxes(init, 0, 'capture init')) {
    if (top.type !== 'moov') {
      nodes.push(field.bytes(init.subarray(top.start, top.start + top.size)));
      continue;
    }
    const kids = [...childBoxes(top.payload, top.start + top.headerSize, 'capture moov')];
    const mvhd = kids.find((b) => b.type === 'mvhd')!;
    const movieTimescale = view(mvhd.payload).getUint32(mvhd.payload[0] === 1 ? 20 : 12);
    const moov = kids.map((k) => {
      const whole = field.bytes(init.subarray(k.start, k.start + k.size));
      if (k.type !== 'trak') return whole;
      const parts = [...childBoxes(k.payload, k.start + k.headerSize, 'capture trak')];
      const tkhd = parts.find((b) => b.type === 'tkhd')!;
      const edit = edits.get(view(tkhd.payload).getUint32(tkhd.payload[0] === 1 ? 20 : 12));
      if (edit === undefined) return whole;
      // §8.6.1.1: edts follows tkhd.
      return box(
        'trak',
        ...parts.flatMap((b) => {
          const bytes = field.bytes(init.subarray(b.start, b.start + b.size));
          return b.type === 'tkhd' ? [bytes, box('edts', elstBox(edit, movieTimescale))] : [bytes];
        }),
      );
    });
    nodes.push(box('moov', ...moov));
  }
  return serialize(...nodes);
}

/** elst version 1; the delay rescaled to the output's movie timescale, the media edit to the end (duration 0: fragments follow, §8.6.6.3). */
function elstBox(e: Edit, movieTimescale: number): Writable {
  const entry = (duration: bigint, mediaTime: bigint): Writable =>
    field.group(field.u64(duration), field.i64(mediaTime), field.i16(1), field.i16(0));
  const delay = (e.delay * BigInt(movieTimescale)) / BigInt(e.movieTimescale);
  const entries = delay > 0n ? [entry(delay, -1n), entry(0n, e.mediaTime)] : [entry(0n, e.mediaTime)];
  return fullBox('elst', 1, 0, field.u32(entries.length), ...entries);
}

function view(b: Uint8Array): DataView {
  return new DataView(b.buffer, b.byteOffset, b.byteLength);
}
