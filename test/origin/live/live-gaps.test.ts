// Failure drills on the test encoder with a fixed clock (docs/guide/live.md, "Failure drills"):
// an encoder that stalls and resumes on its grid (a gap: EXT-X-GAP segments, a hole in the DASH
// timeline, `fragment-missing` inside it), one killed and restarted with the same anchor
// (continuous: no discontinuity), and one restarted with a new anchor (EXT-X-DISCONTINUITY, a new
// DASH Period), each read again after an origin restart (the restarts are in channel.json).

import { media } from '../../helpers/fixtures';
import { createChannel, eventually, liveServerOptions, LiveOrigin, startLiveOrigin } from '../../helpers/live';
import { refusalStatusTable } from '../../../origin/cli/serve-refusals';
import { startServer } from '../../../origin/server/server';
import { breaksTimeline } from '../../../origin/live/channel';
import { httpGet, loadFixture, TestEncoder } from '../../helpers/test-encoder';
import { validateMpd } from '../manifests/format-support';
import { readPlaylist } from '../manifests/hls-support';

const JAN_2020 = 1577836800;
const ANCHOR = JAN_2020 + 2;
const video = loadFixture(media('video_baseline_400k.ismv'));
const audio = loadFixture(media('audio_eng_64k.isma'));
const clock = (): number => (ANCHOR + 200) * 1000;

let origin: LiveOrigin;

function encoders(channel: string, anchorSeconds: number): [TestEncoder, TestEncoder] {
  const make = (stream: string, fixture: typeof video): TestEncoder =>
    new TestEncoder({ channelUrl: origin.channelUrl(channel), stream, fixture, anchorSeconds });
  return [make('video-400k.cmfv', video), make('audio-64k.cmfa', audio)];
}

/** Sends fragments [from, to) of both encoders and waits until the last is archived. */
async function send(channel: string, pair: [TestEncoder, TestEncoder], from: number, to: number): Promise<void> {
  for (const e of pair) await e.send(from, to);
  const last = pair[0].fragment(to - 1).time;
  await eventually(
    () => origin.state(channel),
    (s) => s.tracks.length === 2 && s.tracks.every((t) => BigInt(t.lastTime ?? 0) >= last - 1_000_000n),
  );
}

const CHANNELS = ['stall', 'same', 'fresh', 'slid'];
/** 2020-01-01T00:00:00Z in 10 MHz ticks. */
const JAN_TICKS = BigInt(JAN_2020) * 10_000_000n;
/** The epoch-grid number of JAN_2020 in 4-s HLS segments. */
const MSN0 = JAN_2020 / 4;

beforeAll(async () => {
  origin = await startLiveOrigin({ now: clock });
  for (const ch of CHANNELS) await createChannel(origin.root, ch, [`--dvr_window_length=${ch === 'slid' ? 8 : 60}`]);
  // (a) 12 s of media, nothing for 10 s with the connection open, then 12 s more on the same grid.
  const stall = encoders('stall', ANCHOR);
  for (const e of stall) await e.open();
  await send('stall', stall, 0, 6);
  await send('stall', stall, 11, 17);
  // (b) killed after 12 s, restarted 10 s later with the same anchor: times on the same grid.
  const same = encoders('same', ANCHOR);
  for (const e of same) await e.open();
  await send('same', same, 0, 6);
  for (const e of same) e.drop();
  const again = encoders('same', ANCHOR);
  for (const e of again) await e.open();
  await send('same', again, 11, 17);
  // (c) killed after 12 s, restarted 11 s later with a new anchor: one second off the 2-s grid;
  // `slid` the same with a DVR window that no longer holds the first run.
  for (const ch of ['fresh', 'slid']) {
    const fresh = encoders(ch, ANCHOR);
    for (const e of fresh) await e.open();
    await send(ch, fresh, 0, 6);
    for (const e of fresh) e.drop();
    const restarted = encoders(ch, ANCHOR + 23);
    for (const e of restarted) await e.open();
    await send(ch, restarted, 0, 6);
  }
});
afterAll(() => origin.close());

const get = async (ch: string, tail: string): Promise<string> => {
  const r = await httpGet(`${origin.serving.url}/live/${ch}.isml/${tail}`);
  expect([tail, r.status]).toEqual([tail, 200]);
  return r.body;
};
const ts = (ch: string): string => `${ch}-audio=64000-video=400000.m3u8`;
const fmp4 = (ch: string): string => `${ch}-video=400000.m3u8?hls_fmp4=true`;
const audioFmp4 = (ch: string): string => `${ch}-audio=64000.m3u8?hls_fmp4=true`;

