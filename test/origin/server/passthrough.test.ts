// Legacy Smooth passthrough (`iss_pass_through`, `prefer_static`; origin/server/passthrough.ts)
// with a deliberately mis-encoded fixture made here from the sample media: the sources' `stsd`
// (the sample descriptions in moov) renamed so that the normal path cannot read them, the client
// manifest (`.ismc`) the one a local origin wrote for the sound files. The passthrough must serve
// that .ismc as it is and every fragment as the exact moof+mdat bytes of the file, which the test
// finds with a box walk of its own.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { FileSource } from '../../../origin/io/source';
import { chunkTimes } from '../../../origin/server/passthrough';
import { boxScans, MAX_BOXES, moofTimes, scanFragments } from '../../../origin/server/passthrough-scan';
import { RunningServer, startServer } from '../../../origin/server/server';
import { boxes } from '../../helpers/box-walk';
import { tempDir } from '../../helpers/fixtures';
import { haveNginx, Nginx, startNginx } from '../../helpers/nginx';
import { location, storagePresentation } from '../remote/remote-setup';
import { get, testServerOptions } from './server-helpers';
import { smoothWritten } from './written-urls';

const FILES = ['video_baseline_400k.ismv', 'audio_eng_64k.isma'];
let root: string;
let server: RunningServer;
let ismc: string;
let nginx: Nginx | undefined;

/** The file with every `stsd` type inside its moov renamed: no sample description to read. */
function breakSampleDescriptions(bytes: Buffer): Buffer {
  const out = Buffer.from(bytes);
  const moov = boxes(out).findIndex((b) => b.type === 'moov');
  let at = boxes(out)
    .slice(0, moov)
    .reduce((n, b) => n + b.size, 0);
  const end = at + boxes(out)[moov]!.size;
  let renamed = 0;
  for (; at < end - 4; at++)
    if (out.toString('latin1', at, at + 4) === 'stsd') {
      out.write('stsX', at, 'latin1');
      renamed++;
    }
  if (renamed === 0) throw new Error('no stsd');
  return out;
}

beforeAll(async () => {
  root = tempDir('origin-legacy-');
  const good = path.join(root, 'good');
  await storagePresentation(good, 'q', FILES);
  const reference = await startServer(testServerOptions(root, []));
  try {
    ismc = (await get(reference.url, '/good/q.ism/Manifest')).text;
  } finally {
    await reference.close();
  }
  for (const dir of ['legacy', 'plain']) {
    const d = path.join(root, dir);
    await fs.mkdir(d);
    await fs.copyFile(path.join(good, 'q.ism'), path.join(d, 'q.ism'));
    await fs.writeFile(path.join(d, 'q.ismc'), ismc);
    for (const f of FILES)
      await fs.writeFile(path.join(d, f), breakSampleDescriptions(await fs.readFile(path.join(good, f))));
  }
  // A source without its mfra (the random-access index at the end).
  const legacy = path.join(root, 'legacy');
  const video = await fs.readFile(path.join(legacy, FILES[0]!));
  const mfra = boxes(video).at(-1)!;
  expect(mfra.type).toBe('mfra');
  const noIndex = video.subarray(0, video.length - mfra.size);
  const top = boxes(noIndex);
  const offsetOf = (i: number): number => top.slice(0, i).reduce((n, b) => n + b.size, 0);
  const secondMdat = top.map((b, i) => [b.type, i] as const).filter(([t]) => t === 'mdat')[1]![1];
  const runsPast = Buffer.from(noIndex);
  runsPast.writeUInt32BE(noIndex.length, offsetOf(secondMdat)); // past the end by its offset
  const belowHeader = Buffer.from(noIndex);
  belowHeader.writeUInt32BE(4, offsetOf(secondMdat)); // a size smaller than the 8-byte header
  const largeZero = Buffer.from(noIndex);
  largeZero.writeUInt32BE(1, offsetOf(secondMdat)); // a 64-bit size of 0
  largeZero.writeUInt32BE(0, offsetOf(secondMdat) + 8);
  largeZero.writeUInt32BE(0, offsetOf(secondMdat) + 12);
  const sources: [string, Uint8Array][] = [
    ['n', noIndex],
    ['c1', runsPast],
    ['c2', belowHeader],
    ['c3', largeZero],
    ['m', Buffer.alloc(8 * (MAX_BOXES + 1), Buffer.from([0, 0, 0, 8, 0x66, 0x72, 0x65, 0x65]))], // free boxes
    ['e', noIndex.subarray(0, offsetOf(top.findIndex((b) => b.type === 'moof')))], // no fragment at all
  ];
  for (const [name, bytes] of sources) {
    await fs.writeFile(path.join(legacy, `${name}.ismv`), bytes);
    await fs.writeFile(
      path.join(legacy, `${name}.ism`),
      (await fs.readFile(path.join(legacy, 'q.ism'), 'utf8')).replaceAll(`src="${FILES[0]}"`, `src="${name}.ismv"`),
    );
    await fs.writeFile(path.join(legacy, `${name}.ismc`), ismc);
  }
  // prefer_static: a pre-made answer where a generated one would be.
  await fs.mkdir(path.join(legacy, 's.ism'));
  await fs.writeFile(path.join(legacy, 's.ism', 'Manifest'), '<SmoothStreamingMedia made="by hand"/>');
  // The same directory as remote storage (proxy_pass to Debian's nginx), where nginx is installed.
  nginx = haveNginx ? await startNginx(root) : undefined;
  server = await startServer({
    ...testServerOptions(root, []),
    locations: [
      { ...location('/legacy/', 'unused'), proxyPass: undefined, issPassThrough: true, preferStatic: true },
      ...(nginx === undefined ? [] : [location('/remote/', `${nginx.url}legacy/`, { issPassThrough: true })]),
    ],
  });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await nginx?.stop();
});

