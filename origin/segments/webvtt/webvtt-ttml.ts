// One TTML document (a `stpp` sample, ISO/IEC 14496-30 §5) → WebVTT cues on the document's own
// timeline (0 = the document's time origin; the caller places that on the track). No I/O.
//
// Timing (TTML1 §10, SMIL 2.1 semantics as constrained by §10.4):
// - begin/end/dur on body, div, p, span; a child of a `par` container (the default, §10.2.4)
//   counts begin and end from its parent's begin, a child of a `seq` container from the end of
//   its previous sibling (the parent's begin for the first one); with both dur and end the
//   earlier end wins (§10.2.3 note).
// - Implicit durations (§10.4): text (an anonymous span) and a span holding only text last
//   indefinitely in a `par` parent and zero in a `seq` parent; other containers end with their
//   last child (`par`: endsync "all", the latest child end; `seq`: the last child's end).
// - Every element is clipped to its parent's interval; the root (body's parent) is unbounded
//   here, and the caller clips to the sample's interval, the root temporal extent.
// A paragraph becomes one cue per interval over which its visible content is constant (the
// intermediate synchronic documents of §9.3.2, restricted to one p), adjacent equal ones joined.
//
// Text: `<br/>` is a line break; xml:space (TTML1 §7.2.3) `default` collapses white space runs
// (line feeds included) to one space and drops spaces at line starts and ends, `preserve` keeps
// spaces and turns line feeds into line breaks. Lines left empty are dropped, since a blank line
// would end a WebVTT cue (W3C WebVTT §4.1); `&`, `<` and `>` are escaped (§4.2.2).

import { originError } from '../../errors';
import {
  add,
  cmp,
  equal,
  max,
  min,
  parseTimeExpression,
  Seconds,
  TimingParameters,
  timingParameters,
  ZERO,
} from './webvtt-time';
import { isTtml, Stylesheet, TextStyle } from './webvtt-style';
import { attribute, childElements, XML_NS, XmlElement } from './webvtt-xml';

export interface DocumentCue {
  /** Seconds on the document timeline. */
  begin: Seconds;
  /** Seconds on the document timeline; null when indefinite (until the root extent ends). */
  end: Seconds | null;
  /** WebVTT cue text: escaped, `<i>`/`<b>`/`<u>` spans, lines joined by '\n'; never empty. */
  payload: string;
  /** WebVTT cue settings separated by spaces, '' for none. */
  settings: string;
}

/** Bounds on the work one sample can cause (a real sample holds a handful of cues). */
const MAX_CUES = 10000;
const MAX_CHANGES_PER_PARAGRAPH = 1000;
/** Paragraph nodes visited over all of a paragraph's change times (render cost). */
const MAX_PARAGRAPH_WORK = 4_000_000;

/** A timed node: an element of body or an anonymous span (a text node inside p or span). */
interface Timed {
  el: XmlElement | undefined;
  text: string;
  begin: Seconds;
  /** null: indefinite. */
  end: Seconds | null;
  children: Timed[];
}

interface Interval {
  begin: Seconds;
  end: Seconds | null;
}

type Token = { kind: 'text'; text: string; style: TextStyle; preserve: boolean } | { kind: 'br' };

const TIMED_ELEMENTS = ['body', 'div', 'p', 'span', 'br'];

/** The cues of one TTML document, in document order. */
export function documentCues(root: XmlElement): DocumentCue[] {
  if (!isTtml(root, 'tt')) {
    throw originError(
      'corrupt-media',
      `root element is {${root.ns}}${root.local}, not tt in the TTML namespace (http://www.w3.org/ns/ttml)`,
    );
  }
  const params = timingParameters(root);
  const head = childElements(root).find((e) => isTtml(e, 'head'));
  const body = childElements(root).find((e) => isTtml(e, 'body'));
  if (body === undefined) return [];
  const converter = new Converter(new Stylesheet(head), root);
  converter.walk(resolveTiming(body, ZERO, false, params), [], { begin: ZERO, end: null });
  return converter.cues;
}

