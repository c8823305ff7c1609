// HLS AES-128 (RFC 8216 §4.3.2.4, the default of --hls.key): every MPEG-TS, packed-audio and fMP4
// segment (and fMP4 init section) decrypts, with the IV its key line gives, to exactly the bytes
// the clear presentation serves at the same URL; WebVTT stays clear; the playlists carry a key
// line per segment (IV = media sequence number) or one with --hls.key_iv, at version 2 or more;
// and ffmpeg's HLS demuxer, fetching the key from its URI, decodes what the clear playlist decodes.

import { createDecipheriv } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { run } from '../../helpers/process';
import { get, startTestOrigin, TestOrigin } from '../server/server-helpers';

const KEY = '3a2a1b68dd2bd9b2eeb25e84c4776668';
const FIXED_IV = '000102030405060708090a0b0c0d0e0f';
const FILES = ['video_main_900k.ismv', 'audio_eng_64k.isma', 'audio_nld_128k.isma', 'text_eng.ismt'];

let origin: TestOrigin;
let keyServer: http.Server;
let keyUrl = '';
let keyRequests = 0;

beforeAll(async () => {
  // The key file (identity key format): 16 raw bytes at the key URI.
  keyServer = http.createServer((_, res) => {
    keyRequests++;
    res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Access-Control-Allow-Origin': '*' });
    res.end(Buffer.from(KEY, 'hex'));
  });
  await new Promise<void>((resolve) => keyServer.listen(0, '127.0.0.1', resolve));
  keyUrl = `http://127.0.0.1:${(keyServer.address() as AddressInfo).port}/key`;
  origin = await startTestOrigin(
    { clear: FILES, aes: FILES, fixed: FILES },
    {
      aes: [`--hls.key=:${KEY}`, `--hls.license_server_url=${keyUrl}`],
      fixed: [`--hls.key=:${KEY}`, `--hls.license_server_url=${keyUrl}`, `--hls.key_iv=0x${FIXED_IV}`],
    },
  );
}, 60_000);

afterAll(async () => {
  await origin?.server.close();
  await new Promise((resolve) => keyServer.close(resolve));
});

async function body(path: string): Promise<Buffer> {
  const r = await get(origin.url, path);
  expect([path, r.status]).toEqual([path, 200]);
  return r.body;
}

const decrypt = (bytes: Buffer, iv: string): Buffer => {
  const d = createDecipheriv('aes-128-cbc', Buffer.from(KEY, 'hex'), Buffer.from(iv, 'hex'));
  return Buffer.concat([d.update(bytes), d.final()]);
};

/** Each playlist line with the IV of the key line in force (undefined: none). */
function withKeys(playlist: string): Array<{ line: string; iv: string | undefined }> {
  let iv: string | undefined;
  const out: Array<{ line: string; iv: string | undefined }> = [];
  for (const line of playlist.split('\n')) {
    const m = /^#EXT-X-KEY:METHOD=AES-128,URI="([^"]+)",IV=0x([0-9A-F]{32})$/.exec(line);
    if (m !== null) {
      expect(m[1]).toBe(keyUrl);
      iv = m[2]!.toLowerCase();
    }
    const map = /^#EXT-X-MAP:URI="([^"]+)"/.exec(line);
    if (map !== null) out.push({ line: map[1]!, iv });
    if (line !== '' && !line.startsWith('#')) out.push({ line, iv });
  }
  return out;
}

/** The media playlists of a master (variant lines and EXT-X-MEDIA URIs). */
function playlistsOf(master: string): string[] {
  const out = new Set<string>();
  for (const line of master.split('\n')) {
    if (line !== '' && !line.startsWith('#')) out.add(line);
    const m = /^#EXT-X-MEDIA:.*URI="([^"]+)"/.exec(line);
    if (m !== null) out.add(m[1]!);
  }
  return [...out];
}

