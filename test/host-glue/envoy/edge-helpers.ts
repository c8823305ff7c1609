// Shared pieces of the edge tests: a recording HttpFilterFactory (pass-through unless told
// otherwise) for the proxy mechanics, upstream servers the tests control, the edge started from
// envoy-config/envoy.yaml, and raw HTTP requests with or without keep-alive.

import { promises as fs } from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { AddressInfo, Socket } from 'node:net';
import { startEdge, StartedEdge } from '../../../origin/cli/edge-command';
import {
  BodyVerdict,
  CreatePlugin,
  HeaderList,
  HttpFilterFactory,
  HttpFilterStream,
  LogLevel,
  RequestHeadersVerdict,
  ResponseHeadersVerdict,
  StreamInfo,
} from '../../../host-glue/proxy-wasm/http-filter';
import { writeConfiguration } from '../../../origin/edge-config/envoy-yaml';
import { ROOT } from '../../helpers/fixtures';
import { RawAnswer, rawRequest, RawRequestOptions } from '../../helpers/raw-request';

export const ENVOY_YAML = path.join(ROOT, 'envoy-config', 'envoy.yaml');

/**
 * The shipped envoy.yaml with its plugin configuration (the demo's locations) emptied to `{}`,
 * for the tests that put their own configuration (or module) in its place.
 */
export async function emptiedEnvoyYaml(): Promise<string> {
  return writeConfiguration(await fs.readFile(ENVOY_YAML, 'utf8'), ENVOY_YAML, '{}').text;
}

/** One stream as the proxy drove it: every call in order, and how often end() came. */
export interface RecordedStream {
  info: StreamInfo;
  calls: Array<{ call: string; headers?: HeaderList; bytes?: number; eos?: boolean; status?: number }>;
  requestHeaders?: HeaderList;
  responseHeaders?: HeaderList;
  ends: number;
}

/** What a test plugin does at each step; pass-through by default. */
export interface Behaviour {
  requestHeaders?: (h: HeaderList, eos: boolean) => RequestHeadersVerdict | Promise<RequestHeadersVerdict>;
  requestBody?: (chunk: Uint8Array, eos: boolean) => BodyVerdict;
  responseHeaders?: (h: HeaderList, eos: boolean) => ResponseHeadersVerdict;
  responseBody?: (chunk: Uint8Array, eos: boolean) => BodyVerdict;
  /** The stream's responsePassesThrough() (asked at the head and before each chunk); absent:
   * the stream does not offer it, and every response goes through the filter. */
  passesResponse?: () => boolean;
}

export interface RecordingFactory extends HttpFilterFactory {
  streams: RecordedStream[];
  behaviour: Behaviour;
  shutdowns: number;
}

/** A pass-through plugin written in the test: the proxy's mechanics without the wasm host. */
export function recordingFactory(behaviour: Behaviour = {}, o: { decided?: boolean } = {}): RecordingFactory {
  // The host answers a verdict decided during the call as a plain value and a held one as a
  // promise (http-filter.ts Awaitable): `decided` answers plain values, otherwise every verdict
  // is a promise, so a proxy is tested on both paths.
  const answer = <T>(v: T | Promise<T>): T | Promise<T> => (o.decided === true ? v : Promise.resolve(v));
  const f: RecordingFactory = {
    streams: [],
    behaviour,
    shutdowns: 0,
    newStream(info: StreamInfo): HttpFilterStream {
      const r: RecordedStream = { info, calls: [], ends: 0 };
      f.streams.push(r);
      const b = (): Behaviour => f.behaviour;
      return {
        requestHeaders(headers, eos) {
          r.calls.push({ call: 'requestHeaders', headers: headers.map((h) => [...h]), eos });
          r.requestHeaders = headers;
          return answer(b().requestHeaders?.(headers, eos) ?? { kind: 'continue', headers });
        },
        requestBody(chunk, eos) {
          r.calls.push({ call: 'requestBody', bytes: chunk.byteLength, eos });
          return answer(b().requestBody?.(chunk, eos) ?? { kind: 'continue', data: chunk });
        },
        responseHeaders(headers, eos) {
          r.calls.push({ call: 'responseHeaders', headers: headers.map((h) => [...h]), eos });
          r.responseHeaders = headers;
          return answer(b().responseHeaders?.(headers, eos) ?? { kind: 'continue', headers });
        },
        responseBody(chunk, eos) {
          r.calls.push({ call: 'responseBody', bytes: chunk.byteLength, eos });
          return answer(b().responseBody?.(chunk, eos) ?? { kind: 'continue', data: chunk });
        },
        end() {
          r.calls.push({ call: 'end' });
          r.ends++;
        },
        responsePassesThrough() {
          return b().passesResponse?.() ?? false;
        },
        responsePassed(status, bytes) {
          r.calls.push({ call: 'responsePassed', status, bytes });
        },
      };
    },
    async shutdown() {
      f.shutdowns++;
    },
  };
  return f;
}

export interface Upstream {
  url: string;
  port: number;
  /** TCP connections accepted so far. */
  connections: number;
  requests: http.IncomingMessage[];
  close(): Promise<void>;
}

/** An HTTP server on loopback the test controls, counting its connections. */
export async function startUpstream(
  handler: (req: http.IncomingMessage, res: http.ServerResponse) => void,
): Promise<Upstream> {
  const sockets = new Set<Socket>();
  const up: Upstream = { url: '', port: 0, connections: 0, requests: [], close: async () => undefined };
  const server = http.createServer((req, res) => {
    up.requests.push(req);
    handler(req, res);
  });
  server.keepAliveTimeout = 30_000;
  server.on('connection', (s: Socket) => {
    up.connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  up.port = (server.address() as AddressInfo).port;
  up.url = `http://127.0.0.1:${up.port}`;
  up.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
    });
  return up;
}

/** A port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

export interface EdgeUnderTest extends StartedEdge {
  url: string;
  logs: string[];
  pluginLogs: Array<[LogLevel, string]>;
}

/** `origin edge --config <yaml> --port 0 --upstream <url>`, in-process, with a given host or the real one. */
export async function startTestEdge(
  upstream: string | undefined,
  o: { config?: string; createPlugin?: CreatePlugin; logLevel?: LogLevel; adminPort?: number } = {},
): Promise<EdgeUnderTest> {
  const logs: string[] = [];
  const pluginLogs: Array<[LogLevel, string]> = [];
  const started = await startEdge(
    {
      config: o.config ?? ENVOY_YAML,
      port: 0,
      host: '127.0.0.1',
      upstream: upstream === undefined ? undefined : new URL(upstream),
      adminPort: o.adminPort,
      logLevel: o.logLevel ?? 'info',
      quiet: false,
      help: false,
    },
    {
      cwd: ROOT,
      log: (l) => logs.push(l),
      pluginLog: (level, line) => pluginLogs.push([level, line]),
      ...(o.createPlugin ? { createPlugin: o.createPlugin } : {}),
    },
  );
  return { ...started, url: started.edge.url, logs, pluginLogs };
}

/** A CreatePlugin that hands out the given factory (the test plugin instead of the wasm host). */
export const withFactory =
  (f: HttpFilterFactory): CreatePlugin =>
  async () =>
    f;

export type Response = RawAnswer;

/** One request; `agent` for keep-alive (default: a fresh connection). */
export function request(base: string, rawPath: string, o: RawRequestOptions = {}): Promise<Response> {
  return rawRequest(base, rawPath, o);
}

/** Waits until `check` holds (streams end on 'close', a moment after the client saw the end). */
export async function eventually(check: () => boolean, ms = 2000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
