// CPIX documents (DASH-IF Content Protection Information Exchange Format 2.2 and 2.3, namespace
// urn:dashif:org:cpix) as this origin reads them: the content keys, the DRM signalling of each
// key and the usage rules that say which track takes which key. Pure: text in, a document out,
// or an error naming the element it cannot take.
//
// What is read:
// - ContentKeyList/ContentKey@kid with Data/pskc:Secret/pskc:PlainValue (Base64, 16 bytes) and
//   @commonEncryptionScheme (cenc or cbcs); a key without a value is kept (an error only when a
//   track needs it); @explicitIV is ignored, as the specification allows ("should be ignored if
//   solution-specific logic does not require it": IVs are derived per track, drm/ivs.ts);
// - DRMSystemList/DRMSystem@systemId@kid with its PSSH (a whole `pssh` box, ISO/IEC 23001-7 §8.1);
//   ContentProtectionData, HLSSignalingData and the other format data are not used: the origin
//   writes each system's manifest elements from the key and the PSSH (drm/cpix-protection.ts);
// - ContentKeyUsageRuleList/ContentKeyUsageRule@kid with LabelFilter, VideoFilter (minPixels,
//   maxPixels, minFps, maxFps), AudioFilter and BitrateFilter (drm/cpix-rules.ts evaluates them);
//   @intendedTrackType is a label for business logic, never used to pick a key (CPIX 2.3, "Label
//   Filter": "It has no function in defining what Content Key are matched to what tracks").
// What is refused, naming the element: signed documents (ds:Signature anywhere), encrypted ones
// (DeliveryDataList, pskc:EncryptedValue), key hierarchies (@dependsOnKey), key rotation
// (ContentKeyPeriod, KeyPeriodFilter), and any usage rule this origin cannot evaluate (a filter
// it does not know, VideoFilter@hdr or @wcg): CPIX 2.3 "Usage Rules Filters" forbids mapping
// keys to tracks while any rule is unusable. A DOCTYPE is refused (no entity is ever expanded).

import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { originError } from '../errors';
import type { CencScheme } from '../model/protection';
import { psshData } from './pssh';
import { uuidString } from './systems';

export const CPIX_NS = 'urn:dashif:org:cpix';
const PSKC_NS = 'urn:ietf:params:xml:ns:keyprov:pskc';
const DSIG_NS = 'http://www.w3.org/2000/09/xmldsig#';

export interface CpixKey {
  /** 16 bytes (the UUID of @kid). */
  kid: Uint8Array;
  /** The content key, 16 bytes; undefined when the document gives none. */
  cek: Uint8Array | undefined;
  /** @commonEncryptionScheme (CPIX 2.3), when given. */
  scheme: CencScheme | undefined;
}

export interface CpixDrmSystem {
  /** Lower-case UUID with dashes, as origin/drm/systems.ts spells them. */
  systemId: string;
  kid: Uint8Array;
  /** The whole `pssh` box, its system id checked; undefined when the document gives none. */
  pssh: Uint8Array | undefined;
}

/** Closed intervals unless said otherwise; undefined bounds are open (CPIX defaults 0 and MAX_UINT32). */
export interface VideoFilter {
  minPixels?: number;
  maxPixels?: number;
  /** Exclusive: (minFps, maxFps]. */
  minFps?: number;
  maxFps?: number;
}
export interface AudioFilter {
  minChannels?: number;
  maxChannels?: number;
}
export interface BitrateFilter {
  /** Bits per second. */
  minBitrate?: number;
  maxBitrate?: number;
}

export interface CpixRule {
  /** 1-based position in ContentKeyUsageRuleList, for messages. */
  position: number;
  kid: Uint8Array;
  intendedTrackType: string | undefined;
  /** Filters of one type are ORed, the types ANDed; an absent type does not constrain. */
  labels: string[];
  video: VideoFilter[];
  audio: AudioFilter[];
  bitrate: BitrateFilter[];
}

