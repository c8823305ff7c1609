// Output side of the rewrite rules: path and query templates (literal text and <part>
// references), the query-text checks applied to map values and literals, and a reusable
// character buffer so that a rewrite allocates only its two result strings (plus map keys).

import { Pattern, isIdentifier } from "./rewrite-pattern";

/** Literal pieces and part references, in order: part[i] >= 0 is a reference, else literal[i]. */
export class Template {
  literals: string[] = [];
  parts: i32[] = [];
}

let templateError: string = "";

export function lastTemplateError(): string {
  return templateError;
}

/** Compiles `text` against the parts of `pattern`; null with lastTemplateError(). */
export function compileTemplate(text: string, pattern: Pattern): Template | null {
  templateError = "";
  const t = new Template();
  let i = 0;
  let literalStart = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c == 0x3e) {
      templateError = "'>' at character " + i.toString() + " outside a part reference";
      return null;
    }
    if (c != 0x3c) {
      i++;
      continue;
    }
    if (i > literalStart) pushLiteral(t, text.substring(literalStart, i));
    const close = text.indexOf(">", i + 1);
    if (close < 0) {
      templateError = "'<' at character " + i.toString() + " has no closing '>'";
      return null;
    }
    const name = text.substring(i + 1, close);
    const part = isIdentifier(name) ? pattern.partIndex(name) : -1;
    if (part < 0) {
      templateError = "<" + name + "> is not a part of the pattern " + pattern.text;
      return null;
    }
    t.literals.push("");
    t.parts.push(part);
    i = close + 1;
    literalStart = i;
  }
  if (n > literalStart) pushLiteral(t, text.substring(literalStart, n));
  return t;
}

function pushLiteral(t: Template, literal: string): void {
  t.literals.push(literal);
  t.parts.push(-1);
}

// ----------------------------------------------------------------------------------- query text

const HEX_DIGITS = "0123456789ABCDEF";

/** Unreserved characters of RFC 3986 §2.3: the only ones a part value keeps in a query. */
@inline function isUnreserved(c: i32): bool {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) ||
    c == 0x2d || c == 0x2e || c == 0x5f || c == 0x7e;
}

@inline function isHex(c: i32): bool {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

/**
 * Why `text` cannot go into a query string as it is, or "" if it can: printable ASCII without
 * space and '#', every '%' followed by two hex digits (the text is already percent-encoded:
 * `filter=a%26%26b`), no empty parameter (leading, trailing or doubled '&').
 */
export function queryTextProblem(text: string): string {
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c <= 0x20 || c >= 0x7f) {
      return c == 0x20 ? "a space at character " + i.toString() + " (write %20)" :
        "character U+" + c.toString(16).toUpperCase() + " at character " + i.toString() + " (query text is percent-encoded ASCII)";
    }
    if (c == 0x23) return "'#' at character " + i.toString() + " (write %23)";
    if (c == 0x25 && (i + 2 >= n || !isHex(text.charCodeAt(i + 1)) || !isHex(text.charCodeAt(i + 2)))) {
      return "'%' at character " + i.toString() + " not followed by two hex digits (write %25)";
    }
    if (c == 0x26 && (i == 0 || i == n - 1 || text.charCodeAt(i + 1) == 0x26)) {
      return "an empty parameter at character " + i.toString() + " (a leading, trailing or doubled '&'; inside a filter write && as %26%26)";
    }
  }
  return "";
}

/** RFC 3986 §3.4 query characters kept raw: unreserved, sub-delims, ":", "@", "/", "?", and "%". */
@inline function isQueryChar(c: i32): bool {
  return isUnreserved(c) || c == 0x21 || c == 0x24 || (c >= 0x26 && c <= 0x2c) || c == 0x3b || c == 0x3d ||
    c == 0x3a || c == 0x40 || c == 0x2f || c == 0x3f || c == 0x25;
}

/**
 * Query text (checked by queryTextProblem) with the printable characters a URL may not hold raw
 * (`"`, `<`, `>`, `|`, `[`, `]`, `{`, `}`, `^`, backquote, backslash) percent-encoded, so a map
 * value may write a filter as the filter language does (`FourCC=="AVC1"||…`). The origin
 * decodes once and reads the same expression; "&" and "%" keep their meaning.
 */
export function encodeQueryText(text: string): string {
  let clean = true;
  for (let i = 0; i < text.length; i++) if (!isQueryChar(text.charCodeAt(i))) clean = false;
  if (clean) return text;
  const parts = new Array<string>(0);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (isQueryChar(c)) parts.push(String.fromCharCode(c));
    else parts.push("%" + HEX_DIGITS.charAt(c >> 4) + HEX_DIGITS.charAt(c & 15));
  }
  return parts.join("");
}

// ------------------------------------------------------------------------------------- building

/**
 * A growable UTF-16 buffer reused by every rewrite (the plugin runs one request at a time per
 * VM): appends write in place, `take()` makes the one string.
 */
