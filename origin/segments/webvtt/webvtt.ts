// HLS WebVTT subtitle segments from TTML text samples (`stpp`, ISO/IEC 14496-30 §5). Pure: the
// caller reads the samples of the segment's fragments and passes them in.
//
// Where a sample's TTML times sit. ISO/IEC 14496-30:2014 §5.3 (Timing): the timing values inside
// a TTML sample are on the track's presentation timeline, i.e. relative to the start of the
// track, not to the start of the sample; the sample's interval is the document's root temporal
// extent (a document "should not" last longer than its sample), so content outside it is not
// shown during that sample. shaka-packager writes exactly
// that (fixtures/media/text_*.ismt: the sample at decode time 2000 ms holds
// begin="00:00:02.000"). Some older Smooth Streaming encoders instead wrote times relative to
// the sample. Both are handled, per sample and deterministically:
//   - the document is resolved on its own timeline (time 0 = its origin);
//   - `absolute` places that origin at track time 0, `relative` at the sample's decode time;
//   - relative is chosen only when it puts strictly more cue time inside the sample's interval
//     than absolute does (ties, including every sample at time 0, stay absolute, the standard
//     reading);
//   - cues are then clipped to the sample's interval [sourceTime, sourceTime + duration), so a
//     zero-duration sample shows nothing and content outside its sample is dropped.
// Edit lists are not applied (the origin serves from fragments; `time` carries its own origin).
//
// Output (RFC 8216 §3.5): `WEBVTT`, `X-TIMESTAMP-MAP=MPEGTS:<mpegts>,LOCAL:00:00:00.000` (the
// RFC's syntax: each attribute name is followed by a colon, not `=`; shaka reads only that form
// and rejects the segment as INVALID_TEXT_HEADER otherwise), a blank line, then the cues on the output timeline (source time − presentation origin, as
// `time` gives it). Cues of consecutive samples that continue one another (same text and
// settings, one ending where the next begins: a cue the packager repeated in every sample it
// spans) are joined first; then every cue overlapping the window is written whole (a player
// drops the copy an adjacent segment repeats), cues wholly outside are dropped, a cue starting
// before output time 0 starts at 0. Times are rounded half up to the millisecond from exact
// rationals; cues are ordered by start time, then by sample and document order.

import { OriginError, originError } from '../../errors';
import { DocumentCue, documentCues } from './webvtt-ttml';
import { add, cmp, formatTimestamp, fromTicks, max, min, roundedMillis, Seconds, sub, ZERO } from './webvtt-time';
import { parseXml } from './webvtt-xml';

/** One `stpp` sample: a whole TTML document. */
export interface TextSample {
  /** The sample's bytes (UTF-8 XML); empty means no subtitles during the sample. */
  data: Uint8Array;
  /** Decode time in the source file, track timescale ticks. */
  sourceTime: bigint;
  /** Output time: sourceTime − presentation origin, track timescale ticks. */
  time: bigint;
  /** Track timescale ticks. */
  duration: bigint;
}

/** Largest TTML sample we parse, bytes. */
const MAX_SAMPLE_BYTES = 1 << 20;
/** Deepest element nesting we accept (tt/body/div/p/span… is rarely past 8). */
const MAX_DEPTH = 64;
const MPEGTS_WRAP = 2n ** 33n;

interface OutputCue {
  begin: Seconds;
  end: Seconds;
  payload: string;
  settings: string;
}

/**
 * One WebVTT segment. `samples`: those of the segment's fragments (any order); `window`: the
 * segment's output-time range [start, end) in track ticks; `mpegts`: the 90 kHz MPEG-TS time of
 * output time 0 (900000 for TS HLS, 0 for fMP4 HLS). Bad samples throw OriginError
 * corrupt-media (unsupported-media for a time base other than media) naming the sample.
 */