test('the normal path refuses the mis-encoded presentation', async () => {
  for (const tail of ['Manifest', '.mpd']) {
    const r = await get(server.url, `/plain/q.ism/${tail}`);
    expect([tail, r.status >= 400]).toEqual([tail, true]);
  }
});

test('Manifest is the .ismc as stored', async () => {
  const r = await get(server.url, '/legacy/q.ism/Manifest');
  expect(r.status).toBe(200);
  expect(r.headers['content-type']).toBe('text/xml; charset=utf-8');
  expect(r.text).toBe(ismc);
  expect(r.headers.etag).toMatch(/^"p/);
  expect(r.headers['cache-control']).toBe('public, max-age=60');
});

/** Every moof+mdat of a stored file, in file order, found with the test's own box walk. */
async function storedFragments(file: string): Promise<Buffer[]> {
  const whole = await fs.readFile(path.join(root, 'legacy', file));
  const stored = boxes(whole);
  const expected: Buffer[] = [];
  let at = 0;
  for (const [i, b] of stored.entries()) {
    if (b.type === 'moof' && stored[i + 1]?.type === 'mdat')
      expected.push(whole.subarray(at, at + b.size + stored[i + 1]!.size));
    at += b.size;
  }
  return expected;
}

/** Asks for every fragment of `kind` the .ismc lists under `ism` (the first `upTo`) and compares it with `expected`. */
async function servesStored(
  ism: string,
  kind: string,
  expected: Buffer[],
  { upTo = Infinity, under = 'legacy' } = {},
): Promise<void> {
  const urls = smoothWritten(ismc, `http://x/${under}/${ism}/Manifest`).filter((w) => w.key.startsWith(kind));
  expect(urls.length).toBe(expected.length);
  for (const [n, w] of urls.slice(0, upTo).entries()) {
    const r = await get(server.url, new URL(w.url).pathname);
    expect([w.url, r.status, r.headers['content-type']]).toEqual([w.url, 200, 'video/mp4']);
    if (!r.body.equals(expected[n]!)) throw new Error(`${w.url}: not the stored fragment ${n}`);
  }
}

test("every fragment is the file's moof+mdat, byte for byte, in order", async () => {
  for (const [file, kind] of [
    [FILES[0]!, 'video'],
    [FILES[1]!, 'audio'],
  ] as const)
    await servesStored('q.ism', kind, await storedFragments(file));
});

test('a source without mfra: one scan of its top-level boxes finds every fragment, byte for byte', async () => {
  const expected = await storedFragments('n.ismv');
  expect(expected.length).toBeGreaterThan(2);
  const before = boxScans();
  await servesStored('n.ism', 'video', expected);
  // The audio file keeps its mfra: only the video file is scanned, and only once for all fragments.
  expect(boxScans() - before).toBe(1);
  await servesStored('n.ism', 'video', expected, { upTo: 2 });
  expect(boxScans() - before).toBe(1);
  // A new version of the file (another mtime) is scanned again.
  const later = new Date(Date.now() + 5000);
  await fs.utimes(path.join(root, 'legacy', 'n.ismv'), later, later);
  await servesStored('n.ism', 'video', expected);
  expect(boxScans() - before).toBe(2);
});

(haveNginx ? test : test.skip)(
  'the same scan on remote storage (proxy_pass): every fragment byte for byte',
  async () => {
    const before = boxScans();
    await servesStored('n.ism', 'video', await storedFragments('n.ismv'), { under: 'remote' });
    expect(boxScans() - before).toBe(1);
    const c1 = smoothWritten(ismc, 'http://x/remote/c1.ism/Manifest')[0]!;
    const r = await get(server.url, new URL(c1.url).pathname);
    expect([r.status, r.headers['x-origin-error']]).toEqual([500, 'passthrough-bad-layout']);
  },
);

test.each([
  ['c1', 'a box size running past the end of the file', /runs past the end of the file/],
  ['c2', 'a box size below its header', /declares 4 bytes, less than its header/],
  ['c3', 'a 64-bit box size of 0', /declares 0 bytes, less than its header/],
  ['m', 'more top-level boxes than the scan reads', /more than 1048576 top-level boxes/],
])('a source without mfra with %s (%s): 500 passthrough-bad-layout', async (name, _, why) => {
  const first = smoothWritten(ismc, `http://x/legacy/${name}.ism/Manifest`).find((w) => w.key.startsWith('video'))!;
  const r = await get(server.url, new URL(first.url).pathname);
  expect([r.status, r.headers['x-origin-error']]).toEqual([500, 'passthrough-bad-layout']);
  // The answer says only the code; the reason is in the error the scan throws (the log's).
  const file = path.join(root, 'legacy', `${name}.ismv`);
  const source = await FileSource.open(file);
  try {
    await expect(scanFragments(source, (await fs.stat(file)).size, file)).rejects.toThrow(why);
  } finally {
    await source.close();
  }
});

test.each(['.mpd', '.m3u8', '.f4m', 'video.m3u8'])(
  '%s of a passthrough presentation: 415 passthrough-smooth-only',
  async (tail) => {
    const r = await get(server.url, `/legacy/q.ism/${tail}`);
    expect([r.status, r.headers['x-origin-error']]).toEqual([415, 'passthrough-smooth-only']);
  },
);

test('chunkTimes: t, d and r of each StreamIndex', () => {
  const text =
    '<SmoothStreamingMedia><StreamIndex Type="video" Name="v"><c t="5" d="10"/><c d="10" r="2"/><c t="100" d="1"/>' +
    '</StreamIndex><StreamIndex Type="audio"><c d="7"/><c d="7"></c></StreamIndex></SmoothStreamingMedia>';
  expect(chunkTimes(text)).toEqual(
    new Map([
      ['v', [5n, 15n, 25n, 100n]],
      ['audio', [0n, 7n]],
    ]),
  );
});

test('an unknown bitrate, track name or time: 404; a source without mfra or fragments: 415', async () => {
  const first = smoothWritten(ismc, 'http://x/q.ism/Manifest').find((w) => w.key.startsWith('video'))!;
  const tail = first.url.slice('http://x/q.ism/'.length);
  const [, bitrate, name, time] = /^QualityLevels\((\d+)\)\/Fragments\((\w+)=(\d+)\)$/.exec(tail)!;
  for (const [url, code] of [
    [`QualityLevels(1${bitrate})/Fragments(${name}=${time})`, 'unknown-track'],
    [`QualityLevels(${bitrate})/Fragments(nope=${time})`, 'unknown-track'],
    [`QualityLevels(${bitrate})/Fragments(${name}=${time}1)`, 'unknown-time'],
  ]) {
    const r = await get(server.url, `/legacy/q.ism/${url}`);
    expect([url, r.status, r.headers['x-origin-error']]).toEqual([url, 404, code]);
  }
  const r = await get(server.url, `/legacy/e.ism/${tail}`);
  expect([r.status, r.headers['x-origin-error']]).toEqual([415, 'passthrough-no-index']);
});

test("moofTimes: each traf's track and its tfxd time, else its tfdt time", () => {
  const box = (type: string, ...parts: Buffer[]): Buffer => {
    const body = Buffer.concat(parts);
    const head = Buffer.alloc(8);
    head.writeUInt32BE(8 + body.length);
    head.write(type, 4, 'latin1');
    return Buffer.concat([head, body]);
  };
  const u32 = (n: number): Buffer => Buffer.from([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]);
  const u64 = (n: bigint): Buffer => {
    const b = Buffer.alloc(8);
    b.writeBigUInt64BE(n);
    return b;
  };
  const tfhd = (track: number): Buffer => box('tfhd', u32(0x20000), u32(track));
  const tfdt = box('tfdt', u32(0x1000000), u64(100n));
  const tfxd = box(
    'uuid',
    Buffer.from('6d1d9b0542d544e680e2141daff757b2', 'hex'),
    u32(0x1000000),
    u64(2n ** 40n),
    u64(20n),
  );
  const moof = box(
    'moof',
    box('mfhd', u32(0), u32(1)),
    box('traf', tfhd(2), tfdt, tfxd),
    box('traf', tfhd(3), tfdt),
    box('traf', tfhd(4)), // no time: left out
  );
  expect(moofTimes(moof)).toEqual([
    [2, 2n ** 40n],
    [3, 100n],
  ]);
});

test('prefer_static: a file where a generated answer would be is served as it is', async () => {
  const r = await get(server.url, '/legacy/s.ism/Manifest');
  expect([r.status, r.text]).toEqual([200, '<SmoothStreamingMedia made="by hand"/>']);
  const c = await get(server.url, '/legacy/q.ismc');
  expect([c.status, c.text]).toEqual([200, ismc]);
  // Sources stay unserved as files (serve_sources is off).
  expect((await get(server.url, `/legacy/${FILES[0]}`)).status).toBe(404);
});
