// HLS playlists (RFC 8216): the master playlist, media playlists and I-frame playlists. Pure: a
// view in, playlist text out. Groups and variants come from hls-variants.ts (the reference's
// algorithm), bit rates from hls-rates.ts, URLs from manifests/urls.ts, renditions and their
// segment kinds from model/rendition.ts.
//
// Packaging (hls_fmp4, hls_no_multiplex):
// - MPEG-TS, multiplexed (the default, the reference's): a variant with video and audio plays
//   one TS media playlist of the video and its audio group's DEFAULT member,
//   `<name>-<audiokey>-<videokey>.m3u8`. The audio group is still written as EXT-X-MEDIA, so a
//   player can switch language: when some group has more than one member, every audio member,
//   each DEFAULT included, points to its packed-audio playlist (§3.4; why: hasUri); when none
//   has, the DEFAULTs have no URI (RFC 8216 §4.3.4.1: their media is in the Media Playlist of
//   every EXT-X-STREAM-INF referencing the group).
// - MPEG-TS, hls_no_multiplex: the variant plays the video-only TS playlist; every audio member
//   has a URI.
// - hls_fmp4: every track its own fMP4 playlist (EXT-X-MAP); nothing is multiplexed.
// - Audio-only variants play the DEFAULT member's playlist (packed audio, or fMP4). Subtitles are
//   WebVTT (§3.5) in every mode.
//
// Versions (hls_client_manifest_version, RFC 8216 §7). The version written is the requested
// one, raised where a feature of the output needs more:
// - below 3: EXTINF durations are integers (§4.3.2.1), rounded to nearest, at least 1;
// - below 4: no I-frame playlists (EXT-X-I-FRAMES-ONLY needs 4), so no EXT-X-I-FRAME-STREAM-INF
//   in the master (EXT-X-BYTERANGE, the other version-4 feature, is never written);
// - fMP4 needs 6 for EXT-X-MAP in a playlist that is not I-frames-only, so hls_fmp4 raises every
//   playlist of the presentation to at least 6;
// - encrypted presentations: 2 for the IV attribute (AES-128), 5 for METHOD=SAMPLE-AES and
//   KEYFORMAT (manifests/hls-keys.ts), for every playlist of the presentation, as with fMP4;
// - 7 (INSTREAM-ID "SERVICE" values) changes nothing: none is written; neither are PROGRAM-ID
//   (removed in 6) nor EXT-X-ALLOW-CACHE (removed in 7). EXT-X-MEDIA and the AUDIO/SUBTITLES
//   attributes are written at every version: §7 makes them backward compatible to version 1.

import { dateRangeLines } from './hls-dateranges';
import { originError } from '../errors';
import { findRendition, Rendition, rendition, SegmentKind, segmentKind, videoOf } from '../model/rendition';
import { hlsSegmentUrlParts, hlsUrls } from './urls';
import { PlayoutView, segmentNumber, trackKey, ViewTrack } from '../model/view';
import { derived } from '../model/view-derived';
import { discontinuitySequenceLines, liveBreak, liveIFrameBreak, liveIFrameDate } from './hls-live';
import { fragmentGrid } from '../model/live-window';
import { rfc5646Language } from './dash';
import {
  ByteSeries,
  fragmentIndices,
  iframeEntries,
  iframeSeries,
  peakBitrate,
  Rates,
  ratesOf,
  renditionSeries,
  targetSeconds,
} from './hls-rates';
import { programDateTime } from './live-dates';
import { mediaKeyLines, sessionKeyLines, VERSION_IV, VERSION_SAMPLE_AES } from './hls-keys';
import { isEncryptedTrack } from '../drm/encrypted-tracks';
import { MediaGroup, planVariants, Variant, VariantPlan, VariantTrack } from './hls-variants';

/** RFC 8216 §7: the protocol version a feature of our output needs. */
const VERSION_FLOAT_EXTINF = 3;
const VERSION_IFRAMES = 4;
const VERSION_MAP = 6;

