// `npm start` (`origin demo`) puts the embedded edge in front of the origin: it prints the URLs
// through the edge and the origin's own address, every printed URL answers through the edge (as
// it answers direct, where it is no edge-only URL), the shipped envoy.yaml's aliases, signed URLs
// and Basic-auth location work as printed, and Ctrl-C stops both. Run in-process on free ports.

import { readFileSync } from 'node:fs';
import { DEMO_ENCRYPTED, parseDemoArgs } from '../../../origin/cli/demo-command';
import { DEMO_BASIC_AUTH } from '../../../origin/cli/demo-examples';
import { escapeHtml, playHref } from '../../../origin/player/player-page';
import { startDemo } from '../../helpers/demo';
import { request } from '../../host-glue/envoy/edge-helpers';

test('--edge-port and --no-edge parse; the edge listens on 8080 by default, the origin on 8081', () => {
  expect(parseDemoArgs([])).toMatchObject({ port: 8081, edgePort: 8080, noEdge: false });
  expect(parseDemoArgs(['--edge-port', '9090', '--no-edge'])).toMatchObject({ edgePort: 9090, noEdge: true });
  expect(() => parseDemoArgs(['--edge-port', 'x'])).toThrow('--edge-port must be 0..65535, not "x"');
});

test('--clearkey-port parses; the demo license server listens on 8082 by default', () => {
  expect(parseDemoArgs([]).clearKeyPort).toBe(8082);
  expect(parseDemoArgs(['--clearkey-port', '0']).clearKeyPort).toBe(0);
  expect(() => parseDemoArgs(['--clearkey-port'])).toThrow('--clearkey-port needs a value');
});

