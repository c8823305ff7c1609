// Shared by the fMP4 tests: opens a fixture, reads its moov and fragment table, and builds the
// init segment and media segments of one track the way the playout layer will.

import { readBoxHeader } from '../../../../origin/media/boxes';
import { readMediaFile } from '../../../../origin/media/media-file';
import { ByteSource, FileSource } from '../../../../origin/io/source';
import { MediaFile } from '../../../../origin/model/media';
import { writeInitSegment } from '../../../../origin/segments/fmp4/init-segment';
import {
  assembleSegment,
  mediaSegmentParts,
  readFragmentMoof,
  reboxFragment,
  ReboxedFragment,
} from '../../../../origin/segments/fmp4/media-segment';
import { readTrackHeaders } from '../../../../origin/media/moov';
import type { TrackHeader } from '../../../../origin/model/media';
import { media } from '../../../helpers/fixtures';

export interface OpenFixture {
  name: string;
  source: FileSource;
  moovOffset: number;
  moov: Uint8Array;
  headers: Map<number, TrackHeader>;
  file: MediaFile;
}

/** The top-level moov box of a source, found by walking box headers. */
export async function findMoov(source: ByteSource): Promise<{ offset: number; bytes: Uint8Array }> {
  let offset = 0;
  while (offset + 8 <= source.size) {
    const head = await source.read(offset, Math.min(16, source.size - offset));
    const h = readBoxHeader(head, 0, offset, source.size, 'file');
    if (h === undefined) break;
    if (h.type === 'moov') return { offset, bytes: await source.read(offset, h.size) };
    offset += h.size;
  }
  throw new Error(`${source.name}: no moov`);
}

export async function openFixture(name: string): Promise<OpenFixture> {
  const source = await FileSource.open(media(name));
  const moov = await findMoov(source);
  const headers = readTrackHeaders(moov.bytes, name, moov.offset);
  const file = await readMediaFile(source, 'exact');
  return { name, source, moovOffset: moov.offset, moov: moov.bytes, headers, file };
}

/** Fragment k of a track, reboxed with the time shifted so that negative source times start at 0. */
export async function reboxed(
  f: OpenFixture,
  trackId: number,
  k: number,
  extra: { outputTrackId?: number; keepTfxd?: boolean; shift?: bigint } = {},
): Promise<ReboxedFragment & { moofOffset: number; sourceMoof: Uint8Array }> {
  const table = trackOf(f, trackId).fragments;
  const moofOffset = table.offsets[k]!;
  const sourceMoof = await readFragmentMoof(f.source, moofOffset);
  const first = table.times[0]!;
  const shift = extra.shift ?? (first < 0n ? -first : 0n);
  const out = reboxFragment(sourceMoof, moofOffset, trackId, {
    sequenceNumber: k + 1,
    baseMediaDecodeTime: table.times[k]! + shift,
    headers: f.headers,
    fileSize: f.source.size,
    fileName: f.name,
    ...(extra.outputTrackId !== undefined ? { outputTrackId: extra.outputTrackId } : {}),
    ...(extra.keepTfxd ? { keepTfxd: true } : {}),
  });
  return { ...out, moofOffset, sourceMoof };
}

export function trackOf(f: OpenFixture, trackId: number): MediaFile['tracks'][number] {
  const t = f.file.tracks.find((x) => x.properties.trackID === trackId);
  if (t === undefined) throw new Error(`${f.name}: no track ${trackId}`);
  return t;
}

/** Init segment + one media segment per `perSegment` fragments, as bytes. */
export async function segmentsOf(
  f: OpenFixture,
  trackId: number,
  opts: { perSegment?: number; outputTrackId?: number; styp?: boolean } = {},
): Promise<{ init: Uint8Array; segments: Uint8Array[] }> {
  const header = f.headers.get(trackId)!;
  const init = writeInitSegment(header, opts.outputTrackId !== undefined ? { trackId: opts.outputTrackId } : {});
  const count = trackOf(f, trackId).fragments.count;
  const per = opts.perSegment ?? 1;
  const segments: Uint8Array[] = [];
  for (let k = 0; k < count; k += per) {
    const frags: ReboxedFragment[] = [];
    for (let j = k; j < Math.min(count, k + per); j++) {
      frags.push(
        await reboxed(f, trackId, j, opts.outputTrackId !== undefined ? { outputTrackId: opts.outputTrackId } : {}),
      );
    }
    const { parts, length } = mediaSegmentParts(frags, opts.styp !== undefined ? { styp: opts.styp } : {});
    const bytes = await assembleSegment(f.source, parts);
    expect(bytes.byteLength).toBe(length);
    segments.push(bytes);
  }
  return { init, segments };
}