type Packaging = 'muxed' | 'separate' | 'fmp4';

export function writeMasterPlaylist(view: PlayoutView): string {
  const plan = variantPlan(view);
  if (plan.variants.length === 0) {
    throw originError(
      'unsupported-media',
      'an HLS master playlist needs a video or an audio track; this request selects only text',
    );
  }
  const version = playlistVersion(view);
  const rates = new RateBook(view);
  const lines = [...header(version), '#EXT-X-INDEPENDENT-SEGMENTS'];
  // §4.3.4.5: the keys up front, so that a player sets up its key systems before the first segment.
  const hls = view.presentation.protection?.hls;
  if (hls !== undefined) lines.push(...sessionKeyLines(hls, view.options.bool('hls_fmp4')));
  const used = (type: MediaGroup['type']): MediaGroup[] => {
    const ids = new Set(plan.variants.flatMap((v) => [v.audio, v.text]).filter((g) => g !== undefined));
    return [...ids]
      .map((g) => plan.groups[g]!)
      .filter((g) => g.type === type)
      .sort((a, b) => a.kbps - b.kbps || a.members[0]! - b.members[0]!);
  };
  const audio = used('AUDIO');
  const text = used('SUBTITLES');
  if (audio.length > 0) lines.push('', '# AUDIO groups', ...audio.flatMap((g) => mediaTags(view, plan, g)));
  if (text.length > 0) lines.push('', '# SUBTITLES groups', ...text.flatMap((g) => mediaTags(view, plan, g)));
  lines.push('', '# variants');
  for (const v of plan.variants) lines.push(...streamInf(view, plan, v, rates));
  // SAMPLE-AES MPEG-TS has no I-frame playlists (drm/refusals.ts); fMP4 and AES-128 have.
  if (version >= VERSION_IFRAMES && !(hls?.method === 'SAMPLE-AES' && packaging(view) !== 'fmp4')) {
    const videos = [...new Set(plan.variants.map((v) => v.video).filter((i) => i !== undefined))];
    if (videos.length > 0) lines.push('', '# keyframes', ...videos.map((i) => iframeStreamInf(view, view.tracks[i]!)));
  }
  lines.push('');
  return lines.join('\n');
}

/**
 * The media playlist of a rendition (one track, or audio + video multiplexed in TS): the main
 * track's segments (the video's when multiplexed; the TS muxer cuts audio at their times).
 * A string is the rendition key (the call of the fMP4-only origin: one track key).
 */
