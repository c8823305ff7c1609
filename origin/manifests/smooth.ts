// Smooth Streaming client manifest (MS-SSTR §2.2.2). Pure: a view in, XML text out.
//
// Tracks that share a trackName form one StreamIndex (a bitrate ladder); their QualityLevels
// must share one chunk timeline (§2.2.2.6), so a track whose fragment times differ from its
// ladder's gets a StreamIndex of its own. Times are the source's own (the `tfxd` times inside
// the fragments), exact, also when the first one is not 0; a presentation that starts before 0
// (AAC priming in ffmpeg's ismv) is shifted as a whole so that no time is negative, and the
// fragments' tfxd say the same (timeline.ts, Segment.smoothTime).
//
// Live (a channel: `view.presentation.live`, smoothLiveOf): `IsLive="TRUE"`, `Duration="0"` (MS-SSTR §2.2.2.1: unknown;
// dash.js takes a live manifest with a Duration for a start-over one), `LookaheadCount` and
// `DVRWindowLength` (manifest timescale; 0 is an unbounded window). Times are the ingest times,
// UTC at the track timescale, as dash.js reads `t` (from 1970). The chunks are the view's (the
// DVR window) but the last `lookahead_fragments`, whose times reach the client in the tfrf of
// their predecessors (model/lookahead.ts). After the end of stream the manifest is a static one,
// as a VOD presentation of the window: no IsLive, its Duration, every chunk.
//
// `r` (`iss_chunk_repeat`): dash.js 5, shaka 4 and ExoPlayer read it as the total count of the
// run (not DASH's repeat count), older clients not at all; off by default, one `<c>` per chunk.

import { originError } from '../errors';
import { smoothUrls } from './urls';
import { PlayoutView, ViewTrack } from '../model/view';
import { derived } from '../model/view-derived';
import { listedChunks, SmoothLookahead } from '../model/lookahead';
import { xmlAttr } from './xml';

/** MS-SSTR §2.2.2.1: the manifest TimeScale when the tracks do not agree on one. */
const DEFAULT_TIMESCALE = 10_000_000;

/** `lookahead_fragments` unset: the reference's default (options/live-options.ts). */
const DEFAULT_LOOKAHEAD = 2;

interface StreamGroup {
  name: string;
  members: ViewTrack[];
  /** Chunks listed: every segment (VOD), or those the lookahead lets through (live). */
  listed: number;
}

/** What a live channel adds to its Smooth manifest. */
export interface SmoothLive extends SmoothLookahead {
  /** `dvr_window_length`, seconds; 0: unbounded. */
  dvrWindowSeconds: number;
}

/** The live description of a channel's view (undefined: VOD): `lookahead_fragments`, its DVR window. */
export function smoothLiveOf(view: PlayoutView): SmoothLive | undefined {
  const live = view.live;
  if (live === undefined) return undefined;
  const count = view.options.int('lookahead_fragments') ?? DEFAULT_LOOKAHEAD;
  return { count, ended: live.ended, dvrWindowSeconds: live.dvrWindowSeconds };
}

export function writeSmoothManifest(view: PlayoutView, live = smoothLiveOf(view)): string {
  // Per view (model/view-derived.ts): the ladders compare every segment of the tracks.
  const key = live === undefined ? 'smooth groups' : `smooth groups ${live.count} ${live.ended}`;
  const groups = derived(view.tracks, key, () => streamGroups(view.tracks, live));
  const timescales = new Set(view.tracks.map((t) => t.track.properties.TimeScale));
  const timescale = timescales.size === 1 ? [...timescales][0]! : DEFAULT_TIMESCALE;
  const duration = Math.max(...groups.map((g) => groupDuration(g, timescale)));
  const repeat = view.options.bool('iss_chunk_repeat');
  const root: Array<[string, string | number | undefined]> = [
    ['MajorVersion', 2],
    ['MinorVersion', repeat ? 2 : 0],
    ['TimeScale', timescale],
  ];
  if (live !== undefined && !live.ended) {
    root.push(['Duration', 0], ['IsLive', 'TRUE'], ['LookaheadCount', live.count]);
    root.push(['DVRWindowLength', Math.round(live.dvrWindowSeconds * timescale)]);
  } else root.push(['Duration', duration]);
  const lines = ['<?xml version="1.0" encoding="utf-8"?>', '<!-- Created with Streaming Origin -->'];
  lines.push(`<SmoothStreamingMedia${attributes(root)}>`);
  // MS-SSTR §2.2.2.2: one ProtectionHeader per content-protection system, before the streams.
  // SystemID lower case without braces: shaka 4 looks it up so (braces would not match).
  const protection = view.presentation.protection?.smooth;
  if (protection !== undefined) {
    lines.push('  <Protection>');
    for (const s of protection.systems.filter((x) => x.playReadyObject !== undefined)) {
      const header = Buffer.from(s.playReadyObject!).toString('base64');
      lines.push(`    <ProtectionHeader SystemID="${s.systemId}">${header}</ProtectionHeader>`);
    }
    lines.push('  </Protection>');
  }
  for (const g of groups) lines.push(...streamIndex(view, g));
  lines.push('</SmoothStreamingMedia>', '');
  return lines.join('\n');
}

/**
 * Ladders by trackName, split where the chunk timelines differ; order of first appearance. Live,
 * the renditions of a ladder are archived one after the other, so one may hold a chunk more than
 * another for a moment: they share a timeline when the listed chunks of the shorter are the
 * first chunks of the longer, and the ladder lists the chunks all of them have.
 */
