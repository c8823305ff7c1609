// I-frame playlists of protected HLS (RFC 8216 §4.3.3.6, §4.3.4.3). SAMPLE-AES with fMP4 (cbcs and
// cenc): the master lists them, each carries the media playlists' key lines before its EXT-X-MAP
// (the track's encrypted init segment), and every I-frame segment, with that init segment,
// decrypts with ffmpeg and with shaka-packager to the packets of the clear presentation's
// I-frame segment; its sample and its `senc` entry are those of the same fragment's first sample
// in the media segments (the same IV, subsamples and bytes). AES-128: the I-frame segments (TS
// and fMP4) and the fMP4 init section decrypt, with the IV of the key line in force, to the clear
// bytes of the same URL. SAMPLE-AES with MPEG-TS has none: every I-frame request is 403.

import { createDecipheriv } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { boxes, Box } from '../../helpers/box-walk';
import { ROOT, tempDir } from '../../helpers/fixtures';
import { runSync } from '../../helpers/process';
import { get, startTestOrigin, TestOrigin } from '../server/server-helpers';
import { fragments, packets } from './ffmpeg-decrypt';

const KID = '00112233445566778899aabbccddeeff';
const KEY = '3a2a1b68dd2bd9b2eeb25e84c4776668';
const FIXED_IV = '000102030405060708090a0b0c0d0e0f';
const KEYS = 'https://keys.example/k1';
const FILES = ['video_high_1600k.ismv', 'video_baseline_400k.ismv', 'audio_eng_64k.isma'];
const PACKAGER = path.join(ROOT, 'node_modules', 'shaka-packager', 'bin', 'packager-linux-x64');
const FMP4 = 'hls_fmp4=true';
const TS4 = 'hls_client_manifest_version=4';

let origin: TestOrigin;
const dir = tempDir('hls-iframes-');

beforeAll(async () => {
  const aes = [`--hls.key=:${KEY}`, `--hls.license_server_url=${KEYS}`];
  origin = await startTestOrigin(
    { clear: FILES, cbcs: FILES, cenc: FILES, aes: FILES, fixed: FILES },
    {
      cbcs: [`--hls.key=${KID}:${KEY}`, '--hls.playout=sample_aes', `--hls.license_server_url=${KEYS}`],
      cenc: [`--hls.key=${KID}:${KEY}`, '--hls.protection_scheme=cenc', `--hls.license_server_url=${KEYS}`],
      aes,
      fixed: [...aes, `--hls.key_iv=0x${FIXED_IV}`],
    },
  );
}, 60_000);

afterAll(async () => {
  await origin?.server.close();
  rmSync(dir, { recursive: true, force: true });
});

/** GET of a path relative to presentation `name` (as a playlist line gives it, `../` and query kept), 200. */
async function fetched(name: string, relative: string, base = ''): Promise<Buffer> {
  const u = new URL(relative, `http://x/${name}.ism/${base}`);
  const r = await get(origin.url, u.pathname + u.search);
  expect([u.pathname, r.status]).toEqual([u.pathname, 200]);
  return r.body;
}

