// HDS client manifests (Adobe Flash Media Manifest, F4M 1.0 and 2.0). Pure: a view in, XML text
// out. Three documents:
// - the manifest `<name>.f4m`: every media (model/hds-media.ts) with its bootstrap inline; or, under
//   `hds_multi_level`, the set-level manifest (F4M 2.0 multi-level manifests) listing one
//   stream-level manifest per media by `href`, with its `bitrate`;
// - a stream-level manifest `<name>-<key>.f4m`: the one media.
//
// Each media: `url` (its fragments are `<url>Seg1-Frag<n>`), `bitrate` (kbit/s, the tracks'
// average bitrates), `width`/`height` (the display size: F4M has no sample aspect ratio, so the
// picture's intended size is what a player needs), `bootstrapInfoId`, and a `<metadata>` child:
// base64 of an AMF0 onMetaData (amf0.ts) with what an FLV file's metadata says. Bootstraps
// (segments/f4f/bootstrap.ts) are written once per distinct timeline and shared by the media that have it.
//
// Version: `hds_client_manifest_version` 1 writes the F4M 1.0 namespace, 2 the 2.0 namespace; a
// set-level manifest exists only in F4M 2.0, so `hds_multi_level` writes 2.0 whatever the version
// (as HLS raises EXT-X-VERSION where the output needs it).
//
// VOD: `streamType` recorded, `deliveryType` streaming, the `duration`. Live (a channel, `live`
// given), as ffmpeg's hdsenc writes it: `streamType` live, no `duration` (onMetaData's is 0),
// each bootstrap in its live form (segments/f4f/bootstrap.ts) over the DVR window, its fragments
// numbered by the channel's numbering (ViewTrack.firstNumber); after the end of stream,
// `recorded` with the window's duration and closed bootstraps, the numbers unchanged. No DVR
// element: F4M's `dvrInfo` attributes are not verified against a client here, and the bootstrap
// already bounds what a client can ask for.

import { TrackProperties } from '../model/media';
import { PlayoutView, seconds, viewDuration, ViewTrack } from '../model/view';
import { Amf0Property, onMetaData } from '../segments/f4f/amf0';
import { writeBootstrap } from '../segments/f4f/bootstrap';
import { findMedia, HdsMedia, hdsMedia, hdsUrls, liveHdsBase, mediaKbps } from '../model/hds-media';
import { xmlAttr } from './xml';

export const F4M_NAMESPACE = { 1: 'http://ns.adobe.com/f4m/1.0', 2: 'http://ns.adobe.com/f4m/2.0' } as const;

/** FLV VIDEODATA CodecID of H.264 and AUDIODATA SoundFormat of AAC (FLV 10.1 E.4.3.1, E.4.2.1). */
const FLV_AVC = 7;
const FLV_AAC = 10;

type Attr = [string, string | number | undefined];

function attributes(list: Attr[]): string {
  return list
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => ` ${k}="${xmlAttr(String(v))}"`)
    .join('');
}

function namespace(view: PlayoutView, isSetLevel: boolean): string {
  return isSetLevel || (view.options.int('hds_client_manifest_version') ?? 1) >= 2
    ? F4M_NAMESPACE[2]
    : F4M_NAMESPACE[1];
}

/** What a live channel changes in its HDS manifests. */
export interface HdsLive {
  /** The channel has stopped (end of stream): the recorded form. */
  ended: boolean;
}

/** A channel's view: whether it has ended (undefined: VOD). */
export function hdsLiveOf(view: PlayoutView): HdsLive | undefined {
  const live = view.live;
  return live === undefined ? undefined : { ended: live.ended };
}

/** The manifest `<name>.f4m` (or `.f4m`): all media, or the set-level manifest under hds_multi_level. */
export function writeF4m(view: PlayoutView, live = hdsLiveOf(view)): string {
  const media = hdsMedia(view);
  return view.options.bool('hds_multi_level') ? setLevel(view, media) : document(view, media, live);
}

/** The stream-level manifest of one media (`<name>-<key>.f4m`). */
export function writeStreamF4m(view: PlayoutView, m: HdsMedia, live = hdsLiveOf(view)): string {
  return document(view, [m], live);
}

function header(ns: string): string[] {
  return [
    '<?xml version="1.0" encoding="utf-8"?>',
    '<!-- Created with Streaming Origin -->',
    `<manifest xmlns="${ns}">`,
  ];
}

function setLevel(view: PlayoutView, media: HdsMedia[]): string {
  const lines = header(namespace(view, true));
  lines.push(`  <id>${xmlAttr(view.name)}</id>`);
  for (const m of media) {
    lines.push(
      `  <media${attributes([['href', hdsUrls.streamManifest(view, m)], ['bitrate', mediaKbps(m)], ...size(m)])} />`,
    );
  }
  lines.push('</manifest>', '');
  return lines.join('\n');
}

