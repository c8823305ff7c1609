// Which tracks common encryption covers: video (H.264) and audio (AAC, AC-3, E-AC-3) with a
// decoder configuration we read. Text tracks (TTML, WebVTT) stay clear, as shaka-packager leaves
// them: no player decrypts subtitles. One predicate for the init segment, the media segments and
// the manifests, so they never disagree.

import { trackHeaderOf } from '../media/moov';
import type { PresentationTrack } from '../model/presentation';

export function isEncryptedTrack(track: PresentationTrack): boolean {
  const h = trackHeaderOf(track);
  return h.codec !== undefined && (h.handler === 'vide' || h.handler === 'soun');
}
