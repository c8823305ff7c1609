// The request target (`:path`, path and query as the client sent them: Envoy does not normalise
// unless told to, docs/specs.md ABI §3.4) made safe before any rule looks
// at it. Every rule, the token digest and the rewrite engine see the path decoded exactly once;
// what goes upstream is that path encoded again in one canonical spelling.
//
// Refused (400, bad-path), whatever the location:
//   * a path that does not start with "/", or longer than MAX_PATH_BYTES (414, as the origin);
//   * "." and ".." segments and empty segments ("//"; a trailing "/" is fine);
//   * percent-encoded "/", "\", NUL and "." (%2F %5C %00 %2E: no client needs them, and a
//     component that decodes again would see a different path), "%" itself (%25: the sign of
//     double encoding, a second decoding would turn %252e into "."), and encoded control
//     characters (%01-%1F, %7F: CR/LF end up in logs and headers);
//   * "%" not followed by two hex digits; decoded bytes that are not UTF-8 (decodeURIComponent,
//     which the origin uses, refuses them too);
//   * raw backslashes, "#", space, control and non-ASCII characters.
// Refused (400, bad-query): a query longer than MAX_QUERY_BYTES (the origin's bound), bad
// percent-encoding or bytes that are not UTF-8 once decoded in any name or value, raw "#",
// space, control or non-ASCII characters. The query is otherwise passed on as it came.
//
// Canonical path spelling: every byte that RFC 3986 §3.3 allows raw in a segment (unreserved,
// sub-delims, ":" and "@") raw, every other one as an upper-case %XX. So /a/%62.ism and /a/b.ism
// reach the origin (and a cache in front of it) as the same /a/b.ism.

import { codeUnit, hexValue, isValidUtf8, isValidUtf8At, percentByte, utf8Bytes } from "./bytes";

/** The origin's bounds (origin/server/routes.ts MAX_PATH_LENGTH, options/registry.ts MAX_QUERY_LENGTH). */
export const MAX_PATH_BYTES: i32 = 4096;
export const MAX_QUERY_BYTES: i32 = 16384;

/** The target split and checked: `error` is "" when it is usable. */
export class Target {
  /** Decoded once, starts with "/". */
  path: string = "/";
  /** Raw, without the "?". */
  query: string = "";
  /** "" if fine; else what is wrong, for the reply body. */
  error: string = "";
  tooLong: bool = false;
  badQuery: bool = false;

  static failed(error: string): Target {
    const t = new Target();
    t.error = error;
    return t;
  }
}

/** Decoded bytes of the path or query part being checked (one request at a time per VM; a
 * checked path is at most MAX_PATH_BYTES, a query MAX_QUERY_BYTES, and decoding never makes
 * either longer), so decoding allocates only the result, and checking a query nothing. */
const SCRATCH = new StaticArray<u8>(MAX_QUERY_BYTES + 1);

/**
 * Splits and checks the raw bytes of `:path`. Bytes, not a string: the host's text would be
 * decoded as UTF-8 leniently (proxy getHeader), where an overlong "\xC0\xAE" reads as "." and a
 * lead byte at the end disappears, so the checks could pass on text that is not what goes
 * upstream. Every byte must be printable ASCII; then the text is exact.
 */
export function parseTargetBytes(bytes: Uint8Array): Target {
  const n = bytes.length;
  const data = bytes.dataStart;
  let q = -1;
  for (let i = 0; i < n; i++) {
    if (load<u8>(data + <usize>i) == 0x3f) {
      q = i;
      break;
    }
  }
  const pathBytes = q < 0 ? n : q;
  if (pathBytes > MAX_PATH_BYTES) {
    const t = Target.failed("URL path longer than " + MAX_PATH_BYTES.toString() + " characters");
    t.tooLong = true;
    return t;
  }
  if (q >= 0 && n - q - 1 > MAX_QUERY_BYTES) {
    const t = Target.failed("query string longer than " + MAX_QUERY_BYTES.toString() + " characters");
    t.badQuery = true;
    return t;
  }
  for (let i = 0; i < n; i++) {
    const b = <i32>load<u8>(data + <usize>i);
    if (b > 0x20 && b < 0x7f) continue;
    if (i < pathBytes) return Target.failed("space, control or non-ASCII character in the path (percent-encode it)");
    const t = Target.failed("space, control or non-ASCII character in the query (percent-encode it)");
    t.badQuery = true;
    return t;
  }
  // Printable ASCII from here on: one byte is one character of the raw text.
  const decoded = decodePath(data, pathBytes);
  if (decoded.error.length > 0) return decoded;
  const rawQuery = q < 0 ? "" : asciiText(data + <usize>q + 1, n - q - 1);
  const queryError = checkQuery(rawQuery);
  if (queryError.length > 0) {
    const t = Target.failed(queryError);
    t.badQuery = true;
    return t;
  }
  decoded.query = rawQuery;
  return decoded;
}

