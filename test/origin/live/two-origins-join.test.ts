// Two origins fed by the same encoders where one hears them from later on (issue 21: "in real
// time every segment present in both has the same URL, MSN, PDT and `$Time$`"), on one injected
// clock so that each case is exact: the late origin's archive starts after the other's, as after
// a purge, an encoder's first fragments that never reached it, or a restart it never saw. What
// both list must name the same media alike: HLS I-frame entries, DASH `$Number$` across a gap,
// and everything after a restart with a new anchor. What cannot agree without state shared
// between origins (the restart's Period id and discontinuity count) is pinned here as
// docs/design/live.md says.

import { media } from '../../helpers/fixtures';
import { createChannel, eventually, LiveOrigin, startLiveOrigin } from '../../helpers/live';
import { fetchSegments, getBytes, listSegments, ListedSegment } from '../../helpers/live-catalogue';
import { loadFixture, TestEncoder } from '../../helpers/test-encoder';

const JAN_2020 = 1577836800;
const ANCHOR = JAN_2020 + 2;
const video = loadFixture(media('video_baseline_400k.ismv'));
const audio = loadFixture(media('audio_eng_64k.isma'));
const clock = (): number => (ANCHOR + 300) * 1000;

let one: LiveOrigin;
let two: LiveOrigin;

function encoders(o: LiveOrigin, channel: string, anchorSeconds: number): [TestEncoder, TestEncoder] {
  const make = (stream: string, fixture: typeof video): TestEncoder =>
    new TestEncoder({ channelUrl: o.channelUrl(channel), stream, fixture, anchorSeconds });
  return [make('video-400k.cmfv', video), make('audio-64k.cmfa', audio)];
}

/** Sends fragments [from, to) of both tracks (opening the POSTs first) and waits until they are archived. */
async function send(o: LiveOrigin, ch: string, pair: [TestEncoder, TestEncoder], from: number, to: number) {
  for (const e of pair) if (e.push === undefined) await e.open();
  for (const e of pair) await e.send(from, to);
  const last = pair[0].fragment(to - 1).time;
  await eventually(
    () => o.state(ch),
    (s) => s.tracks.length === 2 && s.tracks.every((t) => BigInt(t.lastTime ?? 0) >= last - 1_000_000n),
  );
}

beforeAll(async () => {
  one = await startLiveOrigin({ now: clock });
  two = await startLiveOrigin({ now: clock });
  for (const o of [one, two]) {
    await createChannel(o.root, 'late', ['--dvr_window_length=60']);
    await createChannel(o.root, 'gap', ['--dvr_window_length=60']);
    await createChannel(o.root, 'restart', ['--dvr_window_length=12']);
  }
  // late: origin two hears the encoders from fragment 5 on (off the 4-s HLS grid).
  await send(one, 'late', encoders(one, 'late', ANCHOR), 0, 14);
  await send(two, 'late', encoders(two, 'late', ANCHOR), 5, 14);
  // gap: 12 s, a 10-s stall, 12 s more; origin two hears only what follows the stall.
  const g1 = encoders(one, 'gap', ANCHOR);
  await send(one, 'gap', g1, 0, 6);
  await send(one, 'gap', g1, 11, 17);
  await send(two, 'gap', encoders(two, 'gap', ANCHOR), 11, 17);
  // restart: 12 s, then the encoder restarted with a new anchor one second off the 2-s grid;
  // origin two hears only the second run. Origin one's 12-s window no longer holds the first.
  const r1 = encoders(one, 'restart', ANCHOR);
  await send(one, 'restart', r1, 0, 6);
  for (const e of r1) e.drop();
  await send(one, 'restart', encoders(one, 'restart', ANCHOR + 23), 0, 10);
  await send(two, 'restart', encoders(two, 'restart', ANCHOR + 23), 2, 10);
}, 60_000);
afterAll(async () => {
  await one.close();
  await two.close();
});

const base = (o: LiveOrigin, ch: string): string => `${o.serving.url}/live/${ch}.isml`;

async function text(url: string): Promise<string> {
  const r = await getBytes(url);
  expect([url, r.status]).toEqual([url, 200]);
  return r.body.toString();
}

