// A strict JSON parser (RFC 8259) over UTF-8 bytes, for plugin configuration.
//
//   value   = ws ( object / array / string / number / "true" / "false" / "null" ) ws
//   object  = "{" ws [ member *( ws "," ws member ) ] ws "}"      member = string ws ":" value
//   array   = "[" ws [ value *( ws "," value ) ] ws "]"
//   number  = [ "-" ] ( "0" / 1-9 *DIGIT ) [ "." 1*DIGIT ] [ ( "e" / "E" ) [ "+" / "-" ] 1*DIGIT ]
//   string  = '"' *( unescaped UTF-8 >= 0x20 except '"' and '\' / escape ) '"'
//   escape  = "\" ( '"' / "\" / "/" / "b" / "f" / "n" / "r" / "t" / "u" 4HEXDIG )
//   ws      = *( " " / "\t" / "\n" / "\r" )
//
// Stricter than JSON.parse where a configuration is better refused than guessed: duplicate
// member names (RFC 8259 §4 leaves them undefined), invalid UTF-8 (§8.1), numbers beyond f64
// range (§6 allows limits), a byte-order mark. Bounded: input size and nesting depth are capped
// (JsonLimits), so recursion depth and memory are bounded; nothing here aborts on any input.
// Errors carry a message and the byte offset (0-based) of the offending byte.

import { decimalToF64 } from './decimal';
import { JsonValue } from './value';

/** Ceiling on JsonLimits.maxDepth whatever the caller asks: the parser recurses once per level
 * (two or three wasm frames), and exhausting the engine's stack is a trap. */
export const HARD_MAX_DEPTH: i32 = 256;

export class JsonLimits {
  constructor(
    /** Deepest nesting of arrays/objects; the top-level container is depth 1 (at most HARD_MAX_DEPTH). */
    public maxDepth: i32 = 32,
    /** Largest input in bytes. */
    public maxBytes: i32 = 1 << 20,
  ) {}
}

export class JsonResult {
  constructor(
    /** The parsed document, or null on error. */
    public value: JsonValue | null,
    /** Error message ("" on success). */
    public error: string,
    /** Byte offset of the error (-1 on success). */
    public position: i32,
  ) {}

  get ok(): bool {
    return this.value !== null;
  }
}

/** Parses a complete JSON document from UTF-8 bytes. */
export function parseJson(bytes: ArrayBuffer, limits: JsonLimits | null = null): JsonResult {
  const bounds = limits !== null ? limits : new JsonLimits();
  if (bytes.byteLength > bounds.maxBytes) {
    return new JsonResult(null, 'document larger than ' + bounds.maxBytes.toString() + ' bytes', bounds.maxBytes);
  }
  const parser = new Parser(bytes, bounds);
  const value = parser.parseDocument();
  return value !== null ? new JsonResult(value, '', -1) : new JsonResult(null, parser.error, parser.errorAt);
}

/** Parses a JSON document held in a string (positions are UTF-8 byte offsets). */
export function parseJsonText(text: string, limits: JsonLimits | null = null): JsonResult {
  return parseJson(String.UTF8.encode(text, false), limits);
}

// Byte values used below.
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;

class Parser {
  private readonly base: usize;
  private readonly end: i32;
  private pos: i32 = 0;
  private depth: i32 = 0;
  error: string = '';
  errorAt: i32 = -1;

  constructor(
    private readonly bytes: ArrayBuffer,
    private readonly limits: JsonLimits,
  ) {
    this.base = changetype<usize>(bytes);
    this.end = bytes.byteLength;
  }

  parseDocument(): JsonValue | null {
    if (this.end >= 3 && this.at(0) == 0xef && this.at(1) == 0xbb && this.at(2) == 0xbf) {
      return this.fail('byte-order mark before the document', 0);
    }
    const value = this.parseValue();
    if (value === null) return null;
    this.skipWhitespace();
    if (this.pos < this.end)
      return this.fail('unexpected ' + this.describe(this.pos) + ' after the document', this.pos);
    return value;
  }

