// What changes in the way of a request when its presentation is on remote storage (`proxy_pass`,
// io/remote/): its sources are opened pinned to the versions their indexes were read from; a
// segment's file ranges are read before the reply starts, so a failing read answers 502/504
// instead of a response cut off after its headers; and a source replaced under a read (412,
// storage-changed) has its index dropped and the request made once more with a fresh one.

import { OriginError } from '../errors';
import { ByteSource, SourceOpener } from '../io/source';
import type { PlayoutContext, Reply } from './route-handler';

/** The context whose `open` reads each source of `versions` at that version. */
export function versionedContext(ctx: PlayoutContext, versions: ReadonlyMap<string, string>): PlayoutContext {
  const open: SourceOpener = (path) => ctx.open(path, versions.get(path));
  return { ...ctx, open };
}

/**
 * The reply with its file parts read into memory (one buffer for the segment), through `open`:
 * nothing of it is sent before every byte is here and checked.
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
        source ??= await open(body.file);
        bytes.set(await source.read(part.offset, part.length), at);
      }
      at += part.kind === 'bytes' ? part.bytes.byteLength : part.length;
    }
  } finally {
    await source?.close();
  }
  return { ...reply, body: { type: 'bytes', bytes } };
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
