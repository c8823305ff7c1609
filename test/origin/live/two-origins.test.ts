// Two origins fed by the same two redundant encoders (issue 21; DASH-IF ingest §interface-1-dualsync:
// epoch-locked encoders, boundaries at K × duration since 1970). Each encoder pushes its video and
// audio to both origins, in a different order and at different moments, so that what each origin
// archives first, and when, differs. With one injected clock (the ingest's and the serving port's
// `now`) every manifest of every format is byte-identical; in real time, with the second origin
// joining late, every segment both list has the same URL, HLS media sequence number and
// PROGRAM-DATE-TIME, DASH `$Time$`, Smooth `t` and HDS number, and the same bytes.

import { media } from '../../helpers/fixtures';
import { createChannel, eventually, LiveOrigin, startLiveOrigin } from '../../helpers/live';
import { fetchSegments, listSegments, ListedSegment, manifestTexts } from '../../helpers/live-catalogue';
import { loadFixture, TestEncoder } from '../../helpers/test-encoder';

const video = loadFixture(media('video_baseline_400k.ismv'));
const audio = loadFixture(media('audio_eng_64k.isma'));

/** One encoder's video and audio POSTs to one origin. */
function encoderTo(o: LiveOrigin, anchorSeconds: number): [TestEncoder, TestEncoder] {
  const channelUrl = o.channelUrl('ch');
  return [
    new TestEncoder({ channelUrl, stream: 'video-400k.cmfv', fixture: video, anchorSeconds }),
    new TestEncoder({ channelUrl, stream: 'audio-64k.cmfa', fixture: audio, anchorSeconds }),
  ];
}

async function send(e: [TestEncoder, TestEncoder], from: number, to: number): Promise<void> {
  await e[0].send(from, to);
  await e[1].send(from, to);
}

async function archived(o: LiveOrigin, count: number): Promise<void> {
  await eventually(
    () => o.state('ch'),
    (s) => s.tracks.length === 2 && s.tracks.every((t) => t.fragments === count),
  );
}

async function twoOrigins(window: number, now?: () => number): Promise<[LiveOrigin, LiveOrigin]> {
  const one = await startLiveOrigin({ now });
  const two = await startLiveOrigin({ now });
  for (const o of [one, two]) await createChannel(o.root, 'ch', ['--dvr_window_length=' + window]);
  return [one, two];
}

test('one injected clock: the manifests of every format are byte-identical on both origins', async () => {
  const anchor = 1_800_000_000; // on the 2-s grid of the fixtures
  const [one, two] = await twoOrigins(16, () => (anchor + 40) * 1000);
  try {
    const a1 = encoderTo(one, anchor);
    const b1 = encoderTo(one, anchor);
    const a2 = encoderTo(two, anchor);
    const b2 = encoderTo(two, anchor);
    for (const e of [a1, b1, a2, b2]) for (const p of e) await p.open();
    // Origin one hears encoder a first, origin two encoder b; each a fragment ahead of the other.
    await send(a1, 0, 4);
    await send(b2, 0, 5);
    await send(b1, 0, 3);
    await send(a2, 0, 2);
    await send(a1, 4, 14);
    await send(b2, 5, 14);
    await send(b1, 3, 14);
    await send(a2, 2, 14);
    await archived(one, 14);
    await archived(two, 14);
    const m1 = await manifestTexts(`${one.serving.url}/live/ch.isml`);
    const m2 = await manifestTexts(`${two.serving.url}/live/ch.isml`);
    expect([...m1.keys()].length).toBeGreaterThan(5);
    expect([...m2.keys()]).toEqual([...m1.keys()]);
    for (const [k, text] of m1) expect({ k, text: m2.get(k) }).toEqual({ k, text });
    // Both redundant copies arrived at each origin: one archived, the other dropped.
    for (const o of [one, two])
      expect((await o.state('ch')).tracks.map((t) => [t.fragments, t.duplicatesDropped])).toEqual([
        [14, 14],
        [14, 14],
      ]);
    // The end of stream: static manifests, identical too.
    for (const e of [a1, b1, a2, b2]) for (const p of e) expect((await p.close(true)).status).toBe(200);
    for (const o of [one, two])
      await eventually(
        () => o.state('ch'),
        (s) => s.state === 'stopped',
      );
    const e1 = await manifestTexts(`${one.serving.url}/live/ch.isml`);
    const e2 = await manifestTexts(`${two.serving.url}/live/ch.isml`);
    expect(e1.get('.mpd')).toContain('type="static"');
    for (const [k, text] of e1) expect({ k, text: e2.get(k) }).toEqual({ k, text });
  } finally {
    await one.close();
    await two.close();
  }
}, 60_000);

