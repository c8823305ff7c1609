// What changes in the way of a request when its presentation is on remote storage (`proxy_pass`,
// io/remote/): its sources are opened pinned to the versions their indexes were read from; a
// segment's file ranges are read before the reply starts, so a failing read answers 502/504
// instead of a response cut off after its headers; and a source replaced under a read (412,
// storage-changed) has its index dropped and the request made once more with a fresh one.

import { OriginError } from '../errors';
import { ByteSource, canReadInto, ReadIntoSource, SourceOpener } from '../io/source';
import type { SegmentPart } from '../segments/fmp4/media-segment';
import type { PlayoutContext, Reply } from './route-handler';

/**
 * The context whose `open` reads each source of `versions` at that version, one source per path
 * for the whole request (what a segment reader read and kept, the moofs and the sample data it
 * was told of, the reply's reads in inMemory find again); `close` closes them once the reply is
 * read.
 */
export function versionedContext(
  ctx: PlayoutContext,
  versions: ReadonlyMap<string, string>,
): { ctx: PlayoutContext; close: () => Promise<void> } {
  const opened = new Map<string, Promise<ByteSource>>();
  const open: SourceOpener = (path) => {
    let source = opened.get(path);
    if (source === undefined) {
      source = ctx.open(path, versions.get(path));
      opened.set(path, source);
    }
    return source.then(keptOpen);
  };
  const close = async (): Promise<void> => {
    for (const source of opened.values()) await (await source.catch(() => undefined))?.close();
    opened.clear();
  };
  return { ctx: { ...ctx, open }, close };
}

/**
 * `handle` through the context pinned to `versions`, its reply read into memory (inMemory); the
 * request's sources closed afterwards.
 */
export async function pinnedPlayout(
  ctx: PlayoutContext,
  versions: ReadonlyMap<string, string>,
  handle: (pinned: PlayoutContext) => Promise<Reply>,
): Promise<Reply> {
  const pinned = versionedContext(ctx, versions);
  try {
    return await inMemory(await handle(pinned.ctx), pinned.ctx.open);
  } finally {
    await pinned.close();
  }
}

/** `source` for a reader whose close leaves it open (the request closes it). */
function keptOpen(source: ByteSource): ByteSource {
  const kept: ByteSource = {
    name: source.name,
    size: source.size,
    read: (offset, length) => source.read(offset, length),
    willNeed: (offset, length) => source.willNeed?.(offset, length),
    close: async () => undefined,
  };
  if (!canReadInto(source)) return kept;
  const readInto: ReadIntoSource['readInto'] = (target, offset, length) => source.readInto(target, offset, length);
  return { ...kept, readInto } as ReadIntoSource;
}

/**
 * The reply with its file parts read into memory (one buffer for the segment), through `open`:
 * nothing of it is sent before every byte is here and checked. The parts' span is hinted first, so
 * a remote source reads them in one round trip.
 */
export async function inMemory(reply: Reply, open: SourceOpener): Promise<Reply> {
  const body = reply.body;
  if (body.type !== 'parts') return reply;
  const bytes = Buffer.allocUnsafe(body.length);
  let source: ByteSource | undefined;
  try {
    let at = 0;
    for (const part of body.parts) {
      if (part.kind === 'bytes') bytes.set(part.bytes, at);
      else {
        if (source === undefined) {
          source = await open(body.file);
          hintParts(source, body.parts);
        }
        const into = bytes.subarray(at, at + part.length);
        if (canReadInto(source)) await source.readInto(into, part.offset, part.length);
        else into.set(await source.read(part.offset, part.length));
      }
      at += part.kind === 'bytes' ? part.bytes.byteLength : part.length;
    }
  } finally {
    await source?.close();
  }
  return { ...reply, body: { type: 'bytes', bytes } };
}

/** The span of the file parts, hinted when little lies between them (another track's data). */
function hintParts(source: ByteSource, parts: readonly SegmentPart[]): void {
  if (source.willNeed === undefined) return;
  let [start, end, sum] = [Infinity, 0, 0];
  for (const p of parts) {
    if (p.kind !== 'file') continue;
    start = Math.min(start, p.offset);
    end = Math.max(end, p.offset + p.length);
    sum += p.length;
  }
  if (sum > 0 && end - start <= 2 * sum) source.willNeed(start, end - start);
}

/**
 * `run`, and once more when a remote source changed under it (storage-changed): the store forgets
 * the .ism and the changed file first, so the second run reads a fresh index. A second change
 * fails with storage-changed (502): never old index and new bytes together.
 */
export async function onceMoreIfChanged(
  ctx: PlayoutContext,
  absoluteIsm: string,
  run: () => Promise<Reply>,
): Promise<Reply> {
  try {
    return await run();
  } catch (e) {
    if (!(e instanceof OriginError) || e.code !== 'storage-changed') throw e;
    ctx.store.forget([absoluteIsm, ...(e.subject === undefined ? [] : [e.subject])]);
    return run();
  }
}