/** The entries of an I-frame playlist, as URLs relative to the channel. */
async function iframeUrls(o: LiveOrigin, ch: string, list: string): Promise<string[]> {
  const body = await text(`${base(o, ch)}/${list}`);
  return body
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => (l.startsWith('../') ? l.slice(3) : `keyframes/${l}`));
}

test('I-frame entries: a URL both list names the same keyframe, and a keyframe has one URL', async () => {
  for (const master of ['.m3u8?hls_client_manifest_version=4', '.m3u8?hls_client_manifest_version=4&hls_fmp4=true']) {
    // The I-frame playlist the master names (EXT-X-I-FRAME-STREAM-INF URI, RFC 8216 §4.3.4.3).
    const m = await text(`${base(one, 'late')}/${master}`);
    const list = /I-FRAME-STREAM-INF:.*URI="([^"]+)"/.exec(m)![1]!;
    // Live, it slides like the media playlists: no playlist type, no ENDLIST (RFC 8216 §6.2.2).
    const live = await text(`${base(two, 'late')}/${list}`);
    expect({ list, type: live.includes('#EXT-X-PLAYLIST-TYPE'), end: live.includes('#EXT-X-ENDLIST') }).toEqual({
      list,
      type: false,
      end: false,
    });
    const u1 = await iframeUrls(one, 'late', list);
    const u2 = await iframeUrls(two, 'late', list);
    expect(u2.length).toBeGreaterThan(3);
    const all = (urls: string[]): ListedSegment[] => urls.map((url) => ({ format: 'hls-ts', url }));
    const b1 = await fetchSegments(base(one, 'late'), all(u1));
    const b2 = await fetchSegments(base(two, 'late'), all(u2));
    // The late origin's entries are the other's last ones, under the same URLs with the same bytes.
    expect({ list, urls: u2 }).toEqual({ list, urls: u1.slice(u1.length - u2.length) });
    for (const u of u2) expect({ u, same: b2.get(u)!.equals(b1.get(u)!) }).toEqual({ u, same: true });
  }
});

/**
 * What a DASH client reads from an MPD addressed by `$Number$` (ISO/IEC 23009-1 §5.3.9.6: the
 * number of a segment is @startNumber plus the segments listed before it in its Period, `S@r`
 * repeats included; dash.js and shaka read no `S@n`): number → the `$Number$` URL's time, per
 * Period and Representation, for the video.
 */
function dashNumbers(mpd: string): Map<number, bigint> {
  const out = new Map<number, bigint>();
  for (const period of mpd.split('<Period').slice(1)) {
    const set = period.split('<AdaptationSet').find((s) => s.includes('contentType="video"'))!;
    let n = Number(/startNumber="(\d+)"/.exec(set)![1]);
    let t = 0n;
    for (const s of set.matchAll(/<S(?: t="(\d+)")? d="(\d+)"(?: r="(\d+)")? \/>/g)) {
      if (s[1] !== undefined) t = BigInt(s[1]);
      for (let k = 0; k <= Number(s[3] ?? 0); k++) {
        out.set(n++, t);
        t += BigInt(s[2]!);
      }
    }
  }
  return out;
}

