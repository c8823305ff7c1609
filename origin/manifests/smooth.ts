// Smooth Streaming client manifest (MS-SSTR §2.2.2). Pure: a view in, XML text out.
//
// Tracks that share a trackName form one StreamIndex (a bitrate ladder); their QualityLevels
// must share one chunk timeline (§2.2.2.6), so a track whose fragment times differ from its
// ladder's gets a StreamIndex of its own. Times are the source's own (the `tfxd` times inside
// the fragments), exact, also when the first one is not 0; a presentation that starts before 0
// (AAC priming in ffmpeg's ismv) is shifted as a whole so that no time is negative, and the
// fragments' tfxd say the same (timeline.ts, Segment.smoothTime).

import { originError } from '../errors';
import { smoothUrls } from './urls';
import { PlayoutView, ViewTrack } from '../model/view';
import { derived } from '../model/view-derived';
import { xmlAttr } from './xml';

/** MS-SSTR §2.2.2.1: the manifest TimeScale when the tracks do not agree on one. */
const DEFAULT_TIMESCALE = 10_000_000;

interface StreamGroup {
  name: string;
  members: ViewTrack[];
}

export function writeSmoothManifest(view: PlayoutView): string {
  // Per view (model/view-derived.ts): the ladders compare every segment of the tracks.
  const groups = derived(view.tracks, 'smooth groups', () => streamGroups(view.tracks));
  const timescales = new Set(view.tracks.map((t) => t.track.properties.TimeScale));
  const timescale = timescales.size === 1 ? [...timescales][0]! : DEFAULT_TIMESCALE;
  const duration = Math.max(...view.tracks.map((t) => groupDuration(t, timescale)));
  const lines = ['<?xml version="1.0" encoding="utf-8"?>', '<!-- Created with Streaming Origin -->'];
  lines.push(
    `<SmoothStreamingMedia MajorVersion="2" MinorVersion="0" TimeScale="${timescale}" Duration="${duration}">`,
  );
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

/** Ladders by trackName, split where the chunk timelines differ; order of first appearance. */
function streamGroups(tracks: ViewTrack[]): StreamGroup[] {
  const groups: StreamGroup[] = [];
  const names = new Set<string>();
  for (const t of tracks) {
    const base = t.track.properties.trackName;
    const g = groups.find((x) => x.members[0]!.track.properties.trackName === base && sameTimeline(x.members[0]!, t));
    if (g !== undefined) {
      g.members.push(t);
      continue;
    }
    let name = base;
    for (let n = 2; names.has(name); n++) name = `${base}_${n}`;
    names.add(name);
    groups.push({ name, members: [t] });
  }
  return groups;
}

function sameTimeline(a: ViewTrack, b: ViewTrack): boolean {
  // Smooth times are output times plus a constant per list: equal first times and shapes.
  return (
    a.track.properties.TimeScale === b.track.properties.TimeScale &&
    a.segments.smoothTime(0) === b.segments.smoothTime(0) &&
    a.segments.sameShape(b.segments)
  );
}

function groupDuration(t: ViewTrack, timescale: number): number {
  const ticks = t.segments.end - t.segments.time(0);
  return Math.round((Number(ticks) * timescale) / t.track.properties.TimeScale);
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
    ['Chunks', first.segments.count],
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
  // One block of lines (joined by '\n' like the document); a view track has at least one segment.
  const c = derived(first, 'smooth chunks', () => chunks(first).join('\n'));
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

/** `<c>` per chunk; `t` on the first and after any gap (§2.2.2.6.1), no `r` (MinorVersion 0). */
function chunks(t: ViewTrack): string[] {
  const out: string[] = [];
  // Durations repeat (fixed fragment lengths): each distinct one is formatted once.
  const tails = new Map<bigint, string>();
  const s = t.segments;
  for (let i = 0; i < s.count; i++) {
    const d = s.duration(i);
    let tail = tails.get(d);
    if (tail === undefined) {
      tail = ` d="${d}" />`;
      tails.set(d, tail);
    }
    out.push(s.contiguous(i) ? `    <c${tail}` : `    <c t="${s.smoothTime(i)}"${tail}`);
  }
  return out;
}

function attributes(list: Array<[string, string | number | undefined]>): string {
  return list
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => ` ${k}="${xmlAttr(String(v))}"`)
    .join('');
}
