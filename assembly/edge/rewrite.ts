// Rewrite-map aliasing (issue 7): query-free alias URLs turned into the origin's query URLs by
// rules that are data, as the reference does with Apache RewriteRule + RewriteMap
// (docs/reference/edge-config.md#rewrite; docs/specs.md reference §5).
//
// The location's "rewrite" member (docs/reference/edge-config.md#rewrite):
//
//   { "rules": "default" | [ rule | "default", … ],        (absent: "default")
//     "maps":  { "<map>": { "<key>": "<query fragment>", … }, … } }
//   rule := { "match": "<pattern>", "to": "<path template>", "query": [ item, … ] }
//   item := "<map>[<part>]"          the map's value for the part's text; an unknown key makes
//                                    the rule not match (the next rule is tried)
//         | "<map>[<part>]?"         the same, an unknown key adds nothing (Apache's "")
//         | "<map>[<part>]|<text>"   the same, an unknown key adds <text>
//         | "$query"                 the request's query as received (Apache's [QSA])
//         | "<text with <part>s>"    literal query text; parts are percent-encoded
//
// Patterns: rewrite-pattern.ts. The query is the non-empty items joined by "&"; the path is
// `to` with the parts' text as matched (decoded: the caller encodes it). Map values and literal
// query text are raw query text (`%26%26` stays, "&" separates); the printable characters a URL
// cannot hold raw (`"`, `<`, `|`, …) are percent-encoded once, at configure time. The maps "filter",
// "timeline" and "alter" always exist (empty unless given); every map must be looked up by
// some rule, and every key must be text that some part looking the map up can hold, so a key
// that no URL can reach is an error at configure time instead of a silent miss.
//
// Everything is compiled in parseRewriteConfig; applyRewrite matches without allocating and
// builds its result in one reused buffer. Nothing here traps: bad input is null.

import { JsonKind, JsonValue, parseJsonText } from '../json';
import { DEFAULT_RULES_JSON } from './rewrite-defaults';
import { ElementKind, Pattern, compilePattern, isIdentifier, lastPatternError, partCanMatch } from './rewrite-pattern';
import {
  Template,
  TextBuffer,
  compileTemplate,
  encodeQueryText,
  isSafePath,
  lastTemplateError,
  queryTextProblem,
  writeTemplate,
} from './rewrite-template';
import { ItemKind, Missing, QueryItem, RewriteConfig, RewriteMap, RewriteResult, Rule } from './rewrite-rules';

export const MAX_RULES: i32 = 64;
export const MAX_QUERY_ITEMS: i32 = 16;
export const MAX_MAPS: i32 = 16;
export const MAX_MAP_ENTRIES: i32 = 65536;
export const MAX_KEY_CHARS: i32 = 256;
export const MAX_VALUE_CHARS: i32 = 4096;
/** Longest path and query a rewrite reads or writes; longer ones are left alone (null). */
export const MAX_PATH_CHARS: i32 = 8192;
export const MAX_QUERY_CHARS: i32 = 16384;

/** The maps the default rules read: always present, empty unless the configuration gives them. */
const STANDARD_MAPS: string[] = ['filter', 'timeline', 'alter'];
/** Directories the origin writes itself: as alias formats the default rules would take its own
 * URLs (`<ism>/keyframes/<name>-<key>.m3u8` would read as a media-playlist alias). */
const RESERVED_FORMATS: string[] = ['hls', 'keyframes', 'dash'];

// ------------------------------------------------------------------------------------ configure

let lastError: string = '';

/** The error of the last failed parseRewriteConfig: "rewrite.<member path>: <what>". */
export function lastRewriteConfigError(): string {
  return lastError;
}

function fail(member: string, message: string): RewriteConfig | null {
  lastError = member + ': ' + message;
  return null;
}