test('DASH $Number$ across a gap: a number names the same media on both origins and in every window', async () => {
  const q = '.mpd?mpd_segment_template=number';
  const whole = dashNumbers(await text(`${base(one, 'gap')}/${q}`));
  const after = dashNumbers(await text(`${base(two, 'gap')}/${q}`));
  // Origin one's window after the stall only (the same media origin two holds).
  const shrunk = dashNumbers(await text(`${base(one, 'gap')}/${q}&dvr_window_length=8`));
  expect(after.size).toBeGreaterThan(3);
  for (const other of [after, shrunk]) for (const [n, t] of other) expect({ n, t: whole.get(n) }).toEqual({ n, t });
  // And the numbers are grid slots, ⌊(t + D/8) / D⌋ on the epoch grid of the DASH segments (the
  // 2-s fragments, 10 MHz), the stall's slots included.
  expect(whole.size).toBeGreaterThan(after.size + 2);
  for (const [n, t] of whole) expect({ n, slot: Number((t + 2_500_000n) / 20_000_000n) }).toEqual({ n, slot: n });
  // Each number both list is served with the same bytes, by the URL the MPD's template makes.
  const mpd = await text(`${base(two, 'gap')}/${q}`);
  const set = mpd.split('<AdaptationSet').find((x) => x.includes('contentType="video"'))!;
  const template = /media="([^"]+)"/
    .exec(set)![1]!
    .replace('$RepresentationID$', /<Representation id="([^"]+)"/.exec(set)![1]!);
  const url = (n: number): string => template.replace('$Number$', String(n)).replace(/&amp;/g, '&');
  // The stall's slots (JAN+14 s to JAN+24 s: 2-s slots 7 to 11 past JAN's) are listed and refused as a gap.
  const jan = JAN_2020 / 2;
  for (let n = jan + 7; n <= jan + 11; n++) {
    expect(whole.has(n)).toBe(true);
    const r = await getBytes(`${base(one, 'gap')}/${url(n)}`);
    expect({ n, status: r.status, code: r.headers['x-origin-error'] }).toEqual({
      n,
      status: 404,
      code: 'fragment-missing',
    });
  }
  for (const n of after.keys()) {
    const a = await getBytes(`${base(one, 'gap')}/${url(n)}`);
    const b = await getBytes(`${base(two, 'gap')}/${url(n)}`);
    expect({ n, statuses: [a.status, b.status], same: a.body.equals(b.body) }).toEqual({
      n,
      statuses: [200, 200],
      same: true,
    });
  }
});

test('a restart the late origin never saw: every segment both list agrees; the Period id and discontinuity count do not', async () => {
  const l1 = await listSegments(base(one, 'restart'));
  const l2 = await listSegments(base(two, 'restart'));
  const key = (s: ListedSegment): string => `${s.format} ${s.url}`;
  const in1 = new Map(l1.map((s) => [key(s), s]));
  const both = l2.filter((s) => in1.has(key(s)));
  expect(new Set(both.filter((s) => s.time !== undefined || s.msn !== undefined).map((s) => s.format))).toEqual(
    new Set(['dash', 'hls-ts', 'hls-fmp4', 'smooth', 'hds']),
  );
  for (const s of both) expect(in1.get(key(s))).toEqual(s);
  // Media both list has one name: no PDT both list under two URLs (of one kind of playlist: an
  // I-frame entry and the media segment its keyframe starts share theirs).
  const dated = (s: ListedSegment): string =>
    `${s.format}${s.url.startsWith('keyframes/') ? ' keyframes' : ''} ${s.pdtMs}`;
  const pdt1 = new Map(l1.filter((s) => s.pdtMs !== undefined).map((s) => [dated(s), s.url]));
  for (const s of l2.filter((x) => x.pdtMs !== undefined)) {
    const other = pdt1.get(dated(s));
    if (other !== undefined) expect({ pdt: s.pdtMs, url: other }).toEqual({ pdt: s.pdtMs, url: s.url });
  }
  // What only shared state could make agree (docs/design/live.md, "Two origins"): origin one
  // counts the restart it saw, origin two, which began with the second run, does not.
  const periods = async (o: LiveOrigin): Promise<string[]> =>
    [...(await text(`${base(o, 'restart')}/.mpd`)).matchAll(/<Period id="([^"]+)" start="([^"]+)"/g)].map(
      (m) => `${m[1]} ${m[2]}`,
    );
  expect(await periods(one)).toEqual([`r${(JAN_2020 + 25) * 1000} PT438288H25S`]);
  expect(await periods(two)).toEqual(['1 PT0S']);
  const sequence = async (o: LiveOrigin): Promise<string | undefined> =>
    /#EXT-X-DISCONTINUITY-SEQUENCE:(\d+)/.exec(
      await text(`${base(o, 'restart')}/restart-video=400000.m3u8?hls_fmp4=true`),
    )?.[1];
  expect(await sequence(one)).toBe('1');
  expect(await sequence(two)).toBeUndefined();
});
