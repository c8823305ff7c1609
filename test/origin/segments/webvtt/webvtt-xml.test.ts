// The XML reader under the TTML conversion: namespaces, mixed content, references, and the
// well-formedness errors it must raise (with line and column).

import { OriginError } from '../../../../origin/errors';
import {
  attribute,
  childElements,
  parseXml,
  XML_NS,
  XmlElement,
  XmlNode,
} from '../../../../origin/segments/webvtt/webvtt-xml';

const parse = (xml: string, depth = 64): XmlElement => parseXml(xml, depth);

/** A compact rendering: {ns}local[attrs](children) and "text". */
function show(n: XmlNode): string {
  if (n.kind === 'text') return JSON.stringify(n.text);
  const attrs = n.attributes.map((a) => `${a.ns ? `{${a.ns}}` : ''}${a.local}=${JSON.stringify(a.value)}`).join(' ');
  return `{${n.ns}}${n.local}${attrs ? `[${attrs}]` : ''}(${n.children.map(show).join(',')})`;
}

function error(xml: string, depth = 64): OriginError {
  try {
    parse(xml, depth);
  } catch (e) {
    if (e instanceof OriginError) return e;
    throw e;
  }
  throw new Error('expected a parse error');
}

describe('namespaces', () => {
  test('default and prefixed namespaces resolve to the same element names', () => {
    const a = parse('<tt xmlns="urn:tt"><p>x</p></tt>');
    const b = parse('<t:tt xmlns:t="urn:tt"><t:p>x</t:p></t:tt>');
    expect(show(a)).toBe('{urn:tt}tt({urn:tt}p("x"))');
    expect(show(b)).toBe(show(a));
  });

  test('unprefixed attributes have no namespace; prefixed ones take their binding; xml: is built in', () => {
    const el = parse('<a xmlns="urn:d" xmlns:s="urn:s" begin="1s" s:fontStyle="italic" xml:space="preserve"/>');
    expect(attribute(el, '', 'begin')).toBe('1s');
    expect(attribute(el, 'urn:d', 'begin')).toBeUndefined();
    expect(attribute(el, 'urn:s', 'fontStyle')).toBe('italic');
    expect(attribute(el, XML_NS, 'space')).toBe('preserve');
    expect(el.attributes).toHaveLength(3); // xmlns declarations are not attributes
  });

  test('declarations are scoped to their element, and xmlns="" undeclares the default', () => {
    const el = parse('<a xmlns="urn:1"><b xmlns="urn:2"><c/></b><d xmlns=""/><e/></a>');
    expect(show(el)).toBe('{urn:1}a({urn:2}b({urn:2}c()),{}d(),{urn:1}e())');
  });

  test('the same attribute through two prefixes bound to one namespace is repeated', () => {
    expect(error('<a xmlns:p="urn:x" xmlns:q="urn:x" p:v="1" q:v="2"/>').message).toContain(
      'attribute {urn:x}v is repeated',
    );
  });

  test('undeclared prefixes and reserved bindings are errors', () => {
    expect(error('<p:a/>').message).toContain('namespace prefix p is not declared');
    expect(error('<a xmlns:xml="urn:other"/>').message).toContain('reserved namespace binding');
    expect(error('<a xmlns:p=""/>').message).toContain('cannot be bound to the empty namespace');
  });
});

describe('content', () => {
  test('mixed content keeps document order; CDATA and references join the surrounding text', () => {
    const el = parse('<p>a<br/>b &amp; <![CDATA[<c>]]> &#65;&#x42;<!-- gone --> end<?pi x?></p>');
    expect(show(el)).toBe('{}p("a",{}br(),"b & <c> AB end")');
  });

  test('line ends are normalised to \\n; attribute white space becomes spaces (XML §2.11, §3.3.3)', () => {
    const el = parse('<a v="x\ty\r\nz">1\r\n2\r3</a>');
    expect(attribute(el, '', 'v')).toBe('x y z');
    expect(el.children).toEqual([{ kind: 'text', text: '1\n2\n3' }]);
  });

  test('single-quoted attributes, white space around =, a declaration, comments and a BOM', () => {
    const el = parse('\uFEFF<?xml version="1.0"?>\n<!-- c -->\n<a  v = \'1\' >x</a >\n<!-- after -->\n');
    expect(show(el)).toBe('{}a[v="1"]("x")');
    expect(childElements(parse('<a><b/>t<c/></a>')).map((c) => c.local)).toEqual(['b', 'c']);
  });

  test('non-ASCII text and names', () => {
    expect(show(parse('<tëst é="ü">ondertitel €</tëst>'))).toBe('{}tëst[é="ü"]("ondertitel €")');
  });
});

describe('well-formedness errors carry line and column', () => {
  test.each([
    ['<a>\n  <b>\n</a>', 'end tag </a> does not match start tag <b> (line 3, column 3)'],
    ['<a x="1" x="2"/>', 'attribute x is repeated (line 1, column 10)'],
    ['<a x=1/>', 'value of attribute x is not quoted'],
    ['<a x="1/>', 'value of attribute x is not terminated'],
    ['<a x="<"/>', "'<' in the value of attribute x"],
    ['<a>&unknown;</a>', 'undefined entity &unknown; (line 1, column 4)'],
    ['<a>AT&T</a>', "'&' not followed by a reference ending in ';'"],
    ['<a>&#0;</a>', '&#0; is not a valid character reference'],
    ['<a>&#xD800;</a>', 'is not a valid character reference'],
    ['<a>\u0001</a>', 'character U+0001 is not allowed in XML'],
    ['<a>]]></a>', "']]>' is not allowed in character data"],
    ['<a><![CDATA[x</a>', 'unterminated CDATA section'],
    ['<a><!-- x</a>', 'unterminated comment'],
    ['<a>', 'element <a> is not closed'],
    ['<a', 'unclosed start tag <a>'],
    ['<a b/>', "expected '=' after attribute b"],
    ['<a x="1"y="2"/>', "expected white space, '>' or '/>'"],
    ['<a/><b/>', 'content after the root element'],
    ['text', 'text before the root element'],
    ['  ', 'no root element'],
    ['<!DOCTYPE a [<!ENTITY e "x">]><a>&e;</a>', 'DOCTYPE declarations are not accepted'],
    ['<1a/>', 'expected element name'],
  ])('%j', (xml, message) => {
    const e = error(xml);
    expect(e.kind).toBe('corrupt-media');
    expect(e.message).toContain('malformed XML: ');
    expect(e.message).toContain(message);
  });

  test('nesting is bounded', () => {
    const nested = (n: number): string => '<a>'.repeat(n) + '</a>'.repeat(n);
    expect(() => parse(nested(5), 5)).not.toThrow();
    expect(error(nested(6), 5).message).toContain('elements nested deeper than 5 levels');
    // far deeper than the limit fails fast instead of overflowing the stack
    expect(error(nested(100000), 64).message).toContain('nested deeper than 64');
  });
});
