// A cursor over a parsed YAML document that knows where it is: every value read through it can
// fail with `<file>:<line>: <field path>: <what is wrong>`, the field path written the way the
// Envoy docs write it (`static_resources.listeners[edge].filter_chains[0]...`, list items named
// by their `name` field when they have one). envoy-config.ts reads the bootstrap through it.

import { isMap, isScalar, isSeq, LineCounter, Node as YamlNode, parseDocument } from 'yaml';

/** A configuration Envoy would refuse (or origin edge cannot run); the message names file and line. */
export class EdgeConfigError extends Error {
  override name = 'EdgeConfigError';
  constructor(
    message: string,
    /** The yaml file as given, and the 1-based line, when known. */
    readonly file: string,
    readonly line: number | undefined,
  ) {
    super(message);
  }
}

interface Source {
  file: string;
  lines: LineCounter;
}

export class YamlCursor {
  private constructor(
    private readonly source: Source,
    private readonly node: unknown,
    /** Dotted path from the document root, for messages. */
    readonly path: string,
    /** Line of the nearest enclosing node that has one (a missing field reports its parent). */
    private readonly fallbackLine: number | undefined,
  ) {}

  /** Parses `text` (one YAML document); syntax errors carry the parser's line. */
  static parse(text: string, file: string): YamlCursor {
    const lines = new LineCounter();
    const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true });
    const first = doc.errors[0];
    if (first !== undefined) {
      const line = first.linePos?.[0].line;
      throw new EdgeConfigError(
        `${file}${line !== undefined ? `:${line}` : ''}: not valid YAML: ${first.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`,
        file,
        line,
      );
    }
    return new YamlCursor({ file, lines }, doc.contents, '', 1);
  }

  line(): number | undefined {
    const range = (this.node as YamlNode | null)?.range;
    return range ? this.source.lines.linePos(range[0]).line : this.fallbackLine;
  }

  fail(message: string): never {
    const line = this.line();
    const where = this.path === '' ? '' : ` ${this.path}:`;
    throw new EdgeConfigError(
      `${this.source.file}${line !== undefined ? `:${line}` : ''}:${where} ${message}`,
      this.source.file,
      line,
    );
  }

  /** The field `key` of this map, or undefined when absent (explicit null counts as absent). */
  field(key: string): YamlCursor | undefined {
    if (!isMap(this.node)) this.fail(`expected a mapping with "${key}"`);
    const pair = this.node.items.find((p) => (isScalar(p.key) ? String(p.key.value) : undefined) === key);
    if (pair === undefined || pair.value === null || (isScalar(pair.value) && pair.value.value === null))
      return undefined;
    return new YamlCursor(this.source, pair.value, this.path === '' ? key : `${this.path}.${key}`, this.line());
  }

  need(key: string, what = ''): YamlCursor {
    return this.field(key) ?? this.fail(`missing "${key}"${what ? ` (${what})` : ''}`);
  }

  has(key: string): boolean {
    return this.field(key) !== undefined;
  }

  isMapping(): boolean {
    return isMap(this.node);
  }

  keys(): string[] {
    if (!isMap(this.node)) this.fail('expected a mapping');
    return this.node.items.map((p) => (isScalar(p.key) ? String(p.key.value) : ''));
  }

  /** The items of a sequence, each named `[<name>]` when it has a string `name`, else `[<index>]`. */
  list(): YamlCursor[] {
    if (!isSeq(this.node)) this.fail('expected a list');
    return this.node.items.map((item, i) => {
      const name = isMap(item) ? item.get('name') : undefined;
      const label = typeof name === 'string' && name !== '' ? name : String(i);
      return new YamlCursor(this.source, item, `${this.path}[${label}]`, this.line());
    });
  }

  str(): string {
    if (!isScalar(this.node) || typeof this.node.value !== 'string')
      this.fail(`expected a string, found ${this.describe()}`);
    return this.node.value as string;
  }

  /** A string, or a number written without quotes (YAML reads `vm_id: 1` as a number). */
  text(): string {
    if (isScalar(this.node) && (typeof this.node.value === 'number' || typeof this.node.value === 'boolean'))
      return String(this.node.value);
    return this.str();
  }

  bool(): boolean {
    if (!isScalar(this.node) || typeof this.node.value !== 'boolean')
      this.fail(`expected true or false, found ${this.describe()}`);
    return this.node.value as boolean;
  }

  /** An unsigned integer; protobuf's JSON mapping also accepts it as a decimal string. */
  uint(max: number): number {
    const v = isScalar(this.node) ? this.node.value : undefined;
    const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : NaN;
    if (!Number.isInteger(n) || n < 0 || n > max) this.fail(`expected an integer 0..${max}, found ${this.describe()}`);
    return n;
  }

  /** google.protobuf.Duration: "1.5s" (the JSON mapping), or { seconds, nanos }. In ms. */
  durationMs(): number {
    if (isMap(this.node)) {
      const s = this.field('seconds')?.uint(315_576_000_000) ?? 0;
      const ns = this.field('nanos')?.uint(999_999_999) ?? 0;
      return s * 1000 + ns / 1e6;
    }
    const t = this.text();
    const m = /^(\d+(?:\.\d{1,9})?)s$/.exec(t);
    if (m === null) this.fail(`expected a duration such as "5s" or "0.25s", found "${t}"`);
    return Number(m[1]) * 1000;
  }

  /** The plain JavaScript value (for google.protobuf.Struct configurations). */
  plain(): unknown {
    return (
      (this.node as { toJSON?: () => unknown } | null)?.toJSON?.() ?? (isScalar(this.node) ? this.node.value : null)
    );
  }

  private describe(): string {
    if (isMap(this.node)) return 'a mapping';
    if (isSeq(this.node)) return 'a list';
    if (isScalar(this.node))
      return typeof this.node.value === 'string' ? `"${this.node.value}"` : String(this.node.value);
    return 'nothing';
  }
}
