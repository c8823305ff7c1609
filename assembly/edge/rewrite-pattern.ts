// Path patterns of the rewrite rules: literal text and named parts, compiled once at configure
// time and matched against the whole request path without allocating.
//
//   pattern := element+        (anchored at both ends of the path)
//   element := literal | "<" name [ ":" class ] ">"
//   name    := [A-Za-z_][A-Za-z0-9_]*           (unique in a pattern, at most 32 characters)
//   class   := "seg"  one or more characters, no "/"                       (the default)
//            | "name" one or more characters, none of "/", "-", "@"
//            | "path" one or more characters, "/" included
//            | "ism"  from here up to the end of the first path segment ending in ".ism" or
//                     ".isml" (any case): the presentation, as the origin finds it (the
//                     default class of a part called "ism")
//            | alt ( "|" alt )+  one of these literal texts, tried in order
//
// Parts are lazy: the shortest text that lets the rest of the pattern match, so in
// `<prefix:name>-<rest>` the prefix ends at the first "-". Matching backtracks over the
// possible ends of each part, under a step budget (a pattern never costs more than MAX_STEPS).
// Literals are case-sensitive; "<" and ">" cannot appear in a literal.

/** Limits: a rule set is configuration, not input, but its cost per request stays bounded. */
export const MAX_PATTERN_CHARS: i32 = 1024;
export const MAX_PARTS: i32 = 16;
export const MAX_NAME_CHARS: i32 = 32;
/** Element visits per match: realistic patterns need a few dozen; a pathological one (many
 * adjacent path parts) gives up here, at a fraction of a millisecond. */
const MAX_STEPS: i32 = 16384;

export const enum ElementKind {
  Literal = 0,
  Seg = 1,
  Name = 2,
  Path = 3,
  Ism = 4,
  Choice = 5,
}

/** One literal or one part. */
export class Element {
  literal: string = "";
  /** Part index (parts are numbered in pattern order), -1 for a literal. */
  part: i32 = -1;
  choices: string[] = [];
  /** First character of the literal that follows this part, or -1 (lets a part skip ends quickly). */
  nextChar: i32 = -1;
  /** Choice: pointer and length of each choice string, for the matcher (the strings stay alive through `choices`). */
  choiceTable: StaticArray<i32> = new StaticArray<i32>(0);
  constructor(public kind: ElementKind) {}
}

export class Pattern {
  elements: Element[] = [];
  partNames: string[] = [];
  partKinds: ElementKind[] = [];
  partChoices: Array<string[]> = [];
  /** The literal the pattern ends with ("" if it ends with a part): a cheap first test. */
  suffix: string = "";

  constructor(public readonly text: string) {}

  partIndex(name: string): i32 {
    for (let i = 0, n = this.partNames.length; i < n; i++) if (this.partNames[i] == name) return i;
    return -1;
  }

  /** True when the whole path matches; the spans then hold the parts. */
  match(path: string): bool {
    const suffix = this.suffix;
    if (suffix.length > 0 && !path.endsWith(suffix)) return false;
    steps = 0;
    return matchFrom(changetype<usize>(this.program), this.elements.length, changetype<usize>(this.spans),
      changetype<usize>(path), path.length, 0, 0);
  }

  /** Start of part `part` in the path of the last successful match (UTF-16 offset). */
  @inline partStart(part: i32): i32 {
    return unchecked(this.spans[part << 1]);
  }

  @inline partEnd(part: i32): i32 {
    return unchecked(this.spans[(part << 1) + 1]);
  }

  /** The text of part `part` in `path` (after a successful match). */
  partText(path: string, part: i32): string {
    return path.substring(this.partStart(part), this.partEnd(part));
  }

  /**
   * The elements flattened for the matcher (SLOTS i32 per element, see compile): the matcher
   * is a plain function over pointers and integers, so the incremental GC's shadow stack costs
   * it nothing. Literal and choice strings stay alive through `elements`; AssemblyScript's
   * heap does not move objects.
   */
  program: StaticArray<i32> = new StaticArray<i32>(0);
  /** Part spans of the last match: start, end per part. */
  spans: StaticArray<i32> = new StaticArray<i32>(0);
}

// Program layout, per element.
const SLOTS: i32 = 5;
const S_KIND: i32 = 0;
const S_PART: i32 = 1;
const S_NEXT: i32 = 2;
/** Literal: string pointer and length. Choice: pointer to its choiceTable, and the number of choices. */
const S_PTR: i32 = 3;
const S_LEN: i32 = 4;

/** Element visits left in the current match. */
let steps: i32 = 0;

@inline function slot(program: usize, index: i32, field: i32): i32 {
  return load<i32>(program + (<usize>(index * SLOTS + field) << 2));
}

@inline function unit(text16: usize, k: i32): i32 {
  return <i32>load<u16>(text16 + (<usize>k << 1));
}

@inline function setSpan(spans: usize, part: i32, start: i32, end: i32): void {
  store<i32>(spans + (<usize>part << 3), start);
  store<i32>(spans + (<usize>part << 3), end, 4);
}

