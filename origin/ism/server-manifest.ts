// Server manifest (.ism / .isml): SMIL 2.0 as the reference product writes it
// (docs/specs.md, reference §1; MS IIS Smooth Streaming server manifest, SMIL elements).
//
//   <smil xmlns="http://www.w3.org/2001/SMIL20/Language">
//     <head> <meta name content/>* <paramGroup id> <meta name content/>* </paramGroup>* </head>
//     <body><switch> <video|audio|textstream src systemBitrate [systemLanguage]> <param name value valueType/>* ... </switch></body>
//   </smil>
//
// The model keeps everything in document order (metas, groups, tracks, params, and any attribute
// we do not interpret) so that parse → write → parse is lossless. Reading accepts `valueType`
// (the reference) and `valuetype` (the MS spec); writing uses `valueType`.

import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { originError } from '../errors';

import {
  IsmParam,
  IsmTrack,
  MetaEntry,
  ParamGroup,
  ServerManifest,
  SMIL_NAMESPACE,
  TRACK_ELEMENTS,
  TrackElement,
} from '../model/server-manifest';

export { SMIL_NAMESPACE, TRACK_ELEMENTS };
export type { IsmParam, IsmTrack, MetaEntry, ParamGroup, ServerManifest, TrackElement };

/** Server manifests are small; a cap keeps a hostile file from costing much. */
export const MAX_SERVER_MANIFEST_BYTES = 4 << 20;

type Node = Record<string, unknown> & { ':@'?: Record<string, string> };

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseAttributeValue: false,
  parseTagValue: false,
  processEntities: true,
  // Numeric character references (&#10;, &#x9;) are decoded only with this flag; the writer
  // uses them for newlines and tabs, which XML attribute normalisation would otherwise turn
  // into spaces (XML 1.0 §3.3.3).
  htmlEntities: true,
  removeNSPrefix: true,
});

function tagOf(node: Node): string | undefined {
  return Object.keys(node).find((k) => k !== ':@');
}

function childrenOf(node: Node): Node[] {
  const tag = tagOf(node);
  const c = tag === undefined ? undefined : node[tag];
  return Array.isArray(c) ? (c as Node[]) : [];
}

function attrs(node: Node): Record<string, string> {
  return node[':@'] ?? {};
}

/**
 * `fast` (the default) reads the plain SMIL our packager and the reference write without
 * fast-xml-parser; `false` always takes the general parser (tests compare both).
 */
export function parseServerManifest(text: string, fileName = 'server manifest', fast = true): ServerManifest {
  if (text.length > MAX_SERVER_MANIFEST_BYTES) {
    throw originError('bad-request', `larger than ${MAX_SERVER_MANIFEST_BYTES} bytes`, { subject: fileName });
  }
  const doc = (fast ? plainSmil(text) : undefined) ?? parseXml(text, fileName);
  const smil = doc.find((n) => tagOf(n) === 'smil');
  if (smil === undefined)
    throw originError('bad-request', 'no <smil> root element: not a server manifest', { subject: fileName });
  const fail = (what: string): never => {
    throw originError('bad-request', what, { subject: fileName });
  };
  const manifest: ServerManifest = { meta: [], paramGroups: [], tracks: [] };
  for (const section of childrenOf(smil)) {
    const tag = tagOf(section);
    if (tag === 'head') {
      for (const item of childrenOf(section)) {
        const itemTag = tagOf(item);
        if (itemTag === 'meta') manifest.meta.push(readMeta(item, fail));
        else if (itemTag === 'paramGroup') {
          const id = attrs(item)['id'] ?? fail('<paramGroup> without id');
          manifest.paramGroups.push({
            id,
            meta: childrenOf(item)
              .filter((n) => tagOf(n) === 'meta')
              .map((n) => readMeta(n, fail)),
          });
        }
      }
    } else if (tag === 'body') {
      for (const container of childrenOf(section)) {
        // Tracks live in <switch>; a bare track directly in <body> is accepted too.
        const candidates = tagOf(container) === 'switch' ? childrenOf(container) : [container];
        for (const node of candidates) {
          const t = tagOf(node);
          if (t !== undefined && (TRACK_ELEMENTS as readonly string[]).includes(t)) {
            manifest.tracks.push(readTrack(node, t as TrackElement, manifest.tracks.length, fail));
          }
        }
      }
    }
  }
  return manifest;
}

