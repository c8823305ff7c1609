// The HLS media groups and variants of a master playlist: the reference product's algorithm
// (service description, "HLS groups and variants"), pure and over a minimal description of the
// tracks, so that it is tested on synthetic track lists as well as on real presentations.
//
// 1. Groups. Tracks of one media type form a group when their encoding is the same: audio of the
//    same codec and bitrate (in kbit/s, the unit of the reference's `audio-aacl-128` GROUP-ID,
//    docs/specs.md reference §3.1), whatever their language. Every text track is delivered as WebVTT
//    (RFC 8216 §3.5), one encoding, so all text tracks form one SUBTITLES group. Video tracks of
//    different bitrates stay individual (each is the main rendition of its own variants).
// 2. Variants, per set of tracks: the video tracks and the audio groups each in ascending bitrate;
//    the i-th video goes with the i-th audio group; when one kind runs out, its highest-bitrate
//    member goes with every remaining item of the other kind. So the lowest audio group may
//    appear in one variant only (the reference's own output: 64 kbit/s audio with the lowest
//    video only, docs/specs.md reference §3.1). The text group is then added to every variant.
// 3. Sets: without `variant_set` one set holds every track; with it, each expression selects one
//    set, a selected track brings its whole group, and the sets' variants follow in option order.
//    A variant already listed (same video, audio group and text group) is not repeated.
// 4. Audio-only variants (one per audio group of the sets, ascending) follow, unless the caller
//    leaves them out (`hls_no_audio_only`). Without any video there is nothing to follow: the
//    variants are audio-only by necessity and the option cannot remove them.
// 5. `start_index` moves the variant at that zero-based index to the top, the others keep their
//    order (the reference's derivative, docs/specs.md reference §3.1). An index past the last variant
//    is a 400: a request asking for a variant that does not exist is told so.
//
// DEFAULT=YES (service description, "HLS groups and variants" 5: the first audio and the first
// subtitle track of the server manifest) goes, in each group, to the member in the language of
// the first track of that type, else to the group's first member: switching variants between
// groups then keeps the language the author put first (RFC 8216 §4.3.4.1.1 allows one DEFAULT
// per group).

import { originError } from '../errors';

/** What the algorithm needs to know of a track. */
export interface VariantTrack {
  type: 'video' | 'audio' | 'textstream' | 'data';
  /** Smooth FourCC or sample entry (AACL, ac-3): part of the encoding and of the GROUP-ID. */
  fourcc: string;
  /** RFC 6381 codecs (mp4a.40.2): with the FourCC, the encoding. */
  codecs: string;
  /** Bits per second. */
  bitrate: number;
  /** ISO 639-2 (`und` when unknown). */
  language: string;
}

export interface MediaGroup {
  type: 'AUDIO' | 'SUBTITLES';
  id: string;
  /** Track indices, in track-list (server manifest) order. */
  members: number[];
  /** The member with DEFAULT=YES. */
  defaultMember: number;
  /** Audio: the encoding's bitrate in kbit/s ("lowest" and "highest" are by this); text: 0. */
  kbps: number;
}

export interface Variant {
  /** Track index of the video, undefined for an audio-only variant. */
  video: number | undefined;
  /** Index into `VariantPlan.groups` of the AUDIO group. */
  audio: number | undefined;
  /** Index into `VariantPlan.groups` of the SUBTITLES group. */
  text: number | undefined;
}

export interface VariantPlan {
  /** Every group of the track list; variants refer to them by index. */
  groups: MediaGroup[];
  /** In master playlist order. */
  variants: Variant[];
}

export interface PlanOptions {
  /** Track indices of each variant set, in option order; undefined: one set of every track. */
  sets?: ReadonlyArray<readonly number[]> | undefined;
  /** Append audio-only variants (false: `hls_no_audio_only`). */
  audioOnly: boolean;
  /** Zero-based index of the variant to list first (`start_index`). */
  startIndex?: number | undefined;
}

export const SUBTITLES_GROUP_ID = 'textstream';