/** True when the string at `ptr` (`len` units) occurs in the text at `pos`. */
@inline function occursAt(text16: usize, n: i32, pos: i32, ptr: usize, len: i32): bool {
  return pos + len <= n && memory.compare(text16 + (<usize>pos << 1), ptr, <usize>len << 1) == 0;
}

function matchFrom(program: usize, count: i32, spans: usize, text16: usize, n: i32, index: i32, pos: i32): bool {
  if (++steps > MAX_STEPS) return false;
  if (index == count) return pos == n;
  const kind = slot(program, index, S_KIND);
  const part = slot(program, index, S_PART);
  switch (kind) {
    case ElementKind.Literal: {
      const len = slot(program, index, S_LEN);
      if (!occursAt(text16, n, pos, <usize>slot(program, index, S_PTR), len)) return false;
      return matchFrom(program, count, spans, text16, n, index + 1, pos + len);
    }
    case ElementKind.Ism: {
      const end = ismEnd(text16, n, pos);
      if (end < 0) return false;
      setSpan(spans, part, pos, end);
      return matchFrom(program, count, spans, text16, n, index + 1, end);
    }
    case ElementKind.Choice: {
      const choices = <usize>slot(program, index, S_PTR);
      const m = slot(program, index, S_LEN);
      for (let c = 0; c < m; c++) {
        const choice = <usize>load<i32>(choices + (<usize>c << 3));
        const len = load<i32>(choices + (<usize>c << 3), 4);
        if (!occursAt(text16, n, pos, choice, len)) continue;
        setSpan(spans, part, pos, pos + len);
        if (matchFrom(program, count, spans, text16, n, index + 1, pos + len)) return true;
      }
      return false;
    }
    default: {
      if (index + 1 == count) {
        // The last element takes the rest of the path or nothing.
        if (pos >= n) return false;
        for (let k = pos; k < n; k++) if (!allowed(kind, unit(text16, k))) return false;
        setSpan(spans, part, pos, n);
        return true;
      }
      const next = slot(program, index, S_NEXT);
      for (let end = pos + 1; end <= n; end++) {
        if (!allowed(kind, unit(text16, end - 1))) return false;
        if (next >= 0 && (end == n || unit(text16, end) != next)) continue;
        setSpan(spans, part, pos, end);
        if (matchFrom(program, count, spans, text16, n, index + 1, end)) return true;
        if (steps > MAX_STEPS) return false;
      }
      return false;
    }
  }
}

/** End of the first path segment at or after `pos` that ends in .ism/.isml (any case), or -1. */
function ismEnd(text16: usize, n: i32, pos: i32): i32 {
  for (let k = pos + 1; k <= n; k++) {
    if (k < n && unit(text16, k) != 0x2f) continue;
    let end = k;
    if (end - pos >= 5 && lower(unit(text16, end - 1)) == 0x6c) end--; // ".isml"
    if (end - pos >= 4 && unit(text16, end - 4) == 0x2e && lower(unit(text16, end - 3)) == 0x69 &&
      lower(unit(text16, end - 2)) == 0x73 && lower(unit(text16, end - 1)) == 0x6d) return k;
  }
  return -1;
}

@inline function allowed(kind: ElementKind, c: i32): bool {
  if (kind == ElementKind.Path) return true;
  if (c == 0x2f) return false; // "/"
  return kind == ElementKind.Seg || (c != 0x2d && c != 0x40); // name: no "-" or "@"
}

/** ASCII lower case of a UTF-16 unit. */
@inline function lower(c: i32): i32 {
  return c >= 0x41 && c <= 0x5a ? c + 32 : c;
}

/** True when the characters of s[from, to) end with ".ism" or ".isml" (any case). */
export function endsWithIsm(s: string, from: i32, to: i32): bool {
  let end = to;
  if (end - from >= 5 && lower(s.charCodeAt(end - 1)) == 0x6c) end--; // "l"
  if (end - from < 4) return false;
  return s.charCodeAt(end - 4) == 0x2e && lower(s.charCodeAt(end - 3)) == 0x69 &&
    lower(s.charCodeAt(end - 2)) == 0x73 && lower(s.charCodeAt(end - 1)) == 0x6d;
}

// ------------------------------------------------------------------------------------ compiling

let patternError: string = "";

/** Why the last compilePattern failed. */
export function lastPatternError(): string {
  return patternError;
}

export function isIdentifier(s: string): bool {
  const n = s.length;
  if (n == 0 || n > MAX_NAME_CHARS) return false;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    const letter = (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c == 0x5f;
    if (!letter && !(i > 0 && c >= 0x30 && c <= 0x39)) return false;
  }
  return true;
}

function fail(message: string): Pattern | null {
  patternError = message;
  return null;
}

