// Bad ingest: each gets a clear status and code, and the channel takes good media afterwards as
// if nothing happened. Also: credentials, the idle and headers timeouts, a huge box refused from its
// header (memory per request stays bounded by the box bound).

import * as net from 'node:net';
import { media } from '../../helpers/fixtures';
import { createChannel, LiveOrigin, startLiveOrigin } from '../../helpers/live';
import { box, Push, TestEncoder } from '../../helpers/test-encoder';
import { loadFixture } from '../../helpers/test-encoder';
import { startIngestServer } from '../../../origin/server/ingest-server';

const NOW = Math.floor(Date.now() / 1000);
const video = loadFixture(media('video_baseline_400k.ismv'));
const other = loadFixture(media('video_main_900k.ismv'));

let origin: LiveOrigin;
beforeAll(async () => {
  origin = await startLiveOrigin({ idleTimeoutMs: 400, headersTimeoutMs: 400, maxBoxBytes: 1 << 20 });
  await createChannel(origin.root, 'bad', ['--archiving', '--restart_on_encoder_reconnect']);
});
afterAll(() => origin.close());

const encoder = (stream: string, anchorSeconds = NOW, fixture = video): TestEncoder =>
  new TestEncoder({ channelUrl: origin.channelUrl('bad'), stream, fixture, anchorSeconds });

/** After a bad request: a good push of two more fragments to the same track is archived. */
async function stillTakesMedia(enc: TestEncoder, from: number, expected: number): Promise<void> {
  await enc.open();
  await enc.send(from, from + 2);
  expect((await enc.close()).status).toBe(200);
  const s = await origin.state('bad');
  const t = s.tracks.find((x) => x.track === `${(enc as unknown as { o: { stream: string } }).o.stream}-1`)!;
  if (t?.fragments !== expected) console.log(JSON.stringify(s, null, 1));
  expect(t.fragments).toBe(expected);
}

test('a truncated box: 400 ingest-bad-box; what came before it is kept', async () => {
  const enc = encoder('trunc');
  const push = await enc.open();
  await enc.send(0, 2);
  await push.write(enc.fragment(2).bytes.subarray(0, 5000));
  const a = await push.end();
  expect([a.status, a.headers['x-origin-error']]).toEqual([400, 'ingest-bad-box']);
  expect(a.body).toMatch(/ends inside a box: 'mdat'/);
  await stillTakesMedia(enc, 2, 4);
});

test('a moof not followed by its mdat: 400 ingest-bad-box', async () => {
  const enc = encoder('nomdat');
  const push = await enc.open();
  const f = enc.fragment(0).bytes;
  const moofSize = new DataView(f.buffer).getUint32(0);
  await push.write(f.subarray(0, moofSize));
  await push.write(box('free'));
  const a = await push.end();
  expect([a.status, a.headers['x-origin-error']]).toEqual([400, 'ingest-bad-box']);
  await stillTakesMedia(enc, 0, 2);
});

test('media before its header: 412 ingest-no-header', async () => {
  const enc = encoder('noinit');
  const a = await enc.postOnce(enc.fragment(0).bytes);
  expect([a.status, a.headers['x-origin-error']]).toEqual([412, 'ingest-no-header']);
  await stillTakesMedia(enc, 0, 2);
});

test('a Content-Type that is not MP4: 415 ingest-media-type, before any byte is read', async () => {
  const p = new Push(`${origin.channelUrl('bad')}/Streams(typed)`, { method: 'POST', contentType: 'text/plain' });
  await p.write(video.ftyp);
  const a = await p.end();
  expect([a.status, a.headers['x-origin-error']]).toEqual([415, 'ingest-media-type']);
  // video/mp4 and none at all are fine.
  const ok = new TestEncoder({
    channelUrl: origin.channelUrl('bad'),
    stream: 'typed',
    fixture: video,
    anchorSeconds: NOW,
    contentType: 'video/mp4',
  });
  await ok.open();
  await ok.send(0, 1);
  expect((await ok.close()).status).toBe(200);
});

