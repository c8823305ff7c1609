// The URL grammar is data: the table matches what it says, refuses what it must, and
// docs/reference/urls.md prints the same table.

import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { OriginError } from '../../../origin/errors';
import { decodePath, matchPresentationRoute, ROUTES, routesMarkdown } from '../../../origin/server/routes';
import { ROOT } from '../../helpers/fixtures';

const kindOf = (p: string): string | undefined => matchPresentationRoute(decodePath(p))?.route.kind;

test.each([
  ['/a/b/p.ism/Manifest', 'smooth-manifest'],
  ['/p.ism/manifest', 'smooth-manifest'],
  ['/p.ism/MANIFEST', 'smooth-manifest'],
  ['/p.ism/QualityLevels(400000)/Fragments(video_eng=0)', 'smooth-fragment'],
  ['/p.ism/QualityLevels(64000)/Fragments(audio_eng=-213333)', 'smooth-fragment'],
  ['/p.ism/.mpd', 'dash-mpd'],
  ['/p.ism/p.mpd', 'dash-mpd'],
  ['/p.ism/virtual/path/p.mpd', 'dash-mpd'],
  ['/p.ism/dash/p-video_eng=400000.dash', 'dash-init-or-media'],
  ['/p.ism/dash/p-video_eng=400000-213333.dash', 'dash-init-or-media'],
  ['/p.ism/.m3u8', 'hls-playlist'],
  ['/p.ism/p-video_eng=400000.m3u8', 'hls-playlist'],
  ['/p.ism/hls/p-video_eng=400000-1.m4s', 'hls-fmp4'],
  ['/p.ism/v/hls/p-video_eng=400000.m4s', 'hls-fmp4'],
])('%s is %s', (p, kind) => {
  expect(kindOf(p)).toBe(kind);
});

test('paths without a .ism segment are not presentation routes', () => {
  expect(kindOf('/')).toBeUndefined();
  expect(kindOf('/media/x.ismv')).toBeUndefined();
});

test.each([
  ['/p.ism/../x', 'bad-path'],
  ['/p.ism/./Manifest', 'bad-path'],
  ['/p.ism/%2e%2e/Manifest', 'bad-path'],
  ['/a%2fb/p.ism/Manifest', 'bad-path'],
  ['/a%5Cb/p.ism/Manifest', 'bad-path'],
  ['/a//p.ism/Manifest', 'bad-path'],
  ['/p.ism/%zz.mpd', 'bad-path'],
  ['relative', 'bad-path'],
  ['/p.ism/' + 'x'.repeat(5000), 'url-too-long'],
  ['/p.ism/', 'unknown-url'],
  ['/p.ism/Fragments(x=1)', 'unknown-url'],
  ['/p.ism/QualityLevels(abc)/Fragments(video=0)', 'unknown-url'],
])('%s is refused (%s)', (p, code) => {
  let error: unknown;
  try {
    matchPresentationRoute(decodePath(p));
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(OriginError);
  expect((error as OriginError).code).toBe(code);
});

test('percent-decoding happens exactly once', () => {
  expect(decodePath('/a%2520b/p.ism')).toEqual(['a%20b', 'p.ism']);
  expect(decodePath('/a%20b/p.ism')).toEqual(['a b', 'p.ism']);
});

test('docs/reference/urls.md prints the route table', () => {
  const readme = readFileSync(path.join(ROOT, 'docs/reference/urls.md'), 'utf8');
  const m = /<!-- url-table -->\n([\s\S]*?)\n<!-- \/url-table -->/.exec(readme);
  expect(m?.[1]).toBe(routesMarkdown());
});

test('the manifest routes are the ones the rendered-manifest cache keeps', () => {
  const manifests = ROUTES.filter((r) => r.cacheClass === 'manifest').map((r) => r.kind);
  expect(manifests.sort()).toEqual([
    'dash-mpd',
    'hds-manifest',
    'hls-iframe-playlist',
    'hls-playlist',
    'smooth-manifest',
  ]);
});
