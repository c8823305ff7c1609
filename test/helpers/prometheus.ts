// Reading the Prometheus text format (exposition format 0.0.4) as a scraper does, independently of
// prom-client: `# HELP` and `# TYPE` lines, then samples `name{label="value",...} value`. Strict
// enough to fail on what a Prometheus server would refuse (a sample without its family's TYPE, a
// malformed line, a duplicate series).

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  /** Family name → its TYPE (counter, gauge, histogram, ...). */
  types: Map<string, string>;
  samples: Sample[];
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)/gy;

export function parseExposition(text: string): Exposition {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  const seen = new Set<string>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('# HELP ')) continue;
    const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type !== null) {
      if (types.has(type[1]!)) throw new Error(`TYPE of ${type[1]} given twice`);
      types.set(type[1]!, type[2]!);
      continue;
    }
    const m = SAMPLE.exec(line);
    if (m === null) throw new Error(`not a sample line: ${line}`);
    const [, name, rawLabels, rawValue] = m as unknown as [string, string, string | undefined, string];
    const labels: Record<string, string> = {};
    if (rawLabels !== undefined && rawLabels !== '') {
      LABEL.lastIndex = 0;
      let consumed = 0;
      for (let l = LABEL.exec(rawLabels); l !== null; l = LABEL.exec(rawLabels)) {
        labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
        consumed = LABEL.lastIndex;
      }
      if (consumed !== rawLabels.length) throw new Error(`malformed labels: ${line}`);
    }
    const family = familyOf(name, types);
    if (family === undefined) throw new Error(`sample without a TYPE line: ${line}`);
    const value = parseValue(rawValue);
    if (value === undefined) throw new Error(`bad value: ${line}`);
    const key = seriesKey(name, labels);
    if (seen.has(key)) throw new Error(`duplicate series ${key}`);
    seen.add(key);
    samples.push({ name, labels, value });
  }
  return { types, samples };
}

/** A value as Prometheus reads it (Go's ParseFloat: NaN and Inf in any case, a sign on Inf). */
function parseValue(raw: string): number | undefined {
  if (/^nan$/i.test(raw)) return NaN;
  const inf = /^([+-]?)inf(inity)?$/i.exec(raw);
  if (inf !== null) return inf[1] === '-' ? -Infinity : Infinity;
  const n = Number(raw);
  return raw.trim() === '' || Number.isNaN(n) ? undefined : n;
}

/** The family a sample name belongs to (a histogram's `_bucket`, `_sum`, `_count` included). */
function familyOf(name: string, types: Map<string, string>): string | undefined {
  if (types.has(name)) return name;
  const base = name.replace(/_(bucket|sum|count)$/, '');
  return types.get(base) === 'histogram' || types.get(base) === 'summary' ? base : undefined;
}

function seriesKey(name: string, labels: Record<string, string>): string {
  const l = Object.keys(labels)
    .sort()
    .map((k) => `${k}=${labels[k]}`)
    .join(',');
  return `${name}{${l}}`;
}

/** The value of the one series with exactly these labels, or undefined. */
export function valueOf(e: Exposition, name: string, labels: Record<string, string> = {}): number | undefined {
  const key = seriesKey(name, labels);
  return e.samples.find((s) => seriesKey(s.name, s.labels) === key)?.value;
}

/** The series of a name, as `labels → value` keys (`kind=dash-mpd,status=200`). */
export function seriesOf(e: Exposition, name: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of e.samples.filter((x) => x.name === name)) {
    const l = Object.keys(s.labels)
      .sort()
      .map((k) => `${k}=${s.labels[k]}`)
      .join(',');
    out[l] = s.value;
  }
  return out;
}
