// `npm start` (`origin demo`) puts the embedded edge in front of the origin: it prints the URLs
// through the edge and the origin's own address, every printed URL answers through the edge as
// it answers direct, and Ctrl-C stops both. Run in-process on free ports.

import { DEMO_ENCRYPTED, parseDemoArgs } from '../../../origin/cli/demo-command';
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
    // the edge itself, the player page, 4 classes × 3 formats, 2 encrypted play pages, the filter example
    expect(printed.length).toBe(1 + 1 + 4 * 3 + 2 + 1);
    for (const p of new Set(printed)) {
      const [viaEdge, viaOrigin] = await Promise.all([request(edge, p), request(direct, p)]);
      expect([p, viaEdge.status, viaEdge.headers.server]).toEqual([p, 200, 'envoy']);
      expect(viaEdge.body.equals(viaOrigin.body)).toBe(true);
    }
  } finally {
    process.emit('SIGINT');
  }
  expect(await running).toBe(0);
  // The plugin's own lines reach stderr: its configuration line comes from the root context,
  // which Envoy prefixes with root_id and vm_id only (no plugin name).
  expect(err.text).toMatch(/^wasm log edge edge: edge: /m);
}, 120_000);

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
    expect(out.text + err.text).not.toContain(key);
  } finally {
    process.emit('SIGINT');
  }
  expect(await running).toBe(0);
}, 120_000);
