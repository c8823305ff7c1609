// What the in-process suites (ts, drm) share: requests answered by the playout handler the HTTP
// server calls, bodies materialised in memory, and a stream sink for the CLI's output.

import { Writable } from 'node:stream';
import { FileSource } from '../origin/io/source';
import { handlePlayout, PlayoutContext, Reply } from '../origin/server/handlers';
import { decodePath, matchPresentationRoute } from '../origin/server/routes';

/** Collects what the CLI writes (packaging runs in the benches). */
export class Sink extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

/** One URL through the handler, as the server answers it; the body materialised in memory. */
export async function fetchThrough(
  ctx: PlayoutContext,
  ism: string,
  url: string,
): Promise<{ reply: Reply; bytes: number }> {
  const req = matchPresentationRoute(decodePath(url))!;
  const reply = await handlePlayout(ctx, req, ism, '');
  const body = reply.body;
  if (body.type === 'bytes') return { reply, bytes: body.bytes.byteLength };
  if (body.type === 'text') return { reply, bytes: Buffer.byteLength(body.text) };
  // Parts all in memory (an encrypted segment): nothing to read, as the server reads nothing.
  if (body.parts.every((p) => p.kind === 'bytes')) return { reply, bytes: body.length };
  const source = await FileSource.open(body.file);
  try {
    for (const p of body.parts) if (p.kind === 'file') await source.read(p.offset, p.length);
  } finally {
    await source.close();
  }
  return { reply, bytes: body.length };
}
