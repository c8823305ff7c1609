// DASH Media Presentation Description (ISO/IEC 23009-1:2022), static, ISO BMFF live profile
// (§8.4). Pure: a view in, XML text out.
//
// Shape follows the reference (docs/specs.md, reference §3.5): one Period; AdaptationSets listed audio,
// text, video with `group` 1, 3, 2; one SegmentTemplate + SegmentTimeline per AdaptationSet. An
// AdaptationSet holds the tracks of one type, codec, language and role whose segments share one
// timeline, so that `segmentAlignment="true"` is true (§5.3.3.2) and the template can be shared;
// a track whose fragment times differ (29.97 fps next to 24 fps) gets an AdaptationSet of its own.
// Tracks encrypted with different keys (a CPIX document's SD and HD keys) never share one: "every
// representation in an adaptation set SHALL be protected using the same content key" (DASH-IF
// content protection guidelines, the cenc:default_KID is the set's); sets split only by their key
// list each other in an adaptation-set-switching property (§5.3.3.5), as those guidelines ask.
//
// Times are output times (Segment.time: what `tfdt` says, 0 = the presentation origin), exact
// 64-bit integers in each track's own timescale.

import { originError } from '../errors';
import { Instant, ticksIn } from '../model/presentation';
import { SegmentList } from '../model/segment-list';
import { dashUrls } from './urls';
import { bitrates, PlayoutView, trackKey, ViewTrack } from '../model/view';
import { derived } from '../model/view-derived';
import { LiveNumbering } from '../model/live-window';
import { TrackProperties } from '../model/media';
import { xmlAttr } from './xml';
import { contentProtection, protectionNamespaces } from './dash-protection';
import { eventNamespaces, eventStreams, inbandEventStreams } from './dash-events';
import type { CencProtection } from '../model/protection';
import { dynamicAttributes, utcTimingLine } from './dash-live';
import { dashPeriods } from './dash-periods';
import * as ll from './dash-low-latency';

type Attr = [string, string | number | undefined];
type DashType = 'audio' | 'text' | 'video';
type TrackKeys = ReadonlyMap<number, CencProtection> | undefined;

interface AdaptationGroup {
  type: DashType;
  members: ViewTrack[];
  /** The members' common encryption (one key per set); undefined: clear. */
  protection: CencProtection | undefined;
  /** Ids of the sets this one differs from only by its key (adaptation-set-switching). */
  switchWith: number[];
}

const SWITCHING_SCHEME = 'urn:mpeg:dash:adaptation-set-switching:2016';

const PROFILE = 'urn:mpeg:dash:profile:isoff-live:2011';
const ROLE_SCHEME = 'urn:mpeg:dash:role:2011';
/** §5.8.5.4: value = number of audio output channels. */
const CHANNELS_SCHEME = 'urn:mpeg:dash:23003:3:audio_channel_configuration:2011';
/** AdaptationSet order and @group of the reference (docs/specs.md, reference §3.5). */
const TYPE_ORDER: readonly DashType[] = ['audio', 'text', 'video'];
const GROUP_OF: Record<DashType, number> = { audio: 1, video: 2, text: 3 };
const MIME_OF: Record<DashType, string> = { audio: 'audio/mp4', video: 'video/mp4', text: 'application/mp4' };
/** Attributes written once on the AdaptationSet when every Representation has the same value. */
const HOISTED = ['sar', 'frameRate', 'audioSamplingRate', 'codecs'];