test('a box declaring more than the bound: 400 ingest-box-too-large, answered from its header alone', async () => {
  const enc = encoder('huge');
  const push = await enc.open();
  // An mdat header declaring 3 GiB, and not one byte of it.
  const header = new Uint8Array(16);
  const v = new DataView(header.buffer);
  v.setUint32(0, 1);
  header.set(Buffer.from('mdat'), 4);
  v.setBigUint64(8, 3n << 30n);
  await push.write(header);
  const a = await push.answer; // answered while the body is still open
  expect([a.status, a.headers['x-origin-error']]).toEqual([400, 'ingest-box-too-large']);
  // A real 2 MiB box against the 1 MiB bound: refused too.
  const push2 = await enc.open();
  await push2.write(box('free', new Uint8Array(2 << 20)));
  const b = await push2.end();
  expect([b.status, b.headers['x-origin-error']]).toEqual([400, 'ingest-box-too-large']);
  await stillTakesMedia(enc, 0, 2);
});

test('times that are not UTC (a timeline from 0): 400 ingest-not-utc', async () => {
  const enc = encoder('zero', 0);
  await enc.open();
  await enc.send(0, 1);
  const a = await enc.close();
  expect([a.status, a.headers['x-origin-error']]).toEqual([400, 'ingest-not-utc']);
  await stillTakesMedia(encoder('zero'), 0, 2);
});

test("a header that differs from the channel's for a known track: 412 ingest-header-mismatch", async () => {
  const first = encoder('same');
  await first.open();
  await first.send(0, 1);
  expect((await first.close()).status).toBe(200);
  const second = encoder('same', NOW, other);
  await second.open();
  const a = await second.close();
  expect([a.status, a.headers['x-origin-error']]).toEqual([412, 'ingest-header-mismatch']);
  // The same header again (a reconnect) is fine.
  await stillTakesMedia(first, 1, 3);
});

test('a body idle past the ingest idle timeout: 408 ingest-idle, and the connection is closed', async () => {
  const enc = encoder('idle');
  await enc.open();
  await enc.send(0, 1);
  const a = await enc.push!.answer;
  expect([a.status, a.headers['x-origin-error']]).toEqual([408, 'ingest-idle']);
  expect((await origin.state('bad')).encoders).toBe(0);
  await stillTakesMedia(enc, 1, 3);
});

test('headers sent slowly: the headers timeout closes the connection (408)', async () => {
  const url = new URL(origin.ingest.url);
  const answer = await new Promise<string>((resolve) => {
    const s = net.connect(Number(url.port), url.hostname, () => {
      s.write('POST /live/bad.isml/Streams(slow) HTTP/1.1\r\nHost: x\r\n');
    });
    let got = '';
    s.on('data', (d) => (got += d.toString()));
    s.on('close', () => resolve(got));
  });
  expect(answer).toMatch(/^HTTP\/1\.1 408/);
});

describe('credentials', () => {
  let secured: Awaited<ReturnType<typeof startIngestServer>>;
  beforeAll(async () => {
    secured = await startIngestServer({
      root: origin.root,
      host: '127.0.0.1',
      port: 0,
      credentials: ['enc:s3cret'],
      sync: false,
    });
  });
  afterAll(() => secured.close());

  const push = async (
    credentials?: string,
  ): Promise<{ status: number; code: unknown; challenge: unknown; body: string }> => {
    const enc = new TestEncoder({
      channelUrl: `${secured.url}/live/bad.isml`,
      stream: 'auth',
      fixture: video,
      anchorSeconds: NOW,
      credentials,
    });
    await enc.open();
    await enc.send(0, 1);
    const a = await enc.close();
    return {
      status: a.status,
      code: a.headers['x-origin-error'],
      challenge: a.headers['www-authenticate'],
      body: a.body,
    };
  };

  test('none: 401 with a Basic challenge; wrong: 403; right: 200', async () => {
    expect(await push()).toMatchObject({
      status: 401,
      code: 'ingest-unauthorized',
      challenge: expect.stringMatching(/^Basic /),
    });
    const wrong = await push('enc:nope');
    expect(wrong).toMatchObject({ status: 403, code: 'ingest-forbidden' });
    expect(wrong.body).not.toContain('nope');
    expect(await push('enc:s3cret')).toMatchObject({ status: 200 });
  });

  test('an open listener is refused on a non-loopback address', async () => {
    await expect(startIngestServer({ root: origin.root, host: '0.0.0.0', port: 0 })).rejects.toThrow(
      /without authentication/,
    );
  });
});
