// No accidental clear playout: a protected presentation answers only in the formats its DRM
// options encrypt, and of those only the ones whose encryption is implemented (CHANGELOG.md says
// which). Everything else is 403 protected-format, before any byte of media is read.

import { originError } from '../errors';
import type { Presentation } from '../model/presentation';
import type { PlayoutView } from '../model/view';
import type { ProtectedFormat } from '../model/protection';

const NAMES: Record<ProtectedFormat, string> = { smooth: 'Smooth Streaming', dash: 'DASH', hls: 'HLS', hds: 'HDS' };

/** Which options give each format a key. */
const KEY_OPTIONS: Record<ProtectedFormat, string> = {
  dash: '--drm_a.key or --iss.key',
  smooth: '--iss.key',
  hls: '--hls.key',
  hds: 'nothing: HDS output is never encrypted',
};

/** Formats whose encrypted output this version writes. */
const IMPLEMENTED: ReadonlySet<ProtectedFormat> = new Set(['dash', 'hls', 'smooth']);

export function checkFormatProtected(p: Presentation, format: ProtectedFormat): void {
  const protection = p.protection;
  if (protection === undefined) return;
  if (!protection.formats.has(format)) {
    throw originError(
      'protected-format',
      `this presentation is encrypted and ${NAMES[format]} has no key configured (${KEY_OPTIONS[format]})`,
    );
  }
  if (!IMPLEMENTED.has(format)) {
    throw originError('protected-format', `encrypted ${NAMES[format]} output is not available in this version`);
  }
}

/**
 * HLS of a protected presentation, once the request's view is known: SAMPLE-AES is written with
 * fMP4 segments only (SAMPLE-AES MPEG-TS comes next; AES-128 covers every kind), and its I-frame
 * playlists are fMP4 only: their keyframes encrypted as in the media segments (AES-128 encrypts
 * the I-frame segments of either kind whole); SAMPLE-AES MPEG-TS leaves them out.
 */
export function checkHlsProtected(view: PlayoutView, routeKind: string): void {
  const protection = view.presentation.protection;
  if (protection === undefined) return;
  if (protection.hls?.method === 'SAMPLE-AES' && !view.options.bool('hls_fmp4')) {
    throw originError(
      'protected-format',
      'SAMPLE-AES HLS is written with fMP4 segments in this version: request hls_fmp4=true',
    );
  }
  const sampleAesTs = !view.options.bool('hls_fmp4') || routeKind === 'hls-iframe-ts';
  if (routeKind.startsWith('hls-iframe') && protection.hls?.method === 'SAMPLE-AES' && sampleAesTs) {
    throw originError(
      'protected-format',
      'SAMPLE-AES I-frame playlists are written with fMP4 segments only (hls_fmp4=true)',
    );
  }
}