export function writeMediaPlaylist(view: PlayoutView, r: Rendition | string): string {
  const rend = typeof r === 'string' ? renditionByKey(view, r) : r;
  const kind = segmentKind(view, rend);
  const main = videoOf(rend) ?? rend.tracks[0]!;
  const timescale = main.track.properties.TimeScale;
  const version = playlistVersion(view);
  const live = view.live;
  const lines = [
    ...header(version),
    `#EXT-X-TARGETDURATION:${targetDuration(main)}`,
    // Segments are numbered as the unclipped presentation numbers them, from 1 (ViewTrack
    // firstNumber), so sibling clips share segment URLs; the media sequence numbers the first
    // listed segment (§4.3.3.2).
    `#EXT-X-MEDIA-SEQUENCE:${main.firstNumber}`,
    ...discontinuitySequenceLines(main),
    // A live playlist slides: it MUST NOT carry a playlist type (RFC 8216 §6.2.2).
    ...(live === undefined ? ['#EXT-X-PLAYLIST-TYPE:VOD'] : []),
    // Every segment starts with a sync sample (whole source fragments, closed GOPs): §4.3.5.1.
    '#EXT-X-INDEPENDENT-SEGMENTS',
  ];
  // §4.3.2.4: a key applies to the segments and the Media Initialization Section that follow it.
  // WebVTT segments stay clear.
  const keys = encrypted(view, rend, kind) ? mediaKeyLines(view.presentation.protection!.hls!, kind) : { first: [] };
  lines.push(...keys.first);
  if (kind === 'm4s') lines.push(`#EXT-X-MAP:URI="${quoted(hlsUrls.init(view, rend.key))}"`);
  lines.push(...dateRangeLines(view, main));
  const perSegment = keys.perSegment;
  const perSegmentKey = perSegment === undefined ? '' : perSegment(0).join('\n');
  const [before, after] = hlsSegmentUrlParts(view, rend.key, kind);
  // The segment lines depend on the main track and on the key below only: built once per view
  // (model/view-derived.ts). uri() escapes per character, so escaping the URL's parts around the
  // number is escaping the URL. Live: every segment's wall-clock time, anchor + output time (RFC
  // 8216 §4.3.2.6), the same on every origin whatever segment a playlist starts with (EXTINF is
  // rounded); MSNs on the epoch grid.
  const anchor = live?.anchorSeconds;
  const list = derived(main, `hls segment lines\n${version}\n${before}\n${after}\n${perSegmentKey}\n${anchor}`, () => {
    const out: string[] = [];
    const extinf = new Map<bigint, string>(); // durations repeat: each distinct one formatted once
    const b = uri(before);
    const a = uri(after);
    const s = main.segments;
    const extinfOf = (ticks: bigint): string => {
      let d = extinf.get(ticks);
      if (d === undefined) extinf.set(ticks, (d = `#EXTINF:${duration(ticks, timescale, version)},`));
      return d;
    };
    for (let i = 0; i < s.count; i++) {
      const n = segmentNumber(main, i);
      if (i > 0 && live !== undefined) out.push(...liveBreak(main, i, (k) => b + k + a, extinfOf));
      if (perSegment !== undefined) out.push(...perSegment(n));
      if (anchor !== undefined) out.push(`#EXT-X-PROGRAM-DATE-TIME:${programDateTime(anchor, s.time(i), timescale)}`);
      out.push(extinfOf(s.duration(i)), b + n + a);
    }
    return out.join('\n');
  });
  if (list !== '') lines.push(list);
  if (live === undefined || live.ended) lines.push('#EXT-X-ENDLIST');
  lines.push('');
  return lines.join('\n');
}

/** Whether a rendition's segments are encrypted: audio or video of a protected presentation, never WebVTT. */
function encrypted(view: PlayoutView, r: Rendition, kind: SegmentKind): boolean {
  return (
    view.presentation.protection?.hls !== undefined &&
    kind !== 'webvtt' &&
    r.tracks.some((t) => isEncryptedTrack(t.track))
  );
}

/**
 * The I-frame playlist of a video track (§4.3.3.6): one entry per source fragment of the view
 * (each starts with a keyframe), numbered by the fragment's number in the unclipped presentation
 * (from 1; the media sequence is the first entry's), lasting until the next keyframe (a fragment
 * that does not start with one extends the entry before it). Its URIs are relative to
 * `keyframes/`. Versions below 4 have no I-frame playlists: not found. Live: numbered on the
 * fragments' epoch grid, a gap's empty slots listed as EXT-X-GAP entries, each entry dated as the
 * media segments are (hls-live.ts).
 */
