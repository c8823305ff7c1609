// `origin demo --live` (demo-live.ts): the publishing point it creates, its ingest listener feeding
// a serving port's fragment table, and ffmpeg (installed wherever `npm test` runs: README) pushing
// Smooth ingest to it; stopped, ffmpeg ends the stream and the channel is stopped.

import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseDemoArgs } from '../../../origin/cli/demo-command';
import { DEMO_CHANNEL, feederArgs, startDemoLive } from '../../../origin/cli/demo-live';
import { startServer } from '../../../origin/server/server';
import { tempDir } from '../../helpers/fixtures';
import { ArchiveJson, eventually, LiveState, liveServerOptions } from '../../helpers/live';
import { httpGet } from '../../helpers/test-encoder';

const ffmpeg = spawnSync('ffmpeg', ['-version']).status === 0;

test('--live and --ingest-port', () => {
  expect(parseDemoArgs([])).toMatchObject({ live: false, ingestPort: 8083 });
  expect(parseDemoArgs(['--live', '--ingest-port', '0'])).toMatchObject({ live: true, ingestPort: 0 });
  expect(() => parseDemoArgs(['--ingest-port', 'x'])).toThrow(/--ingest-port must be 0..65535/);
});

test("the feeder's times sit on the 1.92 s grid, in seconds since 1970", () => {
  const args = feederArgs('http://127.0.0.1:1/live/demo.isml', 1_795_686_052_000);
  expect(args[args.indexOf('-output_ts_offset') + 1]).toBe('1795686051.84');
  expect(args[args.length - 1]).toBe('http://127.0.0.1:1/live/demo.isml/Streams(demo)');
});

(ffmpeg ? test : test.skip)(
  'the demo channel: created, fed by ffmpeg, seen on the serving port, stopped when the demo stops',
  async () => {
    const root = tempDir('origin-demo-live-');
    const serving = await startServer(liveServerOptions(root));
    const lines: string[] = [];
    const live = await startDemoLive({
      outDir: root,
      host: '127.0.0.1',
      port: 0,
      onPublish: (m) => serving.live.apply(m),
      log: (l) => lines.push(l),
    });
    try {
      expect(fs.readFileSync(path.join(root, 'live', 'demo.isml'), 'utf8')).toMatch(/restart_on_encoder_reconnect/);
      expect(live.feeder).toBeDefined();
      const archive = async (): Promise<ArchiveJson> =>
        JSON.parse((await httpGet(`${serving.url}${DEMO_CHANNEL}/archive`)).body) as ArchiveJson;
      const a = await eventually(
        archive,
        (x) => x.tracks.length === 2 && x.tracks.every((t) => t.ranges.length === 1),
        20_000,
      );
      expect(a.tracks.map((t) => t.timescale)).toEqual([10_000_000, 10_000_000]);
    } finally {
      await live.close();
    }
    const state = JSON.parse((await httpGet(`${serving.url}${DEMO_CHANNEL}/state?format=json`)).body) as LiveState;
    expect(state.state).toBe('stopped');
    // ffmpeg said nothing, and its exit on the demo's SIGINT is not reported.
    expect(lines).toEqual([]);
    await serving.close();
  },
  60_000,
);