function resolveTiming(el: XmlElement, syncbase: Seconds, parentIsSeq: boolean, params: TimingParameters): Timed {
  const time = (name: string): Seconds | undefined => {
    const v = attribute(el, '', name);
    return v === undefined ? undefined : parseTimeExpression(v, params, name);
  };
  const begin = add(syncbase, time('begin') ?? ZERO);
  const dur = time('dur');
  const endAttr = time('end');
  const ends = [
    dur !== undefined ? add(begin, dur) : undefined,
    endAttr !== undefined ? add(syncbase, endAttr) : undefined,
  ].filter((x): x is Seconds => x !== undefined);
  const explicitEnd = ends.length === 0 ? undefined : ends.reduce(min);
  const container = attribute(el, '', 'timeContainer')?.trim() ?? 'par';
  if (container !== 'par' && container !== 'seq')
    throw originError('corrupt-media', `timeContainer="${container.slice(0, 20)}" is neither par nor seq`);
  const seq = container === 'seq';
  const holdsText = isTtml(el, 'p') || isTtml(el, 'span');
  const children: Timed[] = [];
  let cursor: Seconds | null = begin;
  for (const c of el.children) {
    if (cursor === null) break; // after an indefinite child of a seq, nothing else begins
    let child: Timed;
    if (c.kind === 'text') {
      if (!holdsText) continue;
      child = { el: undefined, text: c.text, begin: cursor, end: seq ? cursor : null, children: [] };
    } else if (TIMED_ELEMENTS.some((name) => isTtml(c, name))) {
      child = resolveTiming(c, cursor, seq, params);
    } else {
      continue; // metadata, set (animation is not carried over), foreign elements
    }
    children.push(child);
    if (seq) cursor = child.end;
  }
  const leaf = isTtml(el, 'br') || (isTtml(el, 'span') && el.children.every((c) => c.kind === 'text'));
  let implicit: Seconds | null;
  if (leaf) implicit = parentIsSeq ? begin : null;
  else if (children.length === 0) implicit = begin;
  else if (seq) implicit = children[children.length - 1]!.end;
  else implicit = children.some((c) => c.end === null) ? null : children.map((c) => c.end!).reduce(max);
  let end = explicitEnd ?? implicit;
  if (end !== null && cmp(end, begin) < 0) end = begin;
  return { el, text: '', begin, end, children };
}

/** The part of a node's interval inside its parent's (effective) interval. */
function clip(node: Interval, parent: Interval): Interval {
  const begin = max(node.begin, parent.begin);
  const end = node.end === null ? parent.end : parent.end === null ? node.end : min(node.end, parent.end);
  return { begin, end };
}

const size = (n: Timed): number => n.children.reduce((sum, c) => sum + size(c), 1);

const isEmpty = (i: Interval): boolean => i.end !== null && cmp(i.end, i.begin) <= 0;
const activeAt = (i: Interval, t: Seconds): boolean => cmp(i.begin, t) <= 0 && (i.end === null || cmp(t, i.end) < 0);

class Converter {
  readonly cues: DocumentCue[] = [];
  private readonly styles = new Map<XmlElement, TextStyle>();

  constructor(
    private readonly sheet: Stylesheet,
    private readonly tt: XmlElement,
  ) {}

  /** Visits body and divs; every p becomes cues. */
  walk(node: Timed, ancestors: XmlElement[], parent: Interval): void {
    const el = node.el!;
    const effective = clip(node, parent);
    if (isEmpty(effective)) return;
    const chain = [...ancestors, el];
    if (isTtml(el, 'p')) return this.paragraph(node, chain, effective);
    for (const c of node.children)
      if (c.el !== undefined && (isTtml(c.el, 'div') || isTtml(c.el, 'p'))) this.walk(c, chain, effective);
  }

  private paragraph(p: Timed, chain: XmlElement[], effective: Interval): void {
    const regionId = [...chain]
      .reverse()
      .map((e) => attribute(e, '', 'region')?.trim())
      .find((id) => id !== undefined);
    const region = this.sheet.region(regionId);
    const style = chain.reduce((s, e) => this.sheet.textStyle(s, e), region.style);
    const space = [this.tt, ...chain]
      .reverse()
      .map((e) => attribute(e, XML_NS, 'space'))
      .find((v) => v === 'default' || v === 'preserve');
    const settings = [...region.placement, ...(style.textAlign !== undefined ? [`align:${style.textAlign}`] : [])].join(
      ' ',
    );

    const points: Seconds[] = [effective.begin];
    this.changes(p, effective, points);
    points.sort(cmp);
    const unique = points.filter((t, i) => i === 0 || !equal(t, points[i - 1]!));
    if (unique.length > MAX_CHANGES_PER_PARAGRAPH) {
      throw originError(
        'corrupt-media',
        `a paragraph changes ${unique.length} times, more than the ${MAX_CHANGES_PER_PARAGRAPH} accepted`,
      );
    }
    if (unique.length * size(p) > MAX_PARAGRAPH_WORK) {
      throw originError(
        'corrupt-media',
        `a paragraph of ${size(p)} nodes changing ${unique.length} times is beyond the ${MAX_PARAGRAPH_WORK} node visits accepted`,
      );
    }
    let previous: DocumentCue | undefined;
    unique.forEach((t, i) => {
      const tokens: Token[] = [];
      this.render(p, style, space === 'preserve', effective, { t, out: tokens });
      const payload = layout(tokens);
      const end = unique[i + 1] ?? effective.end;
      if (payload === '') {
        previous = undefined;
      } else if (previous !== undefined && previous.payload === payload) {
        previous.end = end; // the same text continues: one cue
      } else {
        previous = { begin: t, end, payload, settings };
        if (this.cues.length >= MAX_CUES)
          throw originError('corrupt-media', `more than ${MAX_CUES} cues in one sample`);
        this.cues.push(previous);
      }
    });
  }

