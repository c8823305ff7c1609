// The capture's media in and out: an init segment's tracks (through the one moov reader,
// media/moov.ts), a media segment's samples (through the one moof reader, media/samples.ts), and
// one movie fragment of chosen samples written back (ISO/IEC 14496-12 §8.8.4 moof, §8.8.12 tfdt
// version 1, §8.8.8 trun version 1 with every per-sample field, default-base-is-moof §8.8.7.1), so
// the output never depends on the source's defaults or offsets. Pure: bytes in, bytes out.

import { childBoxes, parseMoof } from '../media/boxes';
import { readTrackHeaders } from '../media/moov';
import { samplesOfMoof } from '../media/samples';
import type { TrackHeader } from '../model/media';
import { box, field, fullBox, serialize } from '../segments/box-writer';
import { refuse } from './capture-model';

/** The sample entries the capture takes; the others are named when refused. */
const SAMPLE_ENTRIES: Record<string, string | undefined> = {
  avc1: undefined,
  avc3: undefined,
  mp4a: undefined,
  encv: 'encryption (encv sample entry)',
  enca: 'encryption (enca sample entry)',
  hvc1: 'HEVC (hvc1)',
  hev1: 'HEVC (hev1)',
};

/** The tracks of an init segment (ftyp + moov), checked to be clear H.264 or AAC. */
export function readInit(bytes: Uint8Array, name: string): TrackHeader[] {
  for (const b of childBoxes(bytes, 0, name)) {
    if (b.type !== 'moov') continue;
    const stsdTypes = [...sampleEntryTypes(b.payload)];
    for (const t of stsdTypes) {
      const why = t in SAMPLE_ENTRIES ? SAMPLE_ENTRIES[t] : `the sample entry ${t} (H.264 and AAC only)`;
      if (why !== undefined) throw refuse(why, name);
    }
    const headers = [...readTrackHeaders(bytes.subarray(b.start, b.start + b.size), name, b.start).values()];
    for (const h of headers) {
      if (h.handler !== 'vide' && h.handler !== 'soun') throw refuse(`a ${h.handler} track`, name);
      if (h.sampleEntry === 'mp4a' && h.codec?.kind !== 'aac') throw refuse('mp4a audio other than AAC', name);
    }
    return headers;
  }
  throw refuse('an init segment without moov', name);
}

/** The types of sample entries in the moov, found by their stsd boxes (§8.5.2), before any parsing trusts them. */
function* sampleEntryTypes(moov: Uint8Array): Generator<string> {
  for (let at = moov.indexOf(0x73); at >= 4 && at + 16 <= moov.byteLength; at = moov.indexOf(0x73, at + 1)) {
    if (String.fromCharCode(...moov.subarray(at, at + 4)) !== 'stsd') continue;
    yield String.fromCharCode(...moov.subarray(at + 16, at + 20));
  }
}

export interface CapturedSample {
  /** Decode time, track timescale. */
  time: bigint;
  duration: number;
  compositionOffset: number;
  sync: boolean;
  data: Uint8Array;
}

/** The samples of one track in a media segment (styp/sidx/prft/emsg skipped, every moof read). */
export function segmentSamples(bytes: Uint8Array, h: TrackHeader, name: string): CapturedSample[] {
  const out: CapturedSample[] = [];
  for (const b of childBoxes(bytes, 0, name)) {
    if (b.type !== 'moof') continue;
    const moof = bytes.subarray(b.start, b.start + b.size);
    const traf = parseMoof(moof, b.start, () => h.trexDefaults).find((t) => t.trackId === h.trackID);
    if (traf === undefined) continue;
    if (traf.baseTime === undefined) throw refuse('a fragment without tfdt', name);
    const samples = samplesOfMoof(moof, b.start, {
      trackId: h.trackID,
      trex: h.trexDefaults,
      baseTime: traf.baseTime,
      fragment: 0,
      shift: 0n,
      fileSize: bytes.byteLength,
    });
    for (const s of samples)
      out.push({
        time: s.sourceTime,
        duration: s.duration,
        compositionOffset: s.compositionOffset,
        sync: s.sync,
        data: bytes.subarray(s.offset, s.offset + s.size),
      });
  }
  return out;
}

/** §8.8.3.1 sample_flags: depends_on = 2 (an I-frame) for a sync sample; non-sync and depends_on = 1 otherwise. */
const SYNC_FLAGS = 0x02000000;
const NON_SYNC_FLAGS = 0x01010000;

/** tfhd default-base-is-moof; trun data-offset, duration, size, flags and composition offset present. */
const TFHD_FLAGS = 0x020000;
const TRUN_FLAGS = 0x000f01;

/** One moof + mdat holding `samples` of track `trackId`, its first at decode time `baseTime`. */
export function writeFragment(
  sequence: number,
  trackId: number,
  baseTime: bigint,
  samples: CapturedSample[],
): Uint8Array {
  const entries = samples.map((s) =>
    field.group(
      field.u32(s.duration),
      field.u32(s.data.byteLength),
      field.u32(s.sync ? SYNC_FLAGS : NON_SYNC_FLAGS),
      field.i32(s.compositionOffset),
    ),
  );
  const payload = samples.reduce((n, s) => n + s.data.byteLength, 0);
  const build = (dataOffset: number) =>
    box(
      'moof',
      fullBox('mfhd', 0, 0, field.u32(sequence)),
      box(
        'traf',
        fullBox('tfhd', 0, TFHD_FLAGS, field.u32(trackId)),
        fullBox('tfdt', 1, 0, field.u64(baseTime)),
        fullBox('trun', 1, TRUN_FLAGS, field.u32(samples.length), field.i32(dataOffset), ...entries),
      ),
    );
  const moofSize = build(0).size;
  const mdatHeader = payload + 8 > 0xffffffff ? 16 : 8;
  return serialize(build(moofSize + mdatHeader), box('mdat', ...samples.map((s) => field.bytes(s.data))));
}
