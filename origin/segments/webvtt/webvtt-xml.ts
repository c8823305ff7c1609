// A small, strict XML 1.0 reader for TTML samples (one document per sample, ISO/IEC 14496-30
// §5): elements with resolved namespaces (Namespaces in XML 1.0 §6), attributes, text. No I/O,
// no DTDs, bounded nesting. Hand-written rather than fast-xml-parser because TTML needs
// namespace resolution (`tt:p` and `<p xmlns=...>` are the same element; `tts:` may be bound to
// any prefix), mixed content in document order (`a<br/>b`), character references decoded, and a
// hard failure on anything not well-formed (several roots, undefined entities), all of which
// fast-xml-parser leaves to the caller.
//
// Grammar accepted (XML 1.0 §2–§4, subset; S = [ \t\n]+ after line-end normalisation):
//   document  := XMLDecl? Misc* element Misc*
//   Misc      := Comment | PI | S
//   element   := '<' QName (S Attribute)* S? ('/>' | '>' content '</' QName S? '>')
//   Attribute := QName S? '=' S? ('"' [^<"]* '"' | "'" [^<']* "'")
//   content   := (CharData | Reference | CDSect | Comment | PI | element)*
//   Reference := '&' ('amp'|'lt'|'gt'|'quot'|'apos') ';' | '&#' [0-9]+ ';' | '&#x' [0-9a-fA-F]+ ';'
// A DOCTYPE is refused (no entity expansion, no external subsets).

import { originError } from '../../errors';

export interface XmlAttribute {
  /** Namespace URI; '' for an unprefixed attribute (attributes take no default namespace). */
  ns: string;
  local: string;
  value: string;
}

export interface XmlElement {
  kind: 'element';
  /** Namespace URI; '' when none applies. */
  ns: string;
  local: string;
  attributes: XmlAttribute[];
  children: XmlNode[];
}

export interface XmlText {
  kind: 'text';
  text: string;
}

export type XmlNode = XmlElement | XmlText;

export const XML_NS = 'http://www.w3.org/XML/1998/namespace';
const XMLNS_NS = 'http://www.w3.org/2000/xmlns/';

const NAME =
  /[A-Za-z_\u00C0-\uFFFF][A-Za-z0-9_.\-\u00B7\u00C0-\uFFFF]*(?::[A-Za-z_\u00C0-\uFFFF][A-Za-z0-9_.\-\u00B7\u00C0-\uFFFF]*)?/y;
/** Characters XML 1.0 §2.2 does not allow anywhere (after line-end normalisation). */
const FORBIDDEN_CHAR = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/;
const PREDEFINED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** The value of an attribute by namespace and local name. */
export function attribute(el: XmlElement, ns: string, local: string): string | undefined {
  for (const a of el.attributes) if (a.local === local && a.ns === ns) return a.value;
  return undefined;
}

/** Child elements, in order. */
export function childElements(el: XmlElement): XmlElement[] {
  return el.children.filter((c): c is XmlElement => c.kind === 'element');
}

/**
 * Parses a whole document and returns its root element. Malformed input, a DOCTYPE or nesting
 * deeper than `maxDepth` elements throws OriginError corrupt-media naming the line and column.
 */
export function parseXml(input: string, maxDepth: number): XmlElement {
  return new Reader(input.replace(/\r\n?/g, '\n'), maxDepth).document();
}

type Scope = ReadonlyMap<string, string>;

class Reader {
  private pos = 0;

  constructor(
    private readonly text: string,
    private readonly maxDepth: number,
  ) {}

  document(): XmlElement {
    const bad = FORBIDDEN_CHAR.exec(this.text);
    if (bad !== null) {
      this.pos = bad.index;
      this.fail(
        `character U+${bad[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')} is not allowed in XML`,
      );
    }
    if (this.text.startsWith('\uFEFF')) this.pos = 1;
    if (this.text.startsWith('<?xml', this.pos) && /[\s?]/.test(this.text[this.pos + 5] ?? ''))
      this.skipPast('?>', 'XML declaration');
    this.misc();
    if (this.text.startsWith('<!DOCTYPE', this.pos)) this.fail('DOCTYPE declarations are not accepted in TTML samples');
    if (this.text[this.pos] !== '<')
      this.fail(this.pos >= this.text.length ? 'no root element' : 'text before the root element');
    const initial: Scope = new Map([['xml', XML_NS]]);
    const root = this.element(initial, 1);
    this.misc();
    if (this.pos < this.text.length) this.fail('content after the root element');
    return root;
  }