test('origin demo serves through the edge and prints the edge URLs and the direct one', async () => {
  const { out, err, running, edge } = await startDemo();
  try {
    const direct = /origin, direct {4}(http:\/\/127\.0\.0\.1:\d+)\//.exec(out.text)![1]!;
    expect(edge).not.toBe(direct);
    expect(out.text).toContain(`player page (every presentation, every format):  ${edge}/`);
    expect(out.text).toContain('Ctrl-C stops the edge and the origin.');
    const printed = [...out.text.matchAll(/(http:\/\/127\.0\.0\.1:\d+)(\/[^\s]*)/g)]
      .filter((m) => m[1] === edge)
      .map((m) => m[2]!);
    // the edge itself, the player page; per class 3 direct URLs, 2 aliases and a signed one, and 7
    // player links (the Basic-auth URL carries its user, so it is no bare edge URL); 2 encrypted
    // play pages, the filter example
    expect(printed.length).toBe(1 + 1 + 4 * (3 + 2 + 1 + 7) + 2 + 1);
    for (const p of new Set(printed)) {
      const viaEdge = await request(edge, p);
      expect([p, viaEdge.status, viaEdge.headers.server]).toEqual([p, 200, 'envoy']);
      // Aliases and signed URLs mean something only to the edge; `/` signs its examples anew.
      if (p === '/' || p.startsWith('/token/') || /\/fmp4\//.test(p)) continue;
      const viaOrigin = await request(direct, p);
      expect([p, viaEdge.body.equals(viaOrigin.body)]).toEqual([p, true]);
    }
  } finally {
    process.emit('SIGINT');
  }
  expect(await running).toBe(0);
  // The plugin's own lines reach stderr: its configuration line comes from the root context,
  // which Envoy prefixes with root_id and vm_id only (no plugin name).
  expect(err.text).toMatch(/^wasm log edge edge: edge: /m);
}, 120_000);

// Issue 25: what `npm start` prints works through the shipped envoy.yaml's demo locations.
describe('the demo locations of envoy.yaml through npm start', () => {
  let demo: Awaited<ReturnType<typeof startDemo>>;
  beforeAll(async () => {
    demo = await startDemo();
  }, 60_000);
  afterAll(async () => {
    process.emit('SIGINT');
    expect(await demo.running).toBe(0);
  });

  test('/tablets.ism/fmp4/avc.m3u8 lists only H.264 + AAC variants, fMP4, version 7', async () => {
    const master = await request(demo.edge, '/tablets.ism/fmp4/avc.m3u8');
    expect(master.status).toBe(200);
    const text = master.body.toString();
    expect(text).toMatch(/^#EXTM3U\n#EXT-X-VERSION:7\n/);
    const codecs = [...text.matchAll(/CODECS="([^"]+)"/g)].flatMap((m) => m[1]!.split(','));
    expect(codecs.length).toBeGreaterThan(0);
    expect(codecs.filter((c) => !/^(avc1\.[0-9A-F]{6}|mp4a\.40\.2)$/.test(c))).toEqual([]);
    expect(text).not.toContain('TYPE=SUBTITLES');
    // The origin's own master of the same presentation has more (Dutch subtitles, WebVTT, TS).
    const all = (await request(demo.edge, '/tablets.ism/.m3u8')).body.toString();
    expect(all).toContain('TYPE=SUBTITLES');
    expect(all).toMatch(/^#EXT-X-VERSION:[1-6]$/m);
    // A media playlist of it: fMP4 (EXT-X-MAP, .m4s), version 7, through the alias directory.
    const variant = /^(tablets-video_eng=\d+\.m3u8)$/m.exec(text)![1]!;
    const media = await request(demo.edge, `/tablets.ism/fmp4/${variant}`);
    expect(media.status).toBe(200);
    const m = media.body.toString();
    expect(m).toContain('#EXT-X-VERSION:7');
    expect(m).toMatch(/^#EXT-X-MAP:URI="[^"]+\.m4s[^"]*"$/m);
    expect(m).toMatch(/^[^#\s]+\.m4s\S*$/m);
    expect(m).not.toMatch(/\.ts(\?|$)/m);
  });

  test('the printed signed URL answers 200; with one hex digit of its hash changed, 403', async () => {
    const signed = new RegExp(`${demo.edge}(/token/([0-9a-f]{32})/([0-9a-f]{8})/tablets\\.ism/\\S+)`).exec(
      demo.out.text,
    );
    expect(signed).not.toBeNull();
    const [, url, hash, timestamp] = signed!;
    // Signed when printed, valid for the location's timeout (3600 s) from then.
    expect(Math.abs(parseInt(timestamp!, 16) - Date.now() / 1000)).toBeLessThan(120);
    const ok = await request(demo.edge, url!);
    expect([ok.status, ok.body.toString().startsWith('#EXTM3U')]).toEqual([200, true]);
    const flipped = hash!.slice(0, 7) + (hash![7] === '0' ? '1' : '0') + hash!.slice(8);
    const bad = await request(demo.edge, url!.replace(hash!, flipped));
    expect([bad.status, bad.headers['x-origin-error']]).toEqual([403, 'token-invalid']);
    // A segment under the same signature: the players resolve relative URLs under it.
    const variant = /^([^#\s]+\.m3u8\S*)$/m.exec(ok.body.toString())![1]!;
    const base = url!.slice(0, url!.indexOf('?')).replace(/[^/]*$/, '');
    expect((await request(demo.edge, `${base}${variant}`)).status).toBe(200);
  });

  test('/secure/… answers 401 without credentials and 200 with the demo ones', async () => {
    const printed = new RegExp(`http://demo:demo-only@127\\.0\\.0\\.1:\\d+(/secure/tablets\\.ism/\\S+)`).exec(
      demo.out.text,
    );
    expect(printed).not.toBeNull();
    const url = printed![1]!;
    const none = await request(demo.edge, url);
    expect([none.status, none.headers['www-authenticate']]).toEqual([401, 'Basic realm="Streaming Origin demo"']);
    const wrong = await request(demo.edge, url, {
      headers: { authorization: `Basic ${Buffer.from('demo:wrong').toString('base64')}` },
    });
    expect(wrong.status).toBe(401);
    const credentials = `${DEMO_BASIC_AUTH.user}:${DEMO_BASIC_AUTH.password}`;
    const ok = await request(demo.edge, url, {
      headers: { authorization: `Basic ${Buffer.from(credentials).toString('base64')}` },
    });
    expect([ok.status, ok.body.toString().startsWith('#EXTM3U')]).toEqual([200, true]);
  });

  test('the player page offers the same examples, the signed one freshly signed', async () => {
    const index = (await request(demo.edge, '/')).body.toString();
    expect(index).toContain('<h2>Through the edge</h2>');
    expect(index).toContain('href="/tablets.ism/fmp4/avc@intro.m3u8"');
    const token = /href="(\/token\/[0-9a-f]{32}\/[0-9a-f]{8}\/tablets\.ism\/[^"]+)"/
      .exec(index)![1]!
      .replace(/&#38;/g, '&');
    expect((await request(demo.edge, token)).status).toBe(200);
    expect(index).toContain(
      escapeHtml(playHref('hlsjs', '/secure/tablets.ism/.m3u8?hls_fmp4=true', undefined, 'demo:demo-only')),
    );
  });

  test('the filter box endpoint explains an expression, and an error with its offset, through the edge', async () => {
    const ok = await request(demo.edge, `/_filter?ism=/tablets.ism&expression=${encodeURIComponent('type=="audio"')}`);
    expect(ok.status).toBe(200);
    const body = JSON.parse(ok.body.toString()) as {
      kept: number;
      total: number;
      canonical: string;
      tracks: Array<{ keep: boolean; type: string }>;
    };
    expect([body.kept, body.total, body.canonical]).toEqual([3, 9, 'type=="audio"']);
    expect(body.tracks.filter((t) => t.keep).map((t) => t.type)).toEqual(['audio', 'audio', 'audio']);
    const bad = await request(demo.edge, `/_filter?ism=/tablets.ism&expression=${encodeURIComponent('type="audio"')}`);
    expect([bad.status, bad.headers['x-origin-error']]).toEqual([400, 'bad-filter']);
    expect(JSON.parse(bad.body.toString()).error).toEqual({
      message: 'unexpected "="',
      offset: 4,
      hint: 'did you mean "=="?',
      text: 'unexpected "=" at 4: did you mean "=="?',
    });
    for (const q of [
      'ism=/../x.ism&expression=true',
      'ism=/tablets.mp4&expression=true',
      'ism=/nothere.ism&expression=true',
    ]) {
      const r = await request(demo.edge, `/_filter?${q}`);
      expect([q, r.status]).toEqual([q, q.includes('nothere') ? 404 : 400]);
    }
  });
});

// The encrypted presentation of `npm start` (issue: DRM demo): its keyed formats only, ClearKey
// signalled with the demo license server, which answers the player page's origin (CORS); neither
// its server manifest (the keys) nor its clear sources are one GET away.
test('origin demo serves the encrypted presentation with its ClearKey license server', async () => {
  const { out, err, running, edge } = await startDemo();
  try {
    const license = /license server (http:\/\/127\.0\.0\.1:\d+\/license)\)/.exec(out.text)![1]!;
    const { kid, key, files } = DEMO_ENCRYPTED;

    const mpd = await request(edge, '/encrypted.ism/.mpd');
    expect(mpd.status).toBe(200);
    const text = mpd.body.toString();
    expect(text).toContain('value="cenc"');
    expect(text).toContain(`<dashif:Laurl>${license}</dashif:Laurl>`);
    const playlist = await request(edge, '/encrypted.ism/.m3u8?hls_fmp4=true');
    expect(playlist.status).toBe(200);
    expect(playlist.body.toString()).toContain(`KEYFORMAT="org.w3.clearkey"`);
    // Smooth has no key: refused, never served clear.
    const smooth = await request(edge, '/encrypted.ism/Manifest');
    expect([smooth.status, smooth.headers['x-origin-error']]).toEqual([403, 'protected-format']);
    for (const p of ['/encrypted.ism', ...files.map((f) => `/${f}`)]) {
      expect([p, (await request(edge, p)).status]).toEqual([p, 404]);
    }
    // The sources as the .ism names them (outside the root, `../…`), raw and percent-encoded,
    // through the edge and direct: never a file.
    const direct = /origin, direct {4}(http:\/\/127\.0\.0\.1:\d+)\//.exec(out.text)![1]!;
    const outDir = out.text
      .split('\n')
      .find((l) => l.endsWith('/encrypted.ism'))!
      .replace(/\/encrypted\.ism$/, '');
    const ism = readFileSync(`${outDir}/encrypted.ism`, 'utf8');
    const srcs = [...ism.matchAll(/src="([^"]+)"/g)].map((m) => m[1]!);
    expect(srcs).toHaveLength(files.length);
    for (const src of srcs)
      for (const p of [`/${src}`, `/${src.replace(/\.\./g, '%2e%2e')}`, `/${src.replace(/\//g, '%2f')}`])
        for (const base of [edge, direct]) {
          const r = await request(base, p);
          expect([base, p, r.status >= 400 && r.status < 500]).toEqual([base, p, true]);
          expect(r.body.includes(Buffer.from('moov'))).toBe(false);
        }

    // The index page lists its keyed formats with the players that decrypt them here.
    const index = (await request(edge, '/')).body.toString();
    const from = index.indexOf('<h2>/encrypted.ism</h2>');
    const section = index.slice(from, index.indexOf('<h2>', from + 1));
    expect(section).toContain(`ClearKey license server <code>${license}</code>`);
    const hrefs = [...section.matchAll(/href="(\/play\?[^"]+)"/g)].map((m) => m[1]!.replace(/&#38;/g, '&'));
    expect(hrefs.map((h) => new URLSearchParams(h.slice('/play?'.length)).get('player'))).toEqual(['shaka', 'hlsjs']);
    for (const h of hrefs) expect(new URLSearchParams(h.slice(6)).get('clearkey')).toBe(license);

    // W3C EME §9.1.4: the CDM's license request, from another origin than the license server's.
    const kidB64 = Buffer.from(kid, 'hex').toString('base64url');
    const answer = await fetch(license, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Origin: edge },
      body: JSON.stringify({ kids: [kidB64], type: 'temporary' }),
    });
    expect(answer.headers.get('access-control-allow-origin')).toBe('*');
    expect(await answer.json()).toEqual({
      keys: [{ kty: 'oct', kid: kidB64, k: Buffer.from(key, 'hex').toString('base64url') }],
      type: 'temporary',
    });
    // The demo key never reaches what the demo prints or logs.
    const k = Buffer.from(key, 'hex');
    for (const spelt of [key, key.toUpperCase(), k.toString('base64'), k.toString('base64url')])
      expect(out.text + err.text).not.toContain(spelt);
  } finally {
    process.emit('SIGINT');
  }
  expect(await running).toBe(0);
}, 120_000);
