// Tokens of the filter language: {kind, start, end} over the text (end exclusive, UTF-16 code
// units). String escapes are resolved by the parser from the token's span; numbers too.

import { FilterError, quote } from './errors';

export const T_END: i32 = 0;
export const T_INT: i32 = 1; // [0-9]+
export const T_STRING: i32 = 2; // "..." with \" and \\ escapes
export const T_IDENT: i32 = 3; // [A-Za-z_][A-Za-z0-9_]*
export const T_LPAREN: i32 = 4;
export const T_RPAREN: i32 = 5;
export const T_SLASH: i32 = 6;
export const T_NOT: i32 = 7;
export const T_AND: i32 = 8;
export const T_OR: i32 = 9;
// Relational operators, in the order of the OP_* codes of ast.ts (T_EQ + op).
export const T_EQ: i32 = 10;
export const T_NE: i32 = 11;
export const T_LT: i32 = 12;
export const T_LE: i32 = 13;
export const T_GT: i32 = 14;
export const T_GE: i32 = 15;

export class Token {
  constructor(
    public kind: i32,
    public start: i32,
    public end: i32,
  ) {}
}

export class LexResult {
  tokens: Array<Token> = [];
  error: FilterError | null = null;
}

export function lex(text: string): LexResult {
  const result = new LexResult();
  let at = 0;
  const n = text.length;
  while (at < n) {
    const c = text.charCodeAt(at);
    if (c == 32 || c == 9 || c == 10 || c == 13) {
      at++;
      continue;
    }
    const start = at;
    let kind = -1;
    if (isDigit(c)) {
      while (at < n && isDigit(text.charCodeAt(at))) at++;
      kind = T_INT;
    } else if (isIdentStart(c)) {
      while (at < n && (isIdentStart(text.charCodeAt(at)) || isDigit(text.charCodeAt(at)))) at++;
      kind = T_IDENT;
    } else if (c == 34) {
      at = stringEnd(text, at, result);
      if (at < 0) return result;
      kind = T_STRING;
    } else {
      const next = at + 1 < n ? text.charCodeAt(at + 1) : -1;
      kind = operatorKind(c, next);
      if (kind < 0) {
        result.error = unexpectedCharacter(text, at, c, next);
        return result;
      }
      at += kind == T_EQ || kind == T_NE || kind == T_LE || kind == T_GE || kind == T_AND || kind == T_OR ? 2 : 1;
    }
    result.tokens.push(new Token(kind, start, at));
  }
  result.tokens.push(new Token(T_END, n, n));
  return result;
}

function operatorKind(c: i32, next: i32): i32 {
  if (c == 40) return T_LPAREN;
  if (c == 41) return T_RPAREN;
  if (c == 47) return T_SLASH;
  if (c == 61) return next == 61 ? T_EQ : -1;
  if (c == 33) return next == 61 ? T_NE : T_NOT;
  if (c == 60) return next == 61 ? T_LE : T_LT;
  if (c == 62) return next == 61 ? T_GE : T_GT;
  if (c == 38) return next == 38 ? T_AND : -1;
  if (c == 124) return next == 124 ? T_OR : -1;
  return -1;
}

// Returns the offset after the closing quote, or -1 with the error set.
function stringEnd(text: string, open: i32, result: LexResult): i32 {
  let at = open + 1;
  while (at < text.length) {
    const c = text.charCodeAt(at);
    if (c == 34) return at + 1;
    if (c == 92) {
      const e = at + 1 < text.length ? text.charCodeAt(at + 1) : -1;
      if (e != 34 && e != 92) {
        result.error = new FilterError(
          'invalid escape ' + quote(text.substring(at, at + 2)),
          at,
          'only \\" and \\\\ are escapes; write \\\\ for a backslash',
        );
        return -1;
      }
      at += 2;
      continue;
    }
    at++;
  }
  result.error = new FilterError('unterminated string', open, 'close it with "');
  return -1;
}

function unexpectedCharacter(text: string, at: i32, c: i32, next: i32): FilterError {
  const here = quote(text.substring(at, at + 1));
  if (c == 61) return new FilterError('unexpected ' + here, at, 'did you mean "=="?');
  if (c == 38) return new FilterError('unexpected ' + here, at, 'did you mean "&&"?');
  if (c == 124) return new FilterError('unexpected ' + here, at, 'did you mean "||"?');
  if (c == 39) return new FilterError('unexpected ' + here, at, 'strings are written in double quotes: "..."');
  return new FilterError('unexpected ' + here, at, '');
}

function isDigit(c: i32): bool {
  return c >= 48 && c <= 57;
}

function isIdentStart(c: i32): bool {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c == 95;
}