  /** Comments, processing instructions and white space outside the root element. */
  private misc(): void {
    for (;;) {
      while (/[ \t\n]/.test(this.text[this.pos] ?? '')) this.pos++;
      if (this.text.startsWith('<!--', this.pos)) this.skipPast('-->', 'comment');
      else if (this.text.startsWith('<?', this.pos)) this.skipPast('?>', 'processing instruction');
      else return;
    }
  }

  private element(parentScope: Scope, depth: number): XmlElement {
    if (depth > this.maxDepth) this.fail(`elements nested deeper than ${this.maxDepth} levels`);
    this.pos++; // '<'
    const qname = this.name('element name');
    const raw: Array<{ qname: string; value: string; at: number }> = [];
    let selfClosing = false;
    for (;;) {
      const hadSpace = this.space();
      const c = this.text[this.pos];
      if (c === '>') {
        this.pos++;
        break;
      }
      if (c === '/' && this.text[this.pos + 1] === '>') {
        this.pos += 2;
        selfClosing = true;
        break;
      }
      if (c === undefined) this.fail(`unclosed start tag <${qname}>`);
      if (!hadSpace) this.fail(`expected white space, '>' or '/>' in start tag <${qname}>`);
      const at = this.pos;
      const name = this.name('attribute name');
      if (raw.some((a) => a.qname === name)) this.fail(`attribute ${name} is repeated`, at);
      this.space();
      this.expect('=', `after attribute ${name}`);
      this.space();
      raw.push({ qname: name, value: this.attributeValue(name), at });
    }
    const scope = this.declare(parentScope, raw);
    const el: XmlElement = { kind: 'element', ...this.resolve(qname, scope, true), attributes: [], children: [] };
    for (const a of raw) {
      if (a.qname === 'xmlns' || a.qname.startsWith('xmlns:')) continue;
      const { ns, local } = this.resolve(a.qname, scope, false, a.at);
      if (el.attributes.some((b) => b.ns === ns && b.local === local))
        this.fail(`attribute {${ns}}${local} is repeated`, a.at);
      el.attributes.push({ ns, local, value: a.value });
    }
    if (!selfClosing) this.content(el, qname, scope, depth);
    return el;
  }

  /** Namespace declarations of one start tag on top of the parent's scope. */
  private declare(parent: Scope, raw: ReadonlyArray<{ qname: string; value: string; at: number }>): Scope {
    const decls = raw.filter((a) => a.qname === 'xmlns' || a.qname.startsWith('xmlns:'));
    if (decls.length === 0) return parent;
    const scope = new Map(parent);
    for (const d of decls) {
      const prefix = d.qname === 'xmlns' ? '' : d.qname.slice(6);
      if (prefix === 'xmlns' || (prefix === 'xml') !== (d.value === XML_NS) || d.value === XMLNS_NS) {
        this.fail(`reserved namespace binding ${d.qname}="${d.value}"`, d.at);
      }
      if (prefix !== '' && d.value === '') this.fail(`prefix ${prefix} cannot be bound to the empty namespace`, d.at);
      scope.set(prefix, d.value);
    }
    return scope;
  }

  private resolve(qname: string, scope: Scope, isElement: boolean, at?: number): { ns: string; local: string } {
    const colon = qname.indexOf(':');
    if (colon < 0) return { ns: isElement ? (scope.get('') ?? '') : '', local: qname };
    const prefix = qname.slice(0, colon);
    const ns = scope.get(prefix);
    if (ns === undefined) this.fail(`namespace prefix ${prefix} is not declared`, at);
    return { ns, local: qname.slice(colon + 1) };
  }

