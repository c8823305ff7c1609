// Reads an MPD into the capture's streams (ISO/IEC 23009-1). Taken: one Period, SegmentTemplate
// with or without a SegmentTimeline (§5.3.9.4, §5.3.9.6), `$RepresentationID$`, `$Number$`,
// `$Time$`, `$Bandwidth$` with the `%0Nd` width (§5.3.9.4.4), BaseURL, static and dynamic MPDs.
// Refused, naming the feature: ContentProtection, SegmentBase and SegmentList (byte ranges of one
// file), several Periods, codecs other than H.264 and AAC. Text adaptation sets are refused too:
// filter them out (`type!="textstream"`). Pure: text and the clock in, streams out.

import { XMLParser } from 'fast-xml-parser';
import { originError } from '../errors';
import type { TrackType } from '../model/media';
import { CaptureStream, checkCodecs, ManifestView, manifestProperties, refuse, SegmentRef } from './capture-model';

type Node = Record<string, unknown>;

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  parseAttributeValue: false,
  parseTagValue: false,
  removeNSPrefix: true,
  isArray: (name) => ['Period', 'AdaptationSet', 'Representation', 'S', 'BaseURL', 'ContentProtection'].includes(name),
});

/** Cap on the segments one Representation may list: a day of 1-second segments, with room. */
const MAX_SEGMENTS = 200_000;

export function parseMpd(text: string, mpdUrl: string, nowMs: number): ManifestView {
  let doc: Node;
  try {
    doc = parser.parse(text) as Node;
  } catch (e) {
    throw originError('corrupt-media', `${mpdUrl}: not XML (${(e as Error).message})`);
  }
  const mpd = doc.MPD as Node | undefined;
  if (mpd === undefined) throw originError('corrupt-media', `${mpdUrl}: no MPD element`);
  const periods = (mpd.Period as Node[] | undefined) ?? [];
  if (periods.length !== 1) throw refuse(`an MPD with ${periods.length} Periods (one only)`, mpdUrl);
  const dynamic = mpd['@type'] === 'dynamic';
  const ast = attr(mpd, 'availabilityStartTime');
  const anchorMs = ast === undefined ? undefined : Date.parse(/Z|[+-]\d\d:\d\d$/.test(ast) ? ast : `${ast}Z`);
  const period = periods[0]!;
  const ctx: Ctx = {
    mpdUrl,
    dynamic,
    nowSeconds: anchorMs === undefined ? Infinity : (nowMs - anchorMs) / 1000,
    periodStart: duration(attr(period, 'start')) ?? 0,
    periodDuration: duration(attr(period, 'duration')) ?? duration(attr(mpd, 'mediaPresentationDuration')) ?? Infinity,
  };
  const base = baseUrl(period, baseUrl(mpd, mpdUrl));
  const streams: CaptureStream[] = [];
  for (const set of (period.AdaptationSet as Node[] | undefined) ?? []) streams.push(...adaptationSet(set, base, ctx));
  const update = duration(attr(mpd, 'minimumUpdatePeriod'));
  const longest = Math.max(1, ...streams.flatMap((s) => s.segments.map((g) => g.duration)));
  return {
    dynamic,
    ...(anchorMs !== undefined && Number.isFinite(anchorMs) ? { anchorMs } : {}),
    reloadSeconds: Math.min(update ?? longest, longest),
    streams,
  };
}

interface Ctx {
  mpdUrl: string;
  dynamic: boolean;
  /** Seconds on the timeline that are now (Infinity without an anchor). */
  nowSeconds: number;
  periodStart: number;
  periodDuration: number;
}

function adaptationSet(set: Node, parentBase: string, ctx: Ctx): CaptureStream[] {
  const where = `${ctx.mpdUrl}: AdaptationSet ${attr(set, 'id') ?? ''}`.trim();
  if (set.ContentProtection !== undefined) throw refuse('encryption (ContentProtection)', where);
  const base = baseUrl(set, parentBase);
  const type = typeOf(set);
  return ((set.Representation as Node[] | undefined) ?? []).map((rep) => {
    const id = attr(rep, 'id') ?? '';
    const at = `${where} Representation ${id}`;
    if (rep.ContentProtection !== undefined) throw refuse('encryption (ContentProtection)', at);
    if (rep.SegmentBase !== undefined || set.SegmentBase !== undefined) throw refuse('SegmentBase', at);
    if (rep.SegmentList !== undefined || set.SegmentList !== undefined) throw refuse('SegmentList', at);
    const codecs = attr(rep, 'codecs') ?? attr(set, 'codecs') ?? '';
    const kind = type ?? typeOf(rep);
    if (kind === undefined || kind === 'textstream' || kind === 'data')
      throw refuse(`a ${kind ?? 'text'} adaptation set (filter it out: type!="textstream")`, at);
    checkCodecs(codecs, at);
    const template = (rep.SegmentTemplate ?? set.SegmentTemplate) as Node | undefined;
    if (template === undefined) throw refuse('a Representation without SegmentTemplate', at);
    const merged: Node = { ...((set.SegmentTemplate as Node | undefined) ?? {}), ...template };
    const repBase = baseUrl(rep, base);
    const bandwidth = Number(attr(rep, 'bandwidth') ?? 0);
    const fill = (t: string, vars: { n?: number; t?: bigint }): string =>
      new URL(expand(t, id, bandwidth, vars), repBase).href;
    const init = attr(merged, 'initialization');
    if (init === undefined) throw refuse('a SegmentTemplate without @initialization', at);
    const lang = attr(set, 'lang') ?? attr(rep, 'lang');
    const width = attr(rep, 'width') ?? attr(set, 'width');
    const height = attr(rep, 'height') ?? attr(set, 'height');
    return {
      id,
      properties: manifestProperties({
        type: kind,
        name: id,
        bandwidth,
        codecs,
        ...(lang !== undefined ? { language: lang } : {}),
        ...(width !== undefined ? { width: Number(width) } : {}),
        ...(height !== undefined ? { height: Number(height) } : {}),
      }),
      initUrl: fill(init, {}),
      segments: segmentsOf(merged, (vars) => fill(attr(merged, 'media') ?? '', vars), ctx, at),
    };
  });
}

