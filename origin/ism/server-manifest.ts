// Server manifest (.ism / .isml): SMIL 2.0 as the reference product writes it
// (origin-reference.md §1; MS IIS Smooth Streaming server manifest, SMIL elements).
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
import { OriginError } from '../errors';

export const SMIL_NAMESPACE = 'http://www.w3.org/2001/SMIL20/Language';
export const TRACK_ELEMENTS = ['video', 'audio', 'textstream'] as const;
export type TrackElement = (typeof TRACK_ELEMENTS)[number];

export interface MetaEntry {
  name: string;
  content: string;
}

export interface ParamGroup {
  id: string;
  meta: MetaEntry[];
}

export interface IsmParam {
  name: string;
  value: string;
  /** As written in the source (`data` in practice); kept for the round trip. */
  valueType: string | undefined;
}

export interface IsmTrack {
  element: TrackElement;
  src: string;
  systemBitrate: number;
  systemLanguage: string | undefined;
  /** Attributes other than src/systemBitrate/systemLanguage, in document order. */
  extraAttributes: Array<[string, string]>;
  params: IsmParam[];
}

export interface ServerManifest {
  meta: MetaEntry[];
  paramGroups: ParamGroup[];
  tracks: IsmTrack[];
}

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

export function parseServerManifest(text: string, fileName = 'server manifest'): ServerManifest {
  if (text.length > MAX_SERVER_MANIFEST_BYTES) {
    throw new OriginError('bad-request', `larger than ${MAX_SERVER_MANIFEST_BYTES} bytes`, fileName);
  }
  const valid = XMLValidator.validate(text);
  if (valid !== true) {
    throw new OriginError('bad-request', `not well-formed XML at line ${valid.err.line}, column ${valid.err.col}: ${valid.err.msg}`, fileName);
  }
  const doc = parser.parse(text) as Node[];
  const smil = doc.find((n) => tagOf(n) === 'smil');
  if (smil === undefined) throw new OriginError('bad-request', 'no <smil> root element: not a server manifest', fileName);
  const fail = (what: string): never => {
    throw new OriginError('bad-request', what, fileName);
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
          manifest.paramGroups.push({ id, meta: childrenOf(item).filter((n) => tagOf(n) === 'meta').map((n) => readMeta(n, fail)) });
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
  if (!/^\d{1,12}$/.test(bitrateText)) fail(`${where} (src="${src}"): systemBitrate "${bitrateText}" is not a non-negative integer`);
  const extraAttributes = Object.entries(a).filter(([k]) => k !== 'src' && k !== 'systemBitrate' && k !== 'systemLanguage');
  const params: IsmParam[] = [];
  for (const p of childrenOf(node)) {
    if (tagOf(p) !== 'param') continue;
    const pa = attrs(p);
    const name = pa['name'] ?? fail(`${where} (src="${src}") has a <param> without name`);
    params.push({ name, value: pa['value'] ?? '', valueType: pa['valueType'] ?? pa['valuetype'] });
  }
  return { element, src, systemBitrate: Number(bitrateText), systemLanguage: a['systemLanguage'], extraAttributes, params };
}

const escapeXml = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/\r/g, '&#13;').replace(/\n/g, '&#10;').replace(/\t/g, '&#9;');

const attr = (name: string, value: string): string => ` ${name}="${escapeXml(value)}"`;

/** Writes the server manifest in the reference product's layout (two-space indent, `valueType`). */
export function writeServerManifest(m: ServerManifest, creator: string): string {
  const lines = ['<?xml version="1.0" encoding="utf-8"?>', `<!-- Created with ${creator.replace(/--/g, '- -')} -->`, `<smil xmlns="${SMIL_NAMESPACE}">`, '  <head>'];
  for (const meta of m.meta) lines.push(`    <meta${attr('name', meta.name)}${attr('content', meta.content)} />`);
  for (const group of m.paramGroups) {
    lines.push(`    <paramGroup${attr('id', group.id)}>`);
    for (const meta of group.meta) lines.push(`      <meta${attr('name', meta.name)}${attr('content', meta.content)} />`);
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
      lines.push(`        <param${attr('name', p.name)}${attr('value', p.value)}${p.valueType !== undefined ? attr('valueType', p.valueType) : ''} />`);
    }
    lines.push(`      </${t.element}>`);
  }
  lines.push('    </switch>', '  </body>', '</smil>', '');
  return lines.join('\n');
}
