// SAMPLE-AES HLS (--hls.playout, fMP4 segments): every fragment of every segment, with its init segment, decrypts
// with ffmpeg (one fragment per file, as ffmpeg requires) to the clear presentation's packets (cbcs and cenc); the playlists carry the key lines each DRM
// needs (ClearKey alone, FairPlay, drm_a and PlayReady, identity), EXT-X-SESSION-KEY in the master,
// I-frame playlists with the same key lines (hls-iframes.test.ts decrypts them); MPEG-TS is refused
// where no key line serves it (hls-sample-aes-ts.test.ts has SAMPLE-AES MPEG-TS), never served clear.

import { rmSync } from 'node:fs';
import { tempDir } from '../../helpers/fixtures';
import { get, startTestOrigin, TestOrigin } from '../server/server-helpers';
import { loadPresentation, packageFixtures } from '../../helpers/presentations';
import { OriginError } from '../../../origin/errors';
import { fragments, packets } from './ffmpeg-decrypt';

const KID = '00112233445566778899aabbccddeeff';
const KEY = '3a2a1b68dd2bd9b2eeb25e84c4776668';
const FILES = ['video_high_1600k.ismv', 'audio_eng_64k.isma', 'text_eng.ismt'];
const KEYS = 'https://keys.example/k1';

let origin: TestOrigin;
const dir = tempDir('hls-drm-');

beforeAll(async () => {
  origin = await startTestOrigin(
    { clear: FILES, cbcs: FILES, cenc: FILES, ck: FILES, fps: FILES, multi: FILES },
    {
      cbcs: [`--hls.key=${KID}:${KEY}`, '--hls.playout=sample_aes', `--hls.license_server_url=${KEYS}`],
      cenc: [`--hls.key=${KID}:${KEY}`, `--hls.license_server_url=${KEYS}`, '--hls.protection_scheme=cenc'],
      ck: [
        `--hls.key=${KID}:${KEY}`,
        '--hls.playout=sample_aes',
        '--clearkey.license_server_url=http://127.0.0.1:1/license',
      ],
      fps: [
        `--hls.key=${KID}:${KEY}`,
        '--hls.playout=sample_aes_streamingkeydelivery',
        '--hls.license_server_url=skd://fps.example/k',
      ],
      multi: [
        `--hls.key=${KID}:${KEY}`,
        '--hls.playout=sample_aes',
        `--drm_a.key=${KID}:${KEY}`,
        `--iss.key=${KID}:${KEY}`,
      ],
    },
  );
}, 60_000);

afterAll(async () => {
  await origin?.server.close();
  rmSync(dir, { recursive: true, force: true });
});

async function text(url: string): Promise<string> {
  const r = await get(origin.url, url);
  expect([url, r.status]).toEqual([url, 200]);
  return r.text;
}

/** The media playlists a master names, by URI, with their text. */
async function mediaPlaylists(name: string): Promise<Map<string, string>> {
  const base = `/${name}.ism/`;
  const master = await text(`${base}.m3u8?hls_fmp4=true`);
  const uris = new Set<string>();
  for (const line of master.split('\n')) {
    if (line !== '' && !line.startsWith('#')) uris.add(line);
    const m = /URI="([^"]+)"/.exec(line);
    if (line.startsWith('#EXT-X-MEDIA:') && m !== null) uris.add(m[1]!);
  }
  const out = new Map<string, string>();
  for (const uri of uris)
    out.set(uri, await text(new URL(uri, `http://x${base}`).pathname + new URL(uri, `http://x${base}`).search));
  return out;
}

/** The init and segment paths of one media playlist of presentation `name`. */
function segmentsOf(name: string, playlist: string): { init: string; media: string[] } {
  const abs = (u: string): string => {
    const x = new URL(u, `http://x/${name}.ism/`);
    return x.pathname + x.search;
  };
  const init = /#EXT-X-MAP:URI="([^"]+)"/.exec(playlist)![1]!;
  return {
    init: abs(init),
    media: playlist
      .split('\n')
      .filter((l) => l !== '' && !l.startsWith('#'))
      .map(abs),
  };
}

function packetsOf(init: Buffer, segment: Buffer, key?: string): string[] {
  return fragments(segment).flatMap((f) => {
    const r = packets(dir, init, f, key);
    expect(r.stderr).toBe('');
    return r.rows;
  });
}

