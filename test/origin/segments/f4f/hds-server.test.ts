// HDS over HTTP and through the CLI dry run: the routes, content types, virtual paths and the
// query carried to fragments; every bad HDS request with its documented status and
// X-Origin-Error code, the server serving on afterwards.

import * as path from 'node:path';
import { writeHdsManifest } from '../../../../origin/manifests/hds';
import { hdsFragment } from '../../../../origin/segments/f4f/fragment-samples';
import { hdsMedia } from '../../../../origin/model/hds-media';
import { viewForQuery } from '../../../../origin/model/view';
import { decodePath, matchPresentationRoute } from '../../../../origin/server/routes';
import { wasmTrackSelector } from '../../../../origin/server/select';
import { runOrigin } from '../../../helpers/fixtures';
import { loadPresentation, PLAYABLE } from '../../../helpers/presentations';
import { get, startTestOrigin, TestOrigin } from '../../server/server-helpers';
import { parseFragment } from './f4f-reader';

let origin: TestOrigin;
let key: string; // the first media's key: audio_eng=…-video_eng=…

beforeAll(async () => {
  origin = await startTestOrigin({ p: PLAYABLE, ac3: ['audio_ac3_384k.isma'] });
  const p = await loadPresentation(path.join(origin.root, 'p.ism'));
  key = hdsMedia(viewForQuery(p, 'hds', '', wasmTrackSelector))[0]!.key;
});

afterAll(async () => {
  await origin.server.close();
});

async function expected(query: string, stem: string): Promise<string> {
  const p = await loadPresentation(path.join(origin.root, 'p.ism'));
  return writeHdsManifest(viewForQuery(p, 'hds', query, wasmTrackSelector), stem);
}

test.each([
  ['/p.ism/.f4m', '', ''],
  ['/p.ism/p.f4m', '', 'p'],
  ['/p.ism/any/virtual/dir/other.f4m', '', 'other'],
  [
    '/p.ism/.f4m?hds_multi_level=true&hds_client_manifest_version=2',
    'hds_multi_level=true&hds_client_manifest_version=2',
    '',
  ],
])('%s is the manifest the writer makes', async (url, query, stem) => {
  const r = await get(origin.url, url);
  expect(r.status).toBe(200);
  expect(r.headers['content-type']).toBe('application/f4m+xml');
  expect(r.headers['cache-control']).toBe('public, max-age=60');
  expect(r.text).toBe(await expected(query, stem));
});

test('a stream-level manifest, under a virtual path too', async () => {
  for (const url of [`/p.ism/p-${key}.f4m`, `/p.ism/v/p-${key}.f4m`]) {
    const r = await get(origin.url, url);
    expect(r.status).toBe(200);
    expect(r.text).toBe(await expected('', `p-${key}`));
    expect(r.text.match(/<media /g)).toHaveLength(1);
  }
});

test('a fragment: the URL a client makes from <media url> and Seg1-Frag<n>, with the query after the path', async () => {
  const manifest = (await get(origin.url, '/p.ism/.f4m?t=2-6')).text;
  const mediaUrl = /<media url="([^"]+)"/.exec(manifest)![1]!.replace(/&amp;/g, '&');
  const [pathPart, query] = mediaUrl.split('?') as [string, string];
  expect(query).toBe('t=2-6');
  const r = await get(origin.url, `/p.ism/${pathPart}Seg1-Frag2?${query}`);
  expect(r.status).toBe(200);
  expect(r.headers['content-type']).toBe('video/f4f');
  expect(r.headers['cache-control']).toBe('public, max-age=86400');
  const p = await loadPresentation(path.join(origin.root, 'p.ism'));
  const view = viewForQuery(p, 'hds', 't=2-6', wasmTrackSelector);
  const bytes = await hdsFragment(view, hdsMedia(view)[0]!, 2);
  expect(r.body.equals(Buffer.from(bytes))).toBe(true);
  expect(parseFragment(r.body).moof.sequenceNumber).toBe(2);
  // The same fragment under a virtual path; a Range of it.
  expect((await get(origin.url, `/p.ism/x/y/${pathPart}Seg1-Frag2?${query}`)).body.equals(r.body)).toBe(true);
  const range = await get(origin.url, `/p.ism/${pathPart}Seg1-Frag2?${query}`, { Range: 'bytes=0-7' });
  expect(range.status).toBe(206);
  expect(range.body.toString('latin1', 4, 8)).toBe('afra');
});

