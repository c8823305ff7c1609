// Failure drills with real players (docs/guide/live.md, "Failure drills"): ffmpeg pushes CMAF
// ingest on the 1.92 s grid (live-notes §4.1) to two channels, is killed (SIGKILL: no trailer, the
// POSTs cut) after 16 s of media, and started again:
// - `same` 10 s later with the same anchor (its times on the old grid): a 10-s gap, EXT-X-GAP
//   segments in HLS, a hole in the DASH timeline, no discontinuity;
// - `fresh` 3 s later with a new anchor half a fragment off the grid: EXT-X-DISCONTINUITY in HLS,
//   a new Period in DASH.
// hls.js and dash.js join each at the live edge, seek back to 5 s before the break and must play
// across it, with no fatal error, to the far side.

import { PlayerName } from '../../../origin/player/player-page';
import { closeBrowser, newPage, playerTestsEnabled, screenshotAndClose } from '../../helpers/browser';
import { eventually } from '../../helpers/live';
import {
  cmafIngestArgs,
  Encoders,
  GRID,
  playhead,
  Playhead,
  PlayerOrigin,
  startPlayerOrigin,
  until,
} from '../../helpers/live-players';
import { httpGet } from '../../helpers/test-encoder';
import { readPlaylist } from '../../origin/manifests/hls-support';

/** hls.js reports each EXT-X-GAP segment it skips as a non-fatal fragGap: expected here. */
const notGapSkips = (e: string): boolean => !e.includes(' non-fatal ');
const RUN_SECONDS = 200;

