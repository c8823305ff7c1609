// Names and bitrates of ingested tracks, which fragments do not carry: Smooth ingest announces
// them in the Live Server Manifest Box (MS-SSTR §2.2.7.3: `systemBitrate`, `trackID`, `trackName`
// params); CMAF ingest in the stream name (`Streams(video-640x360-800k.cmfv)`, the convention of
// the DASH-IF ingest spec's examples), read by the caller.

import { parseServerManifest } from '../ism/server-manifest';
import { IngestHeader } from './ingest-parser';

export interface LiveTrackName {
  trackName: string | undefined;
  systemBitrate: number | undefined;
}

/** By track ID, what the header's Live Server Manifest says; empty without one or when it does not parse. */
export function liveTrackNames(h: IngestHeader): Map<number, LiveTrackName> {
  const out = new Map<number, LiveTrackName>();
  if (h.serverManifest === undefined) return out;
  let manifest;
  try {
    manifest = parseServerManifest(h.serverManifest, 'Live Server Manifest Box');
  } catch {
    return out; // the names are a nicety; the media does not depend on them
  }
  for (const t of manifest.tracks) {
    const param = (n: string): string | undefined => t.params.find((p) => p.name === n)?.value;
    const id = Number(param('trackID'));
    if (!Number.isInteger(id)) continue;
    out.set(id, { trackName: param('trackName'), systemBitrate: t.systemBitrate || undefined });
  }
  return out;
}

/** A bitrate written in a CMAF stream name (`…-800k.cmfv`, `…-64k.cmfa`), in bit/s. */
export function bitrateOfStreamName(stream: string): number | undefined {
  const m = /(?:^|[-_])(\d{1,7})(k|m)(?:[-_.]|$)/i.exec(stream);
  if (m === null) return undefined;
  return Number(m[1]) * (m[2]!.toLowerCase() === 'k' ? 1000 : 1_000_000);
}