  // ------------------------------------------------------------------------------ helpers

  /** Byte at `offset`, or -1 past the end. */
  private at(offset: i32): i32 {
    return offset >= 0 && offset < this.end ? <i32>load<u8>(this.base + <usize>offset) : -1;
  }

  private fail(message: string, position: i32): JsonValue | null {
    if (this.errorAt < 0) {
      this.error = message;
      this.errorAt = position;
    }
    return null;
  }

  private describe(offset: i32): string {
    const c = this.at(offset);
    if (c < 0) return 'end of input';
    if (c >= 0x20 && c < 0x7f) return "character '" + String.fromCharCode(c) + "'";
    return 'byte 0x' + (c < 16 ? '0' : '') + c.toString(16);
  }

  private skipWhitespace(): void {
    for (;;) {
      const c = this.at(this.pos);
      if (c != 0x20 && c != 0x09 && c != 0x0a && c != 0x0d) return;
      this.pos++;
    }
  }

  private expectLiteral(word: string, value: JsonValue): JsonValue | null {
    const start = this.pos;
    for (let i = 0, n = word.length; i < n; i++) {
      if (this.at(start + i) != word.charCodeAt(i)) {
        return this.fail('unexpected ' + this.describe(start + i) + " (expected '" + word + "')", start + i);
      }
    }
    this.pos = start + word.length;
    return value;
  }

  // ------------------------------------------------------------------------------- values

  private parseValue(): JsonValue | null {
    this.skipWhitespace();
    const c = this.at(this.pos);
    if (c == 0x7b) return this.parseObject();
    if (c == 0x5b) return this.parseArray();
    if (c == QUOTE) {
      const text = this.parseString();
      return text !== null ? JsonValue.ofString(text) : null;
    }
    if (c == 0x74) return this.expectLiteral('true', JsonValue.ofBool(true));
    if (c == 0x66) return this.expectLiteral('false', JsonValue.ofBool(false));
    if (c == 0x6e) return this.expectLiteral('null', JsonValue.ofNull());
    if (c == MINUS || (c >= ZERO && c <= NINE)) return this.parseNumber();
    return this.fail('unexpected ' + this.describe(this.pos) + ' (expected a value)', this.pos);
  }

  private enter(): bool {
    const maxDepth = min(this.limits.maxDepth, HARD_MAX_DEPTH);
    if (this.depth >= maxDepth) {
      this.fail('nesting deeper than ' + maxDepth.toString() + ' levels', this.pos);
      return false;
    }
    this.depth++;
    return true;
  }

  private parseObject(): JsonValue | null {
    if (!this.enter()) return null;
    this.pos++; // {
    const object = JsonValue.newObject();
    this.skipWhitespace();
    if (this.at(this.pos) == 0x7d) {
      this.pos++;
      this.depth--;
      return object;
    }
    for (;;) {
      this.skipWhitespace();
      const nameAt = this.pos;
      if (this.at(nameAt) != QUOTE) {
        return this.fail('unexpected ' + this.describe(nameAt) + ' (expected a member name in double quotes)', nameAt);
      }
      const name = this.parseString();
      if (name === null) return null;
      this.skipWhitespace();
      if (this.at(this.pos) != COLON) {
        return this.fail('unexpected ' + this.describe(this.pos) + " (expected ':' after a member name)", this.pos);
      }
      this.pos++;
      const value = this.parseValue();
      if (value === null) return null;
      if (!object.add(name, value)) return this.fail('duplicate member name ' + quoteForMessage(name), nameAt);
      this.skipWhitespace();
      const c = this.at(this.pos);
      if (c == COMMA) {
        this.pos++;
        continue;
      }
      if (c == 0x7d) {
        this.pos++;
        this.depth--;
        return object;
      }
      return this.fail('unexpected ' + this.describe(this.pos) + " (expected ',' or '}')", this.pos);
    }
  }

