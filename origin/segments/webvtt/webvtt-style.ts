// TTML styling as far as WebVTT can carry it: italic, bold and underline become `<i>`, `<b>` and
// `<u>` spans (W3C WebVTT §4.2.2), tts:textAlign becomes the `align:` cue setting, and a region
// with percentage tts:origin/tts:extent becomes `line:`, `position:` and `size:` (WebVTT §4.4).
// Everything else (colour, fonts, sizes, backgrounds, outlines, writing modes) has no WebVTT
// counterpart an HLS player honours and is dropped.
//
// Style resolution follows TTML1 §8.4.4.2: a specified style set is built from the referenced
// `style` elements (in the order of the `style` attribute, each itself resolved through its own
// references: chained referential styling), then nested `style` children (regions only), then
// the element's own tts:* attributes, later ones overriding earlier ones; inheritable properties
// not specified come from the parent (§8.4.2.1), and the region an element is flowed into is the
// outermost parent (§8.4.2.2).

import { originError } from '../../errors';
import { attribute, childElements, XML_NS, XmlElement } from './webvtt-xml';

export const TT_NS = 'http://www.w3.org/ns/ttml';
export const TTS_NS = 'http://www.w3.org/ns/ttml#styling';
/** DFXP draft namespaces (2006/10), still written by some Smooth Streaming encoders. */
export const TT_NS_2006 = 'http://www.w3.org/2006/10/ttaf1';
const TTS_NS_2006 = ['http://www.w3.org/2006/10/ttaf1#styling', 'http://www.w3.org/2006/10/ttaf1#style'];

/** Longest chain of style references followed (chained referential styling, §8.4.4.2). */
const MAX_STYLE_CHAIN = 64;

export const isTtml = (el: XmlElement, local: string): boolean =>
  el.local === local && (el.ns === TT_NS || el.ns === TT_NS_2006);
const isStylingNs = (ns: string): boolean => ns === TTS_NS || TTS_NS_2006.includes(ns);

/** The text properties WebVTT can show (all inheritable: TTML1 §8.2.10, §8.2.11, §8.2.19, §8.2.18). */
export interface TextStyle {
  italic: boolean;
  bold: boolean;
  underline: boolean;
  /** tts:textAlign as written (left, center, right, start, end), when any ancestor set it. */
  textAlign: string | undefined;
}

export const INITIAL_STYLE: TextStyle = { italic: false, bold: false, underline: false, textAlign: undefined };

/** Local tts:* property name → value. */
type StyleSet = Map<string, string>;

export class Stylesheet {
  private readonly styles = new Map<string, XmlElement>();
  private readonly regions = new Map<string, XmlElement>();
  private readonly memo = new Map<XmlElement, StyleSet>();

  constructor(head: XmlElement | undefined) {
    for (const section of head ? childElements(head) : []) {
      if (isTtml(section, 'styling')) {
        for (const s of childElements(section)) if (isTtml(s, 'style')) this.register(this.styles, s);
      } else if (isTtml(section, 'layout')) {
        for (const r of childElements(section)) if (isTtml(r, 'region')) this.register(this.regions, r);
      }
    }
  }

  private register(into: Map<string, XmlElement>, el: XmlElement): void {
    const id = attribute(el, XML_NS, 'id');
    if (id !== undefined && !into.has(id)) into.set(id, el); // first definition wins
  }