/** A string of the `length` ASCII bytes at `ptr` (one UTF-16 unit each). */
function asciiText(ptr: usize, length: i32): string {
  if (length <= 0) return "";
  const out = changetype<string>(__new(<usize>length << 1, idof<string>()));
  const o = changetype<usize>(out);
  for (let i = 0; i < length; i++) store<u16>(o + (<usize>i << 1), load<u8>(ptr + <usize>i));
  return out;
}

/** Decodes the raw path bytes[0, n) once (printable ASCII), refusing the shapes listed at the top. */
function decodePath(raw: usize, n: i32): Target {
  if (n == 0 || load<u8>(raw) != 0x2f) return Target.failed("the path must start with /");
  const bytes = changetype<usize>(SCRATCH);
  let length = 0;
  let segmentStart = 0; // index in bytes of the current segment's first byte
  for (let i = 0; i < n; i++) {
    const c = <i32>load<u8>(raw + <usize>i);
    if (c == 0x2f) {
      if (i > 0) {
        const problem = segmentProblem(bytes, segmentStart, length, false);
        if (problem.length > 0) return Target.failed(problem);
      }
      store<u8>(bytes + <usize>(length++), 0x2f);
      segmentStart = length;
      continue;
    }
    if (c == 0x25) {
      const value = escapeAtBytes(raw, n, i);
      if (value < 0) return Target.failed("malformed percent-encoding in the path");
      const problem = encodedByteProblem(value);
      if (problem.length > 0) return Target.failed(problem);
      store<u8>(bytes + <usize>(length++), <u8>value);
      i += 2;
      continue;
    }
    if (c <= 0x20 || c >= 0x7f) return Target.failed("space, control or non-ASCII character in the path (percent-encode it)");
    if (c == 0x5c) return Target.failed("backslash in the path");
    if (c == 0x23) return Target.failed("'#' in the path");
    store<u8>(bytes + <usize>(length++), <u8>c);
  }
  const last = segmentProblem(bytes, segmentStart, length, true);
  if (last.length > 0) return Target.failed(last);
  if (!isValidUtf8At(bytes, length)) return Target.failed("percent-encoded bytes in the path are not UTF-8");
  const t = new Target();
  t.path = String.UTF8.decodeUnsafe(bytes, <usize>length, false);
  return t;
}

/** The byte of the %XX at raw[i] (raw holds n bytes), or -1. */
function escapeAtBytes(raw: usize, n: i32, i: i32): i32 {
  const hi = i + 1 < n ? hexValue(<i32>load<u8>(raw + <usize>(i + 1))) : -1;
  const lo = i + 2 < n ? hexValue(<i32>load<u8>(raw + <usize>(i + 2))) : -1;
  return hi < 0 || lo < 0 ? -1 : (hi << 4) | lo;
}

/** The byte of the %XX at raw[i], or -1. */
function escapeAt(raw: string, i: i32): i32 {
  const hi = hexValue(raw.charCodeAt(i + 1)); // charCodeAt answers -1 past the end
  const lo = hexValue(raw.charCodeAt(i + 2));
  return hi < 0 || lo < 0 ? -1 : (hi << 4) | lo;
}

function encodedByteProblem(b: i32): string {
  if (b == 0x2f) return "encoded slash (%2F) in the path";
  if (b == 0x5c) return "encoded backslash (%5C) in the path";
  if (b == 0) return "encoded NUL (%00) in the path";
  if (b == 0x2e) return "encoded dot (%2E) in the path";
  if (b == 0x25) return "encoded percent sign (%25) in the path: double encoding";
  if (b < 0x20 || b == 0x7f) return "encoded control character in the path";
  return "";
}

