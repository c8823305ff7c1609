// The head a handler wrote, as the tap reads it from Node's ServerResponse: its fields with
// lowercase names, the Date Node would add and the Content-Length Node's end() would set.

import type * as http from 'node:http';
import { lowerName } from './edge-headers';
import type { HeaderList } from '../proxy-wasm/http-filter';

/** A header value as text: the handler's numbers and strings (String() only when not a string). */
function text(v: unknown): string {
  return typeof v === 'string' ? v : String(v);
}

/** The handler's head as [name, value, ...] with lowercase names: its setHeader fields, then
 * writeHead's own (an object, a flat array or an array of pairs, as Node takes them). */
export function handlerFields(res: http.ServerResponse, extra: unknown): string[] {
  const out: string[] = [];
  for (const name of res.getHeaderNames()) {
    const v = res.getHeader(name);
    if (Array.isArray(v)) for (const x of v) out.push(name, text(x));
    else if (v !== undefined) out.push(name, text(v));
  }
  if (Array.isArray(extra)) {
    if (Array.isArray(extra[0])) for (const [k, v] of extra as [string, unknown][]) out.push(lowerName(k), text(v));
    else for (let i = 0; i + 1 < extra.length; i += 2) out.push(lowerName(text(extra[i])), text(extra[i + 1]));
  } else if (extra !== undefined && extra !== null) {
    for (const [k, v] of Object.entries(extra as Record<string, unknown>)) {
      if (Array.isArray(v)) for (const x of v) out.push(lowerName(k), text(x));
      else if (v !== undefined) out.push(lowerName(k), text(v));
    }
  }
  return out;
}

export function hasField(fields: readonly string[], name: string): boolean {
  for (let i = 0; i < fields.length; i += 2) if (fields[i] === name) return true;
  return false;
}

/** A passing head keeps only its status (the exchange's `head`); the list is never read. */
export const NO_HEADERS: HeaderList = [];

let dateText = '';

/**
 * The current time as an HTTP date (RFC 9110 §5.6.7): rendered once, kept until the next second
 * starts (a timer clears it, as Node's own Date header does), so a request costs no clock read.
 */
export function httpNow(): string {
  if (dateText === '') {
    const now = Date.now();
    dateText = new Date(now).toUTCString();
    setTimeout(clearDate, 1000 - (now % 1000)).unref();
  }
  return dateText;
}

function clearDate(): void {
  dateText = '';
}

/**
 * An end() with no head written frames the body by its length (Node's OutgoingMessage.end sets
 * Content-Length from the last chunk): the header the client would get from the origin directly
 * and the filter would see from it upstream. Not for statuses without a body (RFC 9110 §8.6).
 */
export function impliedContentLength(status: number, fields: string[], data: unknown): void {
  if (status === 204 || status === 304 || status < 200) return;
  if (hasField(fields, 'content-length') || hasField(fields, 'transfer-encoding')) return;
  const length =
    data === undefined || data === null
      ? 0
      : typeof data === 'string'
        ? Buffer.byteLength(data)
        : (data as Uint8Array).byteLength;
  fields.push('content-length', String(length));
}
