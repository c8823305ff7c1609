// A live origin for tests: a temporary root with publishing points made by `origin package`, the
// ingest listener and the serving port, both real HTTP on loopback.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { LivePublished } from '../../origin/live/fragment-table';
import { RunningIngest, IngestServerOptions, startIngestServer } from '../../origin/server/ingest-server';
import { RunningServer, ServerOptions, startServer } from '../../origin/server/server';
import { runOrigin, tempDir } from './fixtures';
import { plainServerOptions } from './server-options';
import { Fixture, httpGet, TestEncoder } from './test-encoder';

export interface LiveOrigin {
  root: string;
  ingest: RunningIngest;
  serving: RunningServer;
  /** Ingest URL of a channel: http://127.0.0.1:<ingest>/live/<name>.isml */
  channelUrl(name: string): string;
  state(name: string): Promise<LiveState>;
  archive(name: string): Promise<{ status: number; json: ArchiveJson }>;
  close(): Promise<void>;
}

export interface LiveState {
  status: number;
  channel: string;
  state: 'idle' | 'started' | 'stopped';
  updated: string;
  encoders: number;
  tracks: Array<{
    track: string;
    trackName: string;
    systemBitrate: number;
    fragments: number;
    lastTime: string | null;
    lastTimeUtc: string | null;
    gaps: number;
    duplicatesDropped: number;
    lateDropped: number;
    /** Timed-metadata events archived. */
    events: number;
  }>;
}

export interface ArchiveJson {
  tracks: Array<{ track: string; timescale: number; ranges: Array<{ start: string; end: string }> }>;
}

/** `origin package -o <root>/live/<name>.isml <options>`. */
export async function createChannel(root: string, name: string, options: string[] = []): Promise<string> {
  fs.mkdirSync(path.join(root, 'live'), { recursive: true });
  const isml = path.join(root, 'live', `${name}.isml`);
  const r = await runOrigin(['package', '-q', '-o', isml, ...options]);
  if (r.code !== 0) throw new Error(`origin package failed: ${r.stderr}`);
  return isml;
}

export async function startLiveOrigin(
  o: Partial<IngestServerOptions> = {},
  root = tempDir('origin-live-'),
): Promise<LiveOrigin> {
  // The same clock on both ports: /.time says what the channel's clock says.
  const serving = await startServer(liveServerOptions(root, o.now));
  // As `origin serve` in one process: the ingest tells the serving port's fragment table.
  const onPublish = o.onPublish ?? ((m: LivePublished) => serving.live.apply(m));
  const ingest = await startIngestServer({ root, host: '127.0.0.1', port: 0, sync: false, ...o, onPublish }).catch(
    async (e: unknown) => {
      await serving.close();
      throw e;
    },
  );
  return {
    root,
    ingest,
    serving,
    channelUrl: (name) => `${ingest.url}/live/${name}.isml`,
    state: async (name) => {
      const r = await httpGet(`${serving.url}/live/${name}.isml/state?format=json`);
      return { status: r.status, ...(r.status === 200 ? JSON.parse(r.body) : {}) } as LiveState;
    },
    archive: async (name) => {
      const r = await httpGet(`${serving.url}/live/${name}.isml/archive`);
      return { status: r.status, json: (r.status === 200 ? JSON.parse(r.body) : { tracks: [] }) as ArchiveJson };
    },
    close: async () => {
      await ingest.close();
      await serving.close();
    },
  };
}

/**
 * What `f` gives once `ok` holds of it (the status file is written just after each change); fails
 * with the last value after `ms`.
 */
export async function eventually<T>(f: () => Promise<T>, ok: (v: T) => boolean, ms = 5000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (ok(v)) return v;
    if (Date.now() > until) throw new Error(`not reached within ${ms} ms; last: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A serving port for live tests: no player page, metrics or Cache-Control, `now` as its clock. */
export function liveServerOptions(root: string, now?: () => number): ServerOptions {
  return { ...plainServerOptions(root), now, metrics: false };
}

/** The video (`videoStream`) and audio (`audio-64k.cmfa`) encoders of one channel, not yet open. */
export function avEncoders(
  channelUrl: string,
  fx: { video: Fixture; audio: Fixture },
  anchorSeconds: number,
  videoStream = 'video-400k.cmfv',
): [TestEncoder, TestEncoder] {
  return [
    new TestEncoder({ channelUrl, stream: videoStream, fixture: fx.video, anchorSeconds }),
    new TestEncoder({ channelUrl, stream: 'audio-64k.cmfa', fixture: fx.audio, anchorSeconds }),
  ];
}

/**
 * Waits until both tracks of channel `name` have archived a fragment starting at UTC second
 * `seconds` or later (0.1 s early counts: times are in 10 MHz ticks). On the last time, not the
 * count: an archive that keeps the DVR window only drops the oldest.
 */
export function archivedTo(origin: LiveOrigin, name: string, seconds: number): Promise<LiveState> {
  return eventually(
    () => origin.state(name),
    (s) =>
      s.tracks.length === 2 &&
      s.tracks.every((t) => BigInt(t.lastTime ?? 0) >= BigInt(seconds) * 10_000_000n - 1_000_000n),
  );
}

/** Waits until channel `name` has both its tracks with `n` fragments or more archived. */
export function fragmentsAtLeast(origin: LiveOrigin, name: string, n: number): Promise<LiveState> {
  return eventually(
    () => origin.state(name),
    (s) => s.tracks.length === 2 && s.tracks.every((t) => t.fragments >= n),
  );
}
