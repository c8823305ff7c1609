// What of a URL a log line keeps (origin/ops/redact.ts): stream options a query may set keep their
// values, everything else is [redacted]; token-shaped path segments too. Bad input included.

import { loggedPath, loggedUrl, REDACTED } from '../../../origin/ops/redact';
import { OPTIONS } from '../../../origin/options/registry';

test.each([
  ['/p.ism/.mpd', '/p.ism/.mpd'],
  ['/p.ism/.mpd?filter=type%3D%3D%22video%22&t=10-20', '/p.ism/.mpd?filter=type%3D%3D%22video%22&t=10-20'],
  ['/p.ism/.m3u8?hls_fmp4&hls_fmp4=true', '/p.ism/.m3u8?hls_fmp4&hls_fmp4=true'],
  ['/p.ism/.mpd?token=abc&sig=def', `/p.ism/.mpd?token=${REDACTED}&sig=${REDACTED}`],
  ['/p.ism/.mpd?abc', `/p.ism/.mpd?${REDACTED}`],
  ['/p.ism/.mpd?%66ilter=x', '/p.ism/.mpd?%66ilter=x'], // the name decodes to a stream option
  ['/p.ism/.mpd?%zz=1', `/p.ism/.mpd?${REDACTED}`], // a name that does not decode
  ['/p.ism/.mpd?a%20b=1', `/p.ism/.mpd?${REDACTED}`], // not a plain name
  [`/p.ism/.mpd?${'0123456789abcdef'}x=1`, `/p.ism/.mpd?${REDACTED}`], // a name with a hex run
  ['/p.ism/.mpd?&&x=1&', `/p.ism/.mpd?&&x=${REDACTED}&`],
  ['/p.ism/.mpd?', '/p.ism/.mpd?'],
  [`/t/${'a'.repeat(32)}/0badc0de/p.ism/.mpd`, `/t/${REDACTED}/p.ism/.mpd`],
  [`/t/${'a'.repeat(32)}/0badc0de`, `/t/${REDACTED}`],
  [`/t/${'a'.repeat(33)}/0badc0de/x`, `/t/${'a'.repeat(33)}/0badc0de/x`], // not the token's shape
  // The player page's Basic-auth credentials and the manifest URL it plays (a signed one, maybe).
  [
    '/play?player=hlsjs&url=%2Fsecure%2Fp.ism%2F.m3u8&auth=demo%3Ademo-only',
    `/play?player=${REDACTED}&url=${REDACTED}&auth=${REDACTED}`,
  ],
])('%s is logged as %s', (raw, logged) => {
  expect(loggedUrl(raw)).toBe(logged);
});

test('no secret option keeps its value; DRM options are not query options', () => {
  for (const o of OPTIONS.filter((x) => x.secret === true || !x.query)) {
    expect(loggedUrl(`/p.ism/.mpd?${o.name}=0123`)).toBe(`/p.ism/.mpd?${o.name}=${REDACTED}`);
  }
});

test('long URLs are cut; a decoded presentation path is redacted like a raw one', () => {
  expect(loggedUrl(`/${'x'.repeat(5000)}?filter=${'y'.repeat(5000)}`).length).toBeLessThanOrEqual(2 * 1024 + 1);
  expect(loggedPath(`/token/${'F'.repeat(32)}/65F1C2A0/vod/p.ism`)).toBe(`/token/${REDACTED}/vod/p.ism`);
});