/** "", or why the segment bytes[start, end) is refused. */
function segmentProblem(bytes: usize, start: i32, end: i32, isLast: bool): string {
  const size = end - start;
  if (size == 0) return isLast ? "" : "empty segment (//) in the path";
  if (size <= 2 && load<u8>(bytes + <usize>start) == 0x2e && (size == 1 || load<u8>(bytes + <usize>start + 1) == 0x2e)) {
    return "dot segment (. or ..) in the path";
  }
  return "";
}

/**
 * "" if a decoded path (a rewrite result, a configured prefix) is one the edge would accept from
 * a client; else why not. Same rules as decodePath, on the decoded form.
 */
export function checkDecodedPath(path: string): string {
  const n = path.length;
  if (n == 0 || path.charCodeAt(0) != 0x2f) return "the path must start with /";
  let segmentStart = 1;
  for (let i = 1; i <= n; i++) {
    const c = i < n ? codeUnit(path, i) : 0x2f;
    if (c == 0x2f) {
      // The segment path[segmentStart, i), compared in place.
      const size = i - segmentStart;
      if (size == 0 && i < n) return "empty segment (//) in the path";
      if ((size == 1 || size == 2) && codeUnit(path, segmentStart) == 0x2e && (size == 1 || codeUnit(path, segmentStart + 1) == 0x2e)) {
        return "dot segment (. or ..) in the path";
      }
      segmentStart = i + 1;
      continue;
    }
    if (c < 0x20 || c == 0x7f) return "control character in the path";
    if (c == 0x5c) return "backslash in the path";
    if (c == 0x25) return "percent sign in the decoded path";
  }
  if (encodedLength(path) > MAX_PATH_BYTES) return "path longer than " + MAX_PATH_BYTES.toString() + " characters once encoded";
  return "";
}

/** True for bytes RFC 3986 §3.3 allows raw in a path segment: unreserved, sub-delims, ":", "@".
 * One bit per ASCII byte, set for 0-9 A-Z a-z and - . _ ~ ! $ & ' ( ) * + , ; = : @ (a table:
 * this runs for every byte of every forwarded path). */
const SEGMENT_SAFE_LOW: u64 = 0x2fff7fd200000000; // bytes 0x00-0x3f
const SEGMENT_SAFE_HIGH: u64 = 0x47fffffe87ffffff; // bytes 0x40-0x7f
function isSegmentSafe(b: i32): bool {
  if (<u32>b >= 0x80) return false;
  const mask = b < 0x40 ? SEGMENT_SAFE_LOW : SEGMENT_SAFE_HIGH;
  return ((mask >> <u64>(b & 63)) & 1) != 0;
}

/** The canonical percent-encoded spelling of a decoded path ("/" kept as the separator). */
export function encodePath(path: string): string {
  if (isRawPath(path)) return path; // the usual path: nothing to escape, no copy
  const bytes = utf8Bytes(path);
  const parts = new Array<string>(0);
  let runStart = 0;
  const n = bytes.length;
  for (let i = 0; i < n; i++) {
    const b = <i32>bytes[i];
    if (b == 0x2f || isSegmentSafe(b)) continue;
    if (i > runStart) parts.push(String.UTF8.decode(bytes.buffer.slice(runStart, i), false));
    parts.push(percentByte(b));
    runStart = i + 1;
  }
  if (runStart == 0) return path;
  if (n > runStart) parts.push(String.UTF8.decode(bytes.buffer.slice(runStart, n), false));
  return parts.join("");
}

/** Every character is "/" or segment-safe ASCII: the path is its own canonical spelling. */
function isRawPath(path: string): bool {
  for (let i = 0, n = path.length; i < n; i++) {
    const c = codeUnit(path, i);
    if (c >= 0x80 || (c != 0x2f && !isSegmentSafe(c))) return false;
  }
  return true;
}

function encodedLength(path: string): i32 {
  if (isRawPath(path)) return path.length;
  const bytes = utf8Bytes(path);
  let length = 0;
  for (let i = 0, n = bytes.length; i < n; i++) {
    const b = <i32>bytes[i];
    length += b == 0x2f || isSegmentSafe(b) ? 1 : 3;
  }
  return length;
}

/** "" if the raw query is acceptable (see the top), else why not. */
export function checkQuery(raw: string): string {
  const n = raw.length;
  let partStart = 0;
  for (let i = 0; i <= n; i++) {
    const c = i < n ? codeUnit(raw, i) : 0x26;
    if (c == 0x26) {
      if (i > partStart && !partDecodes(raw, partStart, i)) {
        return "malformed percent-encoding, or bytes that are not UTF-8, in the query";
      }
      partStart = i + 1;
      continue;
    }
    if (c <= 0x20 || c >= 0x7f) return "space, control or non-ASCII character in the query (percent-encode it)";
    if (c == 0x23) return "'#' in the query";
  }
  return "";
}