export function writeMpd(view: PlayoutView): string {
  // A live channel until its end of stream: dynamic, times from the anchor (dash-live.ts).
  const live = view.live;
  const dynamic = live !== undefined && !live.ended ? live : undefined;
  const lowLatency = ll.isDashLowLatency(view);
  const start = dynamic !== undefined ? { ticks: 0n, timescale: 1 } : viewStart(view);
  // Per view (model/view-derived.ts): what compares or walks every segment.
  const keys = view.presentation.protection?.dash;
  const groups = derived(view.tracks, 'dash groups', () => adaptationGroups(view.tracks, keys));
  const maxSegment = maxSegmentMs(view.tracks);
  const protections = [...new Set(groups.flatMap((g) => (g.protection === undefined ? [] : [g.protection])))];
  const lines = ['<?xml version="1.0" encoding="utf-8"?>', '<!-- Created with Streaming Origin -->'];
  lines.push(
    `<MPD${attributes([
      ['xmlns', 'urn:mpeg:dash:schema:mpd:2011'],
      ...(protections.length === 0 ? [] : protectionNamespaces(protections)),
      ...eventNamespaces(view),
      ...(dynamic !== undefined
        ? dynamicAttributes(dynamic, maxSegment, isoDuration, lowLatency ? ll.chunkMs(view) : undefined)
        : ([
            ['type', 'static'],
            ['mediaPresentationDuration', isoDuration(presentationMs(view.tracks, start))],
          ] as Attr[])),
      ['maxSegmentDuration', isoDuration(maxSegment)],
      // With @bandwidth = the peak segment rate, every segment of a Representation arrives within
      // its own duration, so a buffer of one (longest) segment satisfies the §5.3.5.2 model.
      ['minBufferTime', isoDuration(maxSegment)],
      ['profiles', PROFILE],
    ])}>`,
  );
  if (lowLatency) lines.push(...ll.serviceDescriptionLines());
  // One Period, or one per encoder run of a live channel (dash-periods.ts).
  for (const period of dashPeriods(view, start)) {
    lines.push(
      `  <Period${attributes([
        ['id', period.id],
        ['start', isoDuration(ticksIn(period.start, 1000) - ticksIn(start, 1000))],
      ])}>`,
    );
    lines.push(...eventStreams({ ...view, events: period.events }, period.start));
    groups.forEach((g, i) => {
      // AdaptationSet@id stays the set's position in the whole view in every Period.
      const members = g.members.flatMap((m) => period.tracks.filter((t) => t.track === m.track));
      if (members.length > 0) lines.push(...adaptationSet(view, { ...g, members }, i + 1, period.start));
    });
    lines.push('  </Period>');
  }
  if (dynamic !== undefined) lines.push(utcTimingLine());
  lines.push('</MPD>', '');
  return lines.join('\n');
}

/**
 * The instant the Period starts at, on the output timeline: 0 for the whole presentation; for a
 * sub-clip the earliest first segment of the clip, the same instant for every track, so that
 * `presentationTimeOffset` (§5.3.9.2) puts every track's first segment at (almost) 0.
 */
function viewStart(view: PlayoutView): Instant {
  if (view.clip === undefined) return { ticks: 0n, timescale: 1 };
  let best: Instant | undefined;
  for (const t of view.tracks) {
    const candidate = { ticks: t.segments.time(0), timescale: t.track.properties.TimeScale };
    if (best === undefined || candidate.ticks * BigInt(best.timescale) < best.ticks * BigInt(candidate.timescale))
      best = candidate;
  }
  return best!;
}

/** Tracks into AdaptationSets (see the header), in reference order, then server-manifest order. */
function adaptationGroups(tracks: ViewTrack[], keys: TrackKeys): AdaptationGroup[] {
  const groups: AdaptationGroup[] = [];
  for (const t of tracks) {
    const type = dashType(t.track.properties);
    const protection = keys?.get(t.track.index);
    const g = groups.find((x) => x.type === type && x.protection === protection && sameSet(x.members[0]!, t));
    if (g !== undefined) g.members.push(t);
    else groups.push({ type, members: [t], protection, switchWith: [] });
  }
  const ordered = TYPE_ORDER.flatMap((type) => groups.filter((g) => g.type === type));
  ordered.forEach((g) => {
    // AdaptationSet@id is the position + 1 (adaptationSet()).
    g.switchWith = ordered.flatMap((o, j) =>
      o !== g && o.type === g.type && o.protection !== g.protection && sameSet(o.members[0]!, g.members[0]!)
        ? [j + 1]
        : [],
    );
  });
  return ordered;
}

function dashType(p: TrackProperties): DashType {
  if (p.type === 'video' || p.type === 'audio') return p.type;
  if (p.type === 'textstream') return 'text';
  throw originError('unsupported-media', `DASH output has no AdaptationSet type for ${p.type} track ${p.trackName}`);
}

