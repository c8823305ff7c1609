// EXT-X-KEY and EXT-X-SESSION-KEY lines of a protected presentation (RFC 8216 §4.3.2.4,
// §4.3.4.5; the methods SAMPLE-AES and SAMPLE-AES-CTR of RFC 8216bis §4.4.4.4). What they say is
// decided in origin/drm/hls-protection.ts; this writes them. Pure.

import type { HlsKeyLine } from '../model/protection';

/** RFC 8216 §7: KEYFORMAT and KEYFORMATVERSIONS need version 5. */
export const VERSION_KEYFORMAT = 5;

export function keyLines(keys: readonly HlsKeyLine[], tag: 'EXT-X-KEY' | 'EXT-X-SESSION-KEY'): string[] {
  return keys.map((k) => {
    const attrs = [`METHOD=${k.method}`, `URI="${k.uri.replace(/"/g, '%22')}"`];
    if (k.keyId !== undefined) attrs.push(`KEYID=0x${Buffer.from(k.keyId).toString('hex').toUpperCase()}`);
    if (k.keyFormat !== undefined) attrs.push(`KEYFORMAT="${k.keyFormat}"`, 'KEYFORMATVERSIONS="1"');
    return `#${tag}:${attrs.join(',')}`;
  });
}