describe.each(['cbcs', 'cenc'])('%s', (name) => {
  test('the playlists: session keys in the master, a key line before each EXT-X-MAP of audio and video', async () => {
    const method = name === 'cbcs' ? 'SAMPLE-AES' : 'SAMPLE-AES-CTR';
    const master = await text(`/${name}.ism/.m3u8?hls_fmp4=true`);
    expect(master).toContain(`#EXT-X-SESSION-KEY:METHOD=${method},URI="${KEYS}"\n`);
    expect(master).toContain('#EXT-X-I-FRAME-STREAM-INF:');
    for (const [uri, list] of await mediaPlaylists(name)) {
      const subtitles = list.includes('.webvtt') || uri.includes('textstream');
      if (subtitles) expect(list).not.toContain('EXT-X-KEY');
      else expect(list).toMatch(new RegExp(`#EXT-X-KEY:METHOD=${method},URI="${KEYS}"\\n#EXT-X-MAP:`));
      expect(Number(/#EXT-X-VERSION:(\d+)/.exec(list)![1])).toBeGreaterThanOrEqual(5);
    }
  });

  test('every audio and video segment decrypts with ffmpeg to the clear packets', async () => {
    const mine = await mediaPlaylists(name);
    const clear = await mediaPlaylists('clear');
    let checked = 0;
    for (const [uri, list] of mine) {
      if (!list.includes('EXT-X-KEY')) continue;
      const a = segmentsOf(name, list);
      const twin = clear.get(uri.split(`${name}-`).join('clear-'));
      expect([uri, twin === undefined]).toEqual([uri, false]);
      const b = segmentsOf('clear', twin!);
      const [init, clearInit] = [(await get(origin.url, a.init)).body, (await get(origin.url, b.init)).body];
      for (let i = 0; i < a.media.length; i++) {
        const [seg, clearSeg] = [(await get(origin.url, a.media[i]!)).body, (await get(origin.url, b.media[i]!)).body];
        expect(seg.equals(clearSeg)).toBe(false);
        expect(packetsOf(init, seg, KEY)).toEqual(packetsOf(clearInit, clearSeg));
        checked++;
      }
    }
    expect(checked).toBe(6); // 3 segments of 4 s, video and audio
  }, 60_000);
});

test('ClearKey: only the org.w3.clearkey line, with the KID', async () => {
  const master = await text('/ck.ism/.m3u8?hls_fmp4=true');
  const lines = master.split('\n').filter((l) => l.startsWith('#EXT-X-SESSION-KEY'));
  expect(lines).toEqual([
    `#EXT-X-SESSION-KEY:METHOD=SAMPLE-AES,URI="http://127.0.0.1:1/license",KEYID=0x${KID.toUpperCase()},KEYFORMAT="org.w3.clearkey",KEYFORMATVERSIONS="1"`,
  ]);
});

test('FairPlay: skd:// URI, com.apple.streamingkeydelivery, no IV', async () => {
  const master = await text('/fps.ism/.m3u8?hls_fmp4=true');
  expect(master).toContain(
    '#EXT-X-SESSION-KEY:METHOD=SAMPLE-AES,URI="skd://fps.example/k",KEYFORMAT="com.apple.streamingkeydelivery",KEYFORMATVERSIONS="1"\n',
  );
  expect(master).not.toContain('IV=');
});

test('drm_a and PlayReady sharing the HLS key: their pssh as data: URIs', async () => {
  const master = await text('/multi.ism/.m3u8?hls_fmp4=true');
  const lines = master.split('\n').filter((l) => l.startsWith('#EXT-X-SESSION-KEY'));
  expect(lines).toHaveLength(2);
  expect(lines[0]).toMatch(
    /URI="data:text\/plain;base64,[^"]+",KEYID=0x[0-9A-F]{32},KEYFORMAT="urn:uuid:edef8ba9-79d6-4ace-a3c8-27dcd51d21ed"/,
  );
  expect(lines[1]).toMatch(
    /URI="data:text\/plain;charset=UTF-16;base64,[^"]+",KEYID=0x[0-9A-F]{32},KEYFORMAT="com.microsoft.playready"/,
  );
  const pssh = Buffer.from(/base64,([^"]+)"/.exec(lines[0]!)![1]!, 'base64');
  expect(pssh.toString('latin1', 4, 8)).toBe('pssh');
});

test.each([
  ['/ck.ism/.m3u8', 'request hls_fmp4=true'],
  ['/multi.ism/.m3u8?hls_fmp4=false', 'needs a key players fetch themselves'],
  ['/ck.ism/ck-video_eng=1600000.m3u8', 'ClearKey'],
  ['/cbcs.ism/keyframes/cbcs-video_eng=1600000-1.ts?hls_fmp4=true', 'I-frame'],
  ['/cbcs.ism/.mpd', 'DASH has no key configured'],
])('%s → 403 protected-format', async (url, message) => {
  const r = await get(origin.url, url);
  expect([r.status, r.headers['x-origin-error']]).toEqual([403, 'protected-format']);
  expect(r.text).toContain(message);
  expect(r.text).not.toContain(KEY);
});

test.each([
  [[`--hls.key=${KID}:${KEY}`], 'needs --hls.license_server_url'],
  [[`--hls.key=${KID}:${KEY}`, '--hls.playout=sample_aes'], 'needs --hls.license_server_url'],
  [[`--hls.key=${KID}:${KEY}`, '--clearkey.license_server_url=http://127.0.0.1/l'], 'add --hls.playout=sample_aes'],
  [
    [`--hls.key=${KID}:${KEY}`, '--hls.protection_scheme=cenc', '--hls.playout=sample_aes_streamingkeydelivery'],
    'needs cbcs',
  ],
  [
    [
      `--hls.key=${KID}:${KEY}`,
      `--hls.license_server_url=${KEYS}`,
      '--hls.protection_scheme=cenc',
      `--hls.key_iv=${KEY}`,
    ],
    'does not apply to cenc',
  ],
])('%j does not load', async (options, message) => {
  const ism = await packageFixtures(['video_baseline_400k.ismv'], 'bad', options);
  const e = await loadPresentation(ism).catch((x: unknown) => x);
  expect(e).toBeInstanceOf(OriginError);
  expect((e as OriginError).message).toContain(message);
  expect((e as OriginError).message).not.toContain(KEY);
});
