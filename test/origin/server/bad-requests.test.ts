// Every malformed or impossible request gets its documented 4xx with a one-line text/plain
// reason and a stable X-Origin-Error code, and the server keeps serving afterwards.

import * as path from 'node:path';
import { promises as fs } from 'node:fs';
import { loadPresentation, PLAYABLE } from '../../helpers/presentations';
import { get, startTestOrigin, TestOrigin } from './server-helpers';

let origin: TestOrigin;
let vb: number; // bitrate of video_eng (baseline ladder rung)
let ab: number;

beforeAll(async () => {
  origin = await startTestOrigin({ p: PLAYABLE });
  const p = await loadPresentation(path.join(origin.root, 'p.ism'));
  vb = p.tracks.find((t) => t.properties.type === 'video')!.properties.systemBitrate;
  ab = p.tracks.find((t) => t.properties.type === 'audio')!.properties.systemBitrate;
  // A broken server manifest next to the good one.
  await fs.writeFile(
    path.join(origin.root, 'broken.ism'),
    '<smil><body><switch><video src="x.ismv"/></switch></body></smil>',
  );
  await fs.writeFile(
    path.join(origin.root, 'missing.ism'),
    (await fs.readFile(path.join(origin.root, 'p.ism'), 'utf8')).replace(
      /src="[^"]*video_main_900k.ismv"/,
      'src="gone.ismv"',
    ),
  );
});

afterAll(async () => {
  await origin.server.close();
});

const long = (n: number): string => 'a'.repeat(n);

/** [description, method, raw path, status, X-Origin-Error code] — built lazily (bitrates known after beforeAll). */
function cases(): Array<[string, string, string, number, string]> {
  return [
    ['unknown presentation', 'GET', '/nope.ism/Manifest', 404, 'unknown-presentation'],
    ['unknown bitrate (Smooth)', 'GET', '/p.ism/QualityLevels(1)/Fragments(video_eng=0)', 404, 'unknown-track'],
    ['unknown track name (Smooth)', 'GET', `/p.ism/QualityLevels(${vb})/Fragments(nope=0)`, 404, 'unknown-track'],
    [
      'time not on a fragment boundary (Smooth)',
      'GET',
      `/p.ism/QualityLevels(${vb})/Fragments(video_eng=1)`,
      404,
      'unknown-time',
    ],
    [
      'time past the end (Smooth)',
      'GET',
      `/p.ism/QualityLevels(${vb})/Fragments(video_eng=99999999999999999999)`,
      404,
      'unknown-time',
    ],
    ['time not on a segment boundary (DASH)', 'GET', `/p.ism/dash/p-video_eng=${vb}-1.dash`, 404, 'unknown-time'],
    ['unknown bitrate (DASH init)', 'GET', '/p.ism/dash/p-video_eng=999.dash', 404, 'unknown-track'],
    [
      'segment number 0 (DASH $Number$)',
      'GET',
      `/p.ism/dash/p-video_eng=${vb}-0.dash?mpd_segment_template=number`,
      404,
      'unknown-time',
    ],
    ['segment past the end (HLS)', 'GET', `/p.ism/hls/p-video_eng=${vb}-99.m4s`, 404, 'unknown-time'],
    ['segment 0 (HLS numbers from 1)', 'GET', `/p.ism/hls/p-audio_eng=${ab}-0.m4s`, 404, 'unknown-time'],
    ['dot-dot segment', 'GET', '/p.ism/../p.ism/Manifest', 400, 'bad-path'],
    ['encoded dot-dot', 'GET', '/p.ism/%2e%2e/%2e%2e/etc/passwd', 400, 'bad-path'],
    ['encoded slash', 'GET', '/p.ism%2FManifest', 400, 'bad-path'],
    ['encoded backslash', 'GET', '/p.ism/x%5c..%5cManifest', 400, 'bad-path'],
    [
      'double-encoded dot-dot stays literal and unknown',
      'GET',
      '/%252e%252e/p.ism/Manifest',
      404,
      'unknown-presentation',
    ],
    ['malformed percent-encoding in the path', 'GET', '/p.ism/%E0%A4%A.mpd', 400, 'bad-path'],
    ['NUL in the path', 'GET', '/p.ism/x%00.mpd', 400, 'bad-path'],
    ['over-long URL', 'GET', `/p.ism/${long(5000)}.mpd`, 414, 'url-too-long'],
    ['nothing after .ism/', 'GET', '/p.ism/', 404, 'unknown-url'],
    ['unknown output', 'GET', '/p.ism/something.xyz', 404, 'unknown-url'],
    ['filter syntax error', 'GET', '/p.ism/.mpd?filter=type%3D%22video%22', 400, 'bad-filter'],
    ['filter that keeps no track', 'GET', '/p.ism/Manifest?filter=type%3D%3D%22data%22', 400, 'bad-filter'],
    ['filter comparing a string with a number', 'GET', '/p.ism/.m3u8?filter=type%3D%3D1', 400, 'bad-filter'],
    ['over-long filter', 'GET', `/p.ism/.mpd?filter=${long(5000)}`, 400, 'bad-filter'],
    ['malformed t', 'GET', '/p.ism/.mpd?t=abc', 400, 'bad-time'],
    ['t end before start', 'GET', '/p.ism/Manifest?t=6-2', 400, 'bad-time'],
    ['t with 61 minutes', 'GET', '/p.ism/.m3u8?t=0:61:00', 400, 'bad-time'],
    ['t and vbegin together', 'GET', '/p.ism/.mpd?t=0-6&vbegin=1', 400, 'bad-time'],
    ['vend not after vbegin', 'GET', '/p.ism/.mpd?vbegin=6&vend=2', 400, 'bad-time'],
    ['t and vend together', 'GET', '/p.ism/.m3u8?t=0-6&vend=4', 400, 'bad-time'],
    ['an ISO date on VOD', 'GET', '/p.ism/.mpd?t=2026-11-27T10:00:00', 400, 'bad-time'],
    ['time_shift negative', 'GET', '/p.ism/.mpd?time_shift=-1', 400, 'bad-option'],
    ['t past the end', 'GET', '/p.ism/.mpd?t=100-200', 404, 'empty-clip'],
    [
      'hls_client_manifest_version out of range',
      'GET',
      '/p.ism/.m3u8?hls_client_manifest_version=10',
      400,
      'bad-option',
    ],
    ['mpd_segment_template not time|number', 'GET', '/p.ism/.mpd?mpd_segment_template=foo', 400, 'bad-option'],
    ['presentation_name not alphanumeric', 'GET', '/p.ism/.mpd?presentation_name=a%2Fb', 400, 'bad-option'],
    ['boolean option with a bad value', 'GET', '/p.ism/.m3u8?hls_fmp4=maybe', 400, 'bad-option'],
    ['track_filter is not a query parameter', 'GET', '/p.ism/.mpd?track_filter=true', 400, 'bad-option'],
    ['malformed percent-encoding in the query', 'GET', '/p.ism/.mpd?filter=%zz', 400, 'bad-query'],
    ['POST', 'POST', '/p.ism/.mpd', 405, 'method-not-allowed'],
    ['DELETE', 'DELETE', '/p.ism/Manifest', 405, 'method-not-allowed'],
    ['static file that does not exist', 'GET', '/nothing.txt', 404, 'unknown-url'],
    ['player page: unknown player', 'GET', '/play?player=vlc&url=%2Fp.ism%2F.mpd', 400, 'bad-parameter'],
    ['player page: no manifest URL', 'GET', '/play?player=hlsjs', 400, 'bad-parameter'],
    [
      'player page: ClearKey keys not hex',
      'GET',
      '/play?player=dashjs&url=%2Fp.ism%2F.mpd&clearkeys=zz:yy',
      400,
      'bad-parameter',
    ],
    [
      'player page: ClearKey license URL not http(s)',
      'GET',
      '/play?player=shaka&url=%2Fp.ism%2F.mpd&clearkey=javascript%3Aalert(1)',
      400,
      'bad-parameter',
    ],
    ['player assets: not in the table', 'GET', '/_players/package.json', 404, 'unknown-url'],
    ['player assets: dot-dot', 'GET', '/_players/../../package.json', 400, 'bad-path'],
  ];
}