/** Name and value of raw[start, end) both decode (escapes well formed, UTF-8). */
function partDecodes(raw: string, start: i32, end: i32): bool {
  let eq = -1;
  for (let i = start; i < end; i++) {
    if (codeUnit(raw, i) == 0x3d) {
      eq = i;
      break;
    }
  }
  if (eq < 0) return rangeDecodes(raw, start, end);
  return rangeDecodes(raw, start, eq) && rangeDecodes(raw, eq + 1, end);
}

/** percentDecode(raw.substring(start, end)) !== null, decoding into the scratch buffer instead
 * of a new string. */
export function rangeDecodes(raw: string, start: i32, end: i32): bool {
  if (start < 0 || end > raw.length) return percentDecode(raw.substring(start, end)) !== null;
  const bytes = changetype<usize>(SCRATCH);
  const capacity = SCRATCH.length;
  let length = 0;
  let escaped = false;
  for (let i = start; i < end; i++) {
    const c = codeUnit(raw, i);
    if (length >= capacity) return percentDecode(raw.substring(start, end)) !== null; // longer than any checked query
    if (c == 0x25) {
      const hi = i + 1 < end ? hexValue(codeUnit(raw, i + 1)) : -1;
      const lo = i + 2 < end ? hexValue(codeUnit(raw, i + 2)) : -1;
      if (hi < 0 || lo < 0) return false;
      store<u8>(bytes + <usize>(length++), <u8>((hi << 4) | lo));
      escaped = true;
      i += 2;
    } else if (c < 0x80) {
      store<u8>(bytes + <usize>(length++), <u8>c);
    } else {
      if (!escaped && !hasPercent(raw, i, end)) return true; // percentDecode returns text without "%" as it is
      return false;
    }
  }
  return !escaped || isValidUtf8At(bytes, length);
}

function hasPercent(raw: string, start: i32, end: i32): bool {
  for (let i = start; i < end; i++) if (codeUnit(raw, i) == 0x25) return true;
  return false;
}

/**
 * decodeURIComponent of a raw component: the decoded text, or null if an escape is malformed or
 * the bytes are not UTF-8. "+" stays "+" (the origin reads queries that way too).
 */
export function percentDecode(raw: string): string | null {
  if (raw.indexOf("%") < 0) return raw;
  const n = raw.length;
  const bytes = new Uint8Array(n);
  let length = 0;
  for (let i = 0; i < n; i++) {
    const c = raw.charCodeAt(i);
    if (c == 0x25) {
      const value = escapeAt(raw, i);
      if (value < 0) return null;
      bytes[length++] = <u8>value;
      i += 2;
    } else if (c < 0x80) {
      bytes[length++] = <u8>c;
    } else {
      return null; // callers passed raw text checked to be ASCII
    }
  }
  if (!isValidUtf8(bytes, length)) return null;
  return String.UTF8.decode(bytes.buffer.slice(0, length), false);
}

/** encodeURIComponent: A-Z a-z 0-9 - _ . ! ~ * ' ( ) raw, every other UTF-8 byte as %XX. */
export function encodeComponent(text: string): string {
  const bytes = utf8Bytes(text);
  const parts = new Array<string>(0);
  let runStart = 0;
  const n = bytes.length;
  for (let i = 0; i < n; i++) {
    const b = <i32>bytes[i];
    const raw = (b >= 0x61 && b <= 0x7a) || (b >= 0x41 && b <= 0x5a) || (b >= 0x30 && b <= 0x39) ||
      b == 0x2d || b == 0x5f || b == 0x2e || b == 0x21 || b == 0x7e || b == 0x2a || b == 0x27 || b == 0x28 || b == 0x29;
    if (raw) continue;
    if (i > runStart) parts.push(String.UTF8.decode(bytes.buffer.slice(runStart, i), false));
    parts.push(percentByte(b));
    runStart = i + 1;
  }
  if (runStart == 0) return text;
  if (n > runStart) parts.push(String.UTF8.decode(bytes.buffer.slice(runStart, n), false));
  return parts.join("");
}