export function writeIFramePlaylist(view: PlayoutView, r: Rendition | string): string {
  const rend = typeof r === 'string' ? renditionByKey(view, r) : r;
  const video = rend.tracks.length === 1 ? videoOf(rend) : undefined;
  if (video === undefined)
    throw originError('unknown-track', `I-frame playlists exist for video tracks only, not for ${rend.key}`);
  const version = playlistVersion(view);
  if (version < VERSION_IFRAMES) {
    throw originError(
      'unknown-url',
      `I-frame playlists need hls_client_manifest_version 4 or more (RFC 8216 §7); this request has ${version}`,
    );
  }
  const fmp4 = view.options.bool('hls_fmp4');
  const entries = iframeEntries(video);
  const timescale = video.track.properties.TimeScale;
  const lines = [
    ...header(version),
    `#EXT-X-TARGETDURATION:${targetSeconds(
      entries.map((e) => e.duration),
      timescale,
    )}`,
    `#EXT-X-MEDIA-SEQUENCE:${entries[0]?.n ?? 1}`,
    ...discontinuitySequenceLines(video),
    // Live, it slides like the media playlists: no playlist type (RFC 8216 §6.2.2).
    ...(view.live === undefined ? ['#EXT-X-PLAYLIST-TYPE:VOD'] : []),
    '#EXT-X-I-FRAMES-ONLY',
  ];
  // The key lines of the media playlists (writeMediaPlaylist): SAMPLE-AES's before the init
  // section; AES-128's before it with IV 0 and, without a fixed IV, one per entry whose IV is the
  // entry's number n (the segment URL's; drm/aes128.ts sequenceIv), what the segment is encrypted with.
  const hls = isEncryptedTrack(video.track) ? view.presentation.protection?.hls : undefined;
  const keys = hls === undefined ? undefined : mediaKeyLines(hls, fmp4 ? 'm4s' : 'ts');
  lines.push(...(keys?.first ?? []));
  if (fmp4) lines.push(`#EXT-X-MAP:URI="${quoted(hlsUrls.iframeInit(view, rend.key))}"`);
  const url = (n: number): string => uri(hlsUrls.iframeSegment(view, rend.key, n, fmp4 ? 'm4s' : 'ts'));
  const extinf = (ticks: bigint): string => `#EXTINF:${duration(ticks, timescale, version)},`;
  // Live: EXT-X-GAP entries for the empty grid slots, EXT-X-DISCONTINUITY at a restart (hls-live.ts).
  const grid = view.live === undefined ? 0n : fragmentGrid(video.track, fragmentIndices(video));
  const dated = view.live === undefined ? undefined : liveIFrameDate(video, view.live.anchorSeconds);
  entries.forEach((e, k) => {
    if (k > 0 && view.live !== undefined)
      lines.push(...liveIFrameBreak(video, { previous: entries[k - 1]!, entry: e, grid }, url, extinf));
    lines.push(...(keys?.perSegment?.(e.n) ?? []));
    if (dated !== undefined) lines.push(dated(e));
    lines.push(extinf(e.duration), url(e.n));
  });
  if (view.live === undefined || view.live.ended) lines.push('#EXT-X-ENDLIST');
  lines.push('');
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------
// Variants

/** The plan of this view: its tracks, its variant sets, hls_no_audio_only, start_index. */
export function variantPlan(view: PlayoutView): VariantPlan {
  const tracks: VariantTrack[] = view.tracks.map(({ track: { properties: p } }) => ({
    type: p.type,
    fourcc: p.FourCC,
    codecs: p.codecs,
    bitrate: p.systemBitrate,
    language: p.systemLanguage,
  }));
  return planVariants(tracks, {
    sets: view.variantSets,
    audioOnly: !view.options.bool('hls_no_audio_only'),
    startIndex: view.options.int('start_index'),
  });
}

function packaging(view: PlayoutView): Packaging {
  if (view.options.bool('hls_fmp4')) return 'fmp4';
  return view.options.bool('hls_no_multiplex') ? 'separate' : 'muxed';
}

/** What a variant's URI plays: the video (with its DEFAULT audio when multiplexed), else the DEFAULT audio. */
function mainRendition(view: PlayoutView, video: ViewTrack | undefined, audio: ViewTrack | undefined): Rendition {
  if (video !== undefined && audio !== undefined && packaging(view) === 'muxed') return rendition([audio, video]);
  return rendition([(video ?? audio)!]);
}

/** §4.3.4.2 EXT-X-STREAM-INF. */
function streamInf(view: PlayoutView, plan: VariantPlan, v: Variant, rates: RateBook): string[] {
  const video = v.video !== undefined ? view.tracks[v.video]! : undefined;
  const audio = v.audio !== undefined ? plan.groups[v.audio]! : undefined;
  const text = v.text !== undefined ? plan.groups[v.text]! : undefined;
  const main = mainRendition(view, video, audio !== undefined ? view.tracks[audio.defaultMember] : undefined);
  // "The largest sum of peak (average) segment bit rates produced by any playable combination
  // of Renditions": the main playlist, plus the largest rendition of the group with a URI of its
  // own other than the main playlist (a client playing it, another language or a multiplexed
  // DEFAULT's packed audio, still downloads the main playlist), plus the largest subtitle rendition.
  const alternatives = (g: MediaGroup | undefined): Rates =>
    rates.largest(
      g === undefined
        ? []
        : g.members.filter(
            (m) => hasUri(view, plan, g, m) && !(main.tracks.length === 1 && main.tracks[0] === view.tracks[m]),
          ),
    );
  const parts = [rates.of(main), alternatives(audio), alternatives(text)];
  // Every format of any rendition of the variant (§4.3.4.2 CODECS). WebVTT subtitles are not
  // listed: `wvtt` names WebVTT in ISO BMFF (ISO/IEC 14496-30), and Apple's own examples list no
  // codec for WebVTT subtitle groups; the source's stpp would be wrong, the client gets WebVTT.
  const codecs = unique(
    [...(video !== undefined ? [video] : []), ...(audio?.members ?? []).map((m) => view.tracks[m]!)].map(
      (t) => t.track.properties.codecs,
    ),
  );
  const p = video?.track.properties;
  const attrs = [
    `BANDWIDTH=${sum(parts.map((r) => r.peak))}`,
    `AVERAGE-BANDWIDTH=${sum(parts.map((r) => r.average))}`,
    `CODECS="${quoted(codecs.join(','))}"`,
    p?.DisplayWidth !== undefined && p.DisplayHeight !== undefined
      ? `RESOLUTION=${p.DisplayWidth}x${p.DisplayHeight}`
      : undefined,
    p?.FrameRate !== undefined ? `FRAME-RATE=${(p.FrameRate.num / p.FrameRate.den).toFixed(3)}` : undefined,
    audio !== undefined ? `AUDIO="${quoted(audio.id)}"` : undefined,
    text !== undefined ? `SUBTITLES="${quoted(text.id)}"` : undefined,
    'CLOSED-CAPTIONS=NONE',
  ];
  return [`#EXT-X-STREAM-INF:${attrs.filter((a) => a !== undefined).join(',')}`, uri(hlsUrls.media(view, main.key))];
}

/**
 * §4.3.4.1 EXT-X-MEDIA, one per member; NAME is unique within the group (§4.3.4.1.1), AUTOSELECT
 * is YES where DEFAULT is. URI: see hasUri.
 */
function mediaTags(view: PlayoutView, plan: VariantPlan, g: MediaGroup): string[] {
  const names = new Set<string>();
  return g.members.map((m) => {
    const p = view.tracks[m]!.track.properties;
    let name = p.trackName;
    for (let n = 2; names.has(name); n++) name = `${p.trackName}-${n}`;
    names.add(name);
    const language = rfc5646Language(p.systemLanguage);
    const isDefault = m === g.defaultMember;
    const attrs = [
      `TYPE=${g.type}`,
      `GROUP-ID="${quoted(g.id)}"`,
      language !== undefined ? `LANGUAGE="${quoted(language)}"` : undefined,
      `NAME="${quoted(name)}"`,
      `DEFAULT=${isDefault ? 'YES' : 'NO'}`,
      'AUTOSELECT=YES',
      g.type === 'AUDIO' && p.Channels !== undefined ? `CHANNELS="${p.Channels}"` : undefined,
      hasUri(view, plan, g, m) ? `URI="${quoted(hlsUrls.media(view, trackKey(view.tracks[m]!.track)))}"` : undefined,
    ];
    return `#EXT-X-MEDIA:${attrs.filter((a) => a !== undefined).join(',')}`;
  });
}

/**
 * Whether member m of a group is written with a URI. Every member has one, except in multiplexed
 * TS when no AUDIO group of the master has more than one member: then each group's DEFAULT (its
 * only member) has none, its audio being in every variant of the group (§4.3.4.2.1), so there is
 * no language to switch to and no second download of the same audio.
 *
 * Once some group offers another language, every AUDIO member of the master, each DEFAULT
 * included, points to its packed-audio playlist, while the variants stay multiplexed (a client
 * that ignores EXT-X-MEDIA still gets audio); §4.3.4.2.1 allows it: with a URI the client plays
 * the Rendition rather than the variant's own audio. Why: Chromium's native HLS starts with the
 * 'primary' role only when the DEFAULT of the variant it starts on has no URI, and the
 * 'audio-override' role that a rendition with a URI needs is refused once playback has started
 * (ChunkDemuxer::AddAutoDetectedCodecsId: kReachedIdLimit after init), whatever its container:
 * DEMUXER_ERROR_COULD_NOT_PARSE. That holds across groups too (a language switch or ABR from a
 * one-member group's variant to a group with URIs), so one-member groups need their URI as well:
 * with URIs only in the groups of several, the player test that starts on the 64k group's variant
 * and switches to Dutch (128k group) fails in native HLS, and in shaka 5 (TRANSMUXING_FAILED on
 * the 128k English packed audio).
 */
function hasUri(view: PlayoutView, plan: VariantPlan, g: MediaGroup, m: number): boolean {
  if (g.type !== 'AUDIO' || packaging(view) !== 'muxed' || m !== g.defaultMember) return true;
  return plan.variants.some((v) => v.audio !== undefined && plan.groups[v.audio]!.members.length > 1);
}

/**
 * §4.3.4.3 EXT-X-I-FRAME-STREAM-INF: BANDWIDTH, CODECS, RESOLUTION, URI (FRAME-RATE, AUDIO,
 * SUBTITLES and CLOSED-CAPTIONS are not allowed). BANDWIDTH is an upper bound (see
 * hls-rates.ts iframeSeries); no AVERAGE-BANDWIDTH, which would be a guess.
 */
function iframeStreamInf(view: PlayoutView, video: ViewTrack): string {
  const p = video.track.properties;
  const kind = view.options.bool('hls_fmp4') ? 'm4s' : 'ts';
  // Per view track (model/view-derived.ts): the entries walk every fragment.
  const bandwidth = derived(video, `hls iframe bandwidth\n${kind}`, () => {
    const entries = iframeEntries(video);
    return peakBitrate(
      iframeSeries(video, entries, kind),
      targetSeconds(
        entries.map((e) => e.duration),
        p.TimeScale,
      ),
    );
  });
  const attrs = [
    `BANDWIDTH=${bandwidth}`,
    `CODECS="${quoted(p.codecs)}"`,
    p.DisplayWidth !== undefined && p.DisplayHeight !== undefined
      ? `RESOLUTION=${p.DisplayWidth}x${p.DisplayHeight}`
      : undefined,
    `URI="${quoted(hlsUrls.iframes(view, trackKey(video.track)))}"`,
  ];
  return `#EXT-X-I-FRAME-STREAM-INF:${attrs.filter((a) => a !== undefined).join(',')}`;
}

/** Rates of renditions, computed once per master playlist. */
class RateBook {
  private readonly known = new Map<string, Rates>();

  constructor(private readonly view: PlayoutView) {}

  of(r: Rendition): Rates {
    let rates = this.known.get(r.key);
    if (rates === undefined) {
      const kind = segmentKind(this.view, r);
      // Per view (model/view-derived.ts): the series walks every segment of the rendition's tracks.
      rates = derived(this.view, `hls rates\n${kind}\n${r.key}`, () => {
        const main = videoOf(r) ?? r.tracks[0]!;
        const series: ByteSeries = renditionSeries(r, kind);
        return ratesOf(series, targetDuration(main));
      });
      this.known.set(r.key, rates);
    }
    return rates;
  }

  /** The largest peak and the largest average over single-track renditions (0 for none). */
  largest(members: number[]): Rates {
    const all = members.map((m) => this.of(rendition([this.view.tracks[m]!])));
    return { peak: Math.max(0, ...all.map((r) => r.peak)), average: Math.max(0, ...all.map((r) => r.average)) };
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers

/** The version every playlist of this view carries: the requested one, at least 6 with fMP4. */
export function playlistVersion(view: PlayoutView): number {
  const requested = view.options.int('hls_client_manifest_version') ?? 1;
  // Encrypted playlists: at least the version of every key attribute written (IV: 2; SAMPLE-AES
  // and KEYFORMAT: 5, below fMP4's 6), whatever the request asks for (docs/guide/drm.md).
  const hls = view.presentation.protection?.hls;
  const keys = hls === undefined ? 1 : hls.method === 'SAMPLE-AES' ? VERSION_SAMPLE_AES : VERSION_IV;
  return Math.max(view.options.bool('hls_fmp4') ? VERSION_MAP : 1, requested, keys);
}

export function header(version: number): string[] {
  return ['#EXTM3U', `#EXT-X-VERSION:${version}`, '## Created with Streaming Origin'];
}

function renditionByKey(view: PlayoutView, key: string): Rendition {
  const r = findRendition(view, key);
  if (r === undefined || r.key !== key)
    throw originError('unknown-track', `no track ${key} in this presentation (or not selected by the request)`, {
      subject: key,
    });
  return r;
}

/** EXTINF: exact decimal seconds from version 3, integers below (§4.3.2.1), at least 1. */
function duration(ticks: bigint, timescale: number, version: number): string {
  if (version >= VERSION_FLOAT_EXTINF) return seconds(ticks, timescale);
  const ts = BigInt(timescale);
  return String(Math.max(1, Number((2n * ticks + ts) / (2n * ts))));
}

/**
 * Exact EXTINF seconds (§4.3.2.1 allows any decimal-floating-point): to 100 ns, at least three
 * decimals. Exact for 10 MHz and 1 kHz timescales, so the EXTINF sum is the track duration and a
 * player's segment start times agree with `tfdt`.
 */
export function seconds(ticks: bigint, timescale: number): string {
  const ts = BigInt(timescale);
  const scaled = (ticks * 20_000_000n + ts) / (2n * ts); // units of 100 ns, rounded half up
  const whole = scaled / 10_000_000n;
  let frac = String(scaled % 10_000_000n).padStart(7, '0');
  while (frac.length > 3 && frac.endsWith('0')) frac = frac.slice(0, -1);
  return `${whole}.${frac}`;
}

/** §4.3.3.1 target duration of a view track's segments. */
export function targetDuration(t: ViewTrack): number {
  return targetSeconds([t.segments.longest], t.track.properties.TimeScale);
}

/** §4.3.4.2 peak segment bit rate of a view track's source segments (the fMP4 figure). */
export function peakSegmentBitrate(t: ViewTrack, target: number): number {
  const ts = t.track.properties.TimeScale;
  const s = t.segments;
  const series: ByteSeries = { seconds: [], bytes: [] };
  for (let i = 0; i < s.count; i++) {
    series.seconds.push(Number(s.duration(i)) / ts);
    series.bytes.push(s.bytes(i));
  }
  return peakBitrate(series, target);
}

/** A quoted-string may not hold `"`, CR or LF (§4.2); values from the .ism or the query are escaped. */
export function quoted(text: string): string {
  return text.replace(/["\r\n]/g, (c) => encodeURIComponent(c));
}

/** A URI line must stay one line (§4.1). */
export function uri(text: string): string {
  return text.replace(/[\r\n]/g, (c) => encodeURIComponent(c));
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}
