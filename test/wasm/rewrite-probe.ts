// Test-only module (never shipped; build/edge.wasm does not import it): the rewrite engine with
// strings across the boundary, for test/edge-rewrite/ (through @assemblyscript/loader). The
// shipped plugin reaches the same engine through its locations' "rewrite" member.
//
//   configure(json) -> 1, or 0 with error()
//   rewrite(path, query) -> "<path>\n<query>", or "" when no rule matched
//   ruleCount() -> compiled rules of the configuration

import { parseJsonText } from '../../assembly/json';
import { applyRewrite, lastRewriteConfigError, parseRewriteConfig } from '../../assembly/edge/rewrite';
import { RewriteConfig } from '../../assembly/edge/rewrite-rules';

let config: RewriteConfig | null = null;
let message: string = '';

export function configure(json: string): i32 {
  const parsed = parseJsonText(json);
  const value = parsed.value;
  if (value === null) {
    message = 'json: ' + parsed.error;
    config = null;
    return 0;
  }
  config = parseRewriteConfig(value);
  message = config === null ? lastRewriteConfigError() : '';
  return config !== null ? 1 : 0;
}

export function error(): string {
  return message;
}

export function ruleCount(): i32 {
  const c = config;
  return c !== null ? c.ruleCount : 0;
}

export function rewrite(path: string, query: string): string {
  const c = config;
  if (c === null) return '';
  const r = applyRewrite(c, path, query);
  return r !== null ? r.path + '\n' + r.query : '';
}

/** Runs `count` rewrites of the same request (the cost of the engine alone, for tests and benches). */
export function rewriteMany(path: string, query: string, count: i32): i32 {
  const c = config;
  if (c === null) return 0;
  let hits = 0;
  for (let i = 0; i < count; i++) if (applyRewrite(c, path, query) !== null) hits++;
  return hits;
}