function sameSet(a: ViewTrack, b: ViewTrack): boolean {
  const p = a.track.properties;
  const q = b.track.properties;
  if (p.sampleEntry !== q.sampleEntry || p.systemLanguage !== q.systemLanguage || roles(p).join() !== roles(q).join())
    return false;
  return p.TimeScale === q.TimeScale && a.segments.time(0) === b.segments.time(0) && a.segments.sameShape(b.segments);
}

/** Role values (§5.8.5.5); main for audio and video, subtitle for text when the .ism names none. */
function roles(p: TrackProperties): string[] {
  const named = (p.Roles ?? '')
    .split(',')
    .map((r) => r.trim())
    .filter((r) => r !== '');
  if (named.length > 0) return named;
  return [p.type === 'textstream' ? 'subtitle' : 'main'];
}

function adaptationSet(view: PlayoutView, g: AdaptationGroup, id: number, start: Instant): string[] {
  const first = g.members[0]!;
  const p = first.track.properties;
  const reps = g.members.map((m) => representation(m));
  const bandwidths = reps.map((r) => Number(r.attrs.find(([k]) => k === 'bandwidth')![1]));
  const hoisted = HOISTED.map((name): Attr => [name, common(reps.map((r) => value(r.attrs, name)))]).filter(
    ([, v]) => v !== undefined,
  );
  const channels = common(reps.map((r) => r.channels));
  const attrs: Attr[] = [
    ['id', id],
    ['group', GROUP_OF[g.type]],
    ['contentType', g.type],
    ['lang', rfc5646Language(p.systemLanguage)],
  ];
  if (g.type === 'video') {
    attrs.push(['par', common(g.members.map((m) => displayAspect(m.track.properties)))]);
  }
  if (g.members.length > 1)
    attrs.push(['minBandwidth', Math.min(...bandwidths)], ['maxBandwidth', Math.max(...bandwidths)]);
  if (g.type === 'video') {
    attrs.push(['maxWidth', Math.max(...g.members.map((m) => m.track.properties.MaxWidth ?? 0))]);
    attrs.push(['maxHeight', Math.max(...g.members.map((m) => m.track.properties.MaxHeight ?? 0))]);
  }
  attrs.push(['segmentAlignment', 'true'], ...hoisted, ['mimeType', MIME_OF[g.type]]);
  // SAP type 1 (Annex A.3): every segment opens with a sync sample (a closed-GOP IDR for video).
  attrs.push(['startWithSAP', g.members.every((m) => m.segments.stats.startsWithSync) ? 1 : undefined]);
  const out = [`    <AdaptationSet${attributes(attrs)}>`];
  // Element order of AdaptationSetType: RepresentationBase children, then Role, then SegmentTemplate.
  if (channels !== undefined) out.push(`      ${channelConfiguration(channels)}`);
  if (g.protection !== undefined) out.push(...contentProtection(g.protection, '      '));
  if (g.switchWith.length > 0) {
    out.push(
      `      <SupplementalProperty${attributes([
        ['schemeIdUri', SWITCHING_SCHEME],
        ['value', g.switchWith.join(',')],
      ])} />`,
    );
  }
  out.push(...inbandEventStreams(view, first));
  if (ll.isDashLowLatency(view)) out.push(...ll.producerReferenceTimeLines(view, first, '      '));
  for (const r of roles(p))
    out.push(
      `      <Role${attributes([
        ['schemeIdUri', ROLE_SCHEME],
        ['value', r],
      ])} />`,
    );
  out.push(...segmentTemplate(view, first, start));
  for (const r of reps) {
    const own = r.attrs.filter(([k]) => !hoisted.some(([h]) => h === k));
    if (channels !== undefined || r.channels === undefined) {
      out.push(`      <Representation${attributes(own)} />`);
    } else {
      out.push(
        `      <Representation${attributes(own)}>`,
        `        ${channelConfiguration(r.channels)}`,
        '      </Representation>',
      );
    }
  }
  out.push('    </AdaptationSet>');
  return out;
}

/**
 * One Representation's attributes. @bandwidth is the peak segment bit rate (bitrates().peak), not
 * systemBitrate: §5.3.5.2 defines it under a buffer model (delivered at @bandwidth from any SAP,
 * playout can start after @minBufferTime). At the peak rate each segment arrives within its own
 * duration, so the model holds with @minBufferTime = the longest segment; at the average rate a
 * run of large segments can stall. HLS BANDWIDTH is a peak too (RFC 8216 §4.3.4.2).
 * @width/@height are on the sample grid of @sar (§5.3.7.2, Table 9): the coded size after
 * cropping (MaxWidth/MaxHeight); width × sar is the display width.
 */