export interface CpixDocument {
  /** CPIX@version (2.3), when given. */
  version: string | undefined;
  keys: CpixKey[];
  systems: CpixDrmSystem[];
  /** undefined: no ContentKeyUsageRuleList (then only a single key can say which track takes it). */
  rules: CpixRule[] | undefined;
}

/** Longest document read (a CPIX with dozens of keys and systems is tens of kB). */
export const MAX_CPIX_BYTES = 1 << 20;

/** An element with its namespace resolved. */
interface Element {
  ns: string | undefined;
  name: string;
  attrs: ReadonlyMap<string, string>;
  children: Element[];
  text: string;
}

/** Parses a CPIX document; `subject` names it in errors (a file, a URL, the server manifest). */
export function parseCpix(text: string, subject: string): CpixDocument {
  const bad = (message: string): never => {
    throw originError('bad-option', message, { subject });
  };
  const root = parseXml(text, bad);
  if (root.ns !== CPIX_NS || root.name !== 'CPIX') {
    bad(`the root element is <${root.name}> (namespace ${root.ns ?? 'none'}), not <CPIX> of ${CPIX_NS}`);
  }
  const signature = find(root, (e) => e.ns === DSIG_NS && e.name === 'Signature');
  if (signature !== undefined) {
    bad('signed CPIX documents are not supported (<ds:Signature>): fetch the document over HTTPS instead');
  }
  const version = root.attrs.get('version');
  if (version !== undefined && !/^2\.\d+$/.test(version)) bad(`CPIX version "${version}" is not supported (2.2, 2.3)`);
  const lists = (name: string): Element[] => root.children.filter((c) => c.ns === CPIX_NS && c.name === name);
  if (lists('DeliveryDataList').some((l) => l.children.length > 0)) {
    bad('encrypted CPIX documents are not supported (<DeliveryDataList>): give the content keys as PlainValue');
  }
  if (lists('ContentKeyPeriodList').some((l) => l.children.length > 0)) {
    bad(
      '<ContentKeyPeriodList>: key periods (key rotation) are not supported; one key per track for the whole presentation',
    );
  }
  const keys = lists('ContentKeyList').flatMap((l) => cpixChildren(l, 'ContentKey').map((k) => contentKey(k, bad)));
  const seen = new Set<string>();
  for (const k of keys) {
    const id = uuidString(k.kid);
    if (seen.has(id)) bad(`two <ContentKey> elements have kid="${id}"`);
    seen.add(id);
  }
  const known = (kid: Uint8Array, where: string): void => {
    if (!seen.has(uuidString(kid))) bad(`${where} names kid="${uuidString(kid)}", which no <ContentKey> has`);
  };
  const systems = lists('DRMSystemList').flatMap((l) => cpixChildren(l, 'DRMSystem').map((s) => drmSystem(s, bad)));
  const pairs = new Set<string>();
  for (const s of systems) {
    const where = `<DRMSystem systemId="${s.systemId}" kid="${uuidString(s.kid)}">`;
    known(s.kid, where);
    if (pairs.has(where)) bad(`${where} is given twice`);
    pairs.add(where);
  }
  const ruleLists = lists('ContentKeyUsageRuleList');
  const rules =
    ruleLists.length === 0
      ? undefined
      : ruleLists.flatMap((l) => cpixChildren(l, 'ContentKeyUsageRule')).map((r, i) => usageRule(r, i + 1, bad));
  for (const r of rules ?? []) known(r.kid, `<ContentKeyUsageRule> #${r.position}`);
  return { version, keys, systems, rules };
}

type Bad = (message: string) => never;

