// Parser of the track-selection filter language.
//
// An expression is evaluated once per track; the track is kept when it is true.
//
//   filter     := or END
//   or         := and ( "||" and )*
//   and        := compare ( "&&" compare )*
//   compare    := unary ( relop unary )?          comparisons do not chain
//   unary      := "!" unary | primary
//   primary    := "(" or ")"
//               | "count" "(" or ")"               a number: tracks of the table where it holds
//               | number | STRING | "true" | "false" | variable | constant
//   number     := INT ( "/" INT )?                 an exact rational: 30000/1001
//   relop      := "==" | "!=" | "<" | "<=" | ">" | ">="
//   STRING     := '"' ( [^"\\] | '\"' | '\\' )* '"'
//   INT        := [0-9]+                           at most 2^63-1; a denominator is not 0
//   IDENT      := [A-Za-z_][A-Za-z0-9_]*           variables, constants, true, false, count:
//                                                  all matched case-insensitively
//
// Types are checked here, so evaluation cannot fail: the operands of &&, ||, ! and count(), and
// the filter itself, are conditions; a comparison takes two numbers or two strings; strings
// only take == and !=. A property a track lacks makes any comparison with it false.
//
// Limits: 4096 bytes of UTF-8 text (FILTER_MAX_BYTES), nesting depth 64 (FILTER_MAX_DEPTH),
// where every "(" (also count's) and every "!" opens a level.
//
// Canonical form (canonical.ts): no spaces; && and || chains printed flat; an && chain inside
// || is always parenthesised (a==1||(b==2&&c==3)); an || chain inside && necessarily so;
// parentheses around a single comparison or value dropped; ! is followed by a literal, a
// ! or a parenthesised expression; names in their canonical spelling (SampleRate prints
// SamplingRate, constants upper case, true/false lower case); numbers as written (25/1 stays
// 25/1); strings with only " and \ escaped. Since that text can be longer and deeper than
// the input, compile() (index.ts) also parses it and refuses a filter whose canonical form is
// past the limits, so a canonical text always compiles back to itself.

import { FilterError, quote } from './errors';
import {
  lex,
  Token,
  T_END,
  T_INT,
  T_STRING,
  T_IDENT,
  T_LPAREN,
  T_RPAREN,
  T_SLASH,
  T_NOT,
  T_AND,
  T_OR,
  T_EQ,
  T_GE,
} from './lexer';
import {
  Node,
  typeOf,
  N_BOOL,
  N_NUMBER,
  N_STRING,
  N_VARIABLE,
  N_CONSTANT,
  N_COUNT,
  N_NOT,
  N_AND,
  N_OR,
  N_COMPARE,
  OP_EQ,
  OP_NE,
  OP_TEXT,
} from './ast';
import {
  TYPE_CONDITION,
  TYPE_NUMBER,
  TYPE_STRING,
  VARIABLE_NAMES,
  CONSTANT_NAMES,
  CONSTANT_VALUES,
  variableIndex,
  constantIndex,
  closestName,
  sameName,
} from './variables';

export const FILTER_MAX_BYTES: i32 = 4096;
export const FILTER_MAX_DEPTH: i32 = 64;

export class ParseResult {
  constructor(
    public node: Node | null,
    public error: FilterError | null,
  ) {}
}

export function parse(text: string): ParseResult {
  const tooLong = offsetPastBytes(text, FILTER_MAX_BYTES);
  if (tooLong >= 0) {
    return new ParseResult(
      null,
      new FilterError(
        'filter longer than ' + FILTER_MAX_BYTES.toString() + ' bytes',
        tooLong,
        'shorten the expression',
      ),
    );
  }
  const lexed = lex(text);
  if (lexed.error !== null) return new ParseResult(null, lexed.error);
  const parser = new Parser(text, lexed.tokens);
  const node = parser.filter();
  return new ParseResult(parser.error === null ? node : null, parser.error);
}

