// The timed-metadata events of a channel's archived track, read through the storage seam for
// the live output (docs/design/live.md#timed-metadata; the model: model/timed-metadata.ts):
//
// - a media track: the top-level `emsg` boxes ahead of the moof of each fragment whose index
//   record says it has some (flag bit 1, archive-index.ts). Those records' offsets name the first
//   emsg; the segment writers want the moof, so the record is answered moved past the leading
//   boxes (offset and size), as if the fragment had come without them;
// - a metadata track (`urim`, `evte`): every sample of every fragment, parsed as its entry says.
//
// Times are the ingest's (UTC in the track or event timescale); version 0 boxes are placed
// against the fragment's decode time (the record's), as media/event-index.ts does for VOD.
// Every event was parsed once already when it was archived (live/ingest-parser.ts); what is read
// here is kept per (archive file, record offset), since a channel is read again after every
// publish and an archived record never changes.

import { childBoxes, readBoxHeader } from '../media/boxes';
import { corruptAt } from '../media/byte-reader';
import { parseEmsg } from '../media/event-boxes';
import { isEventSampleEntry } from '../media/event-index';
import { MoovTrack, readMoov } from '../media/moov';
import { parseSpliceInfoSection } from '../media/scte35';
import { ByteSource } from '../io/source';
import { Storage } from '../io/storage';
import { isScte35, orderEvents, TimedEvent } from '../model/timed-metadata';
import { IndexRecord } from './archive-index';
import type { ReadArchiveFile } from './channel-reader';
import { sampleEvents } from './ingest-parser';

/** What one archived record holds of timed metadata, and the bytes ahead of its moof. */
interface RecordEvents {
  events: TimedEvent[];
  /** Bytes of the top-level boxes before the moof. */
  lead: number;
}

/** Records kept read (a few hundred bytes each): hours of a channel's metadata. */
const MAX_CACHED = 50_000;
const cache = new Map<string, RecordEvents>();

/** The same cap as one fragment's emsg at ingest (ingest-parser.ts MAX_FRAGMENT_EMSG_BYTES). */
const MAX_LEAD_BYTES = 1 << 20;

export interface TrackEvents {
  /** The track's files with each record moved past its leading boxes. */
  files: ReadArchiveFile[];
  /** Its events in presentation order, repeats removed. */
  events: TimedEvent[];
}

/**
 * The events of one archived track, and its files as the segment writers read them. `head` is
 * the init of its first archive file (ftyp + moov, then anything): its sample entry says whether
 * it is a metadata track.
 */
export async function readArchivedEvents(
  storage: Storage,
  files: readonly ReadArchiveFile[],
  t: { type: string; trackId: number; head: Uint8Array; name: string },
): Promise<TrackEvents> {
  const flagged = files.some((f) => f.records.some((r) => r.events));
  if (t.type !== 'data' && !flagged) return { files: [...files], events: [] };
  const track = moovTrack(t.head, t.trackId, t.name);
  const metadata = t.type === 'data' && isEventSampleEntry(track.header.sampleEntry);
  if (!metadata && !flagged) return { files: [...files], events: [] };
  const all: TimedEvent[] = [];
  const out: ReadArchiveFile[] = [];
  for (const f of files) {
    const wanted = f.records.filter((r) => metadata || r.events);
    const read = new Map<IndexRecord, RecordEvents>();
    const missing = wanted.filter((r) => !cache.has(keyOf(f, r)));
    if (missing.length > 0) {
      const source = await storage.open(f.media);
      try {
        for (const r of missing) remember(keyOf(f, r), await readRecord(source, r, track, metadata));
      } finally {
        await source.close();
      }
    }
    for (const r of wanted) read.set(r, cache.get(keyOf(f, r))!);
    for (const e of read.values()) all.push(...e.events);
    const records = f.records.map((r) => {
      const lead = read.get(r)?.lead ?? 0;
      return lead === 0 ? r : { ...r, offset: r.offset + lead, size: r.size - lead };
    });
    out.push({ ...f, records });
  }
  return { files: out, events: orderEvents(all) };
}

/** The track of an archived init (ftyp, moov, ...). */
function moovTrack(head: Uint8Array, trackId: number, name: string): MoovTrack {
  for (const b of childBoxes(head, 0, name)) {
    if (b.type !== 'moov') continue;
    const found = readMoov(head.subarray(b.start, b.start + b.size), name, b.start).tracks.find(
      (x) => x.header.trackID === trackId,
    );
    if (found !== undefined) return found;
  }
  throw corruptAt('moov', 0, `the archived init of ${name} has no track ${trackId}`);
}

const keyOf = (f: ReadArchiveFile, r: IndexRecord): string => `${f.media}\n${r.offset}`;

function remember(key: string, value: RecordEvents): void {
  if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
  cache.set(key, value);
}

async function readRecord(
  source: ByteSource,
  r: IndexRecord,
  track: MoovTrack,
  metadata: boolean,
): Promise<RecordEvents> {
  const timescale = track.header.timescale;
  const events: TimedEvent[] = [];
  let at = r.offset;
  const end = r.offset + r.size;
  // The leading boxes: emsg (and any other box the archive kept before the moof).
  for (;;) {
    const head = await source.read(at, Math.min(16, end - at));
    const h = readBoxHeader(head, 0, at, end, 'fragment');
    if (h === undefined) throw corruptAt('fragment', at, 'truncated box header in an archived fragment');
    if (h.type === 'moof') break;
    if (at + h.size - r.offset > MAX_LEAD_BYTES)
      throw corruptAt(`${h.type}@${at}`, at, `more than ${MAX_LEAD_BYTES} bytes ahead of the moof`);
    if (h.type === 'emsg') {
      const box = await source.read(at, h.size);
      const where = { path: `emsg@${at}`, offset: at + h.headerSize };
      events.push(parseEmsg(box.subarray(h.headerSize), where, { time: r.time, timescale }));
    }
    at += h.size;
  }
  const lead = at - r.offset;
  if (metadata && isEventSampleEntry(track.header.sampleEntry)) {
    const fragment = await source.read(at, end - at);
    events.push(...sampleEvents(fragment, track, r.time, track.header.sampleEntry));
  }
  for (const e of events)
    if (isScte35(e)) e.splice = parseSpliceInfoSection(e.data, { path: `event ${e.id} (${e.schemeIdUri})`, offset: 0 });
  return { events, lead };
}