function contentKey(e: Element, bad: Bad): CpixKey {
  const kid = uuidAttr(e, 'kid', '<ContentKey>', bad);
  const where = `<ContentKey kid="${uuidString(kid)}">`;
  if (e.attrs.has('dependsOnKey')) bad(`${where}: key hierarchies (@dependsOnKey) are not supported`);
  const scheme = e.attrs.get('commonEncryptionScheme');
  if (scheme !== undefined && scheme !== 'cenc' && scheme !== 'cbcs') {
    bad(`${where}: commonEncryptionScheme="${scheme}" is not written by this origin (cenc, cbcs)`);
  }
  let cek: Uint8Array | undefined;
  const secret = cpixChildren(e, 'Data').flatMap((d) =>
    d.children.filter((c) => c.ns === PSKC_NS && c.name === 'Secret'),
  );
  for (const s of secret) {
    if (s.children.some((c) => c.name === 'EncryptedValue')) {
      bad(`${where}: the key is encrypted (<pskc:EncryptedValue>); only plain keys (<pskc:PlainValue>) are supported`);
    }
    const plain = s.children.find((c) => c.ns === PSKC_NS && c.name === 'PlainValue');
    if (plain === undefined) continue;
    cek = base64(plain.text, `${where} <pskc:PlainValue>`, bad);
    if (cek.byteLength !== 16) bad(`${where}: the key is ${cek.byteLength} bytes, not 16 (AES-128)`);
  }
  return { kid, cek, scheme: scheme as CencScheme | undefined };
}

function drmSystem(e: Element, bad: Bad): CpixDrmSystem {
  const systemId = uuidString(uuidAttr(e, 'systemId', '<DRMSystem>', bad));
  const kid = uuidAttr(e, 'kid', `<DRMSystem systemId="${systemId}">`, bad);
  const where = `<DRMSystem systemId="${systemId}" kid="${uuidString(kid)}">`;
  const given = cpixChildren(e, 'PSSH')[0];
  const pssh = given === undefined ? undefined : base64(given.text, `${where} <PSSH>`, bad);
  if (pssh !== undefined) {
    const box = Buffer.from(pssh);
    const ok =
      psshData(pssh) !== undefined &&
      box.toString('latin1', 4, 8) === 'pssh' &&
      uuidString(box.subarray(12, 28)) === systemId;
    if (!ok) bad(`${where}: <PSSH> is not a whole pssh box of that system id (ISO/IEC 23001-7 §8.1)`);
  }
  return { systemId, kid, pssh };
}

const FILTER_ATTRS: Record<string, readonly string[]> = {
  VideoFilter: ['minPixels', 'maxPixels', 'minFps', 'maxFps'],
  AudioFilter: ['minChannels', 'maxChannels'],
  BitrateFilter: ['minBitrate', 'maxBitrate'],
  LabelFilter: ['label'],
};

function usageRule(e: Element, position: number, bad: Bad): CpixRule {
  const kid = uuidAttr(e, 'kid', `<ContentKeyUsageRule> #${position}`, bad);
  const where = `<ContentKeyUsageRule> #${position} (kid="${uuidString(kid)}")`;
  const rule: CpixRule = {
    position,
    kid,
    intendedTrackType: e.attrs.get('intendedTrackType'),
    labels: [],
    video: [],
    audio: [],
    bitrate: [],
  };
  for (const f of e.children) {
    const name = f.ns === CPIX_NS ? f.name : `{${f.ns ?? ''}}${f.name}`;
    if (name === 'KeyPeriodFilter') bad(`${where}: <KeyPeriodFilter> means key rotation, which is not supported`);
    const allowed = FILTER_ATTRS[name];
    if (allowed === undefined) {
      bad(`${where}: <${f.name}> is a filter this origin cannot evaluate, so no key can be mapped to a track`);
    }
    for (const a of f.attrs.keys()) {
      if (a.startsWith('xmlns')) continue;
      if (!allowed!.includes(a)) {
        bad(`${where}: <${name} ${a}="…"> cannot be evaluated here (the origin knows only ${allowed!.join(', ')})`);
      }
    }
    const int = (a: string): number | undefined => integerAttr(f, a, `${where} <${name}>`, bad);
    if (name === 'LabelFilter') rule.labels.push(f.attrs.get('label') ?? bad(`${where}: <LabelFilter> has no label`));
    if (name === 'VideoFilter') {
      rule.video.push({
        minPixels: int('minPixels'),
        maxPixels: int('maxPixels'),
        minFps: int('minFps'),
        maxFps: int('maxFps'),
      });
    }
    if (name === 'AudioFilter') rule.audio.push({ minChannels: int('minChannels'), maxChannels: int('maxChannels') });
    if (name === 'BitrateFilter') {
      const b = { minBitrate: int('minBitrate'), maxBitrate: int('maxBitrate') };
      if (b.minBitrate === undefined && b.maxBitrate === undefined) {
        bad(`${where}: <BitrateFilter> needs minBitrate or maxBitrate`);
      }
      rule.bitrate.push(b);
    }
  }
  return rule;
}

