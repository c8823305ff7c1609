// `origin demo --live` (`npm start -- --live`): a live channel next to the VOD samples. The demo
// creates the publishing point `<out>/live/demo.isml` (a 30 s DVR window, restartable), takes
// ingest on loopback (origin/server/ingest-server.ts) into the demo's serving port's fragment
// table, and, when ffmpeg is installed, feeds it with ffmpeg's Smooth ingest of a test pattern
// (the recipe of docs/guide/live.md: times on UTC, a 1.92 s fragment grid). The demo prints its
// state and archive URLs, the player page's links to play it (hls.js, dash.js MSS;
// test/e2e/players/demo-live-player.test.ts), and the ffmpeg command to feed it by hand.

import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { LivePublished } from '../live/fragment-table';
import { applyCliOption, optionByCli, StreamOptions } from '../options/registry';
import { buildServerManifest, writeServerManifestFile } from '../package/packager';
import { RunningIngest, startIngestServer } from '../server/ingest-server';

export const DEMO_CHANNEL = '/live/demo.isml';

export interface DemoLive {
  ingest: RunningIngest;
  /** The channel's ingest URL, up to the `.isml`. */
  channelUrl: string;
  /** The ffmpeg feeding it, when ffmpeg is installed. */
  feeder: ChildProcess | undefined;
  /** The command that feeds it (printed when ffmpeg is not installed, or to run it by hand). */
  command: string[];
  close(): Promise<void>;
}

/** ffmpeg's arguments for Smooth ingest of a test pattern to `url`, times on UTC from now. */
export function feederArgs(url: string, nowMs: number): string[] {
  // A 1.92 s grid (48 frames at 25 fps = 90 AAC frames at 48 kHz), as docs/guide/live.md's recipe.
  const t0 = (Math.floor(nowMs / 1920) * 1.92).toFixed(2);
  return [
    ...['-hide_banner', '-loglevel', 'error', '-re'],
    ...['-f', 'lavfi', '-i', 'testsrc2=size=640x360:rate=25'],
    ...['-f', 'lavfi', '-i', 'sine=frequency=1000:sample_rate=48000'],
    ...['-map', '0:v', '-map', '1:a', '-c:v', 'libx264', '-preset', 'veryfast', '-tune', 'zerolatency'],
    ...['-b:v', '800k', '-g', '48', '-keyint_min', '48', '-sc_threshold', '0'],
    ...['-c:a', 'aac', '-b:a', '64k', '-ar', '48000', '-output_ts_offset', t0],
    ...['-movflags', 'isml+frag_keyframe', '-f', 'ismv', `${url}/Streams(demo)`],
  ];
}

function hasFfmpeg(): boolean {
  const r = spawnSync('ffmpeg', ['-version'], { stdio: 'ignore' });
  return r.error === undefined && r.status === 0;
}

/** Creates the publishing point, takes ingest on `host:port`, and starts ffmpeg when there is one. */
export async function startDemoLive(o: {
  outDir: string;
  host: string;
  port: number;
  onPublish: (m: LivePublished) => void;
  log: (line: string) => void;
  /** Start ffmpeg when installed (default true). */
  feed?: boolean;
}): Promise<DemoLive> {
  const isml = path.join(o.outDir, ...DEMO_CHANNEL.split('/'));
  await fs.mkdir(path.dirname(isml), { recursive: true });
  const options = new StreamOptions();
  for (const [flag, value] of [
    ['dvr_window_length', '30'],
    ['restart_on_encoder_reconnect', 'true'],
  ] as const)
    applyCliOption(options, optionByCli(flag)!, value, `--${flag}`);
  await writeServerManifestFile(isml, await buildServerManifest({ output: isml, inputs: [], options }));
  const ingest = await startIngestServer({ root: o.outDir, host: o.host, port: o.port, onPublish: o.onPublish });
  const channelUrl = `${ingest.url}${DEMO_CHANNEL}`;
  const command = ['ffmpeg', ...feederArgs(channelUrl, Date.now())];
  let feeder: ChildProcess | undefined;
  let stopping = false;
  if (o.feed !== false && hasFfmpeg()) {
    feeder = spawn('ffmpeg', command.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });
    feeder.stderr!.on('data', (d: Buffer) => o.log(`ffmpeg (live demo): ${d.toString().trim().slice(0, 300)}`));
    feeder.on('exit', (code, signal) => {
      // Interrupted, ffmpeg exits 255: that is the demo stopping it, not news.
      if (!stopping) o.log(`ffmpeg (live demo) exited (${signal ?? `exit ${code}`})`);
    });
  }
  return {
    ingest,
    channelUrl,
    feeder,
    command,
    close: async () => {
      stopping = true;
      if (feeder !== undefined && feeder.exitCode === null) {
        // SIGINT: ffmpeg writes its trailer (the empty mfra that stops the channel) and exits; on a
        // busy machine that took more than 3 s (CI), and a SIGKILL then left the channel started.
        const gone = new Promise((r) => feeder!.once('exit', r));
        feeder.kill('SIGINT');
        await Promise.race([gone, new Promise((r) => setTimeout(r, 15_000))]);
        if (feeder.exitCode === null) feeder.kill('SIGKILL');
      }
      await ingest.close();
    },
  };
}