  /** Times inside the paragraph at which some descendant starts or stops being active. */
  private changes(node: Timed, parent: Interval, out: Seconds[]): void {
    for (const c of node.children) {
      const i = clip(c, parent);
      if (isEmpty(i)) continue;
      if (cmp(i.begin, parent.begin) > 0) out.push(i.begin);
      if (i.end !== null && (parent.end === null || cmp(i.end, parent.end) < 0)) out.push(i.end);
      if (out.length > 4 * MAX_CHANGES_PER_PARAGRAPH) {
        throw originError(
          'corrupt-media',
          `a paragraph changes more than the ${MAX_CHANGES_PER_PARAGRAPH} times accepted`,
        );
      }
      this.changes(c, i, out);
    }
  }

  /** The text of a paragraph's subtree active at time at.t, as tokens appended to at.out. */
  private render(node: Timed, style: TextStyle, preserve: boolean, parent: Interval, at: RenderAt): void {
    const { t, out } = at;
    for (const c of node.children) {
      const i = clip(c, parent);
      if (!activeAt(i, t)) continue;
      if (c.el === undefined) {
        out.push({ kind: 'text', text: c.text, style, preserve });
      } else if (isTtml(c.el, 'br')) {
        out.push({ kind: 'br' });
      } else if (isTtml(c.el, 'span')) {
        const space = attribute(c.el, XML_NS, 'space');
        this.render(
          c,
          this.spanStyle(c.el, style),
          space === 'preserve' || space === 'default' ? space === 'preserve' : preserve,
          i,
          at,
        );
      }
    }
  }

  private spanStyle(el: XmlElement, parent: TextStyle): TextStyle {
    let s = this.styles.get(el);
    if (s === undefined) {
      s = this.sheet.textStyle(parent, el);
      this.styles.set(el, s);
    }
    return s;
  }
}

/** One rendering of a paragraph: the time it shows and the tokens it collects (the same through the recursion). */
interface RenderAt {
  t: Seconds;
  out: Token[];
}

interface Run {
  text: string;
  style: TextStyle;
  /** From xml:space="default" text: its spaces may be dropped at line ends. */
  collapsible: boolean;
}

/** Tokens → WebVTT cue text ('' when nothing visible is left). */
function layout(tokens: Token[]): string {
  const lines: Run[][] = [[]];
  const current = (): Run[] => lines[lines.length - 1]!;
  for (const tok of tokens) {
    if (tok.kind === 'br') {
      lines.push([]);
    } else if (tok.preserve) {
      tok.text.split('\n').forEach((part, i) => {
        if (i > 0) lines.push([]);
        if (part !== '') current().push({ text: part, style: tok.style, collapsible: false });
      });
    } else {
      let text = tok.text.replace(/[ \t\n]+/g, ' ');
      const line = current();
      const last = line[line.length - 1];
      if (text.startsWith(' ') && (last === undefined || last.text.endsWith(' '))) text = text.slice(1);
      if (text !== '') line.push({ text, style: tok.style, collapsible: true });
    }
  }
  return lines
    .map(trimEnd)
    .filter((line) => line.some((r) => r.text.trim() !== ''))
    .map(serializeLine)
    .join('\n');
}

function trimEnd(line: Run[]): Run[] {
  const out = [...line];
  while (out.length > 0 && out[out.length - 1]!.collapsible) {
    const last = out[out.length - 1]!;
    const text = last.text.replace(/ +$/, '');
    if (text !== '') {
      out[out.length - 1] = { ...last, text };
      break;
    }
    out.pop();
  }
  return out;
}

const sameMarkup = (a: TextStyle, b: TextStyle): boolean =>
  a.italic === b.italic && a.bold === b.bold && a.underline === b.underline;

const escape = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** One line of runs: adjacent runs with the same markup share one set of tags (`<i><b><u>`). */
function serializeLine(line: Run[]): string {
  const merged: Array<{ text: string; style: TextStyle }> = [];
  for (const r of line) {
    const last = merged[merged.length - 1];
    if (last !== undefined && sameMarkup(last.style, r.style)) last.text += r.text;
    else merged.push({ text: r.text, style: r.style });
  }
  return merged
    .map(({ text, style }) => {
      const tags = [style.italic ? 'i' : '', style.bold ? 'b' : '', style.underline ? 'u' : ''].filter((t) => t !== '');
      return (
        tags.map((t) => `<${t}>`).join('') +
        escape(text) +
        [...tags]
          .reverse()
          .map((t) => `</${t}>`)
          .join('')
      );
    })
    .join('');
}
