// EXT-X-KEY and EXT-X-SESSION-KEY lines of a protected presentation (RFC 8216 §4.3.2.4,
// §4.3.4.5; the methods SAMPLE-AES and SAMPLE-AES-CTR of RFC 8216bis §4.4.4.4). What they say is
// decided in origin/drm/hls-protection.ts; this writes them. Pure.

import type { HlsKeyLine, HlsProtection } from '../model/protection';

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
