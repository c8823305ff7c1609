// `npm start` (`origin demo`) puts the embedded edge in front of the origin: it prints the URLs
// through the edge and the origin's own address, every printed URL answers through the edge as
// it answers direct, and Ctrl-C stops both. Run in-process on free ports.

import { Writable } from 'node:stream';
import { main } from '../../../origin/cli/main';
import { parseDemoArgs } from '../../../origin/cli/demo-command';
import { tempDir } from '../../helpers/fixtures';
import { request } from '../../host-glue/envoy/edge-helpers';

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

test('--edge-port and --no-edge parse; the edge listens on 8080 by default, the origin on 8081', () => {
  expect(parseDemoArgs([])).toMatchObject({ port: 8081, edgePort: 8080, noEdge: false });
  expect(parseDemoArgs(['--edge-port', '9090', '--no-edge'])).toMatchObject({ edgePort: 9090, noEdge: true });
  expect(() => parseDemoArgs(['--edge-port', 'x'])).toThrow('--edge-port must be 0..65535, not "x"');
});

test('origin demo serves through the edge and prints the edge URLs and the direct one', async () => {
  const out = new Capture();
  const err = new Capture();
  const running = main(['demo', '--port', '0', '--edge-port', '0', '--out', tempDir('edge-demo-')], out, err);
  try {
    for (let i = 0; i < 1200 && !out.text.includes('Ctrl-C stops'); i++) await new Promise((r) => setTimeout(r, 25));
    const edge = /through the edge {2}(http:\/\/127\.0\.0\.1:\d+)\//.exec(out.text)![1]!;
    const direct = /origin, direct {4}(http:\/\/127\.0\.0\.1:\d+)\//.exec(out.text)![1]!;
    expect(edge).not.toBe(direct);
    expect(out.text).toContain(`player page (every presentation, every format):  ${edge}/`);
    expect(out.text).toContain('Ctrl-C stops the edge and the origin.');
    const printed = [...out.text.matchAll(/(http:\/\/127\.0\.0\.1:\d+)(\/[^\s]*)/g)]
      .filter((m) => m[1] === edge)
      .map((m) => m[2]!);
    expect(printed.length).toBe(1 + 1 + 4 * 3 + 1); // the edge itself, the player page, 4 classes × 3 formats, the filter example
    for (const p of new Set(printed)) {
      const [viaEdge, viaOrigin] = await Promise.all([request(edge, p), request(direct, p)]);
      expect([p, viaEdge.status, viaEdge.headers.server]).toEqual([p, 200, 'envoy']);
      expect(viaEdge.body.equals(viaOrigin.body)).toBe(true);
    }
  } finally {
    process.emit('SIGINT');
  }
  expect(await running).toBe(0);
  expect(err.text).toContain('wasm log edge edge edge: '); // the plugin's own lines reach stderr
}, 120_000);