  private content(el: XmlElement, qname: string, scope: Scope, depth: number): void {
    let text = '';
    const flush = (): void => {
      if (text !== '') el.children.push({ kind: 'text', text });
      text = '';
    };
    for (;;) {
      const lt = this.text.indexOf('<', this.pos);
      if (lt < 0) this.fail(`element <${qname}> is not closed`, this.text.length);
      text += this.characterData(lt);
      if (this.text.startsWith('</', lt)) {
        this.pos = lt + 2;
        const at = this.pos;
        const end = this.name('end tag name');
        if (end !== qname) this.fail(`end tag </${end}> does not match start tag <${qname}>`, at);
        this.space();
        this.expect('>', `to close end tag </${end}>`);
        flush();
        return;
      }
      this.pos = lt;
      if (this.text.startsWith('<![CDATA[', lt)) {
        const close = this.text.indexOf(']]>', lt + 9);
        if (close < 0) this.fail('unterminated CDATA section');
        text += this.text.slice(lt + 9, close);
        this.pos = close + 3;
      } else if (this.text.startsWith('<!--', lt)) {
        this.skipPast('-->', 'comment');
      } else if (this.text.startsWith('<?', lt)) {
        this.skipPast('?>', 'processing instruction');
      } else {
        flush();
        el.children.push(this.element(scope, depth + 1));
      }
    }
  }

  /** Character data from the cursor up to `end`, with references decoded. */
  private characterData(end: number): string {
    const raw = this.text.slice(this.pos, end);
    const cdataEnd = raw.indexOf(']]>');
    if (cdataEnd >= 0) this.fail("']]>' is not allowed in character data", this.pos + cdataEnd);
    const out = this.decode(raw, this.pos);
    this.pos = end;
    return out;
  }

  private attributeValue(name: string): string {
    const quote = this.text[this.pos];
    if (quote !== '"' && quote !== "'") this.fail(`value of attribute ${name} is not quoted`);
    const close = this.text.indexOf(quote, this.pos + 1);
    if (close < 0) this.fail(`value of attribute ${name} is not terminated`);
    const raw = this.text.slice(this.pos + 1, close);
    const lt = raw.indexOf('<');
    if (lt >= 0) this.fail(`'<' in the value of attribute ${name}`, this.pos + 1 + lt);
    // §3.3.3 attribute-value normalisation: literal white space characters become spaces.
    const value = this.decode(raw.replace(/[\t\n]/g, ' '), this.pos + 1);
    this.pos = close + 1;
    return value;
  }

  /** Decodes the references of a run of text that starts at offset `base`. */
  private decode(raw: string, base: number): string {
    if (!raw.includes('&')) return raw;
    return raw.replace(/&([^;&\s<]*)(;?)/g, (whole, body: string, semi: string, at: number) => {
      if (semi !== ';') this.fail(`'&' not followed by a reference ending in ';'`, base + at);
      if (body.startsWith('#')) return this.characterReference(body, base + at);
      const ch = PREDEFINED[body];
      if (ch === undefined) this.fail(`undefined entity &${body};`, base + at);
      return ch;
    });
  }

  private characterReference(body: string, at: number): string {
    const m = /^#(?:([0-9]{1,7})|x([0-9a-fA-F]{1,6}))$/.exec(body);
    const code = m === null ? NaN : m[1] !== undefined ? Number(m[1]) : parseInt(m[2]!, 16);
    const allowed =
      code === 0x9 ||
      code === 0xa ||
      code === 0xd ||
      (code >= 0x20 && code <= 0xd7ff) ||
      (code >= 0xe000 && code <= 0xfffd) ||
      (code >= 0x10000 && code <= 0x10ffff);
    if (!allowed) this.fail(`&${body}; is not a valid character reference`, at);
    return String.fromCodePoint(code);
  }

  private name(what: string): string {
    NAME.lastIndex = this.pos;
    const m = NAME.exec(this.text);
    if (m === null) this.fail(`expected ${what}`);
    this.pos += m[0].length;
    return m[0];
  }

  private space(): boolean {
    const start = this.pos;
    while (/[ \t\n]/.test(this.text[this.pos] ?? '')) this.pos++;
    return this.pos > start;
  }

  private expect(ch: string, context: string): void {
    if (this.text[this.pos] !== ch) this.fail(`expected '${ch}' ${context}`);
    this.pos++;
  }

  private skipPast(terminator: string, what: string): void {
    const end = this.text.indexOf(terminator, this.pos + 2);
    if (end < 0) this.fail(`unterminated ${what}`);
    this.pos = end + terminator.length;
  }

  private fail(problem: string, at = this.pos): never {
    const before = this.text.slice(0, at);
    const line = before.split('\n').length;
    const column = at - before.lastIndexOf('\n');
    throw originError('corrupt-media', `malformed XML: ${problem} (line ${line}, column ${column})`);
  }
}