function representation(m: ViewTrack): { attrs: Attr[]; channels: number | undefined } {
  const p = m.track.properties;
  const attrs: Attr[] = [
    ['id', trackKey(m.track)],
    ['bandwidth', bitrates(m).peak],
  ];
  if (p.type === 'video') {
    attrs.push(['width', p.MaxWidth], ['height', p.MaxHeight], ['sar', sampleAspect(p)]);
    attrs.push([
      'frameRate',
      p.FrameRate === undefined
        ? undefined
        : p.FrameRate.den === 1
          ? String(p.FrameRate.num)
          : `${p.FrameRate.num}/${p.FrameRate.den}`,
    ]);
  }
  if (p.type === 'audio') attrs.push(['audioSamplingRate', p.SamplingRate]);
  attrs.push(['codecs', p.codecs]);
  if (p.type === 'video') attrs.push(['scanType', p.ScanType]);
  return { attrs, channels: p.type === 'audio' ? p.Channels : undefined };
}

function channelConfiguration(channels: number): string {
  return `<AudioChannelConfiguration${attributes([
    ['schemeIdUri', CHANNELS_SCHEME],
    ['value', channels],
  ])} />`;
}

/**
 * §5.3.9.4 SegmentTemplate with a §5.3.9.6 SegmentTimeline: `$Time$` URLs carry the S@t values,
 * `$Number$` URLs count from @startNumber (1, the number the route table expects for the first
 * segment of the view).
 */
function segmentTemplate(view: PlayoutView, t: ViewTrack, start: Instant): string[] {
  const ts = t.track.properties.TimeScale;
  const offset = ticksIn(start, ts);
  const byNumber = view.options.str('mpd_segment_template') === 'number';
  const attrs: Attr[] = [
    ['timescale', ts],
    ['presentationTimeOffset', offset !== 0n ? String(offset) : undefined],
    ['initialization', dashUrls.init(view)],
    ['media', dashUrls.media(view)],
    ['startNumber', byNumber ? (view.presentation.live === undefined ? 1 : t.firstNumber) : undefined],
  ];
  // The `<S>` lines as one block (joined by '\n' like the document); a view track has segments.
  // A live `$Number$` timeline lists a gap's grid slots (gapSlots) so that numbers stay on the grid.
  const numbered = byNumber ? t.live : undefined;
  let s = derived(t, numbered === undefined ? 'dash timeline' : 'dash timeline numbered', () =>
    timelineText(t.segments, numbered),
  );
  if (ll.isDashLowLatency(view)) {
    attrs.push(...ll.lowLatencyTemplateAttributes(t));
    // The segment being ingested, predicted (dash-low-latency.ts).
    const predicted = ll.predictedSegment(view, t);
    if (predicted !== undefined)
      s = indent(ll.withPredicted(timeline(t.segments, numbered), t.segments.end, predicted));
  }
  return [
    `      <SegmentTemplate${attributes(attrs)}>`,
    '        <SegmentTimeline>',
    ...(s !== '' ? [s] : []),
    '        </SegmentTimeline>',
    '      </SegmentTemplate>',
  ];
}

/** The `<S>` lines of a track, indented, joined by '\n'. */
function timelineText(segments: SegmentList, numbered?: LiveNumbering): string {
  return indent(timeline(segments, numbered));
}

function indent(lines: string[]): string {
  return lines.map((x) => `          ${x}`).join('\n');
}

/**
 * `<S>` elements: @t on the first and after a gap; runs of equal durations folded into @r (§5.3.9.6.2).
 * `numbered`: a live track addressed by `$Number$`, whose gaps are listed (gapSlots).
 */