describe.each([
  ['MPEG-TS multiplexed', ''],
  ['MPEG-TS + packed audio', '?hls_no_multiplex=true'],
  ['fMP4', '?hls_fmp4=true'],
])('%s', (_, query) => {
  test('every segment decrypts to the clear bytes of the same URL; WebVTT stays clear', async () => {
    const master = (await body(`/aes.ism/.m3u8${query}`)).toString('utf8');
    expect(master).toContain(`#EXT-X-SESSION-KEY:METHOD=AES-128,URI="${keyUrl}"\n`);
    // I-frame playlists from version 4 (fMP4's 6 here; hls-iframes.test.ts decrypts them).
    if (query.includes('fmp4')) expect(master).toContain('#EXT-X-I-FRAME-STREAM-INF:');
    else expect(master).not.toContain('EXT-X-I-FRAME-STREAM-INF');
    let encrypted = 0;
    let clearText = 0;
    for (const uri of playlistsOf(master)) {
      const list = (await body(`/aes.ism/${uri}`)).toString('utf8');
      expect(Number(/#EXT-X-VERSION:(\d+)/.exec(list)![1])).toBeGreaterThanOrEqual(2);
      for (const { line, iv } of withKeys(list)) {
        const mine = await body(`/aes.ism/${line.replace(/^\.\.\//, '')}`.replace('/aes.ism/hls/../', '/aes.ism/'));
        const clearPath = `/clear.ism/${line.split('aes-').join('clear-')}`;
        const clear = await body(clearPath.replace('/clear.ism/hls/../', '/clear.ism/'));
        if (line.includes('.webvtt')) {
          expect([line, iv, mine.equals(clear)]).toEqual([line, undefined, true]);
          clearText++;
          continue;
        }
        expect([line, iv === undefined]).toEqual([line, false]);
        expect(mine.length).toBe(16 * (Math.floor(clear.length / 16) + 1)); // PKCS#7
        expect(decrypt(mine, iv!).equals(clear)).toBe(true);
        encrypted++;
      }
    }
    expect(encrypted).toBeGreaterThanOrEqual(6);
    if (!query.includes('fmp4')) expect(clearText).toBeGreaterThan(0);
  });
});

/** The first variant of a master with video in it. */
async function videoVariant(name: string, query = ''): Promise<string> {
  const master = (await body(`/${name}.ism/.m3u8${query}`)).toString('utf8');
  return playlistsOf(master).find((u) => u.includes('video'))!;
}

test('per-segment IVs are the media sequence numbers; the init section has IV 0', async () => {
  const list = (await body(`/aes.ism/${await videoVariant('aes')}`)).toString('utf8');
  const ivs = withKeys(list).map((x) => x.iv);
  expect(ivs).toEqual(ivs.map((_, i) => (i + 1).toString(16).padStart(32, '0')));
  const fmp4 = (await body(`/aes.ism/${await videoVariant('aes', '?hls_fmp4=true')}`)).toString('utf8');
  expect(withKeys(fmp4)[0]!.iv).toBe('0'.repeat(32));
});

test('--hls.key_iv: one key line, that IV for every segment', async () => {
  const list = (await body(`/fixed.ism/${await videoVariant('fixed')}`)).toString('utf8');
  expect(list.match(/#EXT-X-KEY/g)).toHaveLength(1);
  const first = withKeys(list)[0]!;
  expect(first.iv).toBe(FIXED_IV);
  const clear = await body(`/clear.ism/${first.line.split('fixed-').join('clear-')}`);
  expect(decrypt(await body(`/fixed.ism/${first.line}`), FIXED_IV).equals(clear)).toBe(true);
});

test("ffmpeg's HLS demuxer, with the key from the key URI, decodes what the clear playlist decodes", async () => {
  // Asynchronous: ffmpeg fetches from the origin running in this process.
  const frames = async (url: string): Promise<string[]> => {
    const r = await run('ffmpeg', ['-v', 'error', '-i', url, '-map', '0:v', '-f', 'framemd5', '-']);
    expect(r.stderr).toBe('');
    return r.stdout.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
  };
  const before = keyRequests;
  const variant = await videoVariant('aes');
  const mine = await frames(`${origin.url}/aes.ism/${variant}`);
  expect(keyRequests).toBeGreaterThan(before);
  expect(mine.length).toBeGreaterThan(100);
  expect(mine).toEqual(await frames(`${origin.url}/clear.ism/${variant.split('aes-').join('clear-')}`));
}, 60_000);