test('real time, the second origin joining late: every segment both list is named and timed alike, same bytes', async () => {
  const anchor = Math.floor(Date.now() / 4000) * 4 - 32; // on the 4-s grid
  const [one, two] = await twoOrigins(40);
  try {
    const a1 = encoderTo(one, anchor);
    const b1 = encoderTo(one, anchor);
    const a2 = encoderTo(two, anchor);
    const b2 = encoderTo(two, anchor);
    for (const e of [a1, b1]) for (const p of e) await p.open();
    await send(a1, 0, 6);
    await send(b1, 0, 6);
    // Origin two starts hearing the encoders at fragment 5 (off the 4-s HLS grid), b first.
    for (const e of [a2, b2]) for (const p of e) await p.open();
    await send(b2, 5, 6);
    await archived(two, 1); // its first fragment, before any later one can pass it on another POST
    for (let g = 6; g < 14; g++) {
      await send(a1, g, g + 1);
      await new Promise((r) => setTimeout(r, 50));
      await send(b2, g, g + 1);
      await send(a2, g, g + 1);
      await send(b1, g, g + 1);
    }
    await archived(one, 14);
    await archived(two, 9);
    const l1 = await listSegments(`${one.serving.url}/live/ch.isml`);
    const l2 = await listSegments(`${two.serving.url}/live/ch.isml`);
    const key = (s: ListedSegment): string => `${s.format} ${s.url}`;
    const in2 = new Map(l2.map((s) => [key(s), s]));
    const both = l1.filter((s) => in2.has(key(s)));
    // Every format has media segments in common (not only inits).
    const common = both.filter((s) => s.time !== undefined || s.msn !== undefined);
    expect(new Set(common.map((s) => s.format))).toEqual(new Set(['dash', 'hls-ts', 'hls-fmp4', 'smooth', 'hds']));
    for (const s of both) expect(in2.get(key(s))).toEqual(s);
    // A segment listed by one only is one the other has not archived (its window starts later):
    // never the same media under another name.
    const times1 = new Set(l1.filter((s) => s.pdtMs !== undefined).map((s) => `${s.format} ${s.pdtMs}`));
    for (const s of l2.filter((x) => x.pdtMs !== undefined && !l1.some((y) => key(y) === key(x))))
      expect(times1.has(`${s.format} ${s.pdtMs}`)).toBe(false);
    // Bytes: all but the late origin's first HDS fragment, said in docs/guide/live.md (its
    // multiplexed audio begins in an audio fragment that origin never had). I-frame entries:
    // two-origins-join.test.ts.
    const firstHds = l2.find((s) => s.format === 'hds')!.url;
    const compared = both.filter((s) => s.url !== firstHds);
    const b1s = await fetchSegments(`${one.serving.url}/live/ch.isml`, compared);
    const b2s = await fetchSegments(`${two.serving.url}/live/ch.isml`, compared);
    const differ = [...b1s].filter(([u, b]) => b2s.get(u)?.equals(b) !== true).map(([u]) => u);
    expect(differ).toEqual([]);
  } finally {
    await one.close();
    await two.close();
  }
}, 60_000);
