// The rewrite maps in the shipped plugin: build/edge.wasm through the real proxy-wasm host, a
// location with "rewrite" (the demo's maps), requests through the HttpFilterStream seam. What
// goes upstream is the rewritten :path in the plugin's canonical encoding; what the engine
// refuses (configuration errors) makes the plugin refuse its configuration with the member path.

import fc from 'fast-check';
import type { ProxyWasmPlugin } from '../../../host-glue/proxy-wasm/host';
import { closeAll, loadEdge, nowSeconds, refusal, send, signed } from './plugin-helpers';

const MAPS = {
  filter: {
    avc: 'filter=FourCC=="AVC1"||FourCC=="AACL"',
    sd: 'filter=(type=="video"%26%26systemBitrate<1000000)||FourCC=="AACL"',
  },
  timeline: { intro: 't=0-0:00:06', late: 'vbegin=0:00:04' },
  alter: { fmp4: 'hls_fmp4=true&hls_client_manifest_version=7', ts: 'hls_fmp4=false' },
};
const AVC = 'filter=FourCC==%22AVC1%22%7C%7CFourCC==%22AACL%22';
const FMP4 = 'hls_fmp4=true&hls_client_manifest_version=7';
const SECRET = 'rewrite secret';

let plugin: ProxyWasmPlugin;
let logs: string[];
beforeAll(async () => {
  ({ plugin, logs } = await loadEdge({
    locations: [
      { prefix: '/', skip_rewrite: false, rewrite: { rules: 'default', maps: MAPS } },
      { prefix: '/plain/' },
      {
        prefix: '/token/',
        skip_rewrite: false,
        auth_token: { secret: SECRET, prefix: 'token', timeout: 3600 },
        rewrite: { maps: MAPS },
      },
      { prefix: '/checked/', skip_rewrite: false, validate_filter: true, rewrite: { maps: MAPS } },
    ],
  }));
});
afterAll(closeAll);

test('the configuration log line names the rewrite', () => {
  expect(logs.some((l) => l.includes('/ [rewrite]'))).toBe(true);
});

test.each([
  ['master', '/vod/tos.ism/fmp4/avc.m3u8', `/vod/tos.ism/.m3u8?${FMP4}&${AVC}&suppress_query_parameters`],
  [
    'master with a timeline',
    '/vod/tos.ism/fmp4/avc@intro.m3u8',
    `/vod/tos.ism/.m3u8?${FMP4}&${AVC}&presentation_name=intro&suppress_query_parameters`,
  ],
  [
    'media playlist of a subclip (its query dropped)',
    '/vod/tos.ism/fmp4/intro-audio_eng=64113-video_eng=410594.m3u8?presentation_name=intro',
    `/vod/tos.ism/audio_eng=64113-video_eng=410594.m3u8?${FMP4}&t=0-0:00:06&suppress_query_parameters`,
  ],
  [
    'media playlist, default name',
    '/vod/tos.ism/ts/tos-video_eng=410594.m3u8',
    '/vod/tos.ism/video_eng=410594.m3u8?hls_fmp4=false&suppress_query_parameters',
  ],
  [
    'fMP4 segment (its query kept)',
    '/vod/tos.ism/fmp4/hls/tos-video_eng=410594-2.m4s?t=0-0:00:06',
    `/vod/tos.ism/hls/tos-video_eng=410594-2.m4s?${FMP4}&t=0-0:00:06`,
  ],
  [
    'TS segment',
    '/vod/tos.ism/ts/tos-audio_eng=64113-video_eng=410594-1.ts',
    '/vod/tos.ism/tos-audio_eng=64113-video_eng=410594-1.ts?hls_fmp4=false',
  ],
  ['Smooth manifest', '/vod/tos.ism/avc/Manifest', `/vod/tos.ism/Manifest?${AVC}&suppress_query_parameters`],
  [
    'Smooth fragment',
    '/vod/tos.ism/avc/QualityLevels(410594)/Fragments(video_eng=0)',
    `/vod/tos.ism/QualityLevels(410594)/Fragments(video_eng=0)?${AVC}`,
  ],
  [
    'an encoded alias is decoded once first',
    '/vod/tos.ism/fmp4/%61vc%40intro.m3u8',
    `/vod/tos.ism/.m3u8?${FMP4}&${AVC}&presentation_name=intro&suppress_query_parameters`,
  ],
  [
    'a path that needs encoding keeps its canonical spelling',
    '/vod/my%20film.ism/fmp4/avc.m3u8',
    `/vod/my%20film.ism/.m3u8?${FMP4}&${AVC}&suppress_query_parameters`,
  ],
  ['no rule: unchanged', '/vod/tos.ism/.m3u8?hls_fmp4=true', '/vod/tos.ism/.m3u8?hls_fmp4=true'],
  ['a directory that is no format: unchanged', '/vod/tos.ism/other/avc.m3u8', '/vod/tos.ism/other/avc.m3u8'],
  ['a location without rewrite: unchanged', '/plain/tos.ism/fmp4/avc.m3u8', '/plain/tos.ism/fmp4/avc.m3u8'],
])('%s: %s', async (_what, target, forwarded) => {
  expect(await send(plugin, target)).toMatchObject({ status: 0, forwarded });
});