function parseXml(text: string, fileName: string): Node[] {
  const valid = XMLValidator.validate(text);
  if (valid !== true) {
    throw originError(
      'bad-request',
      `not well-formed XML at line ${valid.err.line}, column ${valid.err.col}: ${valid.err.msg}`,
      { subject: fileName },
    );
  }
  try {
    return parser.parse(text) as Node[];
  } catch (e) {
    // Well-formed but refused by the parser: an external entity (XXE, never read), an entity
    // expanding past the parser's bounds. The file's fault, not the origin's.
    throw originError('bad-request', `not a server manifest the origin reads: ${(e as Error)?.message ?? String(e)}`, {
      subject: fileName,
    });
  }
}

// The plain-SMIL reader. Validating and parsing a server manifest with fast-xml-parser was the
// largest CPU cost of reading it on a cold start (about two thirds; its code is compiled on that
// first call). Server manifests in practice use a small part of XML 1.0: an XML declaration,
// comments, elements with double- or single-quoted attributes, whitespace between elements. This
// reader accepts only that part, and only when it is well-formed (XML 1.0 §2.1 one root element,
// §3 matching tags, §3.1 unique attributes), and builds the same tree as the parser (the
// preserveOrder shape: `{ tag: children, ':@': attributes }`; `xmlns` dropped as removeNSPrefix
// does). Anything else (entity or character references, CDATA, DOCTYPE, processing instructions,
// text, prefixed names, control characters or padding in attribute values) returns undefined, and
// the general parser (and its validator's error messages) takes the document.

const DECLARATION =
  /<\?xml version="1\.0"(?: encoding="[A-Za-z][A-Za-z0-9._-]*")?(?: standalone="(?:yes|no)")?[ \t\r\n]*\?>/y;
const SPACE = /[ \t\r\n]*/y;
const COMMENT = /<!--(?:[^-]|-[^-])*-->/y;
const OPEN_NAME = /<([A-Za-z_][A-Za-z0-9._-]*)/y;
const ATTRIBUTE = /[ \t\r\n]+([A-Za-z_][A-Za-z0-9._-]*)=(?:"([^"<>&\x00-\x1f\x7f]*)"|'([^'<>&\x00-\x1f\x7f]*)')/y;
const OPEN_END = /[ \t\r\n]*(\/?)>/y;
const CLOSE = /<\/([A-Za-z_][A-Za-z0-9._-]*)[ \t\r\n]*>/y;

/** The document's tree when it is plain SMIL (see above), else undefined. */
export function plainSmil(text: string): Node[] | undefined {
  const doc: Node[] = [];
  const open: Array<{ tag: string; children: Node[] }> = [];
  let at = 0;
  let rootDone = false;
  const match = (re: RegExp): RegExpExecArray | null => {
    re.lastIndex = at;
    const m = re.exec(text);
    if (m !== null) at = re.lastIndex;
    return m;
  };
  match(DECLARATION);
  for (;;) {
    match(SPACE);
    if (at >= text.length) break;
    if (text.charCodeAt(at) !== 0x3c /* < */) return undefined; // text content
    const next = text.charCodeAt(at + 1);
    if (next === 0x21 /* ! */) {
      // Comments before the root and inside it; anything after the root goes to the validator.
      if (rootDone || match(COMMENT) === null) return undefined;
      continue;
    }
    if (next === 0x2f /* / */) {
      const m = match(CLOSE);
      const top = open.pop();
      if (m === null || top === undefined || top.tag !== m[1]) return undefined;
      if (open.length === 0) rootDone = true;
      continue;
    }
    if (rootDone) return undefined; // a second root
    const name = match(OPEN_NAME);
    if (name === null) return undefined; // `<?`, `<!` or a name this reader does not take
    const tag = name[1]!;
    if (isReserved(tag)) return undefined;
    let attributes: Record<string, string> | undefined;
    const seen = new Set<string>();
    for (let a = match(ATTRIBUTE); a !== null; a = match(ATTRIBUTE)) {
      const key = a[1]!;
      const value = a[2] ?? a[3]!;
      if (seen.has(key) || isReserved(key) || value !== value.trim()) return undefined;
      seen.add(key);
      if (key === 'xmlns') continue;
      (attributes ??= {})[key] = value;
    }
    const end = match(OPEN_END);
    if (end === null) return undefined;
    const children: Node[] = [];
    const node: Node = { [tag]: children };
    if (attributes !== undefined) node[':@'] = attributes;
    (open.length === 0 ? doc : open[open.length - 1]!.children).push(node);
    if (end[1] === '/') {
      if (open.length === 0) rootDone = true;
    } else {
      open.push({ tag, children });
    }
  }
  return rootDone && open.length === 0 ? doc : undefined;
}

