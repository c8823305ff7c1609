// What the in-process suites (ts, drm) share: requests answered by the playout handler the HTTP
// server calls, bodies materialised in memory, and a stream sink for the CLI's output.

import { Writable } from 'node:stream';
import { BufferPool } from '../origin/io/buffers';
import { handlePlayout, PlayoutContext } from '../origin/server/handlers';
import { READ_CHUNK } from '../origin/server/http';
import { decodePath, matchPresentationRoute } from '../origin/server/routes';

/** Collects what the CLI writes (packaging runs in the benches). */
export class Sink extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

/**
 * One URL through the handler, as the server answers it; the body materialised in memory. Bytes
 * lent from a pool (a TS segment's output, an encrypted segment's read buffer) go back once
 * counted, as the server gives them back when the response has closed (server/coalesce.ts): so
 * only the byte count is returned.
 */
export async function fetchThrough(ctx: PlayoutContext, ism: string, url: string): Promise<{ bytes: number }> {
  const req = matchPresentationRoute(decodePath(url))!;
  const reply = await handlePlayout(ctx, req, ism, '');
  const body = reply.body;
  if (body.type !== 'text') {
    body.loan?.share(1);
    body.loan?.letGo();
  }
  if (body.type === 'bytes') return { bytes: body.bytes.byteLength };
  if (body.type === 'text') return { bytes: Buffer.byteLength(body.text) };
  // Parts all in memory (an encrypted segment): nothing to read, as the server reads nothing.
  if (body.parts.every((p) => p.kind === 'bytes')) return { bytes: body.length };
  // File ranges read as server/http.ts streamParts reads them: through the context's kept handle,
  // in reads of up to READ_CHUNK into pooled buffers (not a file opened and a buffer allocated per
  // request, which made the clear reference slower than the server).
  const lease = await ctx.files.acquire(body.file);
  try {
    for (const p of body.parts) {
      if (p.kind !== 'file') continue;
      for (let pos = 0; pos < p.length;) {
        const buffer = chunks.take(READ_CHUNK);
        try {
          const want = Math.min(READ_CHUNK, p.length - pos);
          const { bytesRead } = await lease.handle.read(buffer, 0, want, p.offset + pos);
          if (bytesRead === 0) throw new Error(`${body.file} ended before byte ${p.offset + pos}`);
          pos += bytesRead;
        } finally {
          chunks.give(buffer);
        }
      }
    }
  } finally {
    lease.release();
  }
  return { bytes: body.length };
}

/** The streaming chunks of fetchThrough (the server keeps one such pool: server/http.ts). */
const chunks = new BufferPool();