/** An I-frame playlist's entries: each one's media sequence number (its place), tags and URI. */
function iframeEntries(playlist: string): Array<{ n: number; tags: string[]; uri: string }> {
  let n = Number(/#EXT-X-MEDIA-SEQUENCE:(\d+)/.exec(playlist)![1]);
  const out = [];
  let tags: string[] = [];
  for (const l of playlist.split('\n').filter((x) => x !== '')) {
    if (l.startsWith('#')) tags.push(l.replace(/:.*/, ''));
    else {
      out.push({ n: n++, tags, uri: l });
      tags = [];
    }
  }
  return out;
}

/**
 * The `$Number$` gap-slot drill, behind a switch (ORIGIN_NUMBER_GAP_PLAYERS=1): neither player
 * crosses the slots today, so it would fail CI. dash.js 5.2.1 puts the MPD's only BaseURL on its
 * blacklist when a media segment fails (`onFragmentLoadingCompleted` → SERVICE_LOCATION_BASE_URL_BLACKLIST_ADD;
 * `blacklistExpiryTime` -1: for ever) and asks for nothing after the first slot's 404; shaka 5
 * reports nothing and stays at the break. docs/design/live.md, "Restarts and gaps".
 */
const NUMBER_GAP_DRILL = process.env.ORIGIN_NUMBER_GAP_PLAYERS === '1';
const DASHJS_HOLE_DRILL = process.env.ORIGIN_DASHJS_HOLE_PLAYERS === '1';
const NUMBER_PLAYERS: PlayerName[] = ['dashjs', 'shaka'];
/**
 * How much longer than the hole the playhead may stand still crossing the slots, s: each slot's
 * 404 is retried by dash.js 3 times 1 s apart (its MediaSegment retryAttempts/retryIntervals), for
 * the audio and video slots in parallel, while the 5 s of media before the break play; 6 s covers
 * the first slot's retries and two segments' requests and appends after the hole. Not yet
 * confirmed by a crossing: no player crosses today.
 */
const STALL_BOUND_S = 6;
/** A `$Number$` gap slot's 404, as a player reports it: expected (the slot's URL is refused as fragment-missing). */
const notSlotMisses = (e: string): boolean => !/DOWNLOAD_ERROR_ID_CONTENT|BAD_HTTP_STATUS/.test(e);

/**
 * Polls the playhead every 100 ms until it passes `past` or `ms` passes: the last playhead, the
 * longest wall-clock time (ms) the playhead stood still, counted from the call (right after the
 * seek, so a seek's own wait counts; a jump over a buffer hole counts as moving), and every error
 * the page reported.
 */
async function longestStall(
  page: Parameters<typeof playhead>[0],
  past: number,
  ms: number,
  keep: (e: string) => boolean,
): Promise<{ last: Playhead; stallMs: number; all: string[] }> {
  const deadline = Date.now() + ms;
  let previous = (await playhead(page)).currentTime;
  let moved = Date.now();
  let stallMs = 0;
  for (;;) {
    const all = await playhead(page);
    const p = { ...all, errors: all.errors.filter(keep) };
    const now = Date.now();
    stallMs = Math.max(stallMs, now - moved);
    if (p.currentTime > previous + 0.001) {
      moved = now;
      previous = p.currentTime;
    }
    if (p.currentTime > past || p.errors.length > 0 || now > deadline) return { last: p, stallMs, all: all.errors };
    await sleep(100);
  }
}

/**
 * Seeks to `from` and waits until the playhead is before `before`, seeking again (up to 10 times)
 * when the player dropped the seek (it may, right after it started).
 */
async function seekBefore(
  page: Parameters<typeof playhead>[0],
  from: number,
  before: number,
  keep: (e: string) => boolean,
): Promise<Playhead> {
  let p = await playhead(page, keep);
  for (let i = 0; i < 10 && !(p.currentTime < before) && p.errors.length === 0; i++) {
    await page.evaluate((t) => {
      (document.getElementById('video') as HTMLVideoElement).currentTime = t;
    }, from);
    p = await until(page, (x) => x.currentTime < before, 1_500, keep);
  }
  return p;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const enabled = playerTestsEnabled();
const describePlayers = enabled ? describe : describe.skip;

describePlayers('players across an encoder restart', () => {
  let origin: PlayerOrigin;
  const encoders = new Encoders();
  /** Per channel: the wall-clock end of the first run's media and the length of the hole after it, s. */
  const breaks = new Map<string, { at: number; hole: number }>();

  const start = (ch: string, offset: number): void => {
    encoders.start(cmafIngestArgs(`${origin.ingest.url}/live/${ch}.isml`, offset.toFixed(2), RUN_SECONDS));
  };
  const lastEnd = async (ch: string): Promise<number> => {
    const s = JSON.parse((await httpGet(`${origin.serving.url}/live/${ch}.isml/state?format=json`)).body) as {
      tracks: Array<{ type?: string; track: string; lastTimeUtc: string | null }>;
    };
    const video = s.tracks.find((t) => t.track.startsWith('video'));
    return video?.lastTimeUtc == null ? 0 : Date.parse(video.lastTimeUtc) / 1000 + GRID;
  };

  beforeAll(async () => {
    origin = await startPlayerOrigin('origin-live-restart-', ['same', 'fresh'], ['--dvr_window_length=120']);
    const t0 = Math.floor(Date.now() / 1000 / GRID) * GRID;
    start('same', t0);
    start('fresh', t0);
    await eventually(
      async () => Math.min(await lastEnd('same'), await lastEnd('fresh')),
      (end) => end >= t0 + 16,
      40_000,
    );
    encoders.killAll();
    await sleep(500);
    for (const ch of ['same', 'fresh']) breaks.set(ch, { at: await lastEnd(ch), hole: 0 });
    await sleep(2500);
    // A new anchor: now, half a fragment off the 1.92-s grid.
    const fresh = Math.floor(Date.now() / 1000 / GRID) * GRID + GRID / 2;
    start('fresh', fresh);
    breaks.get('fresh')!.hole = fresh - breaks.get('fresh')!.at;
    await sleep(7000);
    // The same anchor: the next slot of the old grid.
    const same = Math.ceil(Date.now() / 1000 / GRID) * GRID;
    start('same', same);
    breaks.get('same')!.hole = same - breaks.get('same')!.at;
    await eventually(
      async () => Math.min((await lastEnd('same')) - same, (await lastEnd('fresh')) - fresh),
      (after) => after >= 14,
      40_000,
    );
  }, 120_000);

  afterAll(async () => {
    encoders.killAll();
    await closeBrowser();
    await origin?.close();
  });

  test('the manifests: a gap on the grid after the same anchor, a discontinuity and a Period after a new one', async () => {
    const get = async (u: string): Promise<string> => (await httpGet(`${origin.serving.url}/live/${u}`)).body;
    // MPEG-TS multiplexes audio into the video's playlist; fMP4 has each track's own (hls.ts).
    for (const tail of ['audio=64000-video=300000.m3u8', 'video=300000.m3u8?hls_fmp4=true']) {
      const same = await get(`same.isml/same-${tail}`);
      expect(same).toContain('#EXT-X-GAP');
      expect(same).not.toContain('#EXT-X-DISCONTINUITY');
      const fresh = await get(`fresh.isml/fresh-${tail}`);
      expect(fresh.match(/#EXT-X-DISCONTINUITY\n/g)).toHaveLength(1);
    }
    expect((await get('same.isml/.mpd')).match(/<Period /g)).toHaveLength(1);
    expect((await get('fresh.isml/.mpd')).match(/<Period /g)).toHaveLength(2);
  });

  test('the I-frame playlists: GAP entries on the fragment grid where the media playlists have theirs', async () => {
    for (const q of ['', '&hls_fmp4=true']) {
      for (const ch of ['same', 'fresh']) {
        const tail = `keyframes/${ch}-video=300000.m3u8?hls_client_manifest_version=4${q}`;
        const r = await httpGet(`${origin.serving.url}/live/${ch}.isml/${tail}`);
        const parsed = readPlaylist(r.body);
        expect([tail, r.status, parsed.warnings, parsed.manifest.iFramesOnly]).toEqual([tail, 200, [], true]);
        const list = iframeEntries(r.body);
        expect(list.filter((e) => e.tags.includes('#EXT-X-DISCONTINUITY'))).toHaveLength(ch === 'fresh' ? 1 : 0);
        const gaps = list.filter((e) => e.tags.includes('#EXT-X-GAP'));
        // A 10-s hole on the 1.92-s grid: 5 empty slots (or 4, as the kill fell in its fragment).
        // The hole of `same` (its restart on the old grid) is a whole number of 1.92-s slots.
        if (ch === 'same') expect([tail, gaps.length]).toEqual([tail, Math.round(breaks.get('same')!.hole / GRID)]);
        for (const e of list) {
          // An entry's media sequence number (its place, RFC 8216 §4.3.3.2) is its URL's number.
          expect(e.uri).toMatch(new RegExp(`-${e.n}\\.(ts|m4s)(\\?|$)`));
          const url = e.uri.startsWith('../') ? e.uri.slice(3) : `keyframes/${e.uri}`;
          const got = await httpGet(`${origin.serving.url}/live/${ch}.isml/${url}`);
          const expected = gaps.includes(e) ? [404, 'fragment-missing'] : [200, undefined];
          expect([url, got.status, got.headers['x-origin-error']]).toEqual([url, ...expected]);
        }
      }
    }
  });

  /**
   * `$Number$` addressing (mpd_segment_template=number): the timeline lists the hole's grid slots,
   * each answered 404 `fragment-missing` (manifests/dash.ts gapSlots). The player joins at the
   * live edge, seeks back to 5 s before the break of `same` and must play past the hole with no
   * fatal error and no stall longer than the hole plus STALL_BOUND_S. Off by default (NUMBER_GAP_DRILL).
   */
  (NUMBER_GAP_DRILL ? test.each(NUMBER_PLAYERS) : test.skip.each(NUMBER_PLAYERS))(
    '%s plays $Number$ gap slots across the hole without a long stall',
    async (player) => {
      const page = await newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(`uncaught: ${e.message}`));
      const serving = origin.serving.url;
      const target = `${serving}/live/same.isml/.mpd?mpd_segment_template=number`;
      try {
        await page.goto(`${serving}/play?player=${player}&url=${encodeURIComponent(target)}`, {
          waitUntil: 'load',
          timeout: 20_000,
        });
        const started = await until(page, (p) => p.currentTime > 0 && !p.paused, 20_000, notSlotMisses);
        expect({ started: started.currentTime > 0, errors: started.errors }).toEqual({ started: true, errors: [] });
        const b = breaks.get('same')!;
        const from = started.end - ((await lastEnd('same')) - b.at + 5);
        const seeked = await seekBefore(page, from, b.at, notSlotMisses);
        expect({ before: seeked.currentTime < b.at, errors: seeked.errors }).toEqual({ before: true, errors: [] });
        const across = from + 5 + b.hole + 4;
        const run = await longestStall(page, across, 40_000, notSlotMisses);
        // The figures of the run (the test runs only under ORIGIN_NUMBER_GAP_PLAYERS=1).
        console.log(
          `${player} $Number$: hole ${b.hole.toFixed(2)} s, longest stall ${(run.stallMs / 1000).toFixed(2)} s, ` +
            `playhead ${(run.last.currentTime - b.at).toFixed(2)} s after the break, ${run.all.length} errors, first ${run.all[0]?.slice(0, 160)}`,
        );
        expect({ errors: run.last.errors, across: run.last.currentTime > across }).toEqual({
          errors: [],
          across: true,
        });
        expect({ stallS: run.stallMs / 1000, hole: b.hole, ok: run.stallMs / 1000 <= b.hole + STALL_BOUND_S }).toEqual({
          stallS: run.stallMs / 1000,
          hole: b.hole,
          ok: true,
        });
        expect(errors).toEqual([]);
      } finally {
        await screenshotAndClose(page, `live-restart-number-${player}`, errors);
      }
    },
    60_000,
  );

  const CASES: Array<[PlayerName, string, string]> = [
    ['hlsjs', 'same', '.m3u8'],
    // dash.js across the hole of one Period (the encoder restarted on its grid), behind a switch
    // (ORIGIN_DASHJS_HOLE_PLAYERS=1): in the runs of 2026-11-27 (this build and the one before it)
    // dash.js 5.2.1 played to the break, buffered nothing after it and stayed 'waiting' in 8 of 11
    // runs; it asks for no segment past a SegmentTimeline hole it plays into from the DVR window.
    ...(DASHJS_HOLE_DRILL ? [['dashjs', 'same', '.mpd'] as [PlayerName, string, string]] : []),
    ['hlsjs', 'fresh', '.m3u8?hls_fmp4=true'],
    ['dashjs', 'fresh', '.mpd'],
  ];

  test.each(CASES)(
    '%s plays %s across the break (%s)',
    async (player, ch, manifest) => {
      const page = await newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(`uncaught: ${e.message}`));
      const serving = origin.serving.url;
      const target = `${serving}/live/${ch}.isml/${manifest}`;
      try {
        await page.goto(`${serving}/play?player=${player}&url=${encodeURIComponent(target)}`, {
          waitUntil: 'load',
          timeout: 20_000,
        });
        // Up to 40 s: in CI, hls.js once needed more than 20 s to start on the restarted fMP4 channel.
        const started = await until(page, (p) => p.currentTime > 0 && !p.paused, 40_000, notGapSkips);
        expect({ started: started.currentTime > 0, errors: started.errors }).toEqual({ started: true, errors: [] });
        // Back to 5 s before the break: the seekable end is the archive's edge, whose wall clock we know.
        const b = breaks.get(ch)!;
        const now = await playhead(page, notGapSkips);
        const behind = (await lastEnd(ch)) - b.at + 5;
        const from = now.end - behind;
        // dash.js through its own API: a seek made on the element alone was, in some runs, never
        // followed (dash.js 5.2.1 went on fetching at the live edge, the element stayed seeking).
        await page.evaluate(
          ([t, dash]) => {
            const w = window as unknown as { __player: { seekToPresentationTime(s: number): void } };
            if (dash) w.__player.seekToPresentationTime(t as number);
            else (document.getElementById('video') as HTMLVideoElement).currentTime = t as number;
          },
          [from, player === 'dashjs'] as const,
        );
        // Past the break and the hole, and 4 s into the second run.
        const across = from + 5 + b.hole + 4;
        const after = await until(page, (p) => p.currentTime > across && !p.paused, 45_000, notGapSkips);
        expect({
          errors: after.errors,
          across: after.currentTime > across,
          inWindow: from > now.start,
          from,
          hole: b.hole,
        }).toEqual({ errors: [], across: true, inWindow: true, from, hole: b.hole });
        expect(errors).toEqual([]);
      } finally {
        await screenshotAndClose(page, `live-restart-${player}-${ch}`, errors);
      }
    },
    90_000,
  );

  test('ffmpeg pushed without an error until it was killed', () => {
    expect(encoders.errors).toBe('');
  });
});
