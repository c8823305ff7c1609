// Small strict JSON reader for plugin configuration: see parser.ts (grammar, limits, errors)
// and value.ts (the tree API).

export { JsonKind, JsonValue, quoteJson } from './value';
export { HARD_MAX_DEPTH, JsonLimits, JsonResult, parseJson, parseJsonText } from './parser';