class Parser {
  error: FilterError | null = null;
  private at: i32 = 0;
  private depth: i32 = 0;

  constructor(
    private text: string,
    private tokens: Array<Token>,
  ) {}

  // filter := or END
  filter(): Node | null {
    const node = this.or();
    if (node === null) return null;
    const t = this.peek();
    if (t.kind != T_END) {
      const hint =
        t.kind >= T_EQ && t.kind <= T_GE
          ? 'comparisons do not chain; join them with &&'
          : 'expected "&&", "||" or the end of the filter';
      return this.fail(this.unexpected(t), t.start, hint);
    }
    return this.requireCondition(node);
  }

  // or := and ( "||" and )*
  private or(): Node | null {
    return this.chain(N_OR, T_OR);
  }

  // and := compare ( "&&" compare )*
  private and(): Node | null {
    return this.chain(N_AND, T_AND);
  }

  // One n-ary node for a chain; a parenthesised chain of the same operator is spliced in.
  private chain(kind: i32, operator: i32): Node | null {
    const first = kind == N_OR ? this.and() : this.compare();
    if (first === null || this.peek().kind != operator) return first;
    if (this.requireCondition(first) === null) return null;
    const node = new Node(kind, first.start, first.end);
    const items = new Array<Node>();
    node.items = items;
    appendFlat(items, first, kind);
    while (this.peek().kind == operator) {
      this.at++;
      const next = kind == N_OR ? this.and() : this.compare();
      if (next === null || this.requireCondition(next) === null) return null;
      appendFlat(items, next, kind);
      node.end = next.end;
    }
    return node;
  }

  // compare := unary ( relop unary )?
  private compare(): Node | null {
    const left = this.unary();
    if (left === null) return null;
    const op = this.peek();
    if (op.kind < T_EQ || op.kind > T_GE) return left;
    this.at++;
    const right = this.unary();
    if (right === null) return null;
    if (!this.checkOperands(left, op, right)) return null;
    const node = new Node(N_COMPARE, left.start, right.end);
    node.op = op.kind - T_EQ;
    node.flag = typeOf(left) == TYPE_STRING; // evaluate.ts: compare as strings
    node.left = left;
    node.right = right;
    const after = this.peek();
    if (after.kind >= T_EQ && after.kind <= T_GE) {
      return this.fail(this.unexpected(after), after.start, 'comparisons do not chain; join them with &&');
    }
    return node;
  }

  // unary := "!" unary | primary
  private unary(): Node | null {
    const t = this.peek();
    if (t.kind != T_NOT) return this.primary();
    if (!this.enter(t)) return null;
    this.at++;
    const operand = this.unary();
    this.depth--;
    if (operand === null || this.requireCondition(operand) === null) return null;
    const node = new Node(N_NOT, t.start, operand.end);
    node.left = operand;
    return node;
  }

  // primary := "(" or ")" | "count" "(" or ")" | number | STRING | "true" | "false" | name
  private primary(): Node | null {
    const t = this.peek();
    if (t.kind == T_LPAREN) return this.group();
    if (t.kind == T_INT) return this.number();
    if (t.kind == T_STRING) {
      this.at++;
      const node = new Node(N_STRING, t.start, t.end);
      node.str = unescape(this.text, t.start + 1, t.end - 1);
      return node;
    }
    if (t.kind == T_IDENT) return this.name();
    const hint =
      t.kind == T_SLASH ? '"/" only writes a rational such as 30000/1001' : 'expected a value, a property, "(" or "!"';
    return this.fail(this.unexpected(t), t.start, hint);
  }

  // "(" or ")": the inner node itself (parentheses are not kept; canonical() re-derives them).
  private group(): Node | null {
    const open = this.peek();
    if (!this.enter(open)) return null;
    this.at++;
    const inner = this.or();
    this.depth--;
    if (inner === null) return null;
    if (!this.expectClose(open)) return null;
    return inner;
  }