/** Compiles a location's "rewrite" member; null on error (see lastRewriteConfigError). */
export function parseRewriteConfig(value: JsonValue): RewriteConfig | null {
  lastError = '';
  if (!value.isObject()) return fail('rewrite', 'must be an object with "rules" and "maps"');
  const names = value.keys();
  for (let i = 0; i < names.length; i++) {
    if (names[i] != 'rules' && names[i] != 'maps')
      return fail('rewrite.' + names[i], 'unknown member (rewrite has "rules" and "maps")');
  }
  const cfg = new RewriteConfig();
  if (!parseMaps(cfg, value.get('maps'))) return null;
  const rules = value.get('rules');
  let defaults = false;
  if (rules === null || rules.asString() == 'default') {
    defaults = true;
    if (!addDefaultRules(cfg)) return null;
  } else if (rules.isArray()) {
    if (rules.length == 0) return fail('rewrite.rules', 'empty (give rules, or "default")');
    for (let i = 0; i < rules.length; i++) {
      const rule = rules.at(i)!;
      const member = 'rewrite.rules[' + i.toString() + ']';
      if (rule.asString() == 'default') {
        defaults = true;
        if (!addDefaultRules(cfg)) return null;
      } else if (!addRule(cfg, rule, member)) return null;
    }
  } else {
    return fail('rewrite.rules', 'must be "default" or an array of rules (objects or "default")');
  }
  if (cfg.rules.length > MAX_RULES) return fail('rewrite.rules', 'more than ' + MAX_RULES.toString() + ' rules');
  if (!checkKeys(cfg)) return null;
  if (defaults) {
    const alter = cfg.findMap('alter')!;
    for (let i = 0; i < RESERVED_FORMATS.length; i++) {
      if (alter.keys.includes(RESERVED_FORMATS[i])) {
        return fail(
          alter.member + '.' + RESERVED_FORMATS[i],
          'the origin writes this directory itself; the default rules would take its own URLs for aliases (name the format otherwise)',
        );
      }
    }
  }
  for (let i = 0; i < cfg.maps.length; i++) cfg.maps[i].seal();
  return cfg;
}

function parseMaps(cfg: RewriteConfig, maps: JsonValue | null): bool {
  for (let i = 0; i < STANDARD_MAPS.length; i++) {
    const m = new RewriteMap(STANDARD_MAPS[i]);
    m.member = 'rewrite.maps.' + m.name;
    cfg.maps.push(m);
  }
  if (maps === null) return true;
  if (!maps.isObject()) return fail('rewrite.maps', 'must be an object of maps') !== null;
  if (maps.length > MAX_MAPS) return fail('rewrite.maps', 'more than ' + MAX_MAPS.toString() + ' maps') !== null;
  for (let i = 0; i < maps.length; i++) {
    const name = maps.keyAt(i)!;
    const member = 'rewrite.maps.' + name;
    if (!isIdentifier(name))
      return fail(member, 'a map name is letters, digits and _ (not starting with a digit)') !== null;
    let m = cfg.findMap(name);
    if (m === null) {
      m = new RewriteMap(name);
      m.member = member;
      cfg.maps.push(m);
    }
    if (!parseEntries(m, maps.at(i)!, member)) return false;
  }
  return true;
}

function parseEntries(m: RewriteMap, entries: JsonValue, member: string): bool {
  if (!entries.isObject()) return fail(member, 'must be an object of "key": "query fragment"') !== null;
  if (entries.length > MAX_MAP_ENTRIES)
    return fail(member, 'more than ' + MAX_MAP_ENTRIES.toString() + ' entries') !== null;
  for (let k = 0; k < entries.length; k++) {
    const key = entries.keyAt(k)!;
    const where = member + '.' + key;
    const value = entries.at(k)!.asString();
    if (value === null) return fail(where, 'must be a string (a query fragment such as "hls_fmp4=true")') !== null;
    if (key.length == 0 || key.length > MAX_KEY_CHARS)
      return fail(where, 'a key is 1 to ' + MAX_KEY_CHARS.toString() + ' characters') !== null;
    for (let c = 0; c < key.length; c++) {
      const unit = key.charCodeAt(c);
      if (unit <= 0x20 || unit == 0x7f) return fail(where, 'a key holds no whitespace or control characters') !== null;
    }
    if (value.length > MAX_VALUE_CHARS)
      return fail(where, 'longer than ' + MAX_VALUE_CHARS.toString() + ' characters') !== null;
    const problem = queryTextProblem(value);
    if (problem.length > 0) return fail(where, problem) !== null;
    m.add(key, encodeQueryText(value));
  }
  return true;
}