export function timeline(segments: SegmentList, numbered?: LiveNumbering): string[] {
  const out: string[] = [];
  const n = segments.count;
  for (let i = 0; i < n;) {
    if (numbered !== undefined && i > 0) out.push(...gapSlots(segments, numbered, i));
    let r = 0;
    while (i + r + 1 < n && segments.sameDuration(i + r + 1, i) && segments.contiguous(i + r + 1)) r++;
    // Attributes t, d, r in that order; integers need no XML escaping.
    const t = segments.contiguous(i) ? '' : ` t="${segments.time(i)}"`;
    out.push(`<S${t} d="${segments.duration(i)}"${r > 0 ? ` r="${r}"` : ''} />`);
    i += r + 1;
  }
  return out;
}

/**
 * The `<S>` of the empty grid slots before live segment i, when addressed by `$Number$`
 * (docs/design/live.md, "Restarts and gaps"). §5.3.9.6 numbers a segment @startNumber plus the
 * segments listed before it in its Period; the one way to skip numbers inside a timeline, `S@n`,
 * is one the DASH-IF timing model forbids and neither dash.js nor shaka reads. So a `$Number$`
 * timeline lists one segment per missing grid slot, tiling the hole as HLS's EXT-X-GAP segments
 * do (manifests/hls-live.ts liveBreak), and their URLs are refused as `fragment-missing`: a
 * number names the same media in every window and on every origin, and dash.js, when a segment
 * fails, asks for the next one. `$Time$` timelines keep the hole (an `S@t` after it).
 * A hole too short for its slots (numbers pushed apart by a restart) is not listed.
 */
function gapSlots(segments: SegmentList, live: LiveNumbering, i: number): string[] {
  const missing = live.numbers[i]! - live.numbers[i - 1]! - 1;
  const hole = segments.time(i) - segments.time(i - 1) - segments.duration(i - 1);
  if (missing <= 0 || hole < BigInt(missing)) return [];
  const each = hole / BigInt(missing);
  const last = hole - each * BigInt(missing - 1);
  if (last === each) return [`<S d="${each}"${missing > 1 ? ` r="${missing - 1}"` : ''} />`];
  return [
    ...(missing > 2 ? [`<S d="${each}" r="${missing - 2}" />`] : missing > 1 ? [`<S d="${each}" />`] : []),
    `<S d="${last}" />`,
  ];
}

/**
 * Milliseconds from the Period start to the end of the longest track, rounded down: a duration
 * past the last sample can leave a player waiting at the end for media that never comes, while
 * the < 1 ms cut is restored by MSE's endOfStream (duration = the end of the buffered media).
 */
function presentationMs(tracks: ViewTrack[], start: Instant): bigint {
  let best = 0n;
  for (const t of tracks) {
    const ts = BigInt(t.track.properties.TimeScale);
    // (end/ts − start.ticks/start.ts) in ms, exact integer arithmetic, floor.
    const num = (t.segments.end * BigInt(start.timescale) - start.ticks * ts) * 1000n;
    const ms = floorDiv(num, ts * BigInt(start.timescale));
    if (ms > best) best = ms;
  }
  return best;
}

/** Longest segment in milliseconds, rounded up: @maxSegmentDuration is an upper bound (§5.3.1.2). */
function maxSegmentMs(tracks: ViewTrack[]): bigint {
  let best = 0n;
  for (const t of tracks) {
    const ts = BigInt(t.track.properties.TimeScale);
    // ceil(d·1000/ts) is monotonic in d: the longest segment gives the largest.
    const ms = (t.segments.longest * 1000n + ts - 1n) / ts;
    if (ms > best) best = ms;
  }
  return best;
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

/** xs:duration in the reference's form (`PT12M13.979S`, `PT10S`, `PT0S`) from milliseconds. */
export function isoDuration(ms: bigint): string {
  if (ms < 0n) ms = 0n;
  const h = ms / 3_600_000n;
  const m = (ms / 60_000n) % 60n;
  const s = (ms / 1000n) % 60n;
  const frac = ms % 1000n;
  let out = 'PT';
  if (h > 0n) out += `${h}H`;
  if (m > 0n) out += `${m}M`;
  if (s > 0n || frac > 0n || out === 'PT')
    out += frac > 0n ? `${s}.${String(frac).padStart(3, '0').replace(/0+$/, '')}S` : `${s}S`;
  return out;
}

function sampleAspect(p: TrackProperties): string | undefined {
  const { MaxWidth: w, MaxHeight: h, DisplayWidth: dw, DisplayHeight: dh } = p;
  if (w === undefined || h === undefined || dw === undefined || dh === undefined || w === 0 || h === 0)
    return undefined;
  return ratio(dw * h, dh * w);
}

function displayAspect(p: TrackProperties): string | undefined {
  const { DisplayWidth: dw, DisplayHeight: dh } = p;
  return dw === undefined || dh === undefined || dw === 0 || dh === 0 ? undefined : ratio(dw, dh);
}

/** RatioType `a:b`, reduced. */
function ratio(a: number, b: number): string {
  let x = a;
  let y = b;
  while (y !== 0) [x, y] = [y, x % y];
  return `${a / x}:${b / x}`;
}

function common<T>(values: T[]): T | undefined {
  const v = values[0];
  return values.every((x) => x === v) ? v : undefined;
}

function value(attrs: Attr[], name: string): string | number | undefined {
  return attrs.find(([k]) => k === name)?.[1];
}

function attributes(list: Attr[]): string {
  return list
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => ` ${k}="${xmlAttr(String(v))}"`)
    .join('');
}

