// Envoy's tag extraction: how a stat name becomes a "tag-extracted name" plus tags, which its
// Prometheus output prints as a metric name with labels. Envoy does it once per stat, with the
// bootstrap's stats_config (envoy.config.metrics.v3.StatsConfig) and its built-in extractors.
// Rules from Envoy source/common/stats/tag_producer_impl.cc and tag_extractor_impl.cc:
//
//   * a `stats_tags` entry with a `regex` is searched in the whole stat name (ECMAScript
//     regex_search); it applies if it matches with at least one group. Group 1 is the text
//     removed from the name, group 2 (else group 1) the tag's value. Removals are collected
//     from every extractor against the original name, then cut out at once;
//   * `fixed_value` adds that tag to every stat and removes nothing;
//   * no regex and no fixed_value: Envoy's built-in regex of that tag name, or a config error;
//   * a regex that starts `^<word>\.` (or is `^<word>$`) only runs on names whose first
//     dot-separated token is <word>, and a name without a dot never meets it. Extractors without
//     such a prefix run first (built-in before configured), then those of the name's token;
//   * a tag name extracted once is not extracted again by a later extractor of the same name;
//   * use_all_default_tags (default true) adds the built-in extractors. They are anchored to
//     Envoy's own stat names (`^http\.`, `^cluster\.`, …; source/common/config/well_known_names.cc)
//     except two that match a suffix: `envoy.response_code` (`_rq_<3 digits>`) and
//     `envoy.response_code_class` (`_rq_<digit>xx`). A plugin's `wasmcustom.…` name can only
//     meet those two, so they are the ones kept here.

export interface TagSpecifier {
  name: string;
  regex?: string;
  fixedValue?: string;
}

/** The parts of envoy.config.metrics.v3.StatsConfig that shape names and labels. */
export interface StatsTagConfig {
  tags: TagSpecifier[];
  useAllDefaultTags: boolean;
}

export interface Tag {
  name: string;
  value: string;
}

/** Envoy's built-in regexes that can match outside its own stat namespaces. */
const DEFAULT_EXTRACTORS: ReadonlyArray<{ name: string; regex: string }> = [
  { name: 'envoy.response_code', regex: '_rq(_(\\d{3}))$' },
  { name: 'envoy.response_code_class', regex: '_rq_(\\d)xx$' },
];

/** std::regex's ECMAScript grammar has POSIX classes inside brackets (`[_[:digit:]]`); JS has
 * none and would read `[:digit:]` as a set of characters. */
const POSIX_CLASSES: Record<string, string> = {
  alnum: 'A-Za-z0-9',
  alpha: 'A-Za-z',
  digit: '0-9',
  xdigit: '0-9A-Fa-f',
  lower: 'a-z',
  upper: 'A-Z',
  space: '\\s',
  w: '\\w',
  d: '0-9',
  s: '\\s',
};

/** `regex` in JS syntax (POSIX bracket classes spelled out). */
export function jsRegexSource(regex: string): string {
  return regex.replace(/\[:([a-z]+):\]/g, (whole, name: string) => POSIX_CLASSES[name] ?? whole);
}

/** Envoy's built-in tag names all start with "envoy." (well_known_names.h). */
const isDefaultTagName = (name: string): boolean => name.startsWith('envoy.');

/** No regex given for a tag name Envoy has no built-in regex for (Envoy's wording). */
export class TagConfigError extends Error {
  override name = 'TagConfigError';
}

interface Extractor {
  name: string;
  /** undefined: a fixed value. */
  regex: RegExp | undefined;
  fixedValue: string;
  prefix: string;
  sharedName: boolean;
}

/** TagExtractorImplBase::extractRegexPrefix: the literal first token of a `^word\.` regex. */
export function regexPrefix(regex: string): string {
  if (!regex.startsWith('^')) return '';
  for (let i = 1; i < regex.length; i++) {
    const c = regex[i]!;
    if (/[A-Za-z0-9_]/.test(c)) continue;
    if (i === 1) return '';
    const last = i === regex.length - 1;
    const rest = regex.slice(i);
    if ((!last && (rest.startsWith('\\.') || rest.startsWith('(?=\\.)'))) || (last && c === '$'))
      return regex.slice(1, i);
    return '';
  }
  return '';
}

export class TagProducer {
  private readonly withoutPrefix: Extractor[] = [];
  private readonly byPrefix = new Map<string, Extractor[]>();

  /** Throws TagConfigError or a SyntaxError (bad regex) where Envoy refuses the bootstrap. */
  constructor(config: StatsTagConfig) {
    if (config.useAllDefaultTags) for (const d of DEFAULT_EXTRACTORS) this.add(d.name, d.regex, undefined);
    for (const t of config.tags) {
      if (t.fixedValue !== undefined) this.add(t.name, undefined, t.fixedValue);
      else if (t.regex !== undefined && t.regex !== '') this.add(t.name, t.regex, undefined);
      else {
        const builtIn = DEFAULT_EXTRACTORS.filter((d) => d.name === t.name);
        if (builtIn.length === 0 && !isDefaultTagName(t.name))
          throw new TagConfigError(`No regex specified for tag specifier and no default regex for name: '${t.name}'`);
        // A built-in tag of Envoy's own stats only (anchored to its namespaces): never matches here.
        for (const d of builtIn) this.add(d.name, d.regex, undefined);
      }
    }
  }

  private add(name: string, regex: string | undefined, fixedValue: string | undefined): void {
    if (name === '') throw new TagConfigError('tag_name cannot be empty');
    const e: Extractor = {
      name,
      // `d`: group offsets, to cut out exactly the text group 1 matched.
      regex: regex === undefined ? undefined : new RegExp(jsRegexSource(regex), 'd'),
      fixedValue: fixedValue ?? '',
      prefix: regex === undefined ? '' : regexPrefix(regex),
      sharedName: false,
    };
    const all = [...this.withoutPrefix, ...[...this.byPrefix.values()].flat()];
    for (const other of all) {
      if (other.name === name) {
        other.sharedName = true;
        e.sharedName = true;
      }
    }
    if (e.prefix === '') this.withoutPrefix.push(e);
    else this.byPrefix.set(e.prefix, [...(this.byPrefix.get(e.prefix) ?? []), e]);
  }

  /** TagProducerImpl::produceTags: the tag-extracted name and the tags, in extraction order. */
  produce(statName: string): { extractedName: string; tags: Tag[] } {
    const tags: Tag[] = [];
    const removed = new Uint8Array(statName.length);
    const done = new Set<string>();
    const dot = statName.indexOf('.');
    const extractors = [...this.withoutPrefix, ...(dot >= 0 ? (this.byPrefix.get(statName.slice(0, dot)) ?? []) : [])];
    for (const e of extractors) {
      if (e.sharedName && done.has(e.name)) continue;
      if (extract(e, statName, tags, removed) && e.sharedName) done.add(e.name);
    }
    let extractedName = '';
    for (let i = 0; i < statName.length; i++) if (removed[i] === 0) extractedName += statName[i];
    return { extractedName, tags };
  }
}

function extract(e: Extractor, statName: string, tags: Tag[], removed: Uint8Array): boolean {
  if (e.regex === undefined) {
    tags.push({ name: e.name, value: e.fixedValue });
    return true;
  }
  const m = e.regex.exec(statName);
  if (m === null || m.length < 2) return false;
  const remove = m[1] ?? '';
  const value = m.length > 2 ? (m[2] ?? '') : remove;
  tags.push({ name: e.name, value });
  const span = m.indices?.[1];
  if (span !== undefined) removed.fill(1, span[0], span[1]);
  return true;
}