/** Names that are properties of every object: left to the parser, which guards against them. */
function isReserved(name: string): boolean {
  return name in Object.prototype || name === '__proto__' || name === 'prototype';
}

function readMeta(node: Node, fail: (what: string) => never): MetaEntry {
  const a = attrs(node);
  const name = a['name'] ?? fail('<meta> without name');
  return { name, content: a['content'] ?? '' };
}

function readTrack(node: Node, element: TrackElement, index: number, fail: (what: string) => never): IsmTrack {
  const a = attrs(node);
  const where = `<${element}> #${index + 1}`;
  const src = a['src'] ?? fail(`${where} has no src attribute`);
  if (src === '') fail(`${where} has an empty src attribute`);
  const bitrateText = a['systemBitrate'] ?? fail(`${where} (src="${src}") has no systemBitrate attribute`);
  if (!/^\d{1,12}$/.test(bitrateText))
    fail(`${where} (src="${src}"): systemBitrate "${bitrateText}" is not a non-negative integer`);
  const extraAttributes = Object.entries(a).filter(
    ([k]) => k !== 'src' && k !== 'systemBitrate' && k !== 'systemLanguage',
  );
  const params: IsmParam[] = [];
  for (const p of childrenOf(node)) {
    if (tagOf(p) !== 'param') continue;
    const pa = attrs(p);
    const name = pa['name'] ?? fail(`${where} (src="${src}") has a <param> without name`);
    params.push({ name, value: pa['value'] ?? '', valueType: pa['valueType'] ?? pa['valuetype'] });
  }
  return {
    element,
    src,
    systemBitrate: Number(bitrateText),
    systemLanguage: a['systemLanguage'],
    extraAttributes,
    params,
  };
}

const escapeXml = (s: string): string =>
  s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/\r/g, '&#13;')
    .replace(/\n/g, '&#10;')
    .replace(/\t/g, '&#9;');

const attr = (name: string, value: string): string => ` ${name}="${escapeXml(value)}"`;

/** Writes the server manifest in the reference product's layout (two-space indent, `valueType`). */
export function writeServerManifest(m: ServerManifest, creator: string): string {
  const lines = [
    '<?xml version="1.0" encoding="utf-8"?>',
    `<!-- Created with ${creator.replace(/--/g, '- -')} -->`,
    `<smil xmlns="${SMIL_NAMESPACE}">`,
    '  <head>',
  ];
  for (const meta of m.meta) lines.push(`    <meta${attr('name', meta.name)}${attr('content', meta.content)} />`);
  for (const group of m.paramGroups) {
    lines.push(`    <paramGroup${attr('id', group.id)}>`);
    for (const meta of group.meta)
      lines.push(`      <meta${attr('name', meta.name)}${attr('content', meta.content)} />`);
    lines.push('    </paramGroup>');
  }
  lines.push('  </head>', '  <body>', '    <switch>');
  for (const t of m.tracks) {
    let open = `      <${t.element}${attr('src', t.src)}${attr('systemBitrate', String(t.systemBitrate))}`;
    if (t.systemLanguage !== undefined) open += attr('systemLanguage', t.systemLanguage);
    for (const [k, v] of t.extraAttributes) open += attr(k, v);
    if (t.params.length === 0) {
      lines.push(`${open} />`);
      continue;
    }
    lines.push(`${open}>`);
    for (const p of t.params) {
      lines.push(
        `        <param${attr('name', p.name)}${attr('value', p.value)}${p.valueType !== undefined ? attr('valueType', p.valueType) : ''} />`,
      );
    }
    lines.push(`      </${t.element}>`);
  }
  lines.push('    </switch>', '  </body>', '</smil>', '');
  return lines.join('\n');
}