  /**
   * Specified style set of an element (§8.4.4.2): referenced styles, nested styles, inline.
   * Unknown style ids are ignored; a reference cycle is cut where it closes. The sets of `style`
   * elements are memoised (they do not depend on where they are used), so shared references
   * cost nothing twice, and reference chains are bounded.
   */
  private specified(el: XmlElement, visiting: Set<XmlElement> = new Set()): StyleSet {
    const known = this.memo.get(el);
    if (known !== undefined) return known;
    if (visiting.size >= MAX_STYLE_CHAIN) {
      throw originError('corrupt-media', `style references chained deeper than ${MAX_STYLE_CHAIN} levels`);
    }
    const out: StyleSet = new Map();
    visiting.add(el);
    for (const id of (attribute(el, '', 'style') ?? '').split(/\s+/)) {
      const ref = this.styles.get(id);
      if (ref === undefined || visiting.has(ref)) continue;
      for (const [k, v] of this.specified(ref, visiting)) out.set(k, v);
    }
    if (isTtml(el, 'region')) {
      for (const nested of childElements(el)) {
        if (isTtml(nested, 'style')) for (const [k, v] of this.specified(nested, visiting)) out.set(k, v);
      }
    }
    for (const a of el.attributes) if (isStylingNs(a.ns)) out.set(a.local, a.value.trim());
    visiting.delete(el);
    if (isTtml(el, 'style')) this.memo.set(el, out);
    return out;
  }

  /** Computed text style of a content element given its parent's (§8.4.4.3). */
  textStyle(parent: TextStyle, el: XmlElement): TextStyle {
    return applyText(parent, this.specified(el));
  }

  /** The region's computed text style (the root of inheritance) and its cue placement. */
  region(id: string | undefined): { style: TextStyle; placement: string[] } {
    const el = id === undefined ? undefined : this.regions.get(id);
    if (el === undefined) return { style: INITIAL_STYLE, placement: [] };
    const set = this.specified(el);
    return { style: applyText(INITIAL_STYLE, set), placement: placement(set) };
  }
}

function applyText(parent: TextStyle, set: StyleSet): TextStyle {
  const out = { ...parent };
  const fontStyle = set.get('fontStyle');
  if (fontStyle !== undefined) out.italic = fontStyle === 'italic' || fontStyle === 'oblique';
  const fontWeight = set.get('fontWeight');
  if (fontWeight !== undefined) out.bold = fontWeight === 'bold';
  // §8.2.19: none | [underline | noUnderline] || [lineThrough | ...] || [overline | ...]
  const decoration = set.get('textDecoration');
  if (decoration !== undefined) {
    const tokens = decoration.split(/\s+/);
    if (tokens.includes('none') || tokens.includes('noUnderline')) out.underline = false;
    if (tokens.includes('underline')) out.underline = true;
  }
  const align = set.get('textAlign');
  if (align !== undefined && ['left', 'center', 'right', 'start', 'end'].includes(align)) out.textAlign = align;
  return out;
}

/** `x% y%` (tts:origin §8.2.14, tts:extent §8.2.7) when both are percentages. */
function percentPair(value: string | undefined): [number, number] | undefined {
  const m = /^([+-]?\d+(?:\.\d+)?)%\s+([+-]?\d+(?:\.\d+)?)%$/.exec(value ?? '');
  return m === null ? undefined : [Number(m[1]), Number(m[2])];
}

const percent = (v: number): string => `${Math.round(v * 1000) / 1000}%`;

/**
 * Cue settings for a region: the line from its origin and tts:displayAlign (§8.2.6: before puts
 * the text at the top of the region, center in the middle, after at the bottom), the box from
 * origin and extent. Only the simple case of percentages inside the root container is mapped.
 */
function placement(set: StyleSet): string[] {
  const origin = percentPair(set.get('origin'));
  const extent = percentPair(set.get('extent'));
  if (origin === undefined || extent === undefined) return [];
  const [x, y] = origin;
  const [w, h] = extent;
  const inside = (a: number, b: number): boolean => a >= 0 && b >= 0 && a + b <= 100;
  if (!inside(x, w) || !inside(y, h)) return [];
  const display = set.get('displayAlign') ?? 'before';
  const line =
    display === 'after' ? `${percent(y + h)},end` : display === 'center' ? `${percent(y + h / 2)},center` : percent(y);
  return [`line:${line}`, `position:${percent(x)},line-left`, `size:${percent(w)}`];
}
