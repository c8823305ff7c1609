// The canonical text of an expression (the normal form is described in parser.ts's header).
// canonical(parse(canonical(x))) == canonical(x): the parser splices same-operator chains and
// drops parentheses, so a tree printed here parses back to the same tree.

import {
  Node,
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
  OP_TEXT,
} from './ast';
import { VARIABLE_NAMES, CONSTANT_NAMES } from './variables';

export function canonicalText(node: Node): string {
  const k = node.kind;
  if (k == N_BOOL) return node.flag ? 'true' : 'false';
  if (k == N_NUMBER)
    return node.den == 1 && !node.flag ? node.num.toString() : node.num.toString() + '/' + node.den.toString();
  if (k == N_STRING) return quoteString(node.str);
  if (k == N_VARIABLE) return VARIABLE_NAMES[node.index];
  if (k == N_CONSTANT) return CONSTANT_NAMES[node.index];
  if (k == N_COUNT) return 'count(' + canonicalText(node.left!) + ')';
  if (k == N_COMPARE) return canonicalText(node.left!) + OP_TEXT[node.op] + canonicalText(node.right!);
  if (k == N_NOT) {
    const inner = node.left!;
    const text = canonicalText(inner);
    return inner.kind == N_BOOL || inner.kind == N_NOT ? '!' + text : '!(' + text + ')';
  }
  // && and || chains: a chain nested in the other operator is parenthesised.
  const items = node.items!;
  const separator = k == N_AND ? '&&' : '||';
  let out = '';
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    const text = canonicalText(item);
    if (i > 0) out += separator;
    out += item.kind == N_AND || item.kind == N_OR ? '(' + text + ')' : text;
  }
  return out;
}

function quoteString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c == 34 || c == 92) out += '\\';
    out += s.charAt(i);
  }
  return out + '"';
}