  private name(): Node | null {
    const t = this.peek();
    const name = this.text.substring(t.start, t.end);
    this.at++;
    if (sameName(name, 'true') || sameName(name, 'false')) {
      const node = new Node(N_BOOL, t.start, t.end);
      node.flag = sameName(name, 'true');
      return node;
    }
    if (sameName(name, 'count')) return this.count(t);
    const v = variableIndex(name);
    if (v >= 0) {
      const node = new Node(N_VARIABLE, t.start, t.end);
      node.index = v;
      return node;
    }
    const c = constantIndex(name);
    if (c >= 0) {
      const node = new Node(N_CONSTANT, t.start, t.end);
      node.index = c;
      node.num = CONSTANT_VALUES[c];
      return node;
    }
    return this.fail('unknown variable ' + quote(name), t.start, 'did you mean "' + closestName(name) + '"?');
  }

  // "count" "(" or ")"
  private count(keyword: Token): Node | null {
    const open = this.peek();
    if (open.kind != T_LPAREN) {
      return this.fail(
        this.unexpected(open),
        open.start,
        'count takes a condition in parentheses: count(type=="audio")',
      );
    }
    if (!this.enter(open)) return null;
    this.at++;
    const inner = this.or();
    this.depth--;
    if (inner === null || this.requireCondition(inner) === null) return null;
    const close = this.peek();
    if (!this.expectClose(open)) return null;
    const node = new Node(N_COUNT, keyword.start, close.end);
    node.left = inner;
    return node;
  }

  // number := INT ( "/" INT )?
  private number(): Node | null {
    const t = this.peek();
    this.at++;
    const node = new Node(N_NUMBER, t.start, t.end);
    if (!this.integer(t)) return null;
    node.num = this.value;
    if (this.peek().kind != T_SLASH) return node;
    this.at++;
    const d = this.peek();
    if (d.kind != T_INT)
      return this.fail(this.unexpected(d), d.start, 'a rational is written <integer>/<integer>: 30000/1001');
    this.at++;
    if (!this.integer(d)) return null;
    if (this.value == 0) return this.fail('zero denominator', d.start, 'a rational needs a denominator above 0');
    node.den = this.value;
    node.flag = true; // written as a rational: canonical() keeps the "/"
    node.end = d.end;
    return node;
  }

  private value: i64 = 0;

  // Decimal digits of an INT token into this.value, refusing what does not fit in an i64.
  private integer(t: Token): bool {
    let v: i64 = 0;
    for (let i = t.start; i < t.end; i++) {
      const digit = <i64>(this.text.charCodeAt(i) - 48);
      if (v > (i64.MAX_VALUE - digit) / 10) {
        this.fail('number too large', t.start, 'at most 9223372036854775807');
        return false;
      }
      v = v * 10 + digit;
    }
    this.value = v;
    return true;
  }

  // A comparison takes two numbers or two strings; strings only take == and !=.
  private checkOperands(left: Node, op: Token, right: Node): bool {
    const lt = typeOf(left);
    const rt = typeOf(right);
    const opText = quote(this.text.substring(op.start, op.end));
    if (lt == TYPE_CONDITION || rt == TYPE_CONDITION) {
      this.fail('cannot compare a condition with ' + opText, op.start, 'combine conditions with &&, || and !');
      return false;
    }
    if (lt != rt) {
      const stringSide = lt == TYPE_STRING ? left : right;
      const numberSide = lt == TYPE_STRING ? right : left;
      this.fail('cannot compare a string with a number', op.start, this.mismatchHint(stringSide, numberSide));
      return false;
    }
    const opCode = op.kind - T_EQ;
    if (lt == TYPE_STRING && opCode != OP_EQ && opCode != OP_NE) {
      this.fail('strings cannot be ordered with ' + opText, op.start, 'strings take only == and !=');
      return false;
    }
    return true;
  }

