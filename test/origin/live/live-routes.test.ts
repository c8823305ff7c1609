// The live URL grammar (origin/live/live-routes.ts) and its table in docs/reference/urls.md.

import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { liveRoutesMarkdown, matchLiveRoute } from '../../../origin/live/live-routes';
import { ROOT } from '../../helpers/fixtures';
import { thrownOriginError } from '../../helpers/errors';

const match = (p: string): [string, string, string | undefined] | undefined => {
  const m = matchLiveRoute(p.slice(1).split('/'));
  return m === undefined ? undefined : [m.route.kind, m.isml, m.stream];
};

test('ingest, state and archive URLs; other tails are live output; the .isml and its archive are 404', () => {
  expect(match('/live/ch1.isml/Streams(video-640x360-800k.cmfv)')).toEqual([
    'ingest',
    '/live/ch1.isml',
    'video-640x360-800k.cmfv',
  ]);
  expect(match('/ch1.isml/Events(ev1)/Streams(ffmpeg)')).toEqual(['ingest', '/ch1.isml', 'ffmpeg']);
  expect(match('/a/b/ch.isml/state')).toEqual(['state', '/a/b/ch.isml', undefined]);
  expect(match('/ch.ISML/archive')).toEqual(['archive', '/ch.ISML', undefined]);
  expect(match('/vod/x.ism/Manifest')).toBeUndefined();
  // Live output: the server matches the tail against the presentation URL table.
  expect(match('/live/ch.isml/.mpd')).toEqual(['output', '/live/ch.isml', undefined]);
  expect(matchLiveRoute(['ch.isml', 'hls', 'ch-video=1.m4s'])?.tail).toBe('hls/ch-video=1.m4s');
  expect(match('/index.html')).toBeUndefined();
  for (const p of ['/ch.isml', '/ch.isml/Streams(a/b)', '/ch.isml/Streams()', '/ch.isml.archive/channel.json'])
    expect([p, thrownOriginError(() => match(p)).code]).toEqual([p, 'unknown-url']);
});

test('docs/reference/urls.md prints the live route table', () => {
  const doc = readFileSync(path.join(ROOT, 'docs/reference/urls.md'), 'utf8');
  const m = /<!-- live-url-table -->\n([\s\S]*?)\n?<!-- \/live-url-table -->/.exec(doc);
  if (process.env.UPDATE_GOLDEN === '1' && m !== null) {
    writeFileSync(
      path.join(ROOT, 'docs/reference/urls.md'),
      doc.replace(m[0], `<!-- live-url-table -->\n${liveRoutesMarkdown()}\n<!-- /live-url-table -->`),
    );
    return;
  }
  expect(m?.[1]).toBe(liveRoutesMarkdown());
});
