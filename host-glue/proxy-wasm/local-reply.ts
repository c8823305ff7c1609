// The response Envoy builds for proxy_send_local_response and for the fail-closed 503
// (§2.6, §6.12; Envoy source/common/http/utility.cc Utility::prepareLocalReply):
//
//   :status                   first
//   plugin headers            keys lowercased, *added* (duplicates possible)
//   content-length            set to the body size, only for a non-empty body
//   content-type: text/plain  only for a non-empty body without a plugin content-type
//   empty body                content-length and content-type removed, even the plugin's
//   HEAD request              the same headers, no body
//
// HCM's `date`/`server` are the proxy's to add, as for any response.

import type { HeaderList, LocalResponse } from './http-filter';

/** Envoy StringUtil::replaceAllEmptySpace: every whitespace character becomes `_`. */
export const normalizeDetails = (details: string): string => details.replace(/[ \t\f\v\n\r]/g, '_');

export interface LocalReplyInput {
  status: number;
  body: Uint8Array;
  headers: HeaderList;
  details: string;
  isHeadRequest: boolean;
}

export function prepareLocalReply(input: LocalReplyInput): LocalResponse {
  const headers: HeaderList = [[':status', String(input.status >>> 0)]];
  for (const [k, v] of input.headers) headers.push([k.toLowerCase(), v]);
  const drop = (name: string): void => {
    for (let i = headers.length - 1; i >= 0; i--) if (headers[i]![0] === name) headers.splice(i, 1);
  };
  if (input.body.length > 0) {
    const at = headers.findIndex(([k]) => k === 'content-length');
    const length = String(input.body.length);
    if (at >= 0) {
      headers[at] = ['content-length', length];
      for (let i = headers.length - 1; i > at; i--) if (headers[i]![0] === 'content-length') headers.splice(i, 1);
    } else {
      headers.push(['content-length', length]);
    }
    if (!headers.some(([k]) => k === 'content-type')) headers.push(['content-type', 'text/plain']);
  } else {
    drop('content-length');
    drop('content-type');
  }
  return {
    headers,
    body: input.isHeadRequest ? new Uint8Array(0) : input.body,
    details: normalizeDetails(input.details),
  };
}

/** §5.1: the fail-closed answer, `sendLocalReply(503, "", ..., "wasm_fail_stream")`. */
export const FAIL_STREAM_DETAILS = 'wasm_fail_stream';
/** Envoy CloseStreamResponseDetails. */
export const CLOSE_STREAM_DETAILS = 'wasm_close_stream';

export function failStreamReply(): LocalResponse {
  return prepareLocalReply({
    status: 503,
    body: new Uint8Array(0),
    headers: [],
    details: FAIL_STREAM_DETAILS,
    isHeadRequest: false,
  });
}

/** A stream reset, in LocalResponse form (`reset: true`, a bare 503 for proxies that cannot reset). */
export function resetReply(details: string): LocalResponse {
  return { ...failStreamReply(), details, reset: true };
}
