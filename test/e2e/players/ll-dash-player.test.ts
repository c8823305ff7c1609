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

import type { Page } from 'playwright-core';
import { closeBrowser, newPage, playerTestsEnabled, screenshotAndClose } from '../../helpers/browser';
import {
  LlChannel,
  openPlaying,
  percentile,
  SAMPLE_SECONDS,
  sampleTwiceASecond,
  startLlChannel,
} from '../../helpers/ll-player';
import { httpGet } from '../../helpers/test-encoder';

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

const describePlayers = playerTestsEnabled() ? describe : describe.skip;

describePlayers('dash.js low-latency mode on LL-DASH from ffmpeg CMAF ingest', () => {
  let ll: LlChannel;

  beforeAll(async () => {
    const options = ['--mpd.minimum_fragment_length=48/25', '--mpd.low_latency', '--dvr_window_length=30'];
    ll = await startLlChannel('origin-lld-player-', options, '.mpd', ['-write_prft', 'wallclock']);
    // The PRFT is the ingest's (ffmpeg's flags 24: "captured"), not the anchor's ("encoder").
    const mpd = await httpGet(`${ll.serving.url}/live/ll.isml/.mpd`);
    expect(mpd.body).toMatch(/<ProducerReferenceTime id="0" type="captured" /);
  }, 60_000);

  afterAll(async () => {
    await closeBrowser();
    await ll?.close();
  });

  test(
    `getCurrentLiveLatency() over ${SAMPLE_SECONDS} s: p95 ≤ 3.5 s, in low-latency mode`,
    async () => {
      const page = await newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(`uncaught: ${e.message}`));
      const manifest = `${ll.serving.url}/live/ll.isml/.mpd`;
      try {
        // Playing, and a few seconds to settle on its target latency.
        await openPlaying(
          page,
          { player: 'dashjs', origin: ll.serving.url, manifest },
          sample,
          (s) => s.currentTime > 0 && s.latency > 0,
        );
        const samples = await sampleTwiceASecond(page, sample);
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
    expect(ll.ffmpegErrors()).toBe('');
  });
});