  private mismatchHint(stringSide: Node, numberSide: Node): string {
    if (stringSide.kind == N_VARIABLE) {
      return (
        VARIABLE_NAMES[stringSide.index] +
        ' is a string: quote the value, e.g. "' +
        this.text.substring(numberSide.start, numberSide.end) +
        '"'
      );
    }
    if (numberSide.kind == N_VARIABLE) {
      return VARIABLE_NAMES[numberSide.index] + ' is a number: write the value without quotes';
    }
    return 'compare numbers with numbers and strings with strings';
  }

  private requireCondition(node: Node): Node | null {
    const type = typeOf(node);
    if (type == TYPE_CONDITION) return node;
    const what = type == TYPE_STRING ? 'a string' : 'a number';
    let subject = type == TYPE_STRING ? 'a string' : 'a number';
    let example = type == TYPE_STRING ? '=="..."' : '>0';
    if (node.kind == N_VARIABLE) {
      subject = VARIABLE_NAMES[node.index];
      if (node.index == 0) example = '=="video"';
    } else if (node.kind == N_CONSTANT) {
      subject = CONSTANT_NAMES[node.index];
    } else if (node.kind == N_COUNT) {
      subject = 'count(...)';
    }
    const message = subject == what ? what + ' is not a condition' : subject + ' is ' + what + ', not a condition';
    return this.fail(message, node.start, 'compare it, e.g. ' + this.text.substring(node.start, node.end) + example);
  }

  private expectClose(open: Token): bool {
    const t = this.peek();
    if (t.kind == T_RPAREN) {
      this.at++;
      return true;
    }
    this.fail(this.unexpected(t), t.start, 'expected ")" to close "(" at ' + open.start.toString());
    return false;
  }

  private enter(t: Token): bool {
    if (this.depth >= FILTER_MAX_DEPTH) {
      this.fail(
        'nesting deeper than ' + FILTER_MAX_DEPTH.toString() + ' levels',
        t.start,
        'every "(" and "!" opens a level; simplify the expression',
      );
      return false;
    }
    this.depth++;
    return true;
  }

  private unexpected(t: Token): string {
    if (t.kind == T_END) return 'unexpected end of filter';
    return 'unexpected ' + quote(this.text.substring(t.start, t.end));
  }

  private peek(): Token {
    // The token list always ends with T_END and nothing consumes past it.
    const tokens = this.tokens;
    return tokens[this.at < tokens.length ? this.at : tokens.length - 1];
  }

  private fail(message: string, offset: i32, hint: string): Node | null {
    if (this.error === null) this.error = new FilterError(message, offset, hint);
    return null;
  }
}

function appendFlat(items: Array<Node>, node: Node, kind: i32): void {
  if (node.kind == kind) {
    const inner = node.items!;
    for (let i = 0; i < inner.length; i++) items.push(inner[i]);
  } else {
    items.push(node);
  }
}

// The characters between the quotes with \" and \\ resolved (the lexer allowed no others).
function unescape(text: string, start: i32, end: i32): string {
  if (text.substring(start, end).indexOf('\\') < 0) return text.substring(start, end);
  let out = '';
  let at = start;
  while (at < end) {
    const c = text.charCodeAt(at);
    if (c == 92 && at + 1 < end) at++;
    out += text.charAt(at);
    at++;
  }
  return out;
}

// UTF-16 offset of the first character whose UTF-8 encoding ends past `limit` bytes, or -1.
// Lone surrogates count 3 bytes (String.UTF8 encodes them as U+FFFD).
function offsetPastBytes(text: string, limit: i32): i32 {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    let size = c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
    if (c >= 0xd800 && c < 0xdc00 && i + 1 < text.length) {
      const low = text.charCodeAt(i + 1);
      if (low >= 0xdc00 && low < 0xe000) {
        size = 4;
        if (bytes + size > limit) return i;
        bytes += size;
        i++;
        continue;
      }
    }
    if (bytes + size > limit) return i;
    bytes += size;
  }
  return -1;
}