  private parseArray(): JsonValue | null {
    if (!this.enter()) return null;
    this.pos++; // [
    const array = JsonValue.newArray();
    this.skipWhitespace();
    if (this.at(this.pos) == 0x5d) {
      this.pos++;
      this.depth--;
      return array;
    }
    for (;;) {
      const element = this.parseValue();
      if (element === null) return null;
      array.push(element);
      this.skipWhitespace();
      const c = this.at(this.pos);
      if (c == COMMA) {
        this.pos++;
        continue;
      }
      if (c == 0x5d) {
        this.pos++;
        this.depth--;
        return array;
      }
      return this.fail('unexpected ' + this.describe(this.pos) + " (expected ',' or ']')", this.pos);
    }
  }

  // ------------------------------------------------------------------------------ numbers

  private parseNumber(): JsonValue | null {
    const start = this.pos;
    let p = start;
    if (this.at(p) == MINUS) p++;
    const first = this.at(p);
    if (first == ZERO) {
      p++;
    } else if (first > ZERO && first <= NINE) {
      while (isDigit(this.at(p))) p++;
    } else {
      return this.fail('unexpected ' + this.describe(p) + ' (expected a digit)', p);
    }
    if (this.at(p) == DOT) {
      p++;
      if (!isDigit(this.at(p))) return this.fail('unexpected ' + this.describe(p) + " (expected a digit after '.')", p);
      while (isDigit(this.at(p))) p++;
    }
    const e = this.at(p);
    if (e == 0x65 || e == 0x45) {
      p++;
      const sign = this.at(p);
      if (sign == PLUS || sign == MINUS) p++;
      if (!isDigit(this.at(p)))
        return this.fail('unexpected ' + this.describe(p) + ' (expected a digit in the exponent)', p);
      while (isDigit(this.at(p))) p++;
    }
    this.pos = p;
    // Correctly rounded, as JSON.parse reads it (decimal.ts).
    const value = decimalToF64(this.base + <usize>start, p - start);
    if (!isFinite(value)) return this.fail('number out of range', start);
    return JsonValue.ofNumber(value);
  }

  // ------------------------------------------------------------------------------ strings

  /** Parses the string literal at pos (which is a '"'); null after fail(). Two passes: the first
   * validates and counts UTF-16 units, the second writes them into a buffer of exactly that size. */
  private parseString(): string | null {
    const open = this.pos;
    let p = open + 1;
    let units = 0;
    for (;;) {
      const c = this.at(p);
      if (c < 0) {
        this.fail('unterminated string', open);
        return null;
      }
      if (c == QUOTE) break;
      if (c < 0x20) {
        this.fail('control character ' + this.describe(p) + ' in a string (must be escaped)', p);
        return null;
      }
      if (c == BACKSLASH) {
        const length = this.escapeLength(p);
        if (length == 0) return null;
        p += length;
        units++;
      } else if (c < 0x80) {
        p++;
        units++;
      } else {
        const length = this.utf8Length(p);
        if (length == 0) {
          this.fail('invalid UTF-8 in a string', p);
          return null;
        }
        p += length;
        units += length == 4 ? 2 : 1;
      }
    }
    const close = p;
    const out = new ArrayBuffer(units << 1);
    let o = changetype<usize>(out);
    p = open + 1;
    while (p < close) {
      const c = this.at(p);
      if (c == BACKSLASH) {
        store<u16>(o, <u16>this.escapeUnit(p));
        p += this.at(p + 1) == 0x75 ? 6 : 2;
        o += 2;
      } else if (c < 0x80) {
        store<u16>(o, <u16>c);
        p++;
        o += 2;
      } else {
        const length = this.utf8Length(p);
        const point = this.utf8Decode(p, length);
        if (point >= 0x10000) {
          store<u16>(o, <u16>(0xd800 | ((point - 0x10000) >> 10)));
          store<u16>(o + 2, <u16>(0xdc00 | ((point - 0x10000) & 0x3ff)));
          o += 4;
        } else {
          store<u16>(o, <u16>point);
          o += 2;
        }
        p += length;
      }
    }
    this.pos = close + 1;
    return String.UTF16.decode(out);
  }