/** Compiles a pattern, or null with lastPatternError(). */
export function compilePattern(text: string): Pattern | null {
  patternError = "";
  const n = text.length;
  if (n == 0) return fail("empty pattern");
  if (n > MAX_PATTERN_CHARS) return fail("longer than " + MAX_PATTERN_CHARS.toString() + " characters");
  const p = new Pattern(text);
  let i = 0;
  let literalStart = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c == 0x3e) return fail("'>' at character " + i.toString() + " outside a part (write parts as <name> or <name:class>)");
    if (c != 0x3c) {
      i++;
      continue;
    }
    if (i > literalStart) addLiteral(p, text.substring(literalStart, i));
    const close = text.indexOf(">", i + 1);
    if (close < 0) return fail("'<' at character " + i.toString() + " has no closing '>'");
    const inner = text.substring(i + 1, close);
    if (inner.indexOf("<") >= 0) return fail("'<' inside the part at character " + i.toString());
    const element = compilePart(p, inner);
    if (element === null) return null;
    p.elements.push(element);
    i = close + 1;
    literalStart = i;
  }
  if (n > literalStart) addLiteral(p, text.substring(literalStart, n));
  // The path starts with "/": so must the pattern, or with a part that can hold it.
  const first = p.elements[0];
  if (first.kind == ElementKind.Literal ? !first.literal.startsWith("/") : first.kind != ElementKind.Ism && first.kind != ElementKind.Path) {
    return fail("must start with '/' or with a part of class ism or path (paths start with '/')");
  }
  finish(p);
  return p;
}

function addLiteral(p: Pattern, literal: string): void {
  const e = new Element(ElementKind.Literal);
  e.literal = literal;
  p.elements.push(e);
}

function compilePart(p: Pattern, inner: string): Element | null {
  const colon = inner.indexOf(":");
  const name = colon >= 0 ? inner.substring(0, colon) : inner;
  const cls = colon >= 0 ? inner.substring(colon + 1) : (name == "ism" ? "ism" : "seg");
  if (!isIdentifier(name)) {
    patternError = "bad part name '" + name + "' (letters, digits and _, not starting with a digit, at most " + MAX_NAME_CHARS.toString() + ")";
    return null;
  }
  if (p.partIndex(name) >= 0) {
    patternError = "part <" + name + "> appears twice";
    return null;
  }
  if (p.partNames.length >= MAX_PARTS) {
    patternError = "more than " + MAX_PARTS.toString() + " parts";
    return null;
  }
  let e: Element;
  if (cls.indexOf("|") >= 0) {
    e = new Element(ElementKind.Choice);
    const choices = cls.split("|");
    for (let k = 0; k < choices.length; k++) {
      if (choices[k].length == 0) {
        patternError = "part <" + name + "> has an empty alternative";
        return null;
      }
    }
    e.choices = choices;
  } else if (cls == "seg") e = new Element(ElementKind.Seg);
  else if (cls == "name") e = new Element(ElementKind.Name);
  else if (cls == "path") e = new Element(ElementKind.Path);
  else if (cls == "ism") e = new Element(ElementKind.Ism);
  else {
    patternError = "part <" + name + "> has an unknown class '" + cls + "' (seg, name, path, ism, or alternatives a|b)";
    return null;
  }
  e.part = p.partNames.length;
  p.partNames.push(name);
  p.partKinds.push(e.kind);
  p.partChoices.push(e.choices);
  return e;
}

/** The program, the spans, the suffix, and each part's following literal character. */
function finish(p: Pattern): void {
  p.spans = new StaticArray<i32>(p.partNames.length * 2);
  const elements = p.elements;
  for (let k = 0; k + 1 < elements.length; k++) {
    const next = elements[k + 1];
    if (elements[k].kind != ElementKind.Literal && next.kind == ElementKind.Literal) {
      elements[k].nextChar = next.literal.charCodeAt(0);
    }
  }
  const program = new StaticArray<i32>(elements.length * SLOTS);
  for (let k = 0; k < elements.length; k++) {
    const e = elements[k];
    program[k * SLOTS + S_KIND] = e.kind;
    program[k * SLOTS + S_PART] = e.part;
    program[k * SLOTS + S_NEXT] = e.nextChar;
    if (e.kind == ElementKind.Literal) {
      program[k * SLOTS + S_PTR] = <i32>changetype<usize>(e.literal);
      program[k * SLOTS + S_LEN] = e.literal.length;
    } else if (e.kind == ElementKind.Choice) {
      const table = new StaticArray<i32>(e.choices.length * 2);
      for (let c = 0; c < e.choices.length; c++) {
        table[c * 2] = <i32>changetype<usize>(e.choices[c]);
        table[c * 2 + 1] = e.choices[c].length;
      }
      e.choiceTable = table;
      program[k * SLOTS + S_PTR] = <i32>changetype<usize>(table);
      program[k * SLOTS + S_LEN] = e.choices.length;
    }
  }
  p.program = program;
  const last = elements[elements.length - 1];
  p.suffix = last.kind == ElementKind.Literal ? last.literal : "";
}

/** True when some text of the part's class could equal `key` (map keys checked at configure time). */
export function partCanMatch(kind: ElementKind, choices: string[], key: string): bool {
  const n = key.length;
  if (n == 0) return false;
  switch (kind) {
    case ElementKind.Choice: return choices.includes(key);
    case ElementKind.Ism: return endsWithIsm(key, 0, n);
    default: {
      for (let i = 0; i < n; i++) if (!allowed(kind, key.charCodeAt(i))) return false;
      return true;
    }
  }
}
