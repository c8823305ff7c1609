// Set-up shared by the edge proxy-mechanics tests (edge-proxy-headers.test.ts,
// edge-proxy-connections.test.ts): an upstream the tests control, the embedded edge in front of it
// with a plugin written here (host-glue/proxy-wasm/http-filter.ts's interface, recording every
// call), and the check after each test that every stream's end() ran exactly once.

import * as http from 'node:http';
import { HeaderList } from '../../../host-glue/proxy-wasm/http-filter';
import {
  eventually,
  recordingFactory,
  RecordingFactory,
  startTestEdge,
  startUpstream,
  Upstream,
  withFactory,
  EdgeUnderTest,
} from './edge-helpers';

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

export let plugin: RecordingFactory;
export let upstream: Upstream;
export let edge: EdgeUnderTest;

/**
 * Starts the upstream and the edge for the calling test file and checks every stream after each
 * test. `upstream` answers through the file's current handler; `reset` sets it back to the default
 * (method and URL as text/plain) before each test.
 */
export function setUpProxyEdge(handle: Handler, reset: (h: Handler) => void): void {
  beforeAll(async () => {
    upstream = await startUpstream(handle);
    plugin = recordingFactory();
    edge = await startTestEdge(upstream.url, { createPlugin: withFactory(plugin) });
  });

  afterAll(async () => {
    await edge.close();
    await upstream.close();
    expect(plugin.shutdowns).toBe(1);
  });

  beforeEach(() => {
    plugin.behaviour = {};
    reset((req, res) => {
      res.setHeader('content-type', 'text/plain');
      res.end(`${req.method} ${req.url}`);
    });
  });

  afterEach(async () => {
    // Every stream of the test is over and was ended exactly once (Envoy: on_log, on_done, on_delete).
    await eventually(() => plugin.streams.every((s) => s.ends > 0));
    expect(plugin.streams.map((s) => s.ends)).toEqual(plugin.streams.map(() => 1));
    for (const s of plugin.streams) expect(s.calls.filter((c) => c.call === 'end').length).toBe(1);
    plugin.streams.length = 0;
  });
}

export const names = (h: HeaderList | undefined): string[] => (h ?? []).map(([k]) => k);
export const lastStream = () => plugin.streams[plugin.streams.length - 1]!;