export class TextBuffer {
  private data: ArrayBuffer = new ArrayBuffer(2048);
  /** data's bytes and capacity in UTF-16 units (unmanaged copies: the hot paths are inlined). */
  private ptr: usize = changetype<usize>(this.data);
  private capacity: i32 = 1024;
  /** Length in UTF-16 units. */
  length: i32 = 0;

  reset(): void {
    this.length = 0;
  }

  @inline private reserve(units: i32): void {
    if (this.length + units > this.capacity) this.grow(units);
  }

  private grow(units: i32): void {
    let capacity = this.capacity << 1;
    while (capacity < this.length + units) capacity <<= 1;
    const grown = new ArrayBuffer(capacity << 1);
    memory.copy(changetype<usize>(grown), this.ptr, <usize>this.length << 1);
    this.data = grown;
    this.ptr = changetype<usize>(grown);
    this.capacity = capacity;
  }

  @inline private put(c: i32): void {
    store<u16>(this.ptr + (<usize>this.length << 1), <u16>c);
    this.length++;
  }

  @inline charAt(i: i32): i32 {
    return <i32>load<u16>(this.ptr + (<usize>i << 1));
  }

  @inline appendChar(c: i32): void {
    this.reserve(1);
    this.put(c);
  }

  @inline append(s: string): void {
    this.appendRange(s, 0, s.length);
  }

  @inline appendRange(s: string, start: i32, end: i32): void {
    const units = end - start;
    if (units > 0) {
      this.reserve(units);
      memory.copy(this.ptr + (<usize>this.length << 1), changetype<usize>(s) + (<usize>start << 1), <usize>units << 1);
      this.length += units;
    }
  }

  /** s[start, end) percent-encoded as UTF-8, unreserved characters kept (a value in a query). */
  appendEncoded(s: string, start: i32, end: i32): void {
    this.reserve((end - start) * 12);
    // [start, end) is a part span of the last match, inside s: read the units directly.
    const text = changetype<usize>(s);
    for (let i = start; i < end; i++) {
      let c = <i32>load<u16>(text + (<usize>i << 1));
      if (isUnreserved(c)) {
        this.put(c);
        continue;
      }
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < end) {
        const low = <i32>load<u16>(text + (<usize>(i + 1) << 1));
        if (low >= 0xdc00 && low <= 0xdfff) {
          c = 0x10000 + ((c - 0xd800) << 10) + (low - 0xdc00);
          i++;
        }
      }
      if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd; // a lone surrogate has no UTF-8 form
      if (c < 0x80) this.putByte(c);
      else if (c < 0x800) {
        this.putByte(0xc0 | (c >> 6));
        this.putByte(0x80 | (c & 63));
      } else if (c < 0x10000) {
        this.putByte(0xe0 | (c >> 12));
        this.putByte(0x80 | ((c >> 6) & 63));
        this.putByte(0x80 | (c & 63));
      } else {
        this.putByte(0xf0 | (c >> 18));
        this.putByte(0x80 | ((c >> 12) & 63));
        this.putByte(0x80 | ((c >> 6) & 63));
        this.putByte(0x80 | (c & 63));
      }
    }
  }

  @inline private putByte(b: i32): void {
    this.put(0x25);
    this.put(HEX_DIGITS.charCodeAt(b >> 4));
    this.put(HEX_DIGITS.charCodeAt(b & 15));
  }

  /** The text written at [from, to). */
  take(from: i32, to: i32): string {
    if (to <= from) return "";
    return String.UTF16.decodeUnsafe(this.ptr + (<usize>from << 1), <usize>(to - from) << 1);
  }
}

/** Writes a template with the parts of the last match: raw (a path) or percent-encoded (a query). */
export function writeTemplate(out: TextBuffer, t: Template, pattern: Pattern, path: string, encode: bool): void {
  const parts = t.parts;
  const literals = t.literals;
  for (let i = 0, n = parts.length; i < n; i++) {
    const part = unchecked(parts[i]);
    if (part < 0) {
      out.append(unchecked(literals[i]));
      continue;
    }
    const start = pattern.partStart(part);
    const end = pattern.partEnd(part);
    if (encode) out.appendEncoded(path, start, end);
    else out.appendRange(path, start, end);
  }
}

/**
 * True when the path written in out[from, length) has no empty, "." or ".." segment (except an
 * empty last one): a part captured inside a segment ("x-.." → "..") must not make a path that
 * climbs out of the presentation once the proxy or the upstream resolves it.
 */
export function isSafePath(out: TextBuffer, from: i32): bool {
  const end = out.length;
  if (end == from || out.charAt(from) != 0x2f) return false;
  let segmentStart = from + 1;
  for (let k = from + 1; k <= end; k++) {
    if (k < end && out.charAt(k) != 0x2f) continue;
    const len = k - segmentStart;
    if (len == 0 && k < end) return false;
    if (len == 1 && out.charAt(segmentStart) == 0x2e) return false;
    if (len == 2 && out.charAt(segmentStart) == 0x2e && out.charAt(segmentStart + 1) == 0x2e) return false;
    segmentStart = k + 1;
  }
  return true;
}
