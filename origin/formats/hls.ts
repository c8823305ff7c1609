// HLS playlists with fragmented-MP4 segments (RFC 8216). Pure: a view in, playlist text out.
// MPEG-TS segments, multiplexed renditions and the full variant-building algorithm belong to the
// HLS issue; here:
//
// - Audio renditions are grouped by encoding (FourCC + bitrate in kbit/s, the reference's
//   `audio-<fourcc>-<kbps>` GROUP-ID, origin-reference §3.1): languages of one encoding share a
//   group, the first listed is DEFAULT. Text tracks form one SUBTITLES group, `textstream`.
// - One variant per video track, each paired with the highest-bitrate audio group. That is the
//   tail of the reference's pairing rule (service description, "HLS groups and variants": when
//   one type runs out, the highest group goes with every remaining item); the lowest-with-lowest
//   head of that rule and variant_set come with the HLS issue. Without video, one audio-only
//   variant per audio group.
// - EXT-X-VERSION is max(6, hls_client_manifest_version): EXT-X-MAP in a playlist that is not
//   I-frames-only requires version 6 (RFC 8216 §4.3.2.5, §7); the master carries the same number.

import { OriginError } from '../errors';
import { hlsUrls } from '../playout/urls';
import { bitrates, PlayoutView, trackKey, ViewTrack } from '../playout/view';
import { rfc5646Language } from './dash';

interface RenditionGroup {
  id: string;
  type: 'AUDIO' | 'SUBTITLES';
  members: ViewTrack[];
  /** systemBitrate in kbit/s (the group key and the order of "highest"). */
  kbps: number;
}

/** Figures of one rendition, per RFC 8216 §4.3.4.2 (bits per second). */
interface Rates {
  peak: number;
  average: number;
}

const SUBTITLE_GROUP = 'textstream';
/** EXT-X-MAP outside an I-frames-only playlist (RFC 8216 §4.3.2.5). */
const FMP4_MIN_VERSION = 6;

export function writeMasterPlaylist(view: PlayoutView): string {
  const videos = view.tracks.filter((t) => t.track.properties.type === 'video');
  const audioGroups = renditionGroups(view.tracks.filter((t) => t.track.properties.type === 'audio'), 'AUDIO');
  const textGroups = renditionGroups(view.tracks.filter((t) => t.track.properties.type === 'textstream'), 'SUBTITLES');
  const text = textGroups[0];
  const lines = [...header(view), '#EXT-X-INDEPENDENT-SEGMENTS'];
  if (audioGroups.length > 0) lines.push('', '# AUDIO groups', ...audioGroups.flatMap((g) => mediaTags(view, g)));
  if (text !== undefined) lines.push('', '# SUBTITLES groups', ...mediaTags(view, text));
  lines.push('', '# variants');
  if (videos.length > 0) {
    const audio = highest(audioGroups);
    for (const v of videos) lines.push(...variant(v, audio, text, hlsUrls.media(view, trackKey(v.track))));
  } else if (audioGroups.length > 0) {
    // An audio-only presentation: the variant plays the group's DEFAULT rendition (RFC 8216 §4.3.4.2.1).
    for (const g of audioGroups) lines.push(...variant(undefined, g, text, hlsUrls.media(view, trackKey(g.members[0]!.track))));
  } else {
    throw new OriginError('unsupported-media', 'an HLS master playlist needs a video or an audio track; this view has only text');
  }
  lines.push('');
  return lines.join('\n');
}

export function writeMediaPlaylist(view: PlayoutView, key: string): string {
  const t = view.tracks.find((x) => trackKey(x.track) === key);
  if (t === undefined) throw new OriginError('not-found', `no track ${key} in this presentation (or not selected by the request)`, key);
  const ts = t.track.properties.TimeScale;
  const lines = [
    ...header(view),
    `#EXT-X-TARGETDURATION:${targetDuration(t)}`,
    // Segments are numbered from 1 (hlsUrls.segment), and the media sequence numbers the first.
    '#EXT-X-MEDIA-SEQUENCE:1',
    '#EXT-X-PLAYLIST-TYPE:VOD',
    // Every segment starts with a sync sample (whole source fragments, closed GOPs): §4.3.5.1.
    '#EXT-X-INDEPENDENT-SEGMENTS',
    `#EXT-X-MAP:URI="${quoted(hlsUrls.init(view, key))}"`,
  ];
  t.segments.forEach((s, i) => lines.push(`#EXTINF:${seconds(s.duration, ts)},`, uri(hlsUrls.segment(view, key, i + 1))));
  lines.push('#EXT-X-ENDLIST', '');
  return lines.join('\n');
}

function header(view: PlayoutView): string[] {
  const version = Math.max(FMP4_MIN_VERSION, view.options.int('hls_client_manifest_version') ?? 1);
  return ['#EXTM3U', `#EXT-X-VERSION:${version}`, '## Created with Streaming Origin'];
}

/** Groups by encoding, in server-manifest order of their first member. */
function renditionGroups(tracks: ViewTrack[], type: 'AUDIO' | 'SUBTITLES'): RenditionGroup[] {
  const groups: RenditionGroup[] = [];
  for (const t of tracks) {
    const p = t.track.properties;
    const kbps = Math.round(p.systemBitrate / 1000);
    const id = type === 'SUBTITLES' ? SUBTITLE_GROUP : `audio-${p.FourCC.toLowerCase().replace(/[^a-z0-9-]/g, '')}-${kbps}`;
    const g = groups.find((x) => x.id === id);
    if (g !== undefined) g.members.push(t);
    else groups.push({ id, type, members: [t], kbps });
  }
  return groups;
}

