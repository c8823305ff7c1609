// dash.js in low-latency mode on an LL-DASH channel (`mpd_low_latency`) fed by ffmpeg CMAF
// ingest, UTC-anchored (issue 23 acceptance): video and audio cut into 0.32 s chunks
// (`-frag_duration 320000`, GOP 48 at 25 fps = 1.92 s segments), ffmpeg started on a 1.92 s
// boundary of the wall clock so that media time is when a frame was made, each fragment with a
// `-write_prft wallclock` prft (the MPD's ProducerReferenceTime is then the encoder's: dash.js
// aims at the target counted from when ffmpeg wrote the chunk, about 0.5 s after its first frame
// was made; test/origin/live/ffmpeg-ingest.test.ts measures that offset). dash.js enters its
// low-latency mode on availabilityTimeComplete="false" (checked: getLowLatencyModeEnabled()),
// reads the segment being ingested as it grows, and aims at the ServiceDescription's 2.5 s.
// `getCurrentLiveLatency()` is sampled twice a second: p95 ≤ 3.5 s. CI samples 20 s;
// ORIGIN_LL_LONG=1 samples 60 s (the acceptance run). Figures are printed.

import { ChildProcess, spawn } from 'node:child_process';
import type { Page } from 'playwright-core';
import { RunningIngest, startIngestServer } from '../../../origin/server/ingest-server';
import { RunningServer, startServer } from '../../../origin/server/server';
import { closeBrowser, newPage, playerTestsEnabled, screenshotAndClose } from '../../helpers/browser';
import { tempDir } from '../../helpers/fixtures';
import { createChannel, eventually, liveServerOptions } from '../../helpers/live';
import { httpGet } from '../../helpers/test-encoder';

const SAMPLE_SECONDS = process.env.ORIGIN_LL_LONG === '1' ? 60 : 20;
const CMAF = '+cmaf+empty_moov+separate_moof+default_base_moof+frag_discont+skip_trailer';

function ffmpegArgs(ingest: string, t0: string): string[] {
  const seconds = String(SAMPLE_SECONDS + 60);
  const v = ['-c:v', 'libx264', '-preset', 'veryfast', '-tune', 'zerolatency', '-b:v', '300k'];
  const gop = ['-g', '48', '-keyint_min', '48', '-sc_threshold', '0'];
  const parts = ['-frag_duration', '320000', '-write_prft', 'wallclock'];
  return [
    ...['-hide_banner', '-loglevel', 'error', '-re'],
    ...['-f', 'lavfi', '-i', 'testsrc2=size=320x180:rate=25'],
    ...['-f', 'lavfi', '-i', 'sine=frequency=1000:sample_rate=48000'],
    ...['-map', '0:v', ...v, ...gop, ...parts, '-t', seconds, '-video_track_timescale', '25'],
    ...['-output_ts_offset', t0, '-movflags', `${CMAF}+frag_keyframe`, '-f', 'mp4'],
    `${ingest}/Streams(video-320x180-300k.cmfv)`,
    ...['-map', '1:a', '-c:a', 'aac', '-b:a', '64k', '-ar', '48000', ...parts, '-t', seconds],
    ...['-output_ts_offset', t0, '-movflags', CMAF, '-f', 'mp4', `${ingest}/Streams(audio-64k.cmfa)`],
  ];
}

interface Sample {
  latency: number;
  lowLatency: boolean;
  errors: string[];
  currentTime: number;
}

function sample(page: Page): Promise<Sample> {
  return page.evaluate(() => {
    const w = window as unknown as {
      __player?: { getCurrentLiveLatency(): number; getLowLatencyModeEnabled(): boolean };
      __test?: { errors: string[] };
    };
    return {
      latency: w.__player?.getCurrentLiveLatency() ?? NaN,
      lowLatency: w.__player?.getLowLatencyModeEnabled() ?? false,
      errors: [...(w.__test?.errors ?? ['no window.__test'])],
      currentTime: (document.getElementById('video') as HTMLVideoElement).currentTime,
    };
  });
}

