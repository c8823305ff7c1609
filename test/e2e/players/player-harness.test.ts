// Proves the player page and the browser harness on reference content that ffmpeg writes, not on
// the origin: if a pair fails here, the harness or the page is wrong, not the origin.
// One content generation (10 s testsrc2 H.264 + AAC as DASH, HLS fMP4 and Smooth), one tiny
// static server, one browser for the whole file.

import { spawnSync } from 'node:child_process';
import {
  createReadStream,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import {
  isPlayerName,
  PLAYER_ASSET_CONTENT_TYPE,
  PLAYER_NAMES,
  playerAssetFile,
  playerPage,
  type PlayerName,
} from '../../../origin/player/player-page';
import { closeBrowser, playAndCheck, playerTestsEnabled } from '../../helpers/browser';

const UNTIL_SECONDS = 6;
const PLAY_TIMEOUT_MS = 20_000;

/** Manifest paths under /content/ for each format (ffmpeg's Smooth muxer writes a directory).
 * `smooth/Manifest.fixed` is ffmpeg's Manifest with the first fragment times added (see below). */
const MANIFEST = { dash: 'dash/manifest.mpd', hls: 'hls/index.m3u8', smooth: 'smooth/Manifest.fixed' } as const;
type Format = keyof typeof MANIFEST;

const PAIRS: Array<[PlayerName, Format]> = [
  ['dashjs', 'dash'],
  ['shaka', 'dash'],
  ['hlsjs', 'hls'],
  ['native', 'hls'],
  ['dashjs-mss', 'smooth'],
  ['shaka4-mss', 'smooth'],
];

const FORMAT_OF: Record<PlayerName, Format> = {
  hlsjs: 'hls',
  native: 'hls',
  dashjs: 'dash',
  shaka: 'dash',
  'dashjs-mss': 'smooth',
  'shaka4-mss': 'smooth',
};

function ffmpeg(args: string[]): void {
  const r = spawnSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', ...args], { encoding: 'utf8' });
  if (r.error) throw new Error(`ffmpeg: ${r.error.message} (Debian: apt-get install -y ffmpeg)`);
  if (r.status !== 0) throw new Error(`ffmpeg ${args.join(' ')} failed: ${r.stderr}`);
}

/** Encodes once (x264 settings as fixtures/README.md, 2 s GOPs), then remuxes into the three formats. */
function makeContent(dir: string): void {
  const source = path.join(dir, 'source.mp4');
  ffmpeg([
    '-f',
    'lavfi',
    '-i',
    'testsrc2=size=640x360:rate=24:duration=10',
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=440:sample_rate=48000:duration=10',
    '-c:v',
    'libx264',
    '-profile:v',
    'high',
    '-preset',
    'veryfast',
    '-pix_fmt',
    'yuv420p',
    '-g',
    '48',
    '-keyint_min',
    '48',
    '-sc_threshold',
    '0',
    '-x264-params',
    'scenecut=0:open_gop=0',
    '-b:v',
    '600k',
    '-maxrate',
    '600k',
    '-bufsize',
    '600k',
    '-c:a',
    'aac',
    '-b:a',
    '128k',
    '-ac',
    '2',
    source,
  ]);
  for (const sub of ['dash', 'hls', 'smooth']) mkdirSync(path.join(dir, sub));
  ffmpeg([
    '-i',
    source,
    '-map',
    '0',
    '-c',
    'copy',
    '-f',
    'dash',
    '-seg_duration',
    '2',
    '-use_template',
    '1',
    '-use_timeline',
    '0',
    path.join(dir, MANIFEST.dash),
    '-map',
    '0',
    '-c',
    'copy',
    '-f',
    'hls',
    '-hls_segment_type',
    'fmp4',
    '-hls_time',
    '2',
    '-hls_playlist_type',
    'vod',
    path.join(dir, MANIFEST.hls),
    '-map',
    '0',
    '-c',
    'copy',
    '-f',
    'smoothstreaming',
    path.join(dir, 'smooth'),
  ]);
  fixSmoothManifest(path.join(dir, 'smooth'));
}

/** Start time (in the 10 MHz Smooth timescale) of each stream's first fragment file, by stream
 * type: the smallest N over `QualityLevels(*)/Fragments(<type>=N)`. */
function firstFragmentTimes(smoothDir: string): Map<string, bigint> {
  const first = new Map<string, bigint>();
  for (const level of readdirSync(smoothDir).filter((d) => d.startsWith('QualityLevels('))) {
    for (const name of readdirSync(path.join(smoothDir, level))) {
      const m = /^Fragments\((\w+)=(\d+)\)$/.exec(name);
      if (m?.[1] === undefined || m[2] === undefined) continue;
      const t = BigInt(m[2]);
      const known = first.get(m[1]);
      if (known === undefined || t < known) first.set(m[1], t);
    }
  }
  return first;
}

/** ffmpeg 5.1's smoothstreaming muxer (libavformat/smoothstreamingenc.c, output_chunk_list) writes
 * the final (VOD) manifest as `<c n="0" d="..."/>` without `t`, so by MS-SSTR §2.2.2.5 the first
 * fragment starts at 0; but it names the fragment files by their real start time, which is not 0
 * once it has shifted negative timestamps (AAC priming, B-frame decode delay) to start at 0:
 * e.g. Fragments(video=833333) and Fragments(audio=620000). Every player then asks for
 * Fragments(video=0) and gets a 404. This adds the real `t` to each stream's first `<c>` (and
 * nothing else) in a copy, Manifest.fixed; the test below checks that the defect is still there. */
function fixSmoothManifest(smoothDir: string): void {
  const first = firstFragmentTimes(smoothDir);
  const xml = readFileSync(path.join(smoothDir, 'Manifest'), 'utf8');
  const fixed = xml.replace(
    /(<StreamIndex Type="(\w+)"[^>]*>[\s\S]*?)<c n="0" (d="\d+")/g,
    (all, head: string, type: string, d: string) => {
      const t = first.get(type);
      return t === undefined ? all : `${head}<c t="${t}" ${d}`;
    },
  );
  writeFileSync(path.join(smoothDir, 'Manifest.fixed'), fixed);
}

function contentType(file: string): string {
  const base = path.basename(file);
  if (base.startsWith('Manifest')) return 'application/vnd.ms-sstr+xml';
  if (base.startsWith('Fragments(')) return 'video/mp4';
  const types: Record<string, string> = {
    '.mpd': 'application/dash+xml',
    '.m3u8': 'application/vnd.apple.mpegurl',
    '.m4s': 'video/iso.segment',
    '.mp4': 'video/mp4',
  };
  return types[path.extname(base)] ?? 'application/octet-stream';
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

function sendFile(req: IncomingMessage, res: ServerResponse, file: string, type: string): void {
  let size: number;
  try {
    const st = statSync(file);
    if (!st.isFile()) throw new Error('not a file');
    size = st.size;
  } catch {
    send(res, 404, 'text/plain', 'not found\n');
    return;
  }
  res.writeHead(200, { 'Content-Type': type, 'Content-Length': size });
  if (req.method === 'HEAD') res.end();
  else createReadStream(file).pipe(res);
}

/** The test server: the player page, the /_players/ table, and `root` under /content/. */
function handler(root: string) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    res.setHeader('Access-Control-Allow-Origin', '*');
    if (req.method === 'OPTIONS') {
      res.writeHead(204, { 'Access-Control-Allow-Methods': 'GET, HEAD', 'Access-Control-Allow-Headers': '*' });
      res.end();
      return;
    }
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === '/play') {
      const player = url.searchParams.get('player') ?? '';
      const manifest = url.searchParams.get('url');
      if (!isPlayerName(player) || manifest === null) return send(res, 400, 'text/plain', 'bad player or url\n');
      return send(res, 200, 'text/html; charset=utf-8', playerPage(player, manifest));
    }
    const asset = playerAssetFile(url.pathname);
    if (asset !== undefined) return sendFile(req, res, asset, PLAYER_ASSET_CONTENT_TYPE);
    if (url.pathname.startsWith('/content/')) {
      const file = path.resolve(root, decodeURIComponent(url.pathname.slice('/content/'.length)));
      if (file.startsWith(root + path.sep)) return sendFile(req, res, file, contentType(file));
    }
    send(res, 404, 'text/plain', 'not found\n');
  };
}