/** The I-frame playlists a master lists (URIs relative to the .ism). */
async function iframePlaylists(name: string, query: string): Promise<string[]> {
  const master = (await fetched(name, `.m3u8?${query}`)).toString('utf8');
  return [...master.matchAll(/^#EXT-X-I-FRAME-STREAM-INF:.*URI="([^"]+)"$/gm)].map((m) => m[1]!);
}

/** An I-frame (or media) playlist's init URI, key lines and segment lines with the AES-128 IV in force. */
function parsePlaylist(text: string): {
  keys: string[];
  map: string | undefined;
  segments: Array<{ uri: string; iv?: string }>;
} {
  const keys: string[] = [];
  let map: string | undefined;
  let mapIv: string | undefined;
  let iv: string | undefined;
  const segments: Array<{ uri: string; iv?: string }> = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('#EXT-X-KEY:')) {
      keys.push(line);
      iv = /,IV=0x([0-9A-F]{32})/.exec(line)?.[1]?.toLowerCase();
    }
    const m = /^#EXT-X-MAP:URI="([^"]+)"/.exec(line);
    if (m !== null) [map, mapIv] = [m[1], iv];
    if (line !== '' && !line.startsWith('#')) segments.push({ uri: line, ...(iv === undefined ? {} : { iv }) });
  }
  return { keys, map: map === undefined ? undefined : `${map}${mapIv === undefined ? '' : `#iv=${mapIv}`}`, segments };
}

const child = (list: Box[], type: string): Box => list.find((b) => b.type === type)!;

/** tfdt of a fragment's traf, its senc entries (after version, flags and sample_count) and its mdat payload. */
function fragmentParts(fragment: Buffer): { tfdt: bigint; senc: Buffer; mdat: Buffer } {
  const top = boxes(fragment);
  const traf = child(boxes(child(top, 'moof').body), 'traf');
  const inTraf = boxes(traf.body);
  return {
    tfdt: child(inTraf, 'tfdt').body.readBigUInt64BE(4),
    senc: child(inTraf, 'senc').body.subarray(8),
    mdat: child(top, 'mdat').body,
  };
}

describe.each(['cbcs', 'cenc'])('SAMPLE-AES %s, fMP4', (name) => {
  test('the master lists the I-frame playlists; each has the media playlist’s key lines before its EXT-X-MAP', async () => {
    const lists = await iframePlaylists(name, FMP4);
    expect(lists).toHaveLength(2);
    const master = (await fetched(name, `.m3u8?${FMP4}`)).toString('utf8');
    const media = [...master.matchAll(/^(?!#)(.*video.*)$/gm)].map((m) => m[1]!);
    for (const uri of lists) {
      const text = (await fetched(name, uri)).toString('utf8');
      expect(text).toContain('#EXT-X-I-FRAMES-ONLY');
      expect(Number(/#EXT-X-VERSION:(\d+)/.exec(text)![1])).toBeGreaterThanOrEqual(5);
      const own = parsePlaylist(text);
      const twin = media.find((m) => m.split('?')[0] === uri.split('?')[0]!.replace('keyframes/', ''))!;
      const mediaList = parsePlaylist((await fetched(name, twin)).toString('utf8'));
      const method = name === 'cbcs' ? 'SAMPLE-AES' : 'SAMPLE-AES-CTR';
      expect(own.keys).toEqual([`#EXT-X-KEY:METHOD=${method},URI="${KEYS}"`]);
      expect(own.keys).toEqual(mediaList.keys);
      expect(text).toMatch(/#EXT-X-KEY:[^\n]*\n#EXT-X-MAP:/);
      // The same init segment as the media playlist's.
      expect(new URL(own.map!, `http://x/${name}.ism/keyframes/`).href).toBe(
        new URL(mediaList.map!, `http://x/${name}.ism/`).href,
      );
      expect(own.segments.length).toBeGreaterThanOrEqual(5);
    }
  });

  test('every I-frame segment decrypts to the clear I-frame packets, and is its fragment’s first sample as the media segments encrypt it', async () => {
    let checked = 0;
    const master = (await fetched(name, `.m3u8?${FMP4}`)).toString('utf8');
    for (const uri of await iframePlaylists(name, FMP4)) {
      const own = parsePlaylist((await fetched(name, uri)).toString('utf8'));
      const clearUri = uri.split(`${name}-`).join('clear-');
      const clear = parsePlaylist((await fetched('clear', clearUri)).toString('utf8'));
      const init = await fetched(name, own.map!, 'keyframes/');
      const clearInit = await fetched('clear', clear.map!, 'keyframes/');
      // The media segments' fragments of the same track, by decode time.
      const mediaUri = [...master.matchAll(/^(?!#)(.*video.*)$/gm)]
        .map((m) => m[1]!)
        .find((m) => m.split('?')[0] === uri.split('?')[0]!.replace('keyframes/', ''))!;
      const byTime = new Map<bigint, { senc: Buffer; mdat: Buffer }>();
      for (const s of parsePlaylist((await fetched(name, mediaUri)).toString('utf8')).segments) {
        for (const f of fragments(await fetched(name, s.uri))) {
          const p = fragmentParts(f);
          byTime.set(p.tfdt, p);
        }
      }
      expect(own.segments.length).toBe(clear.segments.length);
      for (const [i, s] of own.segments.entries()) {
        const segment = await fetched(name, s.uri, 'keyframes/');
        const clearSegment = await fetched('clear', clear.segments[i]!.uri, 'keyframes/');
        expect(segment.equals(clearSegment)).toBe(false);
        const want = packets(dir, clearInit, clearSegment);
        const got = packets(dir, init, segment, KEY);
        expect([s.uri, got.code, got.stderr, got.rows]).toEqual([s.uri, 0, '', want.rows]);
        expect(got.rows).toHaveLength(1);
        // Without the key the packet is not the clear one (the encryption is real).
        expect(packets(dir, init, segment).rows).not.toEqual(want.rows);
        // The same bytes and the same senc entry as the fragment's first sample in the media segment.
        const mine = fragmentParts(segment);
        const twin = byTime.get(mine.tfdt);
        expect([s.uri, twin === undefined]).toEqual([s.uri, false]);
        expect(mine.mdat.equals(twin!.mdat.subarray(0, mine.mdat.length))).toBe(true);
        expect(mine.senc.equals(twin!.senc.subarray(0, mine.senc.length))).toBe(true);
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(10);
  }, 120_000);

  test('shaka-packager decrypts the I-frame segments to the clear packets', async () => {
    const [uri] = await iframePlaylists(name, FMP4);
    const own = parsePlaylist((await fetched(name, uri!)).toString('utf8'));
    const clear = parsePlaylist((await fetched('clear', uri!.split(`${name}-`).join('clear-'))).toString('utf8'));
    const init = await fetched(name, own.map!, 'keyframes/');
    const clearInit = await fetched('clear', clear.map!, 'keyframes/');
    for (const [i, s] of own.segments.slice(0, 3).entries()) {
      const input = path.join(dir, `${name}-iframe-${i}.mp4`);
      const output = path.join(dir, `${name}-iframe-${i}-dec.mp4`);
      const reference = path.join(dir, `clear-iframe-${i}.mp4`);
      writeFileSync(input, Buffer.concat([init, await fetched(name, s.uri, 'keyframes/')]));
      writeFileSync(
        reference,
        Buffer.concat([clearInit, await fetched('clear', clear.segments[i]!.uri, 'keyframes/')]),
      );
      const r = runSync(PACKAGER, [
        `in=${input},stream=video,output=${output}`,
        '--enable_raw_key_decryption',
        '--keys',
        `label=:key_id=${KID}:key=${KEY}`,
        '--quiet',
      ]);
      expect([r.code, r.stderr.replace(/^.*(W|I)\d{4}.*$/gm, '').trim()]).toEqual([0, '']);
      const md5 = (file: string): string[] => {
        const f = runSync('ffmpeg', ['-v', 'error', '-i', file, '-map', '0:v', '-c', 'copy', '-f', 'framemd5', '-']);
        expect(f.stderr).toBe('');
        return f.stdout
          .split('\n')
          .filter((l) => l !== '' && !l.startsWith('#'))
          .map((l) => l.split(',').slice(4).join(','));
      };
      const got = md5(output);
      expect(got).toHaveLength(1);
      expect(got).toEqual(md5(reference));
    }
  }, 60_000);
});

const decrypt = (bytes: Buffer, iv: string): Buffer => {
  const d = createDecipheriv('aes-128-cbc', Buffer.from(KEY, 'hex'), Buffer.from(iv, 'hex'));
  return Buffer.concat([d.update(bytes), d.final()]);
};

describe.each([
  ['aes', FMP4, 'per entry'],
  ['aes', TS4, 'per entry'],
  ['fixed', FMP4, 'fixed'],
  ['fixed', TS4, 'fixed'],
])('AES-128 (%s, %s)', (name, query, ivs) => {
  test('each I-frame segment and the init section decrypt, with the IV of their key line, to the clear bytes', async () => {
    const lists = await iframePlaylists(name, query);
    expect(lists).toHaveLength(2);
    let checked = 0;
    for (const uri of lists) {
      const text = (await fetched(name, uri)).toString('utf8');
      expect(Number(/#EXT-X-VERSION:(\d+)/.exec(text)![1])).toBeGreaterThanOrEqual(4);
      const own = parsePlaylist(text);
      const clear = parsePlaylist((await fetched('clear', uri.split(`${name}-`).join('clear-'))).toString('utf8'));
      if (query === FMP4) {
        const [map, iv] = own.map!.split('#iv=');
        expect(iv).toBe(ivs === 'fixed' ? FIXED_IV : '0'.repeat(32));
        const clearInit = await fetched('clear', clear.map!, 'keyframes/');
        expect(decrypt(await fetched(name, map!, 'keyframes/'), iv!).equals(clearInit)).toBe(true);
      } else expect(own.map).toBeUndefined();
      expect(own.keys).toHaveLength(ivs === 'fixed' ? 1 : own.segments.length + (query === FMP4 ? 1 : 0));
      for (const [i, s] of own.segments.entries()) {
        const n = Number(/-(\d+)\.(m4s|ts)/.exec(s.uri)![1]);
        expect(s.iv).toBe(ivs === 'fixed' ? FIXED_IV : n.toString(16).padStart(32, '0'));
        const clearSegment = await fetched('clear', clear.segments[i]!.uri, 'keyframes/');
        const mine = await fetched(name, s.uri, 'keyframes/');
        expect(mine.length).toBe(16 * (Math.floor(clearSegment.length / 16) + 1)); // PKCS#7
        expect([s.uri, decrypt(mine, s.iv!).equals(clearSegment)]).toEqual([s.uri, true]);
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(10);
  });
});

test('the SAMPLE-AES MPEG-TS master lists no I-frame playlists, whatever version is asked', async () => {
  const r = await get(origin.url, '/cbcs.ism/.m3u8?hls_client_manifest_version=4');
  expect(r.status).toBe(200);
  expect(r.text).toContain('METHOD=SAMPLE-AES');
  expect(r.text).not.toContain('EXT-X-I-FRAME-STREAM-INF');
});

test.each([
  // SAMPLE-AES MPEG-TS: no I-frame playlists, whatever is asked.
  ['/cbcs.ism/keyframes/cbcs-video_eng=1600000.m3u8?hls_client_manifest_version=4', 'hls_fmp4=true'],
  ['/cbcs.ism/keyframes/cbcs-video_eng=1600000-1.ts?hls_client_manifest_version=4', 'hls_fmp4=true'],
  ['/cbcs.ism/keyframes/cbcs-video_eng=1600000-1.ts?hls_fmp4=true', 'fMP4 segments only'],
  ['/cenc.ism/keyframes/cenc-video_eng=1600000-1.ts?hls_fmp4=true', 'fMP4 segments only'],
  ['/cbcs.ism/keyframes/cbcs-video_eng=1600000-1.m4s', 'hls_fmp4=true'],
])('%s → 403 protected-format', async (url, message) => {
  const r = await get(origin.url, url);
  expect([r.status, r.headers['x-origin-error']]).toEqual([403, 'protected-format']);
  expect(r.text).toContain(message);
  expect(r.text).not.toContain(KEY);
});