export function webvttSegment(
  samples: TextSample[],
  timescale: number,
  mpegts: number,
  window: { start: bigint; end: bigint },
): string {
  if (!Number.isSafeInteger(timescale) || timescale <= 0)
    throw originError('internal', `webvttSegment: timescale ${timescale} is not a positive integer`);
  if (!Number.isSafeInteger(mpegts) || mpegts < 0 || BigInt(mpegts) >= MPEGTS_WRAP) {
    throw originError('internal', `webvttSegment: MPEG-TS timestamp ${mpegts} is not a 33-bit value`);
  }
  if (window.end < window.start)
    throw originError('internal', `webvttSegment: window ends (${window.end}) before it starts (${window.start})`);
  const cues = joinContinuations(samples.flatMap((s) => sampleCues(s, timescale)));
  const from = fromTicks(window.start, timescale);
  const to = fromTicks(window.end, timescale);
  const blocks: string[] = [];
  for (const c of cues) {
    // Half-open overlap with [from, to): an empty window takes nothing.
    if (cmp(c.begin, to) >= 0 || cmp(c.end, from) <= 0 || cmp(from, to) === 0 || cmp(c.end, ZERO) <= 0) continue;
    const begin = roundedMillis(max(c.begin, ZERO));
    const end = roundedMillis(c.end);
    if (end <= begin) continue; // shorter than half a millisecond
    blocks.push(
      `${formatTimestamp(begin)} --> ${formatTimestamp(end)}${c.settings === '' ? '' : ` ${c.settings}`}\n${c.payload}\n`,
    );
  }
  return `WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:${mpegts},LOCAL:00:00:00.000\n\n${blocks.join('\n')}`;
}

/** The cues of one sample on the output timeline, clipped to the sample's interval. */
function sampleCues(sample: TextSample, timescale: number): OutputCue[] {
  if (sample.duration < 0n)
    throw originError('internal', `TTML sample at ${sample.sourceTime} has a negative duration ${sample.duration}`);
  if (sample.data.byteLength === 0) return []; // an empty sample: no subtitles here
  const subject = `TTML sample at decode time ${sample.sourceTime}`;
  if (sample.data.byteLength > MAX_SAMPLE_BYTES) {
    throw originError(
      'corrupt-media',
      `${sample.data.byteLength} bytes exceed the ${MAX_SAMPLE_BYTES}-byte limit for one TTML document`,
      { subject },
    );
  }
  let doc: DocumentCue[];
  try {
    doc = documentCues(parseXml(decodeUtf8(sample.data), MAX_DEPTH));
  } catch (e) {
    throw e instanceof OriginError ? e.within(subject) : e;
  }
  const start = fromTicks(sample.sourceTime, timescale);
  const end = fromTicks(sample.sourceTime + sample.duration, timescale);
  const origin = placeOrigin(doc, start, end);
  const toOutput = fromTicks(sample.time - sample.sourceTime, timescale);
  const out: OutputCue[] = [];
  for (const c of doc) {
    const begin = max(add(c.begin, origin), start);
    const stop = c.end === null ? end : min(add(c.end, origin), end);
    if (cmp(stop, begin) <= 0) continue;
    out.push({ begin: add(begin, toOutput), end: add(stop, toOutput), payload: c.payload, settings: c.settings });
  }
  return out;
}

function decodeUtf8(bytes: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes); // strips a UTF-8 BOM
  } catch {
    throw originError('corrupt-media', 'not valid UTF-8 (TTML samples are UTF-8 XML documents)');
  }
}

/** Source time of the document's time 0: 0 (absolute, the standard) or the sample start. */
function placeOrigin(doc: DocumentCue[], start: Seconds, end: Seconds): Seconds {
  if (cmp(start, ZERO) === 0) return ZERO;
  const inside = (shift: Seconds): Seconds =>
    doc.reduce((sum, c) => {
      const b = max(add(c.begin, shift), start);
      const e = c.end === null ? end : min(add(c.end, shift), end);
      return cmp(e, b) > 0 ? add(sum, sub(e, b)) : sum;
    }, ZERO);
  return cmp(inside(start), inside(ZERO)) > 0 ? start : ZERO;
}

/**
 * Joins cues that continue one another (same payload and settings, the next beginning exactly
 * where the previous ends), drops exact repeats, and orders by start time (stable).
 */
function joinContinuations(cues: OutputCue[]): OutputCue[] {
  const ordered = cues.map((c, i) => ({ c, i })).sort((a, b) => cmp(a.c.begin, b.c.begin) || a.i - b.i);
  const open = new Map<string, OutputCue>();
  const out: OutputCue[] = [];
  for (const { c } of ordered) {
    const key = `${c.settings}\n${c.payload}`;
    const last = open.get(key);
    if (last !== undefined && cmp(c.begin, last.end) === 0) {
      last.end = max(last.end, c.end);
      continue;
    }
    if (last !== undefined && cmp(c.begin, last.begin) === 0 && cmp(c.end, last.end) === 0) continue;
    const copy = { ...c };
    open.set(key, copy);
    out.push(copy);
  }
  return out;
}
