// Names and bitrates of ingested tracks, which fragments do not carry: Smooth ingest announces
// them in the Live Server Manifest Box (MS-SSTR §2.2.7.3: `systemBitrate`, `trackID`, `trackName`
// params); CMAF ingest in the stream name (`Streams(video-640x360-800k.cmfv)`, the convention of
// the DASH-IF ingest spec's examples), read by the caller.

import { IngestHeader } from './ingest-parser';

export interface LiveTrackName {
  trackName: string | undefined;
  systemBitrate: number | undefined;
}

/**
 * By track ID, what the header's Live Server Manifest says; empty without one. Read leniently (the
 * elements and their params only): ffmpeg's has no `src`, which a server manifest needs.
 */
export function liveTrackNames(h: IngestHeader): Map<number, LiveTrackName> {
  const out = new Map<number, LiveTrackName>();
  const text = h.serverManifest;
  if (text === undefined || text.length > MAX_MANIFEST_CHARS) return out;
  for (const m of text.matchAll(/<(video|audio|textstream)\b([^>]{0,4096})>([\s\S]{0,65536}?)<\/\1>/g)) {
    const attrs = m[2]!;
    const params = new Map<string, string>();
    for (const p of m[3]!.matchAll(/<param\s+name="([^"]{1,64})"\s+value="([^"]{0,4096})"/g)) params.set(p[1]!, p[2]!);
    const id = Number(params.get('trackID'));
    if (!Number.isInteger(id)) continue;
    const bitrate = Number(/\bsystemBitrate="(\d{1,12})"/.exec(attrs)?.[1] ?? params.get('systemBitrate'));
    out.set(id, {
      trackName: params.get('trackName'),
      systemBitrate: Number.isFinite(bitrate) && bitrate > 0 ? bitrate : undefined,
    });
  }
  return out;
}

/** The Live Server Manifest is a few kB; more is not read. */
const MAX_MANIFEST_CHARS = 1 << 20;

/** A bitrate written in a CMAF stream name (`…-800k.cmfv`, `…-64k.cmfa`), in bit/s. */
export function bitrateOfStreamName(stream: string): number | undefined {
  const m = /(?:^|[-_])(\d{1,7})(k|m)(?:[-_.]|$)/i.exec(stream);
  if (m === null) return undefined;
  return Number(m[1]) * (m[2]!.toLowerCase() === 'k' ? 1000 : 1_000_000);
}