function addDefaultRules(cfg: RewriteConfig): bool {
  const parsed = parseJsonText(DEFAULT_RULES_JSON);
  const rules = parsed.value;
  if (rules === null || !rules.isArray())
    return fail('rewrite.rules', 'the default rule set does not parse: ' + parsed.error) !== null;
  for (let i = 0; i < rules.length; i++) {
    if (!addRule(cfg, rules.at(i)!, 'rewrite.rules(default)[' + i.toString() + ']')) return false;
  }
  return true;
}

function addRule(cfg: RewriteConfig, rule: JsonValue, member: string): bool {
  if (!rule.isObject()) return fail(member, 'must be an object {"match", "to", "query"} or "default"') !== null;
  const names = rule.keys();
  for (let i = 0; i < names.length; i++) {
    const n = names[i];
    if (n != 'match' && n != 'to' && n != 'query')
      return fail(member + '.' + n, 'unknown member (a rule has "match", "to" and "query")') !== null;
  }
  const matchText = rule.getString('match');
  if (matchText === null)
    return (
      fail(member + '.match', 'required, a path pattern such as "<ism>/<format:name>/<bundle:name>.m3u8"') !== null
    );
  const pattern = compilePattern(matchText);
  if (pattern === null) return fail(member + '.match', lastPatternError()) !== null;
  const matchProblem = pathTextProblem(matchText);
  if (matchProblem.length > 0) return fail(member + '.match', matchProblem) !== null;
  const toText = rule.getString('to');
  if (toText === null) return fail(member + '.to', 'required, a path template such as "<ism>/.m3u8"') !== null;
  const to = compileTemplate(toText, pattern);
  if (to === null) return fail(member + '.to', lastTemplateError()) !== null;
  const toProblem = pathTextProblem(toText);
  if (toProblem.length > 0) return fail(member + '.to', toProblem) !== null;
  if (!startsWithSlash(to, pattern)) {
    return fail(member + '.to', "must start with '/' or with the part the pattern starts with") !== null;
  }
  const items = new Array<QueryItem>(0);
  const query = rule.get('query');
  if (query !== null) {
    if (!query.isArray()) return fail(member + '.query', 'must be an array of query items') !== null;
    if (query.length > MAX_QUERY_ITEMS)
      return fail(member + '.query', 'more than ' + MAX_QUERY_ITEMS.toString() + ' items') !== null;
    for (let i = 0; i < query.length; i++) {
      const where = member + '.query[' + i.toString() + ']';
      const text = query.at(i)!.asString();
      if (text === null) return fail(where, 'must be a string') !== null;
      const item = compileItem(cfg, text, pattern, where);
      if (item === null) return false;
      items.push(item);
    }
  }
  cfg.rules.push(new Rule(pattern, to, items));
  return true;
}

/**
 * Why literal text cannot be in a decoded path, or "": patterns see the path decoded once and the
 * plugin refuses control characters, backslashes and "%" in it; the query is not in the path.
 */
function pathTextProblem(text: string): string {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c == 0x7f) return 'a control character at character ' + i.toString();
    if (c == 0x5c) return 'a backslash at character ' + i.toString();
    if (c == 0x25)
      return (
        "'%' at character " + i.toString() + ' (paths are matched and written decoded: write the character itself)'
      );
    if (c == 0x3f) return "'?' at character " + i.toString() + ' (the query is not part of the path: use "query")';
  }
  return '';
}