// ISO 639-2 (T and B codes) → ISO 639-1, from Debian iso-codes 639-2. RFC 5646 §2.2.1: a language
// with a two-letter ISO 639-1 code is registered under that code only, so `eng` is well-formed
// but not a valid tag: DASH @lang (§5.3.3.2, xs:language per RFC 5646) and HLS LANGUAGE
// (RFC 8216 §4.3.4.1) both want `en`. The reference writes `lang="en"` too (§3.5).
const ISO639_1 = new Map(
  (
    'aaraa abkab afraf akaak albsq amham araar argan armhy asmas avaav aveae aymay azeaz bakba bambm ' +
    'baqeu belbe benbn bihbh bisbi bodbo bosbs brebr bulbg burmy catca cescs chach chece chizh chucu ' +
    'chvcv corkw cosco crecr cymcy czecs danda deude divdv dutnl dzodz ellel engen epoeo estet euseu ' +
    'eweee faofo fasfa fijfj finfi frafr frefr fryfy fulff geoka gerde glagd glega glggl glvgv greel ' +
    'grngn gujgu hatht hauha hebhe herhz hinhi hmoho hrvhr hunhu hyehy iboig iceis idoio iiiii ikuiu ' +
    'ileie inaia indid ipkik islis itait javjv jpnja kalkl kankn kasks katka kaukr kazkk khmkm kikki ' +
    'kinrw kirky komkv konkg korko kuakj kurku laolo latla lavlv limli linln litlt ltzlb lublu luglg ' +
    'macmk mahmh malml maomi marmr mayms mkdmk mlgmg mltmt monmn mrimi msams myamy nauna navnv nblnr ' +
    'ndend ndong nepne nldnl nnonn nobnb norno nyany ocioc ojioj orior ormom ossos panpa perfa plipi ' +
    'polpl porpt pusps quequ rohrm ronro rumro runrn rusru sagsg sansa sinsi slksk slosk slvsl smese ' +
    'smosm snasn sndsd somso sotst spaes sqisq srdsc srpsr sswss sunsu swasw swesv tahty tamta tattt ' +
    'telte tgktg tgltl thath tibbo tirti tonto tsntn tsots tuktk turtr twitw uigug ukruk urdur uzbuz ' +
    'venve vievi volvo welcy wlnwa wolwo xhoxh yidyi yoryo zhaza zhozh zulzu'
  )
    .split(' ')
    .map((e): [string, string] => [e.slice(0, 3), e.slice(3)]),
);

/**
 * The RFC 5646 tag for a track language: the ISO 639-1 code where one exists, other well-formed
 * tags unchanged, undefined for `und` (undetermined: leave the attribute out) and for anything
 * that is not a language tag (a typo in the .ism must not make the MPD schema-invalid).
 */
export function rfc5646Language(language: string): string | undefined {
  const lower = language.toLowerCase();
  if (lower === 'und' || lower === '') return undefined;
  const mapped = ISO639_1.get(lower);
  if (mapped !== undefined) return mapped;
  return /^[a-zA-Z]{1,8}(-[a-zA-Z0-9]{1,8})*$/.test(language) ? language : undefined;
}
