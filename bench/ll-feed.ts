// The low-latency channel the LL load benches (bench/ll-hls-load.ts, bench/ll-dash-load.ts)
// share: a root with one publishing point made by the built CLI's `origin package`, the LL
// fixture (test/helpers/ll-hls.ts: 0.32 s chunks, 1.92 s segments), and the test encoder
// pushing it, video and audio, at real time on the UTC grid from an anchor in the past (that
// backlog is pushed at once, then one chunk every 0.32 s).

import { mkdirSync, mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { makeLlFixtures } from '../test/helpers/ll-hls';
import { run } from '../test/helpers/process';
import { Fixture, TestEncoder } from '../test/helpers/test-encoder';
import { repoRoot } from './media';

/** One chunk (part), ms. */
export const CHUNK_MS = 320;

export type LlStream = 'video-300k.cmfv' | 'audio-64k.cmfa';

/** A temp root with `live/<name>.isml` packaged with `options`, and the LL fixtures. */
export async function makeLlChannel(
  prefix: string,
  name: string,
  options: string[],
): Promise<{ root: string; fx: { video: Fixture; audio: Fixture } }> {
  const root = mkdtempSync(path.join(os.tmpdir(), prefix));
  mkdirSync(path.join(root, 'live'));
  const bin = path.join(repoRoot(), 'bin', 'origin.js');
  const pkg = await run(process.execPath, [
    bin,
    'package',
    '-q',
    '-o',
    path.join(root, 'live', `${name}.isml`),
    ...options,
  ]);
  if (pkg.code !== 0) throw new Error(`origin package: ${pkg.stderr}`);
  return { root, fx: await makeLlFixtures(root) };
}

export interface LlFeed {
  /** Resolves once both streams have pushed their backlog and are sending on the clock. */
  caughtUp(): Promise<void>;
  /** Stops both streams after the chunk in flight and closes their requests. */
  stop(): Promise<void>;
}

/**
 * Pushes the fixtures to `channelUrl` (the ingest's `…/live/<name>.isml`) from `anchor` (s on the
 * 1.92 s grid): chunk g is due at anchor + (g + 1) × 0.32 s; `onSent` is told as each is handed
 * to the ingest socket.
 */
export function feedLl(
  channelUrl: string,
  fx: { video: Fixture; audio: Fixture },
  anchor: number,
  onSent: (stream: LlStream, g: number) => void,
): LlFeed {
  let stop = false;
  let caughtUp = 0;
  const streams: LlStream[] = ['video-300k.cmfv', 'audio-64k.cmfa'];
  const pushers = streams.map(async (stream) => {
    const enc = new TestEncoder({
      channelUrl,
      stream,
      fixture: stream.startsWith('video') ? fx.video : fx.audio,
      anchorSeconds: anchor,
    });
    await enc.open();
    let live = false;
    for (let g = 0; !stop; g++) {
      const due = anchor * 1000 + (g + 1) * CHUNK_MS;
      if (due > Date.now() && !live) {
        live = true;
        caughtUp++;
      }
      await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())));
      await enc.send(g, g + 1);
      onSent(stream, g);
    }
    await enc.close(true);
  });
  return {
    caughtUp: async () => {
      while (caughtUp < streams.length) await new Promise((r) => setTimeout(r, 100));
    },
    stop: async () => {
      stop = true;
      await Promise.all(pushers);
    },
  };
}
