// The compiled form of a location's "rewrite" member (rewrite.ts compiles it, applyRewrite runs
// it): rules of a pattern, a path template and query items, and the maps they look up, each
// with an index searched by a span of the path so a lookup allocates nothing.

import { Pattern } from './rewrite-pattern';
import { Template, TextBuffer } from './rewrite-template';

export const enum ItemKind {
  Literal = 0,
  Template = 1,
  Lookup = 2,
  RequestQuery = 3,
}

export const enum Missing {
  Refuse = 0,
  Skip = 1,
  Fallback = 2,
}

/**
 * One map: keys and values (values already in their query spelling), with an open-addressing
 * index looked up by a span of the path, so a lookup allocates no key string.
 */
export class RewriteMap {
  keys: string[] = [];
  values: string[] = [];
  /** Key index + 1 per slot, 0 for empty; a power of two at least twice the key count. */
  private slots: StaticArray<i32> = new StaticArray<i32>(0);
  /** Where the entries came from, for messages. */
  member: string = '';
  constructor(public name: string) {}

  add(key: string, value: string): void {
    this.keys.push(key);
    this.values.push(value);
  }

  /** Builds the index (once, after the last add). */
  seal(): void {
    let size = 8;
    while (size < this.keys.length * 2) size <<= 1;
    const slots = new StaticArray<i32>(size);
    for (let i = 0, n = this.keys.length; i < n; i++) {
      const key = this.keys[i];
      let slot = (<i32>hashUnits(changetype<usize>(key), 0, key.length)) & (size - 1);
      while (slots[slot] != 0) slot = (slot + 1) & (size - 1);
      slots[slot] = i + 1;
    }
    this.slots = slots;
  }

  /** Index of the key equal to text16[start, end), or -1. */
  find(text16: usize, start: i32, end: i32): i32 {
    const slots = this.slots;
    const mask = slots.length - 1;
    if (mask < 0) return -1;
    const len = end - start;
    const at = text16 + ((<usize>start) << 1);
    let slot = (<i32>hashUnits(text16, start, end)) & mask;
    while (true) {
      const entry = unchecked(slots[slot]);
      if (entry == 0) return -1;
      const key = unchecked(this.keys[entry - 1]);
      if (key.length == len && memory.compare(at, changetype<usize>(key), (<usize>len) << 1) == 0) return entry - 1;
      slot = (slot + 1) & mask;
    }
  }
}

/** FNV-1a over UTF-16 units [start, end) at text16. */
function hashUnits(text16: usize, start: i32, end: i32): u32 {
  let h: u32 = 2166136261;
  for (let i = start; i < end; i++) {
    h ^= <u32>load<u16>(text16 + ((<usize>i) << 1));
    h *= 16777619;
  }
  return h;
}

export class QueryItem {
  text: string = '';
  template: Template | null = null;
  map: RewriteMap | null = null;
  part: i32 = -1;
  missing: Missing = Missing.Refuse;
  constructor(public kind: ItemKind) {}
}

export class Rule {
  constructor(
    public pattern: Pattern,
    public to: Template,
    public items: QueryItem[],
  ) {}
}

/** Compiled rules and maps of one location. */
export class RewriteConfig {
  rules: Rule[] = [];
  maps: RewriteMap[] = [];
  /** Result text is written here, then copied out once (one VM serves one request at a time). */
  buffer: TextBuffer = new TextBuffer();

  findMap(name: string): RewriteMap | null {
    for (let i = 0, n = this.maps.length; i < n; i++) if (this.maps[i].name == name) return this.maps[i];
    return null;
  }

  /** How many rules, for the plugin's configuration log line. */
  get ruleCount(): i32 {
    return this.rules.length;
  }
}

/** The rewritten request target: `path` decoded, starting with "/"; `query` raw, without "?" ("" for none). */
export class RewriteResult {
  constructor(
    public path: string,
    public query: string,
  ) {}
}
