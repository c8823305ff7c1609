// The HLS segment routes in the URL grammar: which tails they take (keyframes/ before the generic
// shapes, virtual paths ignored), what they refuse, and what docs/reference/urls.md says of them.

import { OriginError } from '../../../origin/errors';
import { decodePath, matchPresentationRoute, ROUTES, routesMarkdown } from '../../../origin/server/routes';

const match = (p: string): { kind: string; groups: Record<string, string> } | undefined => {
  const m = matchPresentationRoute(decodePath(p));
  return m === undefined ? undefined : { kind: m.route.kind, groups: m.groups };
};

test.each([
  ['/p.ism/p-audio_eng=64008-video_eng=401000-1.ts', 'hls-ts', 'p-audio_eng=64008-video_eng=401000', '1'],
  ['/p.ism/p-video_eng=401000-12.ts', 'hls-ts', 'p-video_eng=401000', '12'],
  ['/p.ism/any/virtual/dir/p-video_eng=401000-3.ts', 'hls-ts', 'p-video_eng=401000', '3'],
  ['/p.ism/p-audio_eng=64008-2.aac', 'hls-aac', 'p-audio_eng=64008', '2'],
  ['/p.ism/p-audio_eng_ac3=384000-2.ac3', 'hls-ac3', 'p-audio_eng_ac3=384000', '2'],
  ['/p.ism/p-audio_eng_ec3=256000-2.ec3', 'hls-ec3', 'p-audio_eng_ec3=256000', '2'],
  ['/p.ism/p-textstream_eng=1549-1.webvtt', 'hls-webvtt', 'p-textstream_eng=1549', '1'],
  ['/p.ism/keyframes/p-video_eng=401000.m3u8', 'hls-iframe-playlist', 'p-video_eng=401000', undefined],
  ['/p.ism/keyframes/p-video_eng=401000-5.ts', 'hls-iframe-ts', 'p-video_eng=401000', '5'],
  ['/p.ism/keyframes/p-video_eng=401000-5.m4s', 'hls-iframe-m4s', 'p-video_eng=401000', '5'],
  ['/p.ism/v/keyframes/p-video_eng=401000-5.ts', 'hls-iframe-ts', 'p-video_eng=401000', '5'],
  // Not taken by the new routes.
  ['/p.ism/hls/p-video_eng=401000-1.m4s', 'hls-fmp4', 'p-video_eng=401000-1', undefined],
  ['/p.ism/p-audio_eng=64008-video_eng=401000.m3u8', 'hls-playlist', 'p-audio_eng=64008-video_eng=401000', undefined],
])('%s is %s', (url, kind, stem, n) => {
  const m = match(url);
  expect(m?.kind).toBe(kind);
  expect(m?.groups['stem']).toBe(stem);
  expect(m?.groups['n']).toBe(n);
});

test.each([
  ['/p.ism/p-video_eng=401000.ts'], // no segment number
  ['/p.ism/-1.ts'], // no rendition
  ['/p.ism/p-video_eng=401000-12345678901.ts'], // more digits than a segment number has
  ['/p.ism/p-video_eng=401000-1.mp3'],
  ['/p.ism/p-video_eng=401000-1.TS'],
  ['/p.ism/keyframes/'],
])('%s: no route (unknown-url)', (url) => {
  let error: unknown;
  try {
    matchPresentationRoute(decodePath(url));
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(OriginError);
  expect((error as OriginError).code).toBe('unknown-url');
});

test('every generated-segment route has its content type', () => {
  const types = Object.fromEntries(ROUTES.map((r) => [r.kind, r.contentType]));
  expect(types).toMatchObject({
    'hls-ts': 'video/mp2t',
    'hls-aac': 'audio/aac',
    'hls-ac3': 'audio/ac3',
    'hls-ec3': 'audio/eac3',
    'hls-webvtt': 'text/vtt',
    'hls-iframe-playlist': 'application/vnd.apple.mpegurl',
    'hls-iframe-ts': 'video/mp2t',
    'hls-iframe-m4s': 'video/mp4',
  });
});

test('the README table lists the new shapes', () => {
  const table = routesMarkdown();
  for (const shape of [
    '<pres>.ism/<name>-<key>-<n>.ts',
    '<pres>.ism/keyframes/<name>-<trackName>=<bitrate>.m3u8',
    '<pres>.ism/<name>-<trackName>=<bitrate>-<n>.webvtt',
  ]) {
    expect(table).toContain(`\`${shape}\``);
  }
  // One row per route, each with four cells.
  expect(
    table
      .split('\n')
      .slice(2)
      .every((row) => row.split(' | ').length === 4),
  ).toBe(true);
});