function typeOf(n: Node): TrackType | undefined {
  const t = attr(n, 'contentType') ?? attr(n, 'mimeType')?.split('/')[0];
  if (t === 'video' || t === 'audio') return t;
  if (t === 'text' || t === 'application') return 'textstream';
  return undefined;
}

/** §5.3.9.6 SegmentTimeline, else §5.3.9.4.4 a fixed @duration with $Number$. */
function segmentsOf(tpl: Node, url: (v: { n?: number; t?: bigint }) => string, ctx: Ctx, at: string): SegmentRef[] {
  const timescale = Number(attr(tpl, 'timescale') ?? 1);
  const pto = BigInt(attr(tpl, 'presentationTimeOffset') ?? 0);
  const startNumber = Number(attr(tpl, 'startNumber') ?? 1);
  const seconds = (t: bigint): number => Number(t - pto) / timescale + ctx.periodStart;
  const end = Math.min(ctx.periodStart + ctx.periodDuration, ctx.nowSeconds);
  const out: SegmentRef[] = [];
  const timeline = tpl.SegmentTimeline as Node | undefined;
  if (timeline !== undefined) {
    const list = (timeline.S as Node[] | undefined) ?? [];
    let t = 0n;
    let n = startNumber;
    list.forEach((s, i) => {
      if (attr(s, 't') !== undefined) t = BigInt(attr(s, 't')!);
      const d = BigInt(attr(s, 'd') ?? 0);
      if (d <= 0n) throw originError('corrupt-media', `${at}: an S without a positive @d`);
      const r = Number(attr(s, 'r') ?? 0);
      const next = list[i + 1] === undefined ? undefined : attr(list[i + 1]!, 't');
      // §5.3.9.6.1: r = -1 repeats until the next S@t, the Period's end or (live) now.
      const until = r < 0 ? (next !== undefined ? Number(BigInt(next) - pto) / timescale + ctx.periodStart : end) : 0;
      for (let k = 0; r < 0 ? seconds(t + d) <= until : k <= r; k++) {
        if (out.length >= MAX_SEGMENTS) throw refuse(`more than ${MAX_SEGMENTS} segments`, at);
        out.push({ url: url({ n, t }), start: seconds(t), duration: Number(d) / timescale, key: `t${t}` });
        t += d;
        n++;
      }
    });
    return out;
  }
  const d = Number(attr(tpl, 'duration') ?? 0);
  if (!(d > 0)) throw refuse('a SegmentTemplate with neither SegmentTimeline nor @duration', at);
  const step = d / timescale;
  // A live template lists the segments complete by now (§5.3.9.5.3); a static one the whole Period.
  const count = Math.floor((end - ctx.periodStart) / step + (ctx.dynamic ? 0 : 0.999999));
  if (!Number.isFinite(count)) throw refuse('a template of unknown length (no duration, no clock)', at);
  if (count > MAX_SEGMENTS) throw refuse(`more than ${MAX_SEGMENTS} segments`, at);
  for (let k = 0; k < count; k++) {
    const n = startNumber + k;
    const t = pto + BigInt(Math.round(k * d));
    out.push({ url: url({ n, t }), start: ctx.periodStart + k * step, duration: step, key: `n${n}` });
  }
  return out;
}

/** §5.3.9.4.4 template identifiers, with the printf-style width of $Number%05d$. */
function expand(template: string, id: string, bandwidth: number, v: { n?: number; t?: bigint }): string {
  return template.replace(
    /\$(RepresentationID|Number|Time|Bandwidth|)(%0(\d+)d)?\$/g,
    (_m, name: string, _f, width) => {
      if (name === '') return '$';
      const value =
        name === 'RepresentationID'
          ? id
          : name === 'Number'
            ? v.n
            : name === 'Time'
              ? v.t
              : name === 'Bandwidth'
                ? bandwidth
                : '';
      const s = String(value ?? '');
      return width === undefined ? s : s.padStart(Number(width), '0');
    },
  );
}

function baseUrl(n: Node, parent: string): string {
  const list = n.BaseURL as Array<string | Node> | undefined;
  const first = list?.[0];
  if (first === undefined) return parent;
  const text = typeof first === 'string' ? first : String(first['#text'] ?? '');
  return new URL(text.trim(), parent).href;
}

function attr(n: Node, name: string): string | undefined {
  const v = n[`@${name}`];
  return v === undefined ? undefined : String(v);
}

/** xs:duration as MPDs write it (PT1H2M3.5S, P1DT...); undefined when absent. */
export function duration(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const m = /^P(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$/.exec(text);
  if (m === null) throw originError('corrupt-media', `"${text}" is not an xs:duration`);
  const [, d, h, min, s] = m.map((x) => Number(x ?? 0));
  return d! * 86400 + h! * 3600 + min! * 60 + s!;
}
