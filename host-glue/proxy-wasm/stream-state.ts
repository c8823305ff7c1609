// The per-stream state HttpStream keeps for each direction, and the small pieces it is made of:
// the body buffers the plugin may rewrite (§2.5), the waiter that holds a seam call while the
// plugin stops (§1.2), and how Envoy turns a callback's i32 into a filter status (§1.2).

import { DataStatus, HeadersStatus, WasmResult } from './abi';
import type { BufferRef } from './context';
import type { HeaderList, LocalResponse, RequestHeadersVerdict } from './http-filter';
/** A seam promise rejected because end() came first (client gone while the plugin held it). */
export class StreamEndedError extends Error {
  override name = 'StreamEndedError';
}

/** A body buffer the plugin can rewrite (§2.5: only replace/prepend at 0 and append). */
export interface BodyBox {
  data: Uint8Array;
}

export function boxBuffer(box: BodyBox): BufferRef {
  return {
    get bytes() {
      return box.data;
    },
    copyFrom(start, length, data) {
      if (start === 0) box.data = concat(data, box.data.subarray(Math.min(length, box.data.length)));
      else if (start >= box.data.length) box.data = concat(box.data, data);
      else return WasmResult.BadArgument;
      return WasmResult.Ok;
    },
  };
}

export const concat = (a: Uint8Array, b: Uint8Array): Uint8Array => {
  if (a.length === 0) return b;
  if (b.length === 0) return a;
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
};

export const EMPTY = new Uint8Array(0);

export function isHead(headers: HeaderList): boolean {
  for (let i = 0; i < headers.length; i++) {
    const entry = headers[i]!;
    if (entry[0] === ':method' && entry[1] === 'HEAD') return true;
  }
  return false;
}

export type Resolution = { kind: 'continue' } | { kind: 'buffer' } | { kind: 'respond'; response: LocalResponse };

export const CONTINUE: Resolution = Object.freeze({ kind: 'continue' });
export const BUFFER: Resolution = Object.freeze({ kind: 'buffer' });

/** After a Continue the plugin cannot reach the request map again (§2.4) and on_log only reads
 * it: the verdict hands out the map itself. */
export function requestVerdict(r: Resolution, map: HeaderList): RequestHeadersVerdict {
  return r.kind === 'respond' ? r : { kind: 'continue', headers: map };
}

/**
 * Where a seam call's outcome goes. Until the callback returns it only records what settle()
 * decided (the call then answers with the value itself); if nothing was decided, a promise is
 * made and the waiter settles it later (resume / finish / end).
 */
export class Waiter {
  value: Resolution | null = null;
  error: Error | null = null;
  private settle: { resolve(v: Resolution): void; reject(e: Error): void } | null = null;

  resolve(v: Resolution): void {
    if (this.settle !== null) this.settle.resolve(v);
    else this.value ??= v;
  }

  reject(e: Error): void {
    if (this.settle !== null) this.settle.reject(e);
    else this.error ??= e;
  }

  promise(): Promise<Resolution> {
    return new Promise((resolve, reject) => {
      this.settle = { resolve, reject };
    });
  }
}

/** Per direction: the maps and buffers Envoy's filter holds pointers to. */
export class Side {
  /** The proxy's map for this direction (what goes on, what the access log sees). */
  map: HeaderList | null = null;
  /** Envoy's request_headers_ / response_headers_: non-null while the plugin may use it. */
  headers: HeaderList | null = null;
  /** The chunk handed to the current body callback (request_body_buffer_). */
  visible: BodyBox | null = null;
  /** Data the filter manager holds back while the plugin stops (the buffered body). */
  readonly held: BodyBox = { data: EMPTY };
  /** The last body callback returned PAUSE: the next one sees the whole buffered body. */
  buffering = false;
  waiter: Waiter | null = null;
  continueRequested = false;
  /** Seam callbacks of this side in progress (a continue inside one is settled after it). */
  depth = 0;

  takeHeld(): Uint8Array {
    const data = this.held.data;
    this.held.data = EMPTY;
    return data;
  }
}

/** §1.2: a headers callback's i32 as Envoy turns it into FilterHeadersStatus; true = stopped. */
export function headersStopped(raw: number, forcedStop: boolean): boolean {
  if (forcedStop || raw > HeadersStatus.StopAllIterationAndWatermark) return true;
  // 1 (PAUSE) is StopAllIterationAndWatermark without allow_on_headers_stop_iteration; Envoy's
  // convertFilterHeadersStatus maps ContinueAndEndStream (2) to Continue.
  return raw !== HeadersStatus.Continue && raw !== HeadersStatus.ContinueAndEndStream;
}

/** §1.2: a body callback's i32 as Envoy turns it into FilterDataStatus. */
export function dataStatus(raw: number, forcedStop: boolean): DataStatus {
  return forcedStop || raw > DataStatus.StopIterationNoBuffer ? DataStatus.StopIterationNoBuffer : (raw as DataStatus);
}