export function planVariants(tracks: readonly VariantTrack[], options: PlanOptions): VariantPlan {
  const groups = mediaGroups(tracks);
  const groupOf = new Map<number, number>();
  groups.forEach((g, gi) => g.members.forEach((m) => groupOf.set(m, gi)));
  const sets = options.sets ?? [tracks.map((_, i) => i)];

  const variants: Variant[] = [];
  const seen = new Set<string>();
  const add = (v: Variant): void => {
    const key = `${v.video}|${v.audio}|${v.text}`;
    if (seen.has(key)) return;
    seen.add(key);
    variants.push(v);
  };
  const audioOfSets = new Set<number>();
  let textOfSets: number | undefined;
  for (const set of sets) {
    const videos = byBitrate(
      set.filter((i) => tracks[i]?.type === 'video'),
      (i) => tracks[i]!.bitrate,
    );
    const audio = groupsOfType(set, groupOf, groups, 'AUDIO');
    const text = groupsOfType(set, groupOf, groups, 'SUBTITLES')[0];
    audio.forEach((g) => audioOfSets.add(g));
    if (text !== undefined) textOfSets = text;
    for (const [video, a] of pair(videos, audio)) add({ video, audio: a, text });
  }

  const withVideo = variants.some((v) => v.video !== undefined);
  let listed = variants;
  if (withVideo && options.audioOnly) {
    const audio = byBitrate([...audioOfSets], (g) => groups[g]!.kbps);
    for (const g of audio) add({ video: undefined, audio: g, text: textOfSets });
  } else if (withVideo) {
    // hls_no_audio_only: also a set that selected audio but no video made audio-only variants.
    listed = variants.filter((v) => v.video !== undefined);
  }
  return { groups, variants: moveToTop(listed, options.startIndex) };
}

/** Groups of the track list (rule 1), audio in track order of their first member, then text. */
export function mediaGroups(tracks: readonly VariantTrack[]): MediaGroup[] {
  const audio: MediaGroup[] = [];
  const encodings = new Map<string, MediaGroup>();
  const text: number[] = [];
  tracks.forEach((t, i) => {
    if (t.type === 'textstream') text.push(i);
    if (t.type !== 'audio') return;
    const kbps = Math.round(t.bitrate / 1000);
    const encoding = `${t.fourcc.toLowerCase()}\n${t.codecs}\n${kbps}`;
    const g = encodings.get(encoding);
    if (g !== undefined) {
      g.members.push(i);
      return;
    }
    const base = `audio-${t.fourcc.toLowerCase().replace(/[^a-z0-9-]/g, '')}-${kbps}`;
    let id = base;
    // Same FourCC and kbps, another codecs string (AAC-LC and HE-AAC under one FourCC): another group.
    for (let n = 2; audio.some((x) => x.id === id); n++) id = `${base}-${n}`;
    const group: MediaGroup = { type: 'AUDIO', id, members: [i], defaultMember: i, kbps };
    encodings.set(encoding, group);
    audio.push(group);
  });
  const groups = [...audio];
  if (text.length > 0)
    groups.push({ type: 'SUBTITLES', id: SUBTITLES_GROUP_ID, members: text, defaultMember: text[0]!, kbps: 0 });
  for (const g of groups) g.defaultMember = defaultMember(tracks, g);
  return groups;
}

/** The member in the language of the list's first track of the group's type, else the first. */
function defaultMember(tracks: readonly VariantTrack[], g: MediaGroup): number {
  const type = g.type === 'AUDIO' ? 'audio' : 'textstream';
  const language = tracks.find((t) => t.type === type)?.language;
  return g.members.find((m) => tracks[m]!.language === language) ?? g.members[0]!;
}

/** Rule 2: the i-th video with the i-th audio group, the highest of the shorter list with the rest. */
export function pair(
  videos: readonly number[],
  audio: readonly number[],
): Array<[number | undefined, number | undefined]> {
  const n = Math.max(videos.length, audio.length);
  const out: Array<[number | undefined, number | undefined]> = [];
  for (let i = 0; i < n; i++) out.push([videos[Math.min(i, videos.length - 1)], audio[Math.min(i, audio.length - 1)]]);
  return out;
}

/** The distinct groups of one type that the tracks of a set belong to, ascending by bitrate. */
function groupsOfType(
  set: readonly number[],
  groupOf: Map<number, number>,
  groups: readonly MediaGroup[],
  type: MediaGroup['type'],
): number[] {
  const found = new Set<number>();
  for (const i of set) {
    const g = groupOf.get(i);
    if (g !== undefined && groups[g]!.type === type) found.add(g);
  }
  return byBitrate([...found], (g) => groups[g]!.kbps);
}

/** Ascending by a bitrate, ties in index (track-list) order. */
function byBitrate(items: number[], bitrate: (i: number) => number): number[] {
  return [...items].sort((a, b) => bitrate(a) - bitrate(b) || a - b);
}

function moveToTop(variants: Variant[], index: number | undefined): Variant[] {
  if (index === undefined) return variants;
  if (index >= variants.length) {
    throw originError(
      'bad-option',
      `${index} is past the last variant: this master playlist has ${variants.length} (start_index 0 to ${variants.length - 1})`,
      { subject: 'start_index' },
    );
  }
  return [variants[index]!, ...variants.slice(0, index), ...variants.slice(index + 1)];
}