test('at least 25 bad requests, each with its documented status, code and a one-line reason', async () => {
  const list = cases();
  expect(list.length).toBeGreaterThanOrEqual(25);
  const wrong: string[] = [];
  for (const [what, method, rawPath, status, code] of list) {
    const r = await get(origin.url, rawPath, {}, method);
    const line = r.text;
    const ok =
      r.status === status &&
      r.headers['x-origin-error'] === code &&
      String(r.headers['content-type']).startsWith('text/plain') &&
      /^[^\n]+\n$/.test(line) &&
      !line.includes(origin.root) &&
      !/\bat .*\.(ts|js):\d+/.test(line);
    if (!ok)
      wrong.push(
        `${what}: ${method} ${rawPath.slice(0, 80)} → ${r.status} ${String(r.headers['x-origin-error'])} ${JSON.stringify(line.slice(0, 200))} (expected ${status} ${code})`,
      );
  }
  expect(wrong).toEqual([]);
});

test('error reasons name what is wrong', async () => {
  expect((await get(origin.url, '/p.ism/.mpd?filter=type%3D%22video%22')).text).toMatch(
    /filter: .* at 4: did you mean "=="\?/,
  );
  expect((await get(origin.url, '/p.ism/.mpd?t=abc')).text).toMatch(/^t: "abc" is not a time offset/);
  expect((await get(origin.url, `/p.ism/QualityLevels(${vb})/Fragments(video_eng=1)`)).text).toContain(
    'no fragment of video_eng starts at 1',
  );
});

test('a HEAD of a bad request has the status and headers but no body', async () => {
  const r = await get(origin.url, '/nope.ism/Manifest', {}, 'HEAD');
  expect(r.status).toBe(404);
  expect(r.headers['x-origin-error']).toBe('unknown-presentation');
  expect(r.body.byteLength).toBe(0);
});

test('server-side failures are 500 without file paths or stack traces, and logged', async () => {
  for (const name of ['broken', 'missing']) {
    const r = await get(origin.url, `/${name}.ism/.mpd`);
    expect(r.status).toBe(500);
    expect(r.text).not.toContain(origin.root);
    expect(r.text).not.toMatch(/\.ts:\d+|\.js:\d+/);
    expect(r.text.split('\n')).toHaveLength(2);
  }
  expect(origin.logs.some((l) => l.startsWith('error 500'))).toBe(true);
});

test('the server keeps serving after every bad request', async () => {
  for (const url of ['/p.ism/Manifest', '/p.ism/.mpd', '/p.ism/.m3u8']) {
    const r = await get(origin.url, url);
    expect([url, r.status]).toEqual([url, 200]);
  }
});