function document(view: PlayoutView, media: HdsMedia[], live: HdsLive | undefined): string {
  const lines = header(namespace(view, false));
  const hasVideo = media.some((m) => m.video !== undefined);
  const growing = live !== undefined && !live.ended;
  lines.push(`  <id>${xmlAttr(view.name)}</id>`);
  lines.push(`  <mimeType>${hasVideo ? 'video/mp4' : 'audio/mp4'}</mimeType>`);
  lines.push(`  <streamType>${growing ? 'live' : 'recorded'}</streamType>`);
  lines.push('  <deliveryType>streaming</deliveryType>');
  if (!growing)
    lines.push(`  <duration>${decimal(Math.max(...media.map((m) => timelineSeconds(m.timeline))))}</duration>`);
  // One bootstrapInfo per distinct bootstrap, in order of first use.
  const ids = new Map<string, string>();
  const idOf = media.map((m) => {
    const base64 = Buffer.from(bootstrapOf(view, m, live)).toString('base64');
    let id = ids.get(base64);
    if (id === undefined) {
      id = `bootstrap${ids.size + 1}`;
      ids.set(base64, id);
      lines.push(
        `  <bootstrapInfo${attributes([
          ['profile', 'named'],
          ['id', id],
        ])}>${base64}</bootstrapInfo>`,
      );
    }
    return id;
  });
  media.forEach((m, i) => {
    const attrs: Attr[] = [
      ['url', hdsUrls.media(view, m)],
      ['bitrate', mediaKbps(m)],
      ...size(m),
      ['bootstrapInfoId', idOf[i]],
    ];
    lines.push(`  <media${attributes(attrs)}>`);
    const metadata = onMetaData(metadataOf(m, growing));
    lines.push(`    <metadata>${Buffer.from(metadata).toString('base64')}</metadata>`);
    lines.push('  </media>');
  });
  lines.push('</manifest>', '');
  return lines.join('\n');
}

/**
 * The abst of a media: its timeline track's segments, in that track's timescale. VOD numbers
 * them from 1 (the fragment route counts so); a channel by its own numbering, live or ended.
 */
export function bootstrapOf(view: PlayoutView, m: HdsMedia, live?: HdsLive): Uint8Array {
  const timescale = m.timeline.track.properties.TimeScale;
  const s = m.timeline.segments;
  // A channel's times modulo the live HDS period (model/hds-media.ts), as its fragments' FLV tags.
  const channel = view.presentation.live !== undefined;
  return writeBootstrap({
    movieIdentifier: view.name,
    timescale,
    fragments: Array.from({ length: s.count }, (_, i) => ({
      time: s.time(i) - liveHdsBase(channel, s.time(i), timescale),
      duration: s.duration(i),
    })),
    ...(live === undefined ? {} : { live: !live.ended, firstFragment: m.timeline.firstNumber }),
  });
}

function size(m: HdsMedia): Attr[] {
  const p = m.video?.track.properties;
  return p === undefined
    ? []
    : [
        ['width', p.DisplayWidth ?? p.MaxWidth],
        ['height', p.DisplayHeight ?? p.MaxHeight],
      ];
}

/** Seconds from the first fragment's start to the last one's end. */
function timelineSeconds(t: ViewTrack): number {
  return seconds(viewDuration(t), t.track.properties.TimeScale);
}

/** Up to millisecond precision, without trailing zeros: 10, 10.021. */
function decimal(x: number): string {
  return String(Math.round(x * 1000) / 1000);
}

/** onMetaData (FLV 10.1 E.5): what a player learns of the stream before the first tag. */
export function metadataOf(m: HdsMedia, live = false): Amf0Property[] {
  // A live stream has no duration yet: 0, as FLV encoders write it.
  const out: Amf0Property[] = [['duration', live ? 0 : timelineSeconds(m.timeline)]];
  const v = m.video?.track.properties;
  if (v !== undefined) {
    out.push(['width', v.DisplayWidth ?? v.MaxWidth ?? 0], ['height', v.DisplayHeight ?? v.MaxHeight ?? 0]);
    out.push(['videodatarate', v.systemBitrate / 1000]);
    if (v.FrameRate !== undefined) out.push(['framerate', v.FrameRate.num / v.FrameRate.den]);
    out.push(['videocodecid', FLV_AVC]);
  }
  const a = m.audio?.track.properties;
  if (a !== undefined) out.push(...audioMetadata(a));
  return out;
}

function audioMetadata(a: TrackProperties): Amf0Property[] {
  const out: Amf0Property[] = [['audiodatarate', a.systemBitrate / 1000]];
  if (a.SamplingRate !== undefined) out.push(['audiosamplerate', a.SamplingRate]);
  out.push(['audiosamplesize', a.BitsPerSample ?? 16]);
  if (a.Channels !== undefined) out.push(['stereo', a.Channels >= 2]);
  out.push(['audiocodecid', FLV_AAC]);
  return out;
}

/** The document a `<stem>.f4m` URL names: a media's stream-level manifest when the stem ends with its key, else the manifest. */
export function writeHdsManifest(view: PlayoutView, stem: string, live = hdsLiveOf(view)): string {
  const m = findMedia(view, stem);
  return m === undefined ? writeF4m(view, live) : writeStreamF4m(view, m, live);
}