function streamGroups(tracks: ViewTrack[], live: SmoothLookahead | undefined): StreamGroup[] {
  const groups: StreamGroup[] = [];
  const names = new Set<string>();
  for (const t of tracks) {
    const base = t.track.properties.trackName;
    const listed = live === undefined ? t.segments.count : listedChunks(t.segments, live);
    const g = groups.find(
      (x) => x.members[0]!.track.properties.trackName === base && sameTimeline(x, t, Math.min(x.listed, listed)),
    );
    if (g !== undefined) {
      g.members.push(t);
      g.listed = Math.min(g.listed, listed);
      continue;
    }
    let name = base;
    for (let n = 2; names.has(name); n++) name = `${base}_${n}`;
    names.add(name);
    groups.push({ name, members: [t], listed });
  }
  // A live track with fewer chunks than its lookahead lists none yet: nothing to announce.
  return groups.filter((g) => g.listed > 0);
}

function sameTimeline(g: StreamGroup, b: ViewTrack, count: number): boolean {
  // Smooth times are output times plus a constant per list: equal first times and shapes.
  const a = g.members[0]!;
  if (a.track.properties.TimeScale !== b.track.properties.TimeScale) return false;
  if (a.segments.smoothTime(0) !== b.segments.smoothTime(0)) return false;
  if (count === a.segments.count && count === b.segments.count) return a.segments.sameShape(b.segments);
  return a.segments.slice(0, count).sameShape(b.segments.slice(0, count));
}

function groupDuration(g: StreamGroup, timescale: number): number {
  const s = g.members[0]!.segments;
  const ticks = s.time(g.listed - 1) + s.duration(g.listed - 1) - s.time(0);
  return Math.round((Number(ticks) * timescale) / g.members[0]!.track.properties.TimeScale);
}

function streamIndex(view: PlayoutView, g: StreamGroup): string[] {
  const first = g.members[0]!;
  const p = first.track.properties;
  const type = p.type === 'textstream' ? 'text' : p.type;
  if (type !== 'video' && type !== 'audio' && type !== 'text') {
    throw originError('unsupported-media', `Smooth Streaming has no stream type for ${p.type} track ${p.trackName}`);
  }
  const attrs: Array<[string, string | number | undefined]> = [
    ['Type', type],
    ['Subtype', type === 'text' ? 'SUBT' : undefined],
    ['Name', g.name],
    ['Language', p.systemLanguage],
    ['TimeScale', p.TimeScale],
    ['QualityLevels', g.members.length],
    ['Chunks', g.listed],
    ['Url', smoothUrls.template(view, p.trackName)],
  ];
  if (type === 'video') {
    attrs.push(['MaxWidth', Math.max(...g.members.map((m) => m.track.properties.MaxWidth ?? 0))]);
    attrs.push(['MaxHeight', Math.max(...g.members.map((m) => m.track.properties.MaxHeight ?? 0))]);
    attrs.push(['DisplayWidth', Math.max(...g.members.map((m) => m.track.properties.DisplayWidth ?? 0))]);
    attrs.push(['DisplayHeight', Math.max(...g.members.map((m) => m.track.properties.DisplayHeight ?? 0))]);
  }
  const out = [`  <StreamIndex${attributes(attrs)}>`];
  g.members.forEach((m, i) => out.push(`    <QualityLevel${attributes(qualityLevel(m, i))} />`));
  // One block of lines (joined by '\n' like the document); a group lists at least one chunk.
  const repeat = view.options.bool('iss_chunk_repeat');
  const c = derived(first, `smooth chunks ${g.listed} ${repeat}`, () => chunks(first, g.listed, repeat).join('\n'));
  if (c !== '') out.push(c);
  out.push('  </StreamIndex>');
  return out;
}

/** MS-SSTR §2.2.2.5: the attributes a client needs to build its decoder configuration. */
function qualityLevel(m: ViewTrack, index: number): Array<[string, string | number | undefined]> {
  const p = m.track.properties;
  const attrs: Array<[string, string | number | undefined]> = [
    ['Index', index],
    ['Bitrate', p.systemBitrate],
    ['FourCC', p.FourCC],
  ];
  if (p.type === 'video') {
    attrs.push(['MaxWidth', p.MaxWidth], ['MaxHeight', p.MaxHeight]);
  } else if (p.type === 'audio') {
    attrs.push(
      ['SamplingRate', p.SamplingRate],
      ['Channels', p.Channels],
      ['BitsPerSample', p.BitsPerSample],
      ['PacketSize', p.PacketSize],
      ['AudioTag', p.AudioTag],
    );
  }
  attrs.push(['CodecPrivateData', p.CodecPrivateData]);
  return attrs;
}

/**
 * `<c>` per chunk of the first `count`; `t` on the first and after any gap (§2.2.2.6). With
 * `repeat`, a run of contiguous chunks of one duration is one `<c>` whose `r` is the run's length
 * (written only past 1), as the clients that read `r` count it.
 */
function chunks(t: ViewTrack, count: number, repeat: boolean): string[] {
  const out: string[] = [];
  // Durations repeat (fixed fragment lengths): each distinct one is formatted once.
  const tails = new Map<bigint, string>();
  const s = t.segments;
  for (let i = 0; i < count;) {
    const d = s.duration(i);
    let run = 1;
    while (repeat && i + run < count && s.contiguous(i + run) && s.sameDuration(i, i + run)) run++;
    let tail = tails.get(d);
    if (tail === undefined) {
      tail = ` d="${d}" />`;
      tails.set(d, tail);
    }
    const r = run > 1 ? ` r="${run}"` : '';
    out.push(s.contiguous(i) ? `    <c${r}${tail}` : `    <c t="${s.smoothTime(i)}"${r}${tail}`);
    i += run;
  }
  return out;
}

function attributes(list: Array<[string, string | number | undefined]>): string {
  return list
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => ` ${k}="${xmlAttr(String(v))}"`)
    .join('');
}