function cpixChildren(e: Element, name: string): Element[] {
  return e.children.filter((c) => c.ns === CPIX_NS && c.name === name);
}

function uuidAttr(e: Element, name: string, where: string, bad: Bad): Uint8Array {
  const v = e.attrs.get(name);
  if (v === undefined) bad(`${where} has no ${name}`);
  const m = /^\s*([0-9a-f]{8})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{12})\s*$/i.exec(v!);
  if (m === null) bad(`${where}: ${name}="${v}" is not a UUID (8-4-4-4-12 hexadecimal digits)`);
  return Uint8Array.from(Buffer.from(m!.slice(1).join(''), 'hex'));
}

function integerAttr(e: Element, name: string, where: string, bad: Bad): number | undefined {
  const v = e.attrs.get(name);
  if (v === undefined) return undefined;
  if (!/^\s*\+?\d{1,15}\s*$/.test(v)) bad(`${where}: ${name}="${v}" is not a non-negative integer`);
  return Number(v);
}

function base64(text: string, where: string, bad: Bad): Uint8Array {
  const s = text.replace(/\s+/g, '');
  if (s === '' || s.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(s)) bad(`${where} is not Base64`);
  return Uint8Array.from(Buffer.from(s, 'base64'));
}

function find(e: Element, test: (e: Element) => boolean): Element | undefined {
  if (test(e)) return e;
  for (const c of e.children) {
    const hit = find(c, test);
    if (hit !== undefined) return hit;
  }
  return undefined;
}

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseAttributeValue: false,
  parseTagValue: false,
  processEntities: true,
  trimValues: true,
});

type Node = Record<string, unknown> & { ':@'?: Record<string, string> };

/** Well-formed XML into elements with namespaces resolved (XML Namespaces 1.0 §6). */
function parseXml(given: string, bad: Bad): Element {
  const text = given.replace(/^\uFEFF/, ''); // a byte order mark some servers send
  if (text.length > MAX_CPIX_BYTES) bad(`the document is longer than ${MAX_CPIX_BYTES} bytes`);
  if (/<!DOCTYPE/i.test(text)) bad('a document type declaration (<!DOCTYPE>) is not accepted in a CPIX document');
  const valid = XMLValidator.validate(text);
  if (valid !== true) bad(`not well-formed XML at line ${valid.err.line}, column ${valid.err.col}: ${valid.err.msg}`);
  const top = (parser.parse(text) as Node[]).filter((n) => !Object.keys(n).some((k) => k.startsWith('?')));
  if (top.length !== 1) bad('not one root element');
  return element(top[0]!, new Map([['xml', 'http://www.w3.org/XML/1998/namespace']]), bad);
}

function element(node: Node, scope: ReadonlyMap<string, string>, bad: Bad): Element {
  const qname = Object.keys(node).find((k) => k !== ':@')!;
  const attrs = new Map(Object.entries(node[':@'] ?? {}));
  const inner = new Map(scope);
  for (const [k, v] of attrs) {
    if (k === 'xmlns') inner.set('', v);
    else if (k.startsWith('xmlns:')) inner.set(k.slice(6), v);
  }
  const colon = qname.indexOf(':');
  const prefix = colon < 0 ? '' : qname.slice(0, colon);
  const ns = inner.get(prefix);
  if (prefix !== '' && ns === undefined) bad(`<${qname}>: the prefix ${prefix} is not declared`);
  const out: Element = { ns, name: qname.slice(colon + 1), attrs, children: [], text: '' };
  for (const child of node[qname] as Node[]) {
    if ('#text' in child) out.text += String(child['#text']);
    else out.children.push(element(child, inner, bad));
  }
  return out;
}