const enabled = playerTestsEnabled();
const describePlayers = enabled ? describe : describe.skip;

describePlayers('player page and harness on ffmpeg reference content', () => {
  let dir = '';
  let server: Server | undefined;
  let base = '';

  const pageUrl = (player: PlayerName, manifestPath: string): string =>
    `${base}/play?player=${player}&url=${encodeURIComponent(`${base}/content/${manifestPath}`)}`;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'player-harness-'));
    makeContent(dir);
    server = createServer(handler(dir));
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }, 60_000);

  afterAll(async () => {
    await closeBrowser();
    await new Promise((resolve) => server?.close(resolve));
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  test("ffmpeg's own Smooth Manifest names first fragments that do not exist (why Manifest.fixed)", () => {
    const xml = readFileSync(path.join(dir, 'smooth', 'Manifest'), 'utf8');
    const starts = firstFragmentTimes(path.join(dir, 'smooth'));
    expect(xml).not.toMatch(/<c t=/);
    expect([...starts.values()].some((t) => t !== 0n)).toBe(true);
    // Once ffmpeg writes `t` (or starts every stream at 0), drop Manifest.fixed and serve Manifest.
  });

  test.each(PAIRS)(
    '%s plays ffmpeg %s past 6 s without errors',
    async (player, format) => {
      const r = await playAndCheck(pageUrl(player, MANIFEST[format]), {
        untilSeconds: UNTIL_SECONDS,
        timeoutMs: PLAY_TIMEOUT_MS,
        screenshot: `harness-${player}-${format}`,
      });
      console.log(`${player} ${format}: currentTime ${r.currentTime.toFixed(2)} s; events ${r.events.join(', ')}`);
      expect(r.errors).toEqual([]);
      expect(r.currentTime).toBeGreaterThan(UNTIL_SECONDS);
    },
    PLAY_TIMEOUT_MS + 10_000,
  );

  // Negative control: a 404 manifest must surface as an error from the page's own hook (not only
  // the console line Chromium logs for any failed request), or the positive checks prove nothing.
  test.each([...PLAYER_NAMES])(
    '%s reports a 404 manifest',
    async (player) => {
      const missing = MANIFEST[FORMAT_OF[player]].replace(/^[^/]+/, 'missing');
      const r = await playAndCheck(pageUrl(player, missing), {
        untilSeconds: UNTIL_SECONDS,
        timeoutMs: 10_000,
        screenshot: `harness-404-${player}`,
      });
      console.log(`${player} 404: ${r.errors.join(' | ')}`);
      const fromPage = r.errors.filter((e) => !e.startsWith('console:') && !e.startsWith('uncaught:'));
      expect(fromPage.length).toBeGreaterThan(0);
      expect(r.currentTime).toBe(0);
    },
    20_000,
  );
});