function percentile(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

const describePlayers = playerTestsEnabled() ? describe : describe.skip;

describePlayers('dash.js low-latency mode on LL-DASH from ffmpeg CMAF ingest', () => {
  let ingest: RunningIngest;
  let serving: RunningServer;
  let ffmpeg: ChildProcess | undefined;
  let ffmpegErrors = '';

  beforeAll(async () => {
    const root = tempDir('origin-lld-player-');
    await createChannel(root, 'll', [
      '--mpd.minimum_fragment_length=48/25',
      '--mpd.low_latency',
      '--dvr_window_length=30',
    ]);
    serving = await startServer({ ...liveServerOptions(root), playerPage: true });
    ingest = await startIngestServer({
      root,
      host: '127.0.0.1',
      port: 0,
      sync: false,
      onPublish: (m) => serving.live.apply(m),
    });
    // Start on the next 1.92 s boundary: media time 0 is then the wall clock's T0.
    const t0Ms = Math.ceil(Date.now() / 1920) * 1920;
    await new Promise((r) => setTimeout(r, t0Ms - Date.now()));
    const t0 = (t0Ms / 1000).toFixed(2);
    ffmpeg = spawn('ffmpeg', ffmpegArgs(`${ingest.url}/live/ll.isml`, t0), { stdio: ['ignore', 'ignore', 'pipe'] });
    ffmpeg.stderr!.on('data', (c: Buffer) => (ffmpegErrors += c.toString()));
    const mpd = await eventually(
      () => httpGet(`${serving.url}/live/ll.isml/.mpd`),
      (r) => r.status === 200,
      20_000,
    );
    // The PRFT is the ingest's (ffmpeg's flags 24: "captured"), not the anchor's ("encoder").
    expect(mpd.body).toMatch(/<ProducerReferenceTime id="0" type="captured" /);
  }, 60_000);

  afterAll(async () => {
    ffmpeg?.kill('SIGKILL');
    await closeBrowser();
    await ingest?.close();
    await serving?.close();
  });

  test(
    `getCurrentLiveLatency() over ${SAMPLE_SECONDS} s: p95 ≤ 3.5 s, in low-latency mode`,
    async () => {
      const page = await newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(`uncaught: ${e.message}`));
      const manifest = `${serving.url}/live/ll.isml/.mpd`;
      try {
        await page.goto(`${serving.url}/play?player=dashjs&url=${encodeURIComponent(manifest)}`, {
          waitUntil: 'load',
          timeout: 20_000,
        });
        // Playing, and a few seconds to settle on its target latency.
        const deadline = Date.now() + 30_000;
        let s = await sample(page);
        while (!(s.currentTime > 0 && s.latency > 0) && s.errors.length === 0 && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 250));
          s = await sample(page);
        }
        expect({ playing: s.currentTime > 0 && s.latency > 0, errors: s.errors }).toEqual({
          playing: true,
          errors: [],
        });
        await new Promise((r) => setTimeout(r, 4000));
        const samples: Sample[] = [];
        const end = Date.now() + SAMPLE_SECONDS * 1000;
        while (Date.now() < end) {
          samples.push(await sample(page));
          await new Promise((r) => setTimeout(r, 500));
        }
        const latency = samples.map((x) => x.latency);
        const figures = {
          seconds: SAMPLE_SECONDS,
          samples: samples.length,
          p50: percentile(latency, 50),
          p95: percentile(latency, 95),
          max: Math.max(...latency),
          lowLatencyMode: samples.every((x) => x.lowLatency),
        };
        console.log(`LL-DASH dash.js latency: ${JSON.stringify(figures)}`);
        expect(samples.at(-1)!.errors).toEqual([]);
        expect(figures.lowLatencyMode).toBe(true);
        expect(figures.p95).toBeLessThanOrEqual(3.5);
        expect(errors).toEqual([]);
      } finally {
        await screenshotAndClose(page, 'll-dash-dashjs', errors);
      }
    },
    (SAMPLE_SECONDS + 60) * 1000,
  );

  test('ffmpeg pushed without an error', () => {
    expect(ffmpegErrors).toBe('');
  });
});
