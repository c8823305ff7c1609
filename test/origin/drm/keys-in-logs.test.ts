// Keys never reach a log: `origin serve` as its own process at --log-level trace (JSON and human
// logs, two workers), over presentations with every kind of key option (drm_a, PlayReady with an
// IV base, SAMPLE-AES and AES-128 HLS keys with IVs, a CPIX document with three keys) and one whose
// key options disagree (a 500 that is logged). Every kind of request is made, the refusals too;
// then the whole log and every response are searched for each key (the log for each IV too) in
// hex (both cases), Base64 and Base64url.

import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { media, ROOT, runOrigin, tempDir } from '../../helpers/fixtures';
import { Cli, startCli, stopCli } from '../server/cli-origin';
import { get } from '../server/server-helpers';
import { dashWritten, smoothWritten } from '../server/written-urls';

const KID = '00112233445566778899aabbccddeeff';
const KEY = '3a2a1b68dd2bd9b2eeb25e84c4776668';
const HLS_KID = '102030405060708090a0b0c0d0e0f000';
const HLS_KEY = '9f8e7d6c5b4a39281706f5e4d3c2b1a0';
const AES_KEY = 'c001d00dc001d00dc001d00dc001d00d';
const AES_IV = '5eed5eed5eed5eed5eed5eed5eed5eed';
const ISS_IV = '7a7b7c7d7e7f7071';
const OTHER = 'abad1deaabad1deaabad1deaabad1dea';
const CPIX = path.join(ROOT, 'fixtures', 'cpix', 'three-keys-2.3.xml');
const FILES = ['video_main_900k.ismv', 'video_high_1600k.ismv', 'audio_eng_64k.isma'].map(media);

/** The content keys of the CPIX fixture (pskc:PlainValue, Base64), as hex. */
const cpixKeys = (): string[] =>
  [...readFileSync(CPIX, 'utf8').matchAll(/<pskc:PlainValue>([^<]+)<\/pskc:PlainValue>/g)].map((m) =>
    Buffer.from(m[1]!.trim(), 'base64').toString('hex'),
  );

/** Every spelling of a secret a log line could carry. */
function spellings(hex: string): string[] {
  const b = Buffer.from(hex, 'hex');
  return [hex, hex.toUpperCase(), b.toString('base64'), b.toString('base64url')];
}

const root = tempDir('keys-in-logs-');
const clis: Cli[] = [];
const responses: string[] = [];

async function pack(name: string, options: string[]): Promise<void> {
  const r = await runOrigin(['package', '-q', '-o', path.join(root, `${name}.ism`), ...options, ...FILES]);
  expect([name, r.code, r.stderr]).toEqual([name, 0, '']);
}

beforeAll(async () => {
  expect(cpixKeys()).toHaveLength(3);
  await pack('dash', [`--drm_a.key=${KID}:${KEY}`, `--iss.key=${KID}:${KEY}`, `--iss.key_iv=${ISS_IV}`]);
  await pack('hls', [
    `--hls.key=${HLS_KID}:${HLS_KEY}`,
    '--hls.playout=sample_aes',
    '--hls.license_server_url=https://keys.example/k',
  ]);
  await pack('aes', [`--hls.key=:${AES_KEY}`, `--hls.key_iv=${AES_IV}`, '--hls.license_server_url=https://k.example/']);
  await pack('cpix', [`--cpix=${CPIX}`]);
  // Well-formed options that do not agree: the presentation fails to load, a 500 that is logged.
  await pack('bad', [`--drm_a.key=${KID}:${KEY}`, `--iss.key=${KID}:${OTHER}`]);
  for (const format of ['json', 'human'])
    clis.push(
      await startCli(['--root', root, '--port', '0', '--workers', '2', '--log-level', 'trace', '--log-format', format]),
    );
}, 120_000);

afterAll(async () => {
  for (const cli of clis) await stopCli(cli);
});

async function fetchText(cli: Cli, url: string): Promise<{ status: number; text: string; body: Buffer }> {
  const r = await get(cli.url, url.replace(cli.url, ''));
  responses.push(`${url} ${r.status} ${JSON.stringify(r.headers)}`);
  return r;
}