test('bad HDS requests: documented status, code, one-line reason', async () => {
  const cases: Array<[string, string, number, string]> = [
    ['fragment past the end', `/p.ism/p-${key}Seg1-Frag6`, 404, 'unknown-time'],
    ['fragment past the end of a sub-clip', `/p.ism/p-${key}Seg1-Frag3?t=2-6`, 404, 'unknown-time'],
    ['fragment 0 (numbered from 1)', `/p.ism/p-${key}Seg1-Frag0`, 404, 'unknown-time'],
    ['a ten-digit fragment number', `/p.ism/p-${key}Seg1-Frag9999999999`, 404, 'unknown-time'],
    ['segment 2 (every fragment is in segment 1)', `/p.ism/p-${key}Seg2-Frag1`, 404, 'unknown-time'],
    ['unknown bitrate', '/p.ism/p-audio_eng=1-video_eng=2Seg1-Frag1', 404, 'unknown-track'],
    ['a video without the audio of its media', `/p.ism/p-${key.split('-')[1]}Seg1-Frag1`, 404, 'unknown-track'],
    ['a track the filter removed', `/p.ism/p-${key}Seg1-Frag1?filter=type%3D%3D%22video%22`, 404, 'unknown-track'],
    ['malformed: no fragment number', `/p.ism/p-${key}Seg1-Frag`, 404, 'unknown-url'],
    ['malformed: a letter in the fragment number', `/p.ism/p-${key}Seg1-Frag1x`, 404, 'unknown-url'],
    ['malformed: an eleven-digit fragment number', `/p.ism/p-${key}Seg1-Frag12345678901`, 404, 'unknown-url'],
    ['malformed: no media name', '/p.ism/Seg1-Frag1', 404, 'unknown-url'],
    ['hds_client_manifest_version out of range', '/p.ism/.f4m?hds_client_manifest_version=3', 400, 'bad-option'],
    ['hds_multi_level not a boolean', '/p.ism/.f4m?hds_multi_level=maybe', 400, 'bad-option'],
    ['hds_minimum_fragment_length not a number', '/p.ism/.f4m?hds_minimum_fragment_length=x', 400, 'bad-option'],
    ['a sub-clip past the end', '/p.ism/.f4m?t=100-200', 404, 'empty-clip'],
    ['a filter syntax error', '/p.ism/.f4m?filter=type%3D%22video%22', 400, 'bad-filter'],
    ['nothing HDS can carry (AC-3)', '/ac3.ism/.f4m', 415, 'unsupported-media'],
    ['unknown presentation', '/nope.ism/.f4m', 404, 'unknown-presentation'],
  ];
  const wrong: string[] = [];
  for (const [what, url, status, code] of cases) {
    const r = await get(origin.url, url);
    const ok =
      r.status === status &&
      r.headers['x-origin-error'] === code &&
      String(r.headers['content-type']).startsWith('text/plain') &&
      /^[^\n]+\n$/.test(r.text);
    if (!ok)
      wrong.push(
        `${what}: ${url} → ${r.status} ${String(r.headers['x-origin-error'])} ${JSON.stringify(r.text.slice(0, 200))} (expected ${status} ${code})`,
      );
  }
  expect(wrong).toEqual([]);
  expect((await get(origin.url, `/p.ism/p-${key}Seg1-Frag6`)).text).toContain(
    `no fragment 6 for ${key} (there are 5, numbered from 1)`,
  );
  expect((await get(origin.url, '/p.ism/.f4m')).status).toBe(200);
});

describe('dry run: origin package -o stdout: <x.ism> <.f4m path> prints what HTTP serves', () => {
  test.each(['.f4m', 'p.f4m?hds_multi_level=true', '.f4m?t=0-0:00:04&hds_client_manifest_version=2'])(
    '%s',
    async (request) => {
      const r = await runOrigin(['package', '-o', 'stdout:', path.join(origin.root, 'p.ism'), request]);
      expect([r.code, r.stderr]).toEqual([0, '']);
      const http = await get(origin.url, `/p.ism/${request}`);
      expect(http.status).toBe(200);
      expect(r.stdout).toBe(http.text);
    },
  );

  test('a stream-level manifest too; a fragment is no client manifest', async () => {
    const ism = path.join(origin.root, 'p.ism');
    const r = await runOrigin(['package', '-o', 'stdout:', ism, `p-${key}.f4m`]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe((await get(origin.url, `/p.ism/p-${key}.f4m`)).text);
    const fragment = await runOrigin(['package', '-o', 'stdout:', ism, `p-${key}Seg1-Frag1`]);
    expect(fragment.code).toBe(2);
    expect(fragment.stderr).toMatch(/not a client-manifest path/);
  });
});

describe('the route table', () => {
  const routeOf = (p: string) => matchPresentationRoute(decodePath(p));

  test.each([
    ['/p.ism/.f4m', 'hds-manifest', { stem: '' }],
    ['/p.ism/p.f4m', 'hds-manifest', { stem: 'p' }],
    ['/p.ism/v/p-audio_eng=1-video_eng=2.f4m', 'hds-manifest', { stem: 'p-audio_eng=1-video_eng=2' }],
    [
      '/p.ism/p-audio_eng=1-video_eng=2Seg1-Frag3',
      'hds-fragment',
      { stem: 'p-audio_eng=1-video_eng=2', segment: '1', fragment: '3' },
    ],
    ['/p.ism/a/b/p-video_eng=2Seg1-Frag10', 'hds-fragment', { stem: 'p-video_eng=2', segment: '1', fragment: '10' }],
  ])('%s is %s', (p, kind, groups) => {
    const r = routeOf(p)!;
    expect(r.route.kind).toBe(kind);
    expect(r.route.format).toBe('hds');
    expect(r.groups).toEqual(groups);
  });

  test('HDS tails are not taken by other formats, nor theirs by HDS', () => {
    expect(routeOf('/p.ism/p-video_eng=2-3.ts')!.route.kind).toBe('hls-ts');
    expect(routeOf('/p.ism/hls/p-video_eng=2-3.m4s')!.route.kind).toBe('hls-fmp4');
    expect(routeOf('/p.ism/p.f4m.mpd')!.route.kind).toBe('dash-mpd');
    expect(routeOf('/p.ism/p.mpd.f4m')!.route.kind).toBe('hds-manifest');
  });
});
