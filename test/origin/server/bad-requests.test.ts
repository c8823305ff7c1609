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

/**
 * Per X-Origin-Error code: its status and the requests that must get it ([description, raw path,
 * method when not GET]); built lazily (bitrates known after beforeAll).
 */
function groups(): Array<[string, number, Array<[string, string, string?]>]> {
  return [
    [
      'unknown-presentation',
      404,
      [
        ['unknown presentation', '/nope.ism/Manifest'],
        ['double-encoded dot-dot stays literal and unknown', '/%252e%252e/p.ism/Manifest'],
      ],
    ],
    [
      'unknown-track',
      404,
      [
        ['unknown bitrate (Smooth)', '/p.ism/QualityLevels(1)/Fragments(video_eng=0)'],
        ['unknown track name (Smooth)', `/p.ism/QualityLevels(${vb})/Fragments(nope=0)`],
        ['unknown bitrate (DASH init)', '/p.ism/dash/p-video_eng=999.dash'],
      ],
    ],
    [
      'unknown-time',
      404,
      [
        ['time not on a fragment boundary (Smooth)', `/p.ism/QualityLevels(${vb})/Fragments(video_eng=1)`],
        ['time past the end (Smooth)', `/p.ism/QualityLevels(${vb})/Fragments(video_eng=99999999999999999999)`],
        ['time not on a segment boundary (DASH)', `/p.ism/dash/p-video_eng=${vb}-1.dash`],
        ['segment number 0 (DASH $Number$)', `/p.ism/dash/p-video_eng=${vb}-0.dash?mpd_segment_template=number`],
        ['segment past the end (HLS)', `/p.ism/hls/p-video_eng=${vb}-99.m4s`],
        ['segment 0 (HLS numbers from 1)', `/p.ism/hls/p-audio_eng=${ab}-0.m4s`],
      ],
    ],
    [
      'bad-path',
      400,
      [
        ['dot-dot segment', '/p.ism/../p.ism/Manifest'],
        ['encoded dot-dot', '/p.ism/%2e%2e/%2e%2e/etc/passwd'],
        ['encoded slash', '/p.ism%2FManifest'],
        ['encoded backslash', '/p.ism/x%5c..%5cManifest'],
        ['malformed percent-encoding in the path', '/p.ism/%E0%A4%A.mpd'],
        ['NUL in the path', '/p.ism/x%00.mpd'],
        ['player assets: dot-dot', '/_players/../../package.json'],
      ],
    ],
    ['url-too-long', 414, [['over-long URL', `/p.ism/${long(5000)}.mpd`]]],
    [
      'unknown-url',
      404,
      [
        ['nothing after .ism/', '/p.ism/'],
        ['unknown output', '/p.ism/something.xyz'],
        ['static file that does not exist', '/nothing.txt'],
        ['player assets: not in the table', '/_players/package.json'],
      ],
    ],
    [
      'bad-filter',
      400,
      [
        ['filter syntax error', '/p.ism/.mpd?filter=type%3D%22video%22'],
        ['filter that keeps no track', '/p.ism/Manifest?filter=type%3D%3D%22data%22'],
        ['filter comparing a string with a number', '/p.ism/.m3u8?filter=type%3D%3D1'],
        ['over-long filter', `/p.ism/.mpd?filter=${long(5000)}`],
      ],
    ],
    [
      'bad-time',
      400,
      [
        ['malformed t', '/p.ism/.mpd?t=abc'],
        ['t end before start', '/p.ism/Manifest?t=6-2'],
        ['t with 61 minutes', '/p.ism/.m3u8?t=0:61:00'],
        ['t and vbegin together', '/p.ism/.mpd?t=0-6&vbegin=1'],
        ['vend not after vbegin', '/p.ism/.mpd?vbegin=6&vend=2'],
        ['t and vend together', '/p.ism/.m3u8?t=0-6&vend=4'],
        ['an ISO date on VOD', '/p.ism/.mpd?t=2026-11-27T10:00:00'],
      ],
    ],
    [
      'bad-option',
      400,
      [
        ['time_shift negative', '/p.ism/.mpd?time_shift=-1'],
        ['hls_client_manifest_version out of range', '/p.ism/.m3u8?hls_client_manifest_version=10'],
        ['mpd_segment_template not time|number', '/p.ism/.mpd?mpd_segment_template=foo'],
        ['presentation_name not alphanumeric', '/p.ism/.mpd?presentation_name=a%2Fb'],
        ['boolean option with a bad value', '/p.ism/.m3u8?hls_fmp4=maybe'],
        ['track_filter is not a query parameter', '/p.ism/.mpd?track_filter=true'],
      ],
    ],
    ['empty-clip', 404, [['t past the end', '/p.ism/.mpd?t=100-200']]],
    ['bad-query', 400, [['malformed percent-encoding in the query', '/p.ism/.mpd?filter=%zz']]],
    [
      'method-not-allowed',
      405,
      [
        ['POST', '/p.ism/.mpd', 'POST'],
        ['DELETE', '/p.ism/Manifest', 'DELETE'],
      ],
    ],
    [
      'bad-parameter',
      400,
      [
        ['player page: unknown player', '/play?player=vlc&url=%2Fp.ism%2F.mpd'],
        ['player page: no manifest URL', '/play?player=hlsjs'],
        ['player page: ClearKey keys not hex', '/play?player=dashjs&url=%2Fp.ism%2F.mpd&clearkeys=zz:yy'],
        [
          'player page: ClearKey license URL not http(s)',
          '/play?player=shaka&url=%2Fp.ism%2F.mpd&clearkey=javascript%3Aalert(1)',
        ],
      ],
    ],
  ];
}

/** [description, method, raw path, status, X-Origin-Error code] */
function cases(): Array<[string, string, string, number, string]> {
  return groups().flatMap(([code, status, requests]) =>
    requests.map(
      ([what, rawPath, method = 'GET']) =>
        [what, method, rawPath, status, code] as [string, string, string, number, string],
    ),
  );
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