test('after token authentication, the rewrite sees the path without the token', async () => {
  const target = signed(SECRET, 'token', '/tos.ism/fmp4/avc@late.m3u8', nowSeconds());
  expect(await send(plugin, target)).toMatchObject({
    status: 0,
    forwarded: `/token/tos.ism/.m3u8?${FMP4}&${AVC}&presentation_name=late&suppress_query_parameters`,
  });
  expect((await send(plugin, '/token/0123456789abcdef0123456789abcdef/00000000/tos.ism/fmp4/avc.m3u8')).status).toBe(
    410,
  );
});

test("validate_filter sees the rewritten query: the map's filter is forwarded in canonical form", async () => {
  const r = await send(plugin, '/checked/tos.ism/ts/sd.m3u8');
  expect(r.forwarded).toBe(
    '/checked/tos.ism/.m3u8?hls_fmp4=false&filter=(type%3D%3D%22video%22%26%26systemBitrate%3C1000000)%7C%7CFourCC%3D%3D%22AACL%22&suppress_query_parameters',
  );
});

test('a rewrite configuration error: the plugin (and so Envoy) refuses the configuration, naming the member', async () => {
  const maps = await refusal({
    locations: [{ prefix: '/', skip_rewrite: false, rewrite: { maps: { filter: { 'hd-only': 'filter=true' } } } }],
  });
  expect(maps.join('\n')).toContain(
    "locations[0].rewrite.maps.filter.hd-only: no rule can look this key up: the parts that read map filter (<bundle> (name: no '-', '@' or '/'), <dir> (name: no '-', '@' or '/')) cannot hold it",
  );
  const rules = await refusal({
    locations: [
      { prefix: '/', skip_rewrite: false },
      { prefix: '/x/', skip_rewrite: false, rewrite: { rules: [{ match: '/<a>', to: '/<b>' }] } },
    ],
  });
  expect(rules.join('\n')).toContain('locations[1].rewrite.rules[0].to: <b> is not a part of the pattern /<a>');
});

test('random alias-like targets never trap the plugin: each is forwarded or refused with a status', async () => {
  const piece = fc.constantFrom(
    '/',
    'tos.ism',
    'fmp4',
    'ts',
    'avc',
    '@',
    'intro',
    '-',
    'video_eng=1',
    '.m3u8',
    '.ts',
    'hls',
    'keyframes',
    '%2e',
    '%40',
    '%',
    '..',
    '?',
    '&',
    't=1',
    'Manifest',
    'QualityLevels(1)',
    'Fragments(v=1)',
    'é',
  );
  await fc.assert(
    fc.asyncProperty(fc.array(piece, { maxLength: 14 }), async (parts) => {
      const r = await send(plugin, `/${parts.join('')}`);
      expect(r.status === 0 ? r.forwarded.startsWith('/') : r.status >= 400 && r.status < 500).toBe(true);
    }),
    { numRuns: 400 },
  );
});
