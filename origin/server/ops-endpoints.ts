// The origin's own endpoints, for the platform that runs it (docs/guide/operations.md):
//   /metrics  the Prometheus text format (origin/ops/metrics.ts; every worker's sum under --workers)
//   /healthz  200 while the process answers (liveness)
//   /readyz   200 when it should get traffic: warm-up done, not draining, the root readable; else 503
// These three exact paths are reserved: a file named `metrics`, `healthz` or `readyz` at the root
// is not served, while a folder of that name and everything in it is (`/metrics/x.ism/.mpd` is a
// presentation URL), as is `metrics.ism`. They are answered before the edge filter of `serve
// --edge-config`, like Envoy's admin endpoints, which live on a listener of their own.

import * as http from 'node:http';
import { originError } from '../errors';
import { rootReadable } from '../io/storage';
import { METRICS_CONTENT_TYPE, OriginMetrics } from '../ops/metrics';
import { TIME_PATH } from '../manifests/dash-live';

export const OPS_PATHS: ReadonlySet<string> = new Set(['/metrics', '/healthz', '/readyz', TIME_PATH]);

/** How long /readyz waits for the root to be listed before it calls storage unreachable, ms. */
export const STORAGE_CHECK_MS = 2000;

/** What the endpoints read of the server. */
export interface OpsState {
  root: string;
  metrics: OriginMetrics | undefined;
  /** The warm-up is done and the server listens. */
  ready: boolean;
  /** SIGTERM came: finishing what is in flight (drain.ts). */
  draining: boolean;
  /** The clock `/.time` reads, ms since 1970 (injectable for tests; default Date.now). */
  now?: () => number;
}

/** /readyz's answer: each check and the verdict. */
export interface Readiness {
  ready: boolean;
  warmUp: 'done' | 'running';
  draining: boolean;
  /** 'ok', or why the root could not be listed (an error code, or 'timeout'). */
  storage: string;
}

/** Answers one of OPS_PATHS (a GET or HEAD). */
export async function serveOps(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  path: string,
  s: OpsState,
): Promise<void> {
  if (path === '/healthz') return answer(req, res, 200, 'text/plain; charset=utf-8', 'ok\n');
  // The time live MPDs name in their UTCTiming (manifests/dash-live.ts): an xs:dateTime with ms,
  // urn:mpeg:dash:utc:http-xsdate:2014 (ISO/IEC 23009-1 Table 32). Players sync their clock to it.
  if (path === TIME_PATH)
    return answer(req, res, 200, 'text/plain; charset=utf-8', new Date((s.now ?? Date.now)()).toISOString());
  if (path === '/readyz') {
    const r = await readiness(s);
    return answer(req, res, r.ready ? 200 : 503, 'application/json', `${JSON.stringify(r)}\n`);
  }
  if (s.metrics === undefined) throw originError('unknown-url', 'metrics are off (origin serve --no-metrics)');
  return answer(req, res, 200, METRICS_CONTENT_TYPE, await s.metrics.scrape());
}

export async function readiness(s: OpsState): Promise<Readiness> {
  const storage = s.draining ? 'not checked' : await storageCheck(s.root);
  return {
    ready: s.ready && !s.draining && storage === 'ok',
    warmUp: s.ready ? 'done' : 'running',
    draining: s.draining,
    storage,
  };
}

function storageCheck(root: string): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), STORAGE_CHECK_MS);
  });
  return Promise.race([rootReadable(root).then((why) => why ?? 'ok'), timeout]).finally(() => clearTimeout(timer));
}

function answer(req: http.IncomingMessage, res: http.ServerResponse, status: number, type: string, body: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', type);
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(req.method === 'HEAD' ? undefined : body);
}