/** The group with the highest bitrate; the first listed on a tie. */
function highest(groups: RenditionGroup[]): RenditionGroup | undefined {
  let best: RenditionGroup | undefined;
  for (const g of groups) if (best === undefined || g.kbps > best.kbps) best = g;
  return best;
}

/** §4.3.4.1 EXT-X-MEDIA, one per rendition; NAME is unique within the group (§4.3.4.1.1). */
function mediaTags(view: PlayoutView, g: RenditionGroup): string[] {
  const names = new Set<string>();
  return g.members.map((m, i) => {
    const p = m.track.properties;
    let name = p.trackName;
    for (let n = 2; names.has(name); n++) name = `${p.trackName}-${n}`;
    names.add(name);
    const language = rfc5646Language(p.systemLanguage);
    const attrs = [
      `TYPE=${g.type}`,
      `GROUP-ID="${g.id}"`,
      language !== undefined ? `LANGUAGE="${quoted(language)}"` : undefined,
      `NAME="${quoted(name)}"`,
      // DEFAULT on the first of each group (service description, "HLS groups and variants" 5);
      // AUTOSELECT must be YES where DEFAULT is (§4.3.4.1).
      `DEFAULT=${i === 0 ? 'YES' : 'NO'}`,
      'AUTOSELECT=YES',
      g.type === 'AUDIO' && p.Channels !== undefined ? `CHANNELS="${p.Channels}"` : undefined,
      `URI="${quoted(hlsUrls.media(view, trackKey(m.track)))}"`,
    ];
    return `#EXT-X-MEDIA:${attrs.filter((a) => a !== undefined).join(',')}`;
  });
}

/**
 * §4.3.4.2 EXT-X-STREAM-INF. BANDWIDTH and AVERAGE-BANDWIDTH are "the largest sum of peak
 * (average) segment bit rates produced by any playable combination of Renditions": the video's
 * plus the largest of each group. CODECS lists every format in any rendition of the variant.
 */
function variant(video: ViewTrack | undefined, audio: RenditionGroup | undefined, text: RenditionGroup | undefined, url: string): string[] {
  const parts = [...(video !== undefined ? [rates(video)] : []), ...[audio, text].filter((g) => g !== undefined).map((g) => groupRates(g))];
  const codecs = unique([...(video !== undefined ? [video] : []), ...(audio?.members ?? []), ...(text?.members ?? [])].map((t) => t.track.properties.codecs));
  const v = video?.track.properties;
  const attrs = [
    `BANDWIDTH=${sum(parts.map((r) => r.peak))}`,
    `AVERAGE-BANDWIDTH=${sum(parts.map((r) => r.average))}`,
    `CODECS="${quoted(codecs.join(','))}"`,
    v?.DisplayWidth !== undefined && v.DisplayHeight !== undefined ? `RESOLUTION=${v.DisplayWidth}x${v.DisplayHeight}` : undefined,
    v?.FrameRate !== undefined ? `FRAME-RATE=${(v.FrameRate.num / v.FrameRate.den).toFixed(3)}` : undefined,
    audio !== undefined ? `AUDIO="${audio.id}"` : undefined,
    text !== undefined ? `SUBTITLES="${text.id}"` : undefined,
    'CLOSED-CAPTIONS=NONE',
  ];
  return [`#EXT-X-STREAM-INF:${attrs.filter((a) => a !== undefined).join(',')}`, uri(url)];
}

function groupRates(g: RenditionGroup): Rates {
  const all = g.members.map((m) => rates(m));
  return { peak: Math.max(...all.map((r) => r.peak)), average: Math.max(...all.map((r) => r.average)) };
}

/** A media playlist's peak and average segment bit rates (§4.3.4.2). */
function rates(t: ViewTrack): Rates {
  return { peak: peakSegmentBitrate(t, targetDuration(t)), average: bitrates(t).average };
}

/**
 * §4.3.4.2: "the largest bit rate of any contiguous set of segments whose total duration is
 * between 0.5 and 1.5 times the target duration" (segment bit rate = size / EXTINF duration).
 * The longest segment always qualifies (its rounded duration is the target duration).
 */
export function peakSegmentBitrate(t: ViewTrack, target: number): number {
  const ts = t.track.properties.TimeScale;
  const s = t.segments;
  let peak = 0;
  for (let i = 0; i < s.length; i++) {
    let bytes = 0;
    let ticks = 0n;
    for (let j = i; j < s.length; j++) {
      bytes += s[j]!.bytes;
      ticks += s[j]!.duration;
      const secs = Number(ticks) / ts;
      if (secs > 1.5 * target) break;
      if (secs >= 0.5 * target) peak = Math.max(peak, (bytes * 8) / secs);
    }
  }
  return Math.ceil(peak);
}

/**
 * §4.3.3.1: every EXTINF duration "when rounded to the nearest integer, MUST be less than or
 * equal to the target duration": the longest segment rounded to nearest (halves up), not its
 * ceiling (4.0107 s of AAC is target 4). At least 1.
 */
export function targetDuration(t: ViewTrack): number {
  const ts = BigInt(t.track.properties.TimeScale);
  let longest = 0n;
  for (const s of t.segments) if (s.duration > longest) longest = s.duration;
  const rounded = (2n * longest + ts) / (2n * ts);
  return Math.max(1, Number(rounded));
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

/** A quoted-string may not hold `"`, CR or LF (§4.2); values from the .ism or the query are escaped. */
function quoted(text: string): string {
  return text.replace(/["\r\n]/g, (c) => encodeURIComponent(c));
}

/** A URI line must stay one line (§4.1). */
function uri(text: string): string {
  return text.replace(/[\r\n]/g, (c) => encodeURIComponent(c));
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}