  /** Length of the escape at p (2 or 6), or 0 after fail(). */
  private escapeLength(p: i32): i32 {
    const e = this.at(p + 1);
    if (e == QUOTE || e == BACKSLASH || e == 0x2f || e == 0x62 || e == 0x66 || e == 0x6e || e == 0x72 || e == 0x74)
      return 2;
    if (e == 0x75) {
      for (let i = 2; i < 6; i++) {
        if (hexValue(this.at(p + i)) < 0) {
          this.fail('invalid \\u escape: expected 4 hex digits', p);
          return 0;
        }
      }
      return 6;
    }
    if (e < 0) {
      this.fail('unterminated string', p);
      return 0;
    }
    this.fail('invalid escape \\' + (e >= 0x20 && e < 0x7f ? String.fromCharCode(e) : '?') + ' in a string', p);
    return 0;
  }

  /** UTF-16 unit of a validated escape. Lone surrogates from \u are kept, as JSON.parse does. */
  private escapeUnit(p: i32): i32 {
    const e = this.at(p + 1);
    if (e == 0x62) return 0x08;
    if (e == 0x66) return 0x0c;
    if (e == 0x6e) return 0x0a;
    if (e == 0x72) return 0x0d;
    if (e == 0x74) return 0x09;
    if (e != 0x75) return e; // " \ /
    return (
      (hexValue(this.at(p + 2)) << 12) |
      (hexValue(this.at(p + 3)) << 8) |
      (hexValue(this.at(p + 4)) << 4) |
      hexValue(this.at(p + 5))
    );
  }

  /** Length of the well-formed UTF-8 sequence at p (RFC 3629 §4: no overlongs, no surrogates,
   * nothing above U+10FFFF), or 0. */
  private utf8Length(p: i32): i32 {
    const b0 = this.at(p);
    if (b0 >= 0xc2 && b0 <= 0xdf) return isContinuation(this.at(p + 1)) ? 2 : 0;
    if (b0 >= 0xe0 && b0 <= 0xef) {
      const b1 = this.at(p + 1);
      const low = b0 == 0xe0 ? 0xa0 : 0x80;
      const high = b0 == 0xed ? 0x9f : 0xbf;
      return b1 >= low && b1 <= high && isContinuation(this.at(p + 2)) ? 3 : 0;
    }
    if (b0 >= 0xf0 && b0 <= 0xf4) {
      const b1 = this.at(p + 1);
      const low = b0 == 0xf0 ? 0x90 : 0x80;
      const high = b0 == 0xf4 ? 0x8f : 0xbf;
      return b1 >= low && b1 <= high && isContinuation(this.at(p + 2)) && isContinuation(this.at(p + 3)) ? 4 : 0;
    }
    return 0;
  }

  private utf8Decode(p: i32, length: i32): i32 {
    const b0 = this.at(p);
    if (length == 2) return ((b0 & 0x1f) << 6) | (this.at(p + 1) & 0x3f);
    if (length == 3) return ((b0 & 0x0f) << 12) | ((this.at(p + 1) & 0x3f) << 6) | (this.at(p + 2) & 0x3f);
    return (
      ((b0 & 0x07) << 18) | ((this.at(p + 1) & 0x3f) << 12) | ((this.at(p + 2) & 0x3f) << 6) | (this.at(p + 3) & 0x3f)
    );
  }
}

function isDigit(c: i32): bool {
  return c >= ZERO && c <= NINE;
}

function isContinuation(c: i32): bool {
  return c >= 0x80 && c <= 0xbf;
}

function hexValue(c: i32): i32 {
  if (c >= ZERO && c <= NINE) return c - ZERO;
  if (c >= 0x61 && c <= 0x66) return c - 0x61 + 10;
  if (c >= 0x41 && c <= 0x46) return c - 0x41 + 10;
  return -1;
}

/** A name for an error message: quoted, cut to 40 characters. */
function quoteForMessage(name: string): string {
  return '"' + (name.length > 40 ? name.substring(0, 40) + '...' : name) + '"';
}
