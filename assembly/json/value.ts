// JSON values (RFC 8259) as one tagged class with total accessors: asking a value for the wrong
// kind answers null / the fallback instead of failing, because a downcast or a Map lookup that
// fails aborts, and an abort traps the whole VM. Objects keep their members in document order
// (names are unique: the parser rejects duplicates) with a name index built once they grow.

export enum JsonKind {
  Null = 0,
  Bool = 1,
  Number = 2,
  String = 3,
  Array = 4,
  Object = 5,
}

/** Members up to this count are found by a linear scan; more build a Map index. */
const INDEX_THRESHOLD = 8;
/** Number.MAX_SAFE_INTEGER (2^53 - 1): beyond it an f64 no longer says which integer was written. */
const MAX_SAFE_INTEGER: f64 = 9007199254740991.0;

export class JsonValue {
  private boolValue: bool = false;
  private numberValue: f64 = 0;
  private stringValue: string = '';
  /** Array elements, or object member values in document order. */
  private items: JsonValue[] = [];
  /** Object member names, parallel to items. */
  private names: string[] = [];
  private index: Map<string, i32> | null = null;

  /** Use the static factories. */
  constructor(public readonly kind: JsonKind) {}

  static ofNull(): JsonValue {
    return new JsonValue(JsonKind.Null);
  }

  static ofBool(value: bool): JsonValue {
    const v = new JsonValue(JsonKind.Bool);
    v.boolValue = value;
    return v;
  }

  static ofNumber(value: f64): JsonValue {
    const v = new JsonValue(JsonKind.Number);
    v.numberValue = value;
    return v;
  }

  static ofString(value: string): JsonValue {
    const v = new JsonValue(JsonKind.String);
    v.stringValue = value;
    return v;
  }

  static newArray(): JsonValue {
    return new JsonValue(JsonKind.Array);
  }
  static newObject(): JsonValue {
    return new JsonValue(JsonKind.Object);
  }

  isNull(): bool {
    return this.kind == JsonKind.Null;
  }
  isBool(): bool {
    return this.kind == JsonKind.Bool;
  }
  isNumber(): bool {
    return this.kind == JsonKind.Number;
  }
  isString(): bool {
    return this.kind == JsonKind.String;
  }
  isArray(): bool {
    return this.kind == JsonKind.Array;
  }
  isObject(): bool {
    return this.kind == JsonKind.Object;
  }

  // ------------------------------------------------------------------------------- scalars

  asBool(fallback: bool = false): bool {
    return this.kind == JsonKind.Bool ? this.boolValue : fallback;
  }

  asNumber(fallback: f64 = 0): f64 {
    return this.kind == JsonKind.Number ? this.numberValue : fallback;
  }

  /** The number if it is integral and a safe integer (|n| <= 2^53 - 1), else `fallback`. */
  asInteger(fallback: i64 = 0): i64 {
    if (this.kind != JsonKind.Number) return fallback;
    const n = this.numberValue;
    if (Math.abs(n) > MAX_SAFE_INTEGER || Math.floor(n) != n) return fallback;
    return <i64>n;
  }

  asString(): string | null {
    return this.kind == JsonKind.String ? this.stringValue : null;
  }

  // ---------------------------------------------------------------------- arrays and objects

  /** Elements of an array or members of an object; 0 for scalars. */
  get length(): i32 {
    return this.kind == JsonKind.Array || this.kind == JsonKind.Object ? this.items.length : 0;
  }

  /** Array element (or object member value) by position, or null. */
  at(position: i32): JsonValue | null {
    if (position < 0 || position >= this.length) return null;
    return this.items[position];
  }

  /** Object member names in document order (a copy); empty for non-objects. */
  keys(): string[] {
    return this.kind == JsonKind.Object ? this.names.slice(0) : new Array<string>(0);
  }

  /** Object member name by position, or null. */
  keyAt(position: i32): string | null {
    if (this.kind != JsonKind.Object || position < 0 || position >= this.names.length) return null;
    return this.names[position];
  }

  has(name: string): bool {
    return this.find(name) >= 0;
  }

  /** Object member by name, or null (also for non-objects). */
  get(name: string): JsonValue | null {
    const position = this.find(name);
    return position >= 0 ? this.items[position] : null;
  }

  getString(name: string): string | null {
    const member = this.get(name);
    return member !== null ? member.asString() : null;
  }

  getBool(name: string, fallback: bool = false): bool {
    const member = this.get(name);
    return member !== null ? member.asBool(fallback) : fallback;
  }

  getNumber(name: string, fallback: f64 = 0): f64 {
    const member = this.get(name);
    return member !== null ? member.asNumber(fallback) : fallback;
  }

  getInteger(name: string, fallback: i64 = 0): i64 {
    const member = this.get(name);
    return member !== null ? member.asInteger(fallback) : fallback;
  }

  /** Member if it is an object, else null. */
  getObject(name: string): JsonValue | null {
    const member = this.get(name);
    return member !== null && member.isObject() ? member : null;
  }