/** The playlist's entries: each segment's number, tags and URI. */
function entries(playlist: string): Array<{ n: number; tags: string[]; uri: string }> {
  const lines = playlist.split('\n');
  let n = Number(/#EXT-X-MEDIA-SEQUENCE:(\d+)/.exec(playlist)![1]);
  const out = [];
  let tags: string[] = [];
  for (const l of lines.slice(lines.findIndex((x) => x.startsWith('#EXTINF')) - 1)) {
    if (l.startsWith('#')) tags.push(l.replace(/:.*/, ''));
    else if (l !== '') {
      out.push({ n: n++, tags, uri: l });
      tags = [];
    }
  }
  return out;
}

async function status(ch: string, tail: string): Promise<[number, string | undefined]> {
  const r = await httpGet(`${origin.serving.url}/live/${ch}.isml/${tail}`);
  return [r.status, r.headers['x-origin-error'] as string | undefined];
}

test('(a) a stall: EXT-X-GAP segments on the grid, a hole in the DASH timeline, fragment-missing inside', async () => {
  for (const tail of [ts('stall'), fmp4('stall'), audioFmp4('stall')]) {
    const list = entries(await get('stall', tail));
    // The URI's number is the media sequence number of its place: on the epoch grid throughout.
    for (const e of list) expect(e.uri).toMatch(new RegExp(`-${e.n}\\.(ts|m4s)`));
    const gaps = list.filter((e) => e.tags.includes('#EXT-X-GAP'));
    // 12 s of media from JAN+2, nothing from JAN+14 to JAN+24: the 4-s slots 4 and 5 are empty.
    // (Audio alone is numbered on its own grid, its most frequent segment duration: the same places.)
    // Slot 0, which the archive enters mid-slot at JAN+2, is not listed (live-window.ts listedSegments).
    const first = tail.startsWith('stall-audio=64000.') ? list[0]!.n - 1 : MSN0;
    expect([tail, list[0]!.n - first, gaps.map((e) => e.n - first)]).toEqual([tail, 1, [4, 5]]);
    expect(list.some((e) => e.tags.includes('#EXT-X-DISCONTINUITY'))).toBe(false);
    expect(list[list.length - 1]!.n - first).toBe(8);
    for (const g of gaps) {
      const url = tail.startsWith('stall-audio=64000-video') ? g.uri : `hls/${g.uri.replace(/^hls\//, '')}`;
      expect(await status('stall', url)).toEqual([404, 'fragment-missing']);
    }
    const after = list.find((e) => e.n - first === 6)!;
    expect(after.tags).toContain('#EXT-X-PROGRAM-DATE-TIME');
    expect(await status('stall', after.uri)).toEqual([200, undefined]);
  }
  const mpd = await get('stall', '.mpd');
  expect(validateMpd(mpd).ok).toBe(true);
  expect(mpd.match(/<Period /g)).toHaveLength(1);
  // The video timeline: 6 segments from JAN+2, then `t` after the hole at JAN+24.
  expect(mpd).toContain(`<S t="${JAN_TICKS + 20_000_000n}" d="20000000" r="5" />`);
  expect(mpd).toContain(`<S t="${JAN_TICKS + 240_000_000n}" d="20000000" r="5" />`);
  expect(await status('stall', `dash/stall-video=400000-${JAN_TICKS + 160_000_000n}.dash`)).toEqual([
    404,
    'fragment-missing',
  ]);
  const state = JSON.parse(await get('stall', 'state?format=json')) as { tracks: Array<Record<string, number>> };
  expect(state.tracks.map((t) => [t.gaps, t.restarts])).toEqual([
    [1, 0],
    [1, 0],
  ]);
});

test('(b) killed and restarted with the same anchor: the manifests of a stall, no discontinuity', async () => {
  for (const tail of ['.mpd', ts('CH'), fmp4('CH'), audioFmp4('CH')]) {
    const stall = await get('stall', tail.replace('CH', 'stall'));
    const same = await get('same', tail.replace('CH', 'same'));
    expect(same).toBe(stall.replaceAll('stall', 'same'));
    expect(same).not.toContain('DISCONTINUITY');
  }
});

test('(c) restarted with a new anchor: EXT-X-DISCONTINUITY after the gap, a second DASH Period', async () => {
  for (const tail of [ts('fresh'), fmp4('fresh'), audioFmp4('fresh')]) {
    const playlist = await get('fresh', tail);
    expect(playlist).not.toContain('#EXT-X-DISCONTINUITY-SEQUENCE');
    const list = entries(playlist);
    const first = tail.startsWith('fresh-audio=64000.') ? list[0]!.n - 1 : MSN0; // slot 0 unlisted, as in (a)
    expect(list.filter((e) => e.tags.includes('#EXT-X-GAP')).map((e) => e.n - first)).toEqual([4, 5]);
    const broken = list.filter((e) => e.tags.includes('#EXT-X-DISCONTINUITY'));
    // The new run starts at JAN+25: slot ⌊25/4 + 1/8⌋ = 6, with its own date.
    expect([tail, broken.map((e) => e.n - first)]).toEqual([tail, [6]]);
    expect(broken[0]!.tags).toEqual(['#EXT-X-DISCONTINUITY', '#EXT-X-PROGRAM-DATE-TIME', '#EXTINF']);
    expect(playlist).toContain('#EXT-X-PROGRAM-DATE-TIME:2020-01-01T00:00:25.000Z');
    for (const e of list.filter((x) => !x.tags.includes('#EXT-X-GAP')))
      expect([e.uri, (await status('fresh', e.uri))[0]]).toEqual([e.uri, 200]);
  }
  const mpd = await get('fresh', '.mpd');
  expect(validateMpd(mpd).ok).toBe(true);
  const periods = [...mpd.matchAll(/<Period id="([^"]+)" start="([^"]+)">/g)].map((m) => [m[1], m[2]]);
  // The second Period starts at the restart, 2020-01-01T00:00:25Z since the anchor (1970).
  expect(periods).toEqual([
    ['1', 'PT0S'],
    ['r1577836825000', 'PT438288H25S'],
  ]);
  const second = mpd.slice(mpd.indexOf('<Period id="r'));
  const restart = JAN_TICKS + 250_000_000n;
  expect(second.match(new RegExp(`presentationTimeOffset="${restart}"`, 'g'))).toHaveLength(2);
  expect(second).toContain(`<S t="${restart}" d="20000000" r="5" />`);
  expect(mpd.slice(0, mpd.indexOf('<Period id="r'))).not.toContain('presentationTimeOffset');
  for (const t of [JAN_TICKS + 20_000_000n, restart, restart + 100_000_000n])
    expect(await status('fresh', `dash/fresh-video=400000-${t}.dash`)).toEqual([200, undefined]);
  const state = JSON.parse(await get('fresh', 'state?format=json')) as { tracks: Array<Record<string, number>> };
  expect(state.tracks.map((t) => t.restarts)).toEqual([1, 1]);
});

test('(c) once the first run has slid out: EXT-X-DISCONTINUITY-SEQUENCE 1, one Period from the restart', async () => {
  for (const tail of [ts('slid'), fmp4('slid')]) {
    const playlist = await get('slid', tail);
    expect(playlist).toContain('#EXT-X-DISCONTINUITY-SEQUENCE:1\n');
    expect(playlist).not.toContain('#EXT-X-DISCONTINUITY\n');
    expect(playlist).not.toContain('#EXT-X-GAP');
  }
  const mpd = await get('slid', '.mpd');
  expect(validateMpd(mpd).ok).toBe(true);
  expect([...mpd.matchAll(/<Period id="([^"]+)" start="([^"]+)">/g)].map((m) => [m[1], m[2]])).toEqual([
    ['r1577836825000', 'PT438288H25S'],
  ]);
});

/** The I-frame playlists of a channel's video (version 4: EXT-X-I-FRAMES-ONLY), MPEG-TS and fMP4. */
const iframes = (ch: string): string[] =>
  ['', '&hls_fmp4=true'].map((q) => `keyframes/${ch}-video=400000.m3u8?hls_client_manifest_version=4${q}`);
/** The epoch-grid number of JAN_2020 in the fixture's 2-s fragments (I-frame entries, live-window.ts). */
const IFRAME0 = JAN_2020 / 2;

test("I-frame playlists across a gap: EXT-X-GAP entries on the fragment grid, the media playlists' timeline", async () => {
  for (const tail of iframes('stall')) {
    const playlist = await get('stall', tail);
    const parsed = readPlaylist(playlist);
    expect([tail, parsed.warnings, parsed.manifest.iFramesOnly]).toEqual([tail, [], true]);
    const list = entries(playlist);
    // Each entry's number is its place (RFC 8216 §4.3.3.2) and the one its URL carries.
    for (const e of list) expect(e.uri).toMatch(new RegExp(`-${e.n}\\.(ts|m4s)(\\?|$)`));
    // Keyframes from JAN+4 (the first listed media segment) to JAN+14 and from JAN+24 to JAN+36:
    // the 2-s slots 7 to 11 (JAN+14 to JAN+24) are empty.
    const gaps = list.filter((e) => e.tags.includes('#EXT-X-GAP'));
    expect([tail, list[0]!.n - IFRAME0, gaps.map((e) => e.n - IFRAME0), list[list.length - 1]!.n - IFRAME0]).toEqual([
      tail,
      2,
      [7, 8, 9, 10, 11],
      17,
    ]);
    expect(playlist).not.toContain('DISCONTINUITY');
    // The durations tile the timeline as the media playlists' do: JAN+4 to JAN+36.
    const seconds = [...playlist.matchAll(/#EXTINF:([\d.]+),/g)].reduce((a, m) => a + Number(m[1]), 0);
    expect(seconds).toBeCloseTo(32, 3);
    expect(parsed.manifest.segments).toHaveLength(list.length);
    const dir = tail.slice(0, tail.indexOf('/') + 1);
    for (const e of list) {
      const url = e.uri.startsWith('../') ? e.uri.slice(3) : dir + e.uri;
      const expected = gaps.includes(e) ? [404, 'fragment-missing'] : [200, undefined];
      expect([url, await status('stall', url)]).toEqual([url, expected]);
    }
    // Past either end of the window: the live refusals of the media segments.
    const url = (n: number): string => {
      const u = list[0]!.uri.replace(/-\d+\.(ts|m4s)/, `-${n}.$1`);
      return u.startsWith('../') ? u.slice(3) : dir + u;
    };
    expect(await status('stall', url(IFRAME0 + 1))).toEqual([404, 'fragment-expired']);
    expect(await status('stall', url(IFRAME0 + 18))).toEqual([404, 'fragment-not-yet']);
    // Each keyframe entry dated (RFC 8216 §4.3.2.6): the epoch-grid slot n of 2 s starts at n × 2 s.
    const dated = datedUris(playlist);
    expect(dated.map((d) => d.uri)).toEqual(list.filter((e) => !gaps.includes(e)).map((e) => e.uri));
    for (const d of dated) expect([d.uri, d.date]).toEqual([d.uri, new Date(numberOf(d.uri) * 2000).toISOString()]);
    await expectMediaDatesAmong('stall', dated);
    // The same encoder killed and restarted on its grid: the same lists.
    expect(await get('same', tail.replace('stall', 'same'))).toBe(playlist.replaceAll('stall', 'same'));
  }
});

/** Each EXT-X-PROGRAM-DATE-TIME of a playlist with the URI of the entry it dates. */
function datedUris(playlist: string): Array<{ date: string; uri: string }> {
  return [...playlist.matchAll(/#EXT-X-PROGRAM-DATE-TIME:(\S+)\n(?:#.*\n)*([^#\n]\S*)/g)].map((m) => ({
    date: m[1]!,
    uri: m[2]!,
  }));
}

const numberOf = (uri: string): number => Number(/-(\d+)\.(?:ts|m4s)/.exec(uri)![1]);

/** Every media segment's date (TS playlist) is an I-frame entry's: the entry its keyframe starts. */
async function expectMediaDatesAmong(ch: string, dated: Array<{ date: string }>): Promise<void> {
  const segmentDates = datedUris(await get(ch, ts(ch))).map((d) => d.date);
  expect(segmentDates.length).toBeGreaterThan(3);
  const iframeDates = new Set(dated.map((d) => d.date));
  expect(segmentDates.filter((d) => !iframeDates.has(d))).toEqual([]);
}

test('I-frame playlists across a restart: EXT-X-GAP entries, then EXT-X-DISCONTINUITY; its sequence once slid', async () => {
  for (const tail of iframes('fresh')) {
    const playlist = await get('fresh', tail);
    expect([tail, readPlaylist(playlist).warnings]).toEqual([tail, []]);
    const list = entries(playlist);
    for (const e of list) expect(e.uri).toMatch(new RegExp(`-${e.n}\\.(ts|m4s)(\\?|$)`));
    expect(list.filter((e) => e.tags.includes('#EXT-X-GAP')).map((e) => e.n - IFRAME0)).toEqual([7, 8, 9, 10, 11]);
    // The new run's first keyframe at JAN+25: slot ⌊25/2 + 1/8⌋ = 12.
    const broken = list.filter((e) => e.tags.includes('#EXT-X-DISCONTINUITY'));
    expect([tail, broken.map((e) => e.n - IFRAME0)]).toEqual([tail, [12]]);
    expect(playlist).not.toContain('#EXT-X-DISCONTINUITY-SEQUENCE');
    // The new run's first entry is dated at its restart, as the media playlists date it.
    expect(broken[0]!.tags).toEqual(['#EXT-X-DISCONTINUITY', '#EXT-X-PROGRAM-DATE-TIME', '#EXTINF']);
    const dated = datedUris(playlist);
    expect(dated.find((d) => d.uri === broken[0]!.uri)?.date).toBe('2020-01-01T00:00:25.000Z');
    await expectMediaDatesAmong('fresh', dated);
  }
  for (const tail of iframes('slid')) {
    const playlist = await get('slid', tail);
    expect([tail, readPlaylist(playlist).warnings]).toEqual([tail, []]);
    expect(playlist).toContain('#EXT-X-DISCONTINUITY-SEQUENCE:1\n');
    expect(playlist).not.toContain('#EXT-X-DISCONTINUITY\n');
    expect(playlist).not.toContain('#EXT-X-GAP');
  }
});

test('what breaks a track timeline: off its grid by more than 1/8 of a fragment, or overlapping it', () => {
  // The newest fragment at 100, 20 long.
  expect(breaksTimeline(100n, 120n, 120n)).toBe(false); // continues
  expect(breaksTimeline(100n, 120n, 200n)).toBe(false); // a gap of four fragments, on the grid
  expect(breaksTimeline(100n, 120n, 202n)).toBe(false); // on the grid within 1/8 (AAC frame rounding)
  expect(breaksTimeline(100n, 120n, 198n)).toBe(false);
  expect(breaksTimeline(100n, 120n, 210n)).toBe(true); // half a fragment off: a new anchor
  expect(breaksTimeline(100n, 120n, 110n)).toBe(true); // inside the newest: a new anchor
});

test('a restart whose times go back: dropped as late until they pass the archive, the numbers never go back', async () => {
  await createChannel(origin.root, 'back', ['--dvr_window_length=60']);
  const first = encoders('back', ANCHOR + 100);
  for (const e of first) await e.open();
  await send('back', first, 0, 4);
  const before = await get('back', ts('back'));
  const back = encoders('back', ANCHOR);
  for (const e of back) await e.open();
  for (const e of back) await e.send(0, 3);
  await eventually(
    () => origin.state('back'),
    (s) => s.tracks.every((t) => t.lateDropped === 3),
  );
  expect(await get('back', ts('back'))).toBe(before);
  for (const e of [...first, ...back]) await e.close();
});

test("refusal statuses: the reference table by default, origin serve's own when given", async () => {
  const hole = JAN_TICKS + 160_000_000n;
  const urls = {
    hls: `stall-audio=64000-video=400000-${MSN0 + 4}.ts`,
    dash: `dash/stall-video=400000-${hole}.dash`,
    smooth: `QualityLevels(400000)/Fragments(video=${hole})`,
    dashLater: `dash/stall-video=400000-${JAN_TICKS + 400_000_000n}.dash`,
  };
  const at = async (base: string): Promise<Array<[number, string | undefined]>> =>
    Promise.all(
      Object.values(urls).map(async (u) => {
        const r = await httpGet(`${base}/live/stall.isml/${u}`);
        return [r.status, r.headers['x-origin-error'] as string | undefined] as [number, string | undefined];
      }),
    );
  expect(await at(origin.serving.url)).toEqual([
    [404, 'fragment-missing'],
    [404, 'fragment-missing'],
    [412, 'fragment-missing'],
    [404, 'fragment-not-yet'],
  ]);
  const own = await startServer({
    ...liveServerOptions(origin.root, clock),
    liveFragmentStatus: refusalStatusTable({ 'fragment-missing': 'hls=503,smooth=404', 'fragment-not-yet': '425' }),
  });
  try {
    expect(await at(own.url)).toEqual([
      [503, 'fragment-missing'],
      [404, 'fragment-missing'],
      [404, 'fragment-missing'],
      [425, 'fragment-not-yet'],
    ]);
  } finally {
    await own.close();
  }
});

test('an origin restarted on the same archive writes the same Periods, gaps and discontinuities', async () => {
  const tails = (ch: string): string[] => ['.mpd', ts(ch), fmp4(ch), audioFmp4(ch), ...iframes(ch)];
  const before = new Map<string, string>();
  for (const ch of CHANNELS) for (const tail of tails(ch)) before.set(`${ch}/${tail}`, await get(ch, tail));
  const root = origin.root;
  await origin.close();
  origin = await startLiveOrigin({ now: clock }, root);
  for (const ch of CHANNELS)
    for (const tail of tails(ch))
      expect([ch, tail, await get(ch, tail)]).toEqual([ch, tail, before.get(`${ch}/${tail}`)]);
});