/** The result path starts with "/": a literal "/" or the part that matched from the path's start. */
function startsWithSlash(to: Template, pattern: Pattern): bool {
  if (to.parts.length == 0) return false;
  const part = to.parts[0];
  if (part < 0) return to.literals[0].startsWith('/');
  const first = pattern.elements[0];
  return first.part == part;
}

function compileItem(cfg: RewriteConfig, text: string, pattern: Pattern, where: string): QueryItem | null {
  if (text.length == 0) {
    lastError = where + ': empty';
    return null;
  }
  if (text == '$query') return new QueryItem(ItemKind.RequestQuery);
  const open = text.indexOf('[');
  const close = text.indexOf(']');
  if (
    open > 0 &&
    close > open &&
    isIdentifier(text.substring(0, open)) &&
    isIdentifier(text.substring(open + 1, close))
  ) {
    return compileLookup(cfg, text, open, close, pattern, where);
  }
  const template = compileTemplate(text, pattern);
  if (template === null) {
    lastError = where + ': ' + lastTemplateError();
    return null;
  }
  // Check the literal text with each part standing for one ordinary character.
  const probe = new Array<string>(0);
  for (let i = 0; i < template.parts.length; i++) probe.push(template.parts[i] >= 0 ? 'x' : template.literals[i]);
  const problem = queryTextProblem(probe.join(''));
  if (problem.length > 0) {
    lastError = where + ': ' + problem;
    return null;
  }
  let literal = true;
  for (let i = 0; i < template.parts.length; i++) if (template.parts[i] >= 0) literal = false;
  const item = new QueryItem(literal ? ItemKind.Literal : ItemKind.Template);
  if (literal) item.text = encodeQueryText(text);
  else {
    for (let i = 0; i < template.literals.length; i++) template.literals[i] = encodeQueryText(template.literals[i]);
    item.template = template;
  }
  return item;
}

function compileLookup(
  cfg: RewriteConfig,
  text: string,
  open: i32,
  close: i32,
  pattern: Pattern,
  where: string,
): QueryItem | null {
  const mapName = text.substring(0, open);
  const partName = text.substring(open + 1, close);
  const map = cfg.findMap(mapName);
  if (map === null) {
    lastError = where + ': no map "' + mapName + '" in rewrite.maps';
    return null;
  }
  const part = pattern.partIndex(partName);
  if (part < 0) {
    lastError = where + ': <' + partName + '> is not a part of the pattern ' + pattern.text;
    return null;
  }
  const item = new QueryItem(ItemKind.Lookup);
  item.map = map;
  item.part = part;
  const rest = text.substring(close + 1);
  if (rest.length == 0) item.missing = Missing.Refuse;
  else if (rest == '?') item.missing = Missing.Skip;
  else if (rest.startsWith('|')) {
    item.missing = Missing.Fallback;
    const fallback = rest.substring(1);
    const problem = fallback.length > 0 ? queryTextProblem(fallback) : '';
    if (problem.length > 0) {
      lastError = where + ': the fallback has ' + problem;
      return null;
    }
    item.text = encodeQueryText(fallback);
  } else {
    lastError =
      where +
      ': after "' +
      mapName +
      '[' +
      partName +
      ']" comes nothing, "?" (unknown key adds nothing) or "|<fallback>"';
    return null;
  }
  return item;
}

/**
 * Every map is looked up by some rule, and every key is text that one of the parts looking the
 * map up can hold (a key with "-" behind a `name` part could never be found).
 */