/** A manifest, then its first init and media segments (and HEAD of one), each through `cli`. */
async function walk(cli: Cli, manifest: string): Promise<void> {
  const m = await fetchText(cli, manifest);
  expect([manifest, m.status]).toEqual([manifest, 200]);
  responses.push(m.text);
  const url = cli.url + manifest;
  let segments: string[];
  if (manifest.endsWith('.mpd')) segments = dashWritten(m.text, url).map((w) => w.url);
  else if (manifest.endsWith('Manifest')) segments = smoothWritten(m.text, url).map((w) => w.url);
  else {
    const list = m.text.split('\n').find((l) => l !== '' && !l.startsWith('#'))!;
    const listUrl = new URL(list, url);
    const playlist = await fetchText(cli, listUrl.pathname + listUrl.search);
    responses.push(playlist.text);
    const map = /#EXT-X-MAP:URI="([^"]+)"/.exec(playlist.text)?.[1];
    const uris = playlist.text.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
    segments = [...(map === undefined ? [] : [map]), ...uris].map((u) => new URL(u, listUrl).href);
  }
  for (const s of segments.slice(0, 4)) {
    const r = await fetchText(cli, new URL(s).pathname + new URL(s).search);
    expect([s, r.status]).toEqual([s, 200]);
  }
  await get(cli.url, new URL(segments[1]!).pathname, {}, 'HEAD');
}

test('every kind of request at trace level: no key in the log or a response, no IV in the log', async () => {
  for (const cli of clis) {
    for (const manifest of [
      '/dash.ism/.mpd',
      '/dash.ism/Manifest',
      '/hls.ism/.m3u8',
      '/hls.ism/.m3u8?hls_fmp4=true',
      '/aes.ism/.m3u8',
      '/aes.ism/.m3u8?hls_fmp4=true',
      '/cpix.ism/.mpd',
    ])
      await walk(cli, manifest);
    // Refusals: another format, HDS, a DRM option in the query, a broken presentation, the sources.
    for (const [url, status] of [
      ['/dash.ism/.m3u8', 403],
      ['/dash.ism/.f4m', 403],
      ['/cpix.ism/Manifest', 403],
      [`/dash.ism/.mpd?iss_key=${KID}:${'0'.repeat(32)}`, 400],
      ['/bad.ism/.mpd', 500],
      ['/dash.ism', 404],
      ['/video_main_900k.ismv', 404],
    ] as Array<[string, number]>) {
      const r = await fetchText(cli, url);
      expect([url, r.status]).toEqual([url, status]);
      responses.push(r.text);
    }
  }
  // Give the workers' last lines time to reach the primary's stderr.
  await new Promise((r) => setTimeout(r, 300));
  const [json, human] = clis.map((c) => c.stderr());
  // The log is at trace level and holds the requests and the failure.
  expect(json).toContain('"level":"debug"');
  expect(json).toContain('/dash.ism/.mpd');
  expect(human).toContain('/cpix.ism/.mpd');
  expect(json).toContain('must be the same key pair');
  const logs = [json, human].join('\n');
  const everything = [logs, ...responses].join('\n');
  for (const key of [KEY, HLS_KEY, AES_KEY, OTHER, ...cpixKeys()])
    for (const s of spellings(key)) expect([key, s, everything.includes(s)]).toEqual([key, s, false]);
  // The IV options are masked like keys in a dry run, but an IV is public where it is used (the
  // AES-128 key line's IV=, RFC 8216 §4.3.2.4; the senc): kept out of the log only.
  for (const iv of [AES_IV, ISS_IV])
    for (const s of spellings(iv)) expect([iv, s, logs.includes(s)]).toEqual([iv, s, false]);
}, 120_000);

test('the search finds a key where there is one (the .ism on disk)', () => {
  const ism = readFileSync(path.join(root, 'dash.ism'), 'utf8');
  expect(spellings(KEY).some((s) => ism.includes(s))).toBe(true);
});
