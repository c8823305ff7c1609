// The three ingest forms against a real ingest listener and serving port on loopback: Smooth (one
// long POST, several tracks, tfxd, the Live Server Manifest Box), CMAF one long POST per track,
// CMAF one segment per request; the state and archive endpoints; end of stream.

import { media } from '../../helpers/fixtures';
import { createChannel, eventually, LiveOrigin, startLiveOrigin } from '../../helpers/live';
import { box, httpGet, loadFixture, stypLmsg, TestEncoder } from '../../helpers/test-encoder';

const NOW = Math.floor(Date.now() / 1000);
const muxed = loadFixture(media('muxed_av.ismv'));
const video = loadFixture(media('video_baseline_400k.ismv'));
const audio = loadFixture(media('audio_eng_64k.isma'));

const SMIL = `<?xml version="1.0" encoding="utf-8"?>
<smil xmlns="http://www.w3.org/2001/SMIL20/Language"><head/><body><switch>
<video src="ffmpeg.ismv" systemBitrate="401000"><param name="trackID" value="1" valuetype="data"/><param name="trackName" value="video" valuetype="data"/></video>
<audio src="ffmpeg.ismv" systemBitrate="64000"><param name="trackID" value="2" valuetype="data"/><param name="trackName" value="audio" valuetype="data"/></audio>
</switch></body></smil>`;

let origin: LiveOrigin;

beforeAll(async () => {
  origin = await startLiveOrigin();
  await createChannel(origin.root, 'smooth', ['--archiving', '--archive_length=3600', '--dvr_window_length=30']);
  await createChannel(origin.root, 'cmaf', ['--archiving']);
  await createChannel(origin.root, 'segments', ['--archiving']);
});
afterAll(() => origin.close());

test('a publishing point before any ingest is idle, with no tracks', async () => {
  const s = await origin.state('cmaf');
  expect(s).toMatchObject({ status: 200, state: 'idle', encoders: 0, tracks: [] });
  const smil = await httpGet(`${origin.serving.url}/live/cmaf.isml/state`);
  expect(smil.body).toContain('<meta name="state" content="idle" />');
});

test('ingest to, or the state of, an unknown .isml is 404 unknown-channel', async () => {
  const enc = new TestEncoder({
    channelUrl: origin.channelUrl('nope'),
    stream: 'x',
    fixture: video,
    anchorSeconds: NOW,
  });
  const a = await enc.postOnce(enc.header());
  expect(a.status).toBe(404);
  expect(a.headers['x-origin-error']).toBe('unknown-channel');
  const s = await httpGet(`${origin.serving.url}/live/nope.isml/state`);
  expect([s.status, s.headers['x-origin-error']]).toEqual([404, 'unknown-channel']);
});

test('a .isml and its archive are never served as files', async () => {
  for (const p of ['/live/smooth.isml', '/live/smooth.isml.archive/channel.json', '/live/smooth.isml/Streams(x)']) {
    const r = await httpGet(`${origin.serving.url}${p}`);
    expect([p, r.status]).toEqual([p, p.endsWith(')') ? 405 : 404]);
  }
});

test('Smooth ingest: one long POST with video and audio, tfxd times, the server manifest box, an empty mfra ends it', async () => {
  const enc = new TestEncoder({
    channelUrl: origin.channelUrl('smooth'),
    stream: 'ffmpeg',
    fixture: muxed,
    anchorSeconds: NOW,
    serverManifest: SMIL,
  });
  await enc.open();
  await enc.send(0, 4);
  const started = await eventually(
    () => origin.state('smooth'),
    (s) => s.state === 'started' && s.tracks.every((t) => t.fragments === 2),
  );
  expect(started).toMatchObject({ state: 'started', encoders: 1 });
  expect(started.tracks.map((t) => [t.track, t.trackName, t.systemBitrate, t.fragments])).toEqual([
    ['ffmpeg-1', 'video', 401000, 2],
    ['ffmpeg-2', 'audio', 64000, 2],
  ]);
  await enc.send(4, 8);
  const answer = await enc.close(true);
  expect(answer.status).toBe(200);
  const stopped = await eventually(
    () => origin.state('smooth'),
    (s) => s.state === 'stopped',
  );
  expect(stopped).toMatchObject({ state: 'stopped', encoders: 0 });
  expect(stopped.tracks.map((t) => [t.fragments, t.gaps, t.duplicatesDropped])).toEqual([
    [4, 0, 0],
    [4, 0, 0],
  ]);
  // The video track: 4 fragments of 2 s, contiguous from the anchor.
  const { json } = await origin.archive('smooth');
  const v = json.tracks.find((t) => t.track === 'ffmpeg-1')!;
  const anchor = BigInt(NOW) * 10_000_000n;
  const loop = muxed.tracks.get(1)!.loop; // 2 s + 2 s less one tick
  expect(v.ranges).toEqual([expect.objectContaining({ start: String(anchor), end: String(anchor + 2n * loop) })]);
  expect(stopped.tracks[0]!.lastTime).toBe(String(anchor + loop + 20_000_000n));
});