function checkKeys(cfg: RewriteConfig): bool {
  for (let m = 0; m < cfg.maps.length; m++) {
    const map = cfg.maps[m];
    let looked = false;
    for (let k = 0; k < map.keys.length; k++) {
      const key = map.keys[k];
      let reachable = false;
      for (let r = 0; r < cfg.rules.length && !reachable; r++) {
        const rule = cfg.rules[r];
        for (let i = 0; i < rule.items.length && !reachable; i++) {
          const item = rule.items[i];
          if (item.kind != ItemKind.Lookup || item.map !== map) continue;
          looked = true;
          const kind: ElementKind = rule.pattern.partKinds[item.part];
          reachable = partCanMatch(kind, rule.pattern.partChoices[item.part], key);
        }
      }
      if (!looked) return fail(map.member, 'no rule looks this map up') !== null;
      if (!reachable) {
        return (
          fail(
            map.member + '.' + key,
            'no rule can look this key up: the parts that read map ' +
              map.name +
              ' (' +
              lookupParts(cfg, map) +
              ') cannot hold it',
          ) !== null
        );
      }
    }
  }
  return true;
}

function lookupParts(cfg: RewriteConfig, map: RewriteMap): string {
  const seen = new Array<string>(0);
  for (let r = 0; r < cfg.rules.length; r++) {
    const rule = cfg.rules[r];
    for (let i = 0; i < rule.items.length; i++) {
      const item = rule.items[i];
      if (item.kind != ItemKind.Lookup || item.map !== map) continue;
      const p = rule.pattern;
      const kind = p.partKinds[item.part];
      const cls =
        kind == ElementKind.Name
          ? "name: no '-', '@' or '/'"
          : kind == ElementKind.Seg
            ? "seg: no '/'"
            : kind == ElementKind.Ism
              ? 'ism'
              : kind == ElementKind.Choice
                ? p.partChoices[item.part].join('|')
                : 'path';
      const text = '<' + p.partNames[item.part] + '> (' + cls + ')';
      if (!seen.includes(text)) seen.push(text);
    }
  }
  return seen.join(', ');
}

// ------------------------------------------------------------------------------------- rewrite

/**
 * Rewrites `path` (normalised, percent-decoded once) and `query` (raw, without "?") with the
 * first rule that matches and whose strict lookups all find their key; null = no rule did.
 */
export function applyRewrite(cfg: RewriteConfig, path: string, query: string): RewriteResult | null {
  if (path.length == 0 || path.length > MAX_PATH_CHARS || query.length > MAX_QUERY_CHARS) return null;
  const rules = cfg.rules;
  for (let i = 0, n = rules.length; i < n; i++) {
    const rule = unchecked(rules[i]);
    if (!rule.pattern.match(path)) continue;
    const result = build(cfg.buffer, rule, path, query);
    if (result !== null) return result;
  }
  return null;
}

/** Query then path into the buffer; null when a strict lookup misses or the output is refused. */
function build(out: TextBuffer, rule: Rule, path: string, query: string): RewriteResult | null {
  out.reset();
  const pattern = rule.pattern;
  const items = rule.items;
  for (let i = 0, n = items.length; i < n; i++) {
    const item = unchecked(items[i]);
    const mark = out.length;
    if (mark > 0) out.appendChar(0x26); // "&"
    const start = out.length;
    switch (item.kind) {
      case ItemKind.Literal:
        out.append(item.text);
        break;
      case ItemKind.Template:
        writeTemplate(out, item.template!, pattern, path, true);
        break;
      case ItemKind.RequestQuery:
        out.append(query);
        break;
      default: {
        const map = item.map!;
        const found = map.find(changetype<usize>(path), pattern.partStart(item.part), pattern.partEnd(item.part));
        if (found >= 0) out.append(unchecked(map.values[found]));
        else if (item.missing == Missing.Refuse) return null;
        else if (item.missing == Missing.Fallback) out.append(item.text);
      }
    }
    if (out.length == start) out.length = mark; // nothing written: no "&" either
  }
  const queryEnd = out.length;
  if (queryEnd > MAX_QUERY_CHARS) return null;
  writeTemplate(out, rule.to, pattern, path, false);
  if (out.length - queryEnd > MAX_PATH_CHARS || !isSafePath(out, queryEnd)) return null;
  const newPath = out.take(queryEnd, out.length);
  const newQuery = out.take(0, queryEnd);
  return new RewriteResult(newPath, newQuery);
}
