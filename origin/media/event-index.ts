// The timed-metadata events of one track of an indexed source (model/timed-metadata.ts). Like
// media-file.ts, this file only decides what to read; the boxes are parsed by event-boxes.ts.
//
// - A metadata track (`urim` or `evte` sample entry): every sample of every fragment is read (the
//   track is small: a few hundred bytes a second) and parsed as its entry says.
// - A media track whose source carries top-level `emsg` boxes (ISO/IEC 23009-1 §5.10.3.3: before
//   the `moof` of the segment they belong to): the top-level boxes are walked, each emsg is
//   placed against the time of the moof that follows it. Only the media track's server-manifest
//   entry says a source has them (`origin package` notes it), so that no other source pays a walk.
//
// Repeats (an event in every sample it overlaps) are removed by orderEvents.

import type { MediaFile, TrexDefaults } from '../model/media';
import { isScte35, orderEvents, TimedEvent } from '../model/timed-metadata';
import { parseSpliceInfoSection } from './scte35';
import { ByteSource } from '../io/source';
import { parseMoof, readBoxHeader } from './boxes';
import { corruptAt } from './byte-reader';
import { parseEmsg, parseEventSample } from './event-boxes';
import { readFragmentMoof } from './fragment-moof';
import { inFile } from './moov';
import { readSampleBytes, samplesOfMoof } from './samples';

/** Sample entries of the metadata tracks we read. */
export const EVENT_SAMPLE_ENTRIES = ['urim', 'evte'] as const;
export type EventSampleEntry = (typeof EVENT_SAMPLE_ENTRIES)[number];

export const isEventSampleEntry = (entry: string): entry is EventSampleEntry =>
  (EVENT_SAMPLE_ENTRIES as readonly string[]).includes(entry);

/** Caps that keep a hostile file from making us hold without bound. */
const MAX_EVENT_BYTES = 16 << 20;
const MAX_EMSG_BYTES = 1 << 20;

/** The events of track `trackId` of `file` (indexed from `source`): its samples, or its inband emsg boxes. */
export async function readTrackEvents(source: ByteSource, file: MediaFile, trackId: number): Promise<TimedEvent[]> {
  const header = file.headers.get(trackId);
  const track = file.tracks.find((t) => t.properties.trackID === trackId);
  if (header === undefined || track === undefined) throw corruptAt('moov', 0, `no track ${trackId} in ${source.name}`);
  try {
    if (isEventSampleEntry(header.sampleEntry))
      return await sampleEvents(source, file, { trackId, kind: header.sampleEntry, timescale: header.timescale });
    return await inbandEvents(source, (id) => file.headers.get(id)?.trexDefaults, {
      trackId,
      timescale: header.timescale,
    });
  } catch (e) {
    throw inFile(e, source.name);
  }
}

async function sampleEvents(
  source: ByteSource,
  file: MediaFile,
  t: { trackId: number; kind: EventSampleEntry; timescale: number },
): Promise<TimedEvent[]> {
  const track = file.tracks.find((x) => x.properties.trackID === t.trackId)!;
  const trex = file.headers.get(t.trackId)!.trexDefaults;
  const f = track.fragments;
  const out: TimedEvent[] = [];
  let bytes = 0;
  for (let i = 0; i < f.count; i++) {
    const offset = f.offsets[i]!;
    const moof = await readFragmentMoof(source, offset);
    const samples = samplesOfMoof(moof, offset, {
      trackId: t.trackId,
      trex,
      baseTime: f.times[i]!,
      fragment: i,
      shift: 0n,
      fileSize: source.size,
    });
    const data = await readSampleBytes(source, samples, MAX_EVENT_BYTES - bytes);
    samples.forEach((s, k) => {
      bytes += s.size;
      const at = { path: `${t.kind} sample@${s.offset}`, offset: s.offset, time: s.sourceTime, timescale: t.timescale };
      out.push(...parseEventSample(data[k]!, t.kind, at));
    });
  }
  return withSplices(orderEvents(out));
}

/** SCTE-35 events with their section read: a bad CRC is refused when indexing, never written out. */
function withSplices(events: TimedEvent[]): TimedEvent[] {
  return events.map((e) =>
    isScte35(e)
      ? { ...e, splice: parseSpliceInfoSection(e.data, { path: `event ${e.id} (${e.schemeIdUri})`, offset: 0 }) }
      : e,
  );
}

/**
 * Top-level emsg boxes and the moof after each: a walk of the box headers (as media-file.ts's
 * moof walk), reading only the emsg boxes and the moofs that follow one.
 */
async function inbandEvents(
  source: ByteSource,
  defaults: (id: number) => TrexDefaults | undefined,
  t: { trackId: number; timescale: number },
): Promise<TimedEvent[]> {
  const out: TimedEvent[] = [];
  let pending: Array<{ payload: Uint8Array; path: string; offset: number }> = [];
  let bytes = 0;
  for (let offset = 0; offset < source.size;) {
    const head = await source.read(offset, Math.min(16, source.size - offset));
    const h = readBoxHeader(head, 0, offset, source.size, 'file');
    if (h === undefined) throw corruptAt('file', offset, 'truncated box header');
    if (h.type === 'emsg') {
      if (h.size > MAX_EMSG_BYTES || (bytes += h.size) > MAX_EVENT_BYTES)
        throw corruptAt('file', offset, `emsg boxes past the ${MAX_EVENT_BYTES}-byte limit of one source`);
      const box = await source.read(offset, h.size);
      pending.push({ payload: box.subarray(h.headerSize), path: `emsg@${offset}`, offset: offset + h.headerSize });
    } else if (h.type === 'moof' && pending.length > 0) {
      const moof = await readFragmentMoof(source, offset);
      const traf = parseMoof(moof, offset, defaults).find((x) => x.trackId === t.trackId);
      // Version 0 boxes count from the segment's earliest presentation time; the fragment's
      // decode time stands for it (equal without composition offsets on the first sample).
      const segment = traf?.baseTime === undefined ? undefined : { time: traf.baseTime, timescale: t.timescale };
      for (const p of pending) out.push(parseEmsg(p.payload, p, segment));
      pending = [];
    }
    offset += h.size;
  }
  if (pending.length > 0) throw corruptAt(pending[0]!.path, pending[0]!.offset, 'emsg after the last moof');
  return withSplices(orderEvents(out));
}
