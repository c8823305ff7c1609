// EXT-X-KEY and EXT-X-SESSION-KEY lines of a protected presentation (RFC 8216 §4.3.2.4,
// §4.3.4.5; the methods SAMPLE-AES and SAMPLE-AES-CTR of RFC 8216bis §4.4.4.4). What they say is
// decided in origin/drm/hls-protection.ts; this writes them. Pure.

import { originError } from '../errors';
import { INIT_SECTION_IV, sequenceIv } from '../drm/aes128';
import type { HlsKeyLine, HlsProtection } from '../model/protection';
import type { SegmentKind } from '../model/rendition';

/** RFC 8216 §7: METHOD=SAMPLE-AES, KEYFORMAT and KEYFORMATVERSIONS need version 5. */
export const VERSION_SAMPLE_AES = 5;

/** RFC 8216 §7: the IV attribute needs version 2. */
export const VERSION_IV = 2;

/** The master's EXT-X-SESSION-KEY lines: those of the fMP4 playlists, or of the MPEG-TS ones (§4.3.4.5). */
export function sessionKeyLines(p: HlsProtection, fmp4: boolean): string[] {
  if (p.method === 'AES-128') return [`#EXT-X-SESSION-KEY:METHOD=AES-128,URI="${escapeUri(p.uri)}"`];
  if (fmp4) return keyLines(p.keys, 'EXT-X-SESSION-KEY');
  return p.ts === undefined ? [] : keyLines(p.ts.keys, 'EXT-X-SESSION-KEY', p.ts.iv);
}

/** An AES-128 EXT-X-KEY line with its IV. */
export function aes128KeyLine(uri: string, iv: Uint8Array): string {
  return `#EXT-X-KEY:METHOD=AES-128,URI="${escapeUri(uri)}",IV=0x${Buffer.from(iv).toString('hex').toUpperCase()}`;
}

const escapeUri = (uri: string): string => uri.replace(/"/g, '%22');

/** Key lines; `iv`: the IV attribute of each (SAMPLE-AES MPEG-TS). */
export function keyLines(
  keys: readonly HlsKeyLine[],
  tag: 'EXT-X-KEY' | 'EXT-X-SESSION-KEY',
  iv?: Uint8Array,
): string[] {
  return keys.map((k) => {
    const attrs = [`METHOD=${k.method}`, `URI="${escapeUri(k.uri)}"`];
    if (iv !== undefined) attrs.push(`IV=0x${Buffer.from(iv).toString('hex').toUpperCase()}`);
    if (k.keyId !== undefined) attrs.push(`KEYID=0x${Buffer.from(k.keyId).toString('hex').toUpperCase()}`);
    if (k.keyFormat !== undefined) attrs.push(`KEYFORMAT="${k.keyFormat}"`, 'KEYFORMATVERSIONS="1"');
    return `#${tag}:${attrs.join(',')}`;
  });
}

/**
 * The key lines of an encrypted media playlist: those before its first segment (and EXT-X-MAP),
 * and those before each segment when each has its own IV, the media sequence number (AES-128
 * without --hls.key_iv, drm/aes128.ts, with IV 0 for the init section). SAMPLE-AES MPEG-TS has one
 * IV for all (drm/hls-protection.ts); SAMPLE-AES fMP4 none: its constant IV is in the init segment.
 */
export function mediaKeyLines(
  hls: HlsProtection,
  kind: SegmentKind,
): { first: string[]; perSegment?: (n: number) => string[] } {
  if (hls.method === 'AES-128') {
    const { uri: keyUri, iv } = hls;
    if (iv !== undefined) return { first: [aes128KeyLine(keyUri, iv)] };
    return {
      first: kind === 'm4s' ? [aes128KeyLine(keyUri, INIT_SECTION_IV)] : [],
      perSegment: (n) => [aes128KeyLine(keyUri, sequenceIv(n))],
    };
  }
  if (kind === 'm4s') return { first: keyLines(hls.keys, 'EXT-X-KEY') };
  const ts = hls.ts;
  // drm/refusals.ts answers 403 before this; never a clear playlist for encrypted segments.
  if (ts === undefined) throw originError('protected-format', hls.tsRefusal ?? 'SAMPLE-AES MPEG-TS is not available');
  return { first: keyLines(ts.keys, 'EXT-X-KEY', ts.iv) };
}
