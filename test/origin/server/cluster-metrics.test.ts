// `origin serve --workers 2` through the built CLI: /metrics is the sum over both workers (a
// scrape reaches one, which asks the primary: origin/ops/cluster-metrics.ts), and the workers'
// JSON log lines on the shared stderr parse, carry the request fields and, at debug level, never a
// content key of the encrypted presentation they serve, in any spelling.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { Exposition, parseExposition, valueOf } from '../../helpers/prometheus';
import { Cli, linux, startCli, stopCli } from './cli-origin';
import { get, startTestOrigin, TestOrigin } from './server-helpers';

const describeLinux = linux ? describe : describe.skip;

const KID = '00112233445566778899aabbccddeeff';
const KEY = 'a0b1c2d3e4f5061728394a5b6c7d8e9f';
const KEY_SPELLINGS = [
  KEY,
  KEY.toUpperCase(),
  Buffer.from(KEY, 'hex').toString('base64'),
  Buffer.from(KEY, 'hex').toString('base64url'),
];

const mpdParser = require('mpd-parser') as {
  parse(text: string, o: { manifestUri: string }): { playlists: Array<{ segments: Array<{ resolvedUri: string }> }> };
};

let origin: TestOrigin;
let cli: Cli | undefined;
/** Every request the test made of the CLI's origin (each must have its log line). */
let requests = 0;

beforeAll(async () => {
  origin = await startTestOrigin(
    { clear: ['video_baseline_400k.ismv', 'audio_eng_64k.isma'], secret: ['video_baseline_400k.ismv'] },
    { secret: [`--drm_a.key=${KID}:${KEY}`] },
  );
  expect(await fs.readFile(path.join(origin.root, 'secret.ism'), 'utf8')).toContain(KEY); // the key is in the .ism
  cli = await startCli([
    '--root',
    origin.root,
    '--port',
    '0',
    '--workers',
    '2',
    '--warm-up-rounds',
    '0',
    '--log-format',
    'json',
    '--log-level',
    'debug',
  ]);
}, 60_000);

afterAll(async () => {
  if (cli !== undefined && cli.child.exitCode === null) await stopCli(cli);
  await origin?.server.close();
});

/** A request over a new connection (round-robin hands each to the next worker). */
async function ask(p: string, headers: Record<string, string> = {}): Promise<number> {
  requests++;
  return (await get(cli!.url, p, headers)).status;
}

async function scrape(): Promise<Exposition> {
  requests++;
  const r = await get(cli!.url, '/metrics');
  expect(r.status).toBe(200);
  return parseExposition(r.text);
}

describeLinux('two workers', () => {
  test('/metrics sums both workers: exact counts after a scripted run', async () => {
    for (let i = 0; i < 12; i++) expect(await ask('/clear.ism/.mpd')).toBe(200);
    requests++;
    const mpd = await get(cli!.url, '/secret.ism/.mpd');
    expect(mpd.status).toBe(200);
    const segments = mpdParser.parse(mpd.text, { manifestUri: `${cli!.url}/secret.ism/.mpd` }).playlists[0]!.segments;
    for (const s of segments.slice(0, 4)) expect(await ask(new URL(s.resolvedUri).pathname)).toBe(200);
    expect(await ask('/secret.ism/.m3u8')).toBe(403); // no HLS key: refused, never clear
    expect(await ask('/secret.ism/.m3u8')).toBe(403);
    expect(await ask(`/play?player=shaka&url=%2Fsecret.ism%2F.mpd&clearkeys=${KID}:${KEY}`)).toBe(200);
    expect(await ask('/secret.ism')).toBe(404);
    expect(await ask('/clear.ism/.mpd', { authorization: `Bearer ${KEY}`, 'x-request-id': 'from-envoy' })).toBe(200);

    // A response is counted when it has closed, just after the client has it: poll briefly.
    let e = await scrape();
    for (let i = 0; i < 100 && valueOf(e, 'origin_http_requests_total', { kind: 'player', status: '200' }) !== 1; i++) {
      await new Promise((r) => setTimeout(r, 20));
      e = await scrape();
    }
    const count = (kind: string, status: string): number | undefined =>
      valueOf(e, 'origin_http_requests_total', { kind, status });
    expect(count('dash-mpd', '200')).toBe(14);
    expect(count('dash-init-or-media', '200')).toBe(4);
    expect(count('hls-playlist', '403')).toBe(2);
    expect(count('player', '200')).toBe(1);
    expect(count('other', '404')).toBe(1);
    expect(valueOf(e, 'origin_http_request_duration_seconds_count', { kind: 'dash-mpd' })).toBe(14);
    expect(valueOf(e, 'origin_workers')).toBe(2);
    expect(valueOf(e, 'origin_metrics_workers_missing')).toBe(0);
    expect(valueOf(e, 'origin_worker_restarts_total')).toBe(0);
    // Each worker rendered the clear MPD and the secret one once at most, and both served some.
    const renders = valueOf(e, 'origin_cache_misses_total', { cache: 'manifest' })!;
    expect(renders).toBeGreaterThanOrEqual(3);
    expect(renders).toBeLessThanOrEqual(4);
    // Both workers' process series, summed: more resident memory than either alone.
    expect(valueOf(e, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    // Asked again: the same sums (nothing counted twice), the scrapes now among them.
    const again = await scrape();
    expect(valueOf(again, 'origin_http_requests_total', { kind: 'dash-mpd', status: '200' })).toBe(14);
    expect(valueOf(again, 'origin_http_requests_total', { kind: 'ops', status: '200' })).toBeGreaterThanOrEqual(1);
  }, 60_000);

  test('the JSON log: every line parses, one line per request with its fields, no key in any line', async () => {
    expect(await stopCli(cli!)).toBe(0); // flushes the log
    const lines = cli!.jsonLines();
    const text = cli!.stderr();
    for (const k of KEY_SPELLINGS) expect(text).not.toContain(k);
    expect(text).not.toContain('Bearer');
    const pids = new Set(lines.map((l) => l.pid));
    expect(pids.size).toBe(3); // the primary and two workers
    const byRequest = lines.filter((l) => l.msg === 'request');
    expect(byRequest).toHaveLength(requests);
    expect(new Set(byRequest.map((l) => l.pid)).size).toBe(2);
    for (const l of byRequest) {
      expect(l).toEqual(
        expect.objectContaining({
          level: 'info',
          method: 'GET',
          requestId: expect.any(String),
          url: expect.any(String),
          kind: expect.any(String),
          status: expect.any(Number),
          bytes: expect.any(Number),
          durationMs: expect.any(Number),
          remote: '127.0.0.1', // debug level
        }),
      );
    }
    expect(byRequest.find((l) => l.requestId === 'from-envoy')).toMatchObject({ kind: 'dash-mpd', cache: 'hit' });
    const segment = byRequest.find((l) => l.kind === 'dash-init-or-media')!;
    expect(segment).toMatchObject({ presentation: '/secret.ism', status: 200 });
    expect(byRequest.find((l) => l.kind === 'hls-playlist')).toMatchObject({ status: 403, error: 'protected-format' });
    expect(byRequest.find((l) => l.kind === 'player')!.url).toBe(
      '/play?player=[redacted]&url=[redacted]&clearkeys=[redacted]',
    );
    // Debug: each worker's presentation loads, without an option value.
    const loads = lines.filter((l) => l.level === 'debug' && String(l.msg).startsWith('loaded '));
    expect(loads.some((l) => String(l.msg).endsWith('/secret.ism') && l.protected === true)).toBe(true);
    expect(lines.filter((l) => l.level === 'error')).toEqual([]);
  }, 30_000);
});