  /** Member if it is an array, else null. */
  getArray(name: string): JsonValue | null {
    const member = this.get(name);
    return member !== null && member.isArray() ? member : null;
  }

  // ---------------------------------------------------------------------------------- building

  /** Appends an array element; false if this is not an array. */
  push(element: JsonValue): bool {
    if (this.kind != JsonKind.Array) return false;
    this.items.push(element);
    return true;
  }

  /** Adds an object member; false if this is not an object or the name already exists. */
  add(name: string, value: JsonValue): bool {
    if (this.kind != JsonKind.Object || this.find(name) >= 0) return false;
    const position = this.names.length;
    this.names.push(name);
    this.items.push(value);
    const index = this.index;
    if (index !== null) {
      index.set(name, position);
    } else if (this.names.length > INDEX_THRESHOLD) {
      const built = new Map<string, i32>();
      for (let i = 0, n = this.names.length; i < n; i++) built.set(this.names[i], i);
      this.index = built;
    }
    return true;
  }

  private find(name: string): i32 {
    if (this.kind != JsonKind.Object) return -1;
    const index = this.index;
    if (index !== null) return index.has(name) ? index.get(name) : -1;
    for (let i = 0, n = this.names.length; i < n; i++) {
      if (this.names[i] == name) return i;
    }
    return -1;
  }

  // ----------------------------------------------------------------------------- serialising

  /** Canonical JSON: no whitespace, members in document order, strings escaped as
   * JSON.stringify does; JSON.parse of it equals JSON.parse of the source. */
  toJson(): string {
    const parts = new Array<string>(0);
    this.write(parts);
    return parts.join('');
  }

  private write(parts: string[]): void {
    switch (this.kind) {
      case JsonKind.Null:
        parts.push('null');
        break;
      case JsonKind.Bool:
        parts.push(this.boolValue ? 'true' : 'false');
        break;
      case JsonKind.Number:
        parts.push(formatNumber(this.numberValue));
        break;
      case JsonKind.String:
        parts.push(quoteJson(this.stringValue));
        break;
      case JsonKind.Array: {
        parts.push('[');
        for (let i = 0, n = this.items.length; i < n; i++) {
          if (i > 0) parts.push(',');
          this.items[i].write(parts);
        }
        parts.push(']');
        break;
      }
      default: {
        parts.push('{');
        for (let i = 0, n = this.items.length; i < n; i++) {
          if (i > 0) parts.push(',');
          parts.push(quoteJson(this.names[i]));
          parts.push(':');
          this.items[i].write(parts);
        }
        parts.push('}');
      }
    }
  }
}

/** Shortest round-trip text; integral values without a fraction. Never Infinity/NaN: the parser
 * refuses numbers out of f64 range. */
function formatNumber(n: f64): string {
  if (n == 0) return 1 / n < 0 ? '-0' : '0';
  if (Math.floor(n) == n && Math.abs(n) < 1e21) {
    if (Math.abs(n) <= MAX_SAFE_INTEGER) return (<i64>n).toString();
  }
  const text = n.toString();
  return text.endsWith('.0') ? text.slice(0, text.length - 2) : text;
}

const HEX = '0123456789abcdef';

/** A JSON string literal for `text`, escaping like ES2019 JSON.stringify (lone surrogates too). */
export function quoteJson(text: string): string {
  const parts = new Array<string>(0);
  parts.push('"');
  let runStart = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const unit = text.charCodeAt(i);
    let escape: string | null = null;
    if (unit == 0x22) escape = '\\"';
    else if (unit == 0x5c) escape = '\\\\';
    else if (unit == 0x08) escape = '\\b';
    else if (unit == 0x0c) escape = '\\f';
    else if (unit == 0x0a) escape = '\\n';
    else if (unit == 0x0d) escape = '\\r';
    else if (unit == 0x09) escape = '\\t';
    else if (unit < 0x20) escape = unicodeEscape(unit);
    else if (unit >= 0xd800 && unit <= 0xdfff) {
      const high = unit <= 0xdbff;
      const next = i + 1 < n ? text.charCodeAt(i + 1) : 0;
      if (high && next >= 0xdc00 && next <= 0xdfff) {
        i++; // a proper pair stays as it is
        continue;
      }
      escape = unicodeEscape(unit);
    }
    if (escape !== null) {
      if (i > runStart) parts.push(text.substring(runStart, i));
      parts.push(escape);
      runStart = i + 1;
    }
  }
  if (n > runStart) parts.push(text.substring(runStart, n));
  parts.push('"');
  return parts.join('');
}

function unicodeEscape(unit: i32): string {
  return (
    '\\u' +
    HEX.charAt((unit >> 12) & 15) +
    HEX.charAt((unit >> 8) & 15) +
    HEX.charAt((unit >> 4) & 15) +
    HEX.charAt(unit & 15)
  );
}