test('CMAF ingest: one long POST per track; the graceful end of every POST stops the channel', async () => {
  const v = new TestEncoder({
    channelUrl: origin.channelUrl('cmaf'),
    stream: 'video-400k.cmfv',
    fixture: video,
    anchorSeconds: NOW,
  });
  const a = new TestEncoder({
    channelUrl: origin.channelUrl('cmaf'),
    stream: 'audio-64k.cmfa',
    fixture: audio,
    anchorSeconds: NOW,
  });
  await Promise.all([v.open(), a.open()]);
  await Promise.all([v.send(0, 3), a.send(0, 3)]);
  expect((await v.close()).status).toBe(200);
  // One track has ended, the other is still pushing: started.
  expect(
    (
      await eventually(
        () => origin.state('cmaf'),
        (s) => s.encoders === 1,
      )
    ).state,
  ).toBe('started');
  await a.send(3, 5);
  expect((await a.close()).status).toBe(200);
  const s = await eventually(
    () => origin.state('cmaf'),
    (x) => x.state === 'stopped',
  );
  expect(s.tracks.map((t) => [t.track, t.systemBitrate, t.fragments])).toEqual([
    ['video-400k.cmfv-1', 400000, 3],
    ['audio-64k.cmfa-1', 64000, 5],
  ]);
});

test('CMAF ingest, one segment per request: the header once, then each segment; lmsg ends it', async () => {
  const enc = new TestEncoder({
    channelUrl: origin.channelUrl('segments'),
    stream: 'video.cmfv',
    fixture: video,
    anchorSeconds: NOW,
  });
  expect((await enc.postOnce(enc.header())).status).toBe(200);
  for (let g = 0; g < 3; g++) expect((await enc.postOnce(enc.fragment(g).bytes)).status).toBe(200);
  // Requests ending gracefully do not stop a channel fed one segment at a time.
  expect((await origin.state('segments')).state).toBe('started');
  const last = await enc.postOnce(Buffer.concat([stypLmsg(), enc.fragment(3).bytes]));
  expect(last.status).toBe(200);
  const s = await eventually(
    () => origin.state('segments'),
    (x) => x.state === 'stopped',
  );
  expect(s.tracks[0]).toMatchObject({ fragments: 4, gaps: 0 });
});

test('the ingest listener takes PUT as POST, and answers GET with 405', async () => {
  await createChannel(origin.root, 'put', []);
  const enc = new TestEncoder({
    channelUrl: origin.channelUrl('put'),
    stream: 'v',
    fixture: video,
    anchorSeconds: NOW,
    method: 'PUT',
  });
  await enc.open();
  await enc.send(0, 2);
  expect((await enc.close()).status).toBe(200);
  const r = await httpGet(`${origin.channelUrl('put')}/Streams(v)`);
  expect([r.status, r.headers.allow]).toEqual([405, 'POST, PUT']);
  // An unused box between fragments (free) is skipped.
  const again = await enc.postOnce(Buffer.concat([box('free', new Uint8Array(10))]));
  expect(again.status).toBe(403); // stopped, and no restart_on_encoder_reconnect
  expect(again.headers['x-origin-error']).toBe('channel-stopped');
});

test('archive_length purges old media a file at a time (files of archive_segment_length)', async () => {
  await createChannel(origin.root, 'short', ['--archiving', '--archive_length=4', '--archive_segment_length=2']);
  const enc = new TestEncoder({
    channelUrl: origin.channelUrl('short'),
    stream: 'v',
    fixture: video,
    anchorSeconds: NOW,
  });
  await enc.open();
  await enc.send(0, 10); // 20 s of 2 s fragments, one file each
  expect((await enc.close()).status).toBe(200);
  const { json } = await origin.archive('short');
  // The newest end is NOW + 20 s: files ending before NOW + 16 s are gone.
  expect(json.tracks[0]!.ranges).toEqual([
    expect.objectContaining({
      start: String(BigInt(NOW + 16) * 10_000_000n),
      end: String(BigInt(NOW + 20) * 10_000_000n),
    }),
  ]);
  expect((await origin.state('short')).tracks[0]!.fragments).toBe(2);
});
