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

/** Why a format has no key when a CPIX document gives the keys (drm/cpix-protection.ts). */
const CPIX_REASONS: Record<ProtectedFormat, string> = {
  dash: 'the CPIX document gives it none',
  smooth: 'Smooth Streaming has one ProtectionHeader, and the CPIX document gives its tracks several keys or cbcs',
  hls: 'a CPIX document encrypts DASH and Smooth Streaming in this version, not HLS',
  hds: 'HDS output is never encrypted',
};

export function checkFormatProtected(p: Presentation, format: ProtectedFormat): void {
  const protection = p.protection;
  if (protection === undefined) return;
  if (!protection.formats.has(format)) {
    throw originError(
      'protected-format',
      p.options.isSet('cpix')
        ? `this presentation is encrypted and ${NAMES[format]} has no key: ${CPIX_REASONS[format]}`
        : `this presentation is encrypted and ${NAMES[format]} has no key configured (${KEY_OPTIONS[format]})`,
    );
  }
  if (!IMPLEMENTED.has(format)) {
    throw originError('protected-format', `encrypted ${NAMES[format]} output is not available in this version`);
  }
}

/**
 * HLS of a protected presentation, once the request's view is known: SAMPLE-AES MPEG-TS and packed
 * audio only with a key line players decrypt them with (drm/hls-protection.ts says why not); I-frame
 * playlists with fMP4 segments (their keyframes encrypted as in the media segments) and with
 * AES-128 (the I-frame segments of either kind encrypted whole), never with SAMPLE-AES MPEG-TS.
 */
export function checkHlsProtected(view: PlayoutView, routeKind: string): void {
  const protection = view.presentation.protection;
  if (protection === undefined) return;
  const hls = protection.hls;
  if (hls?.method === 'SAMPLE-AES' && hls.ts === undefined && !view.options.bool('hls_fmp4')) {
    throw originError('protected-format', hls.tsRefusal ?? 'SAMPLE-AES MPEG-TS is not available');
  }
  const sampleAesTs = !view.options.bool('hls_fmp4') || routeKind === 'hls-iframe-ts';
  if (routeKind.startsWith('hls-iframe') && protection.hls?.method === 'SAMPLE-AES' && sampleAesTs) {
    throw originError(
      'protected-format',
      'SAMPLE-AES I-frame playlists are written with fMP4 segments only (hls_fmp4=true)',
    );
  }
}
