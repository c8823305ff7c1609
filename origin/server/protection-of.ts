// The protection a playout route applies, read from the presentation (model/protection.ts): which
// common encryption an fMP4 track gets, and HLS's whole-segment AES-128 and SAMPLE-AES keys.

import { originError } from '../errors';
import { aes128Encrypt, INIT_SECTION_IV, sequenceIv } from '../drm/aes128';
import type { SampleAesKey } from '../drm/sample-aes-ts';
import type { PresentationTrack } from '../model/presentation';
import type { PlayoutView } from '../model/view';
import type { RouteCall } from './route-handler';

/** The common encryption of `track` in this route's fMP4 output, if the presentation is protected. */
export function cencOf(call: RouteCall, track: PresentationTrack) {
  const protection = call.presentation.protection;
  if (call.req.route.format === 'hls')
    return protection?.hls?.method === 'SAMPLE-AES' ? protection.hls.fmp4 : undefined;
  return call.req.route.format === 'dash' ? protection?.dash?.get(track.index) : undefined;
}

/** HLS AES-128 whole-segment encryption of this presentation (drm/aes128.ts), if any. */
export function aes128Of(view: PlayoutView): { key: Uint8Array; iv: Uint8Array | undefined } | undefined {
  const hls = view.presentation.protection?.hls;
  return hls?.method === 'AES-128' ? hls : undefined;
}

/** SAMPLE-AES of MPEG-TS and packed audio: the key and the key lines' IV (drm/hls-protection.ts), if any. */
export function sampleAesOf(view: PlayoutView): SampleAesKey | undefined {
  const hls = view.presentation.protection?.hls;
  if (hls?.method !== 'SAMPLE-AES') return undefined;
  // drm/refusals.ts answers 403 before this; never clear segments of an encrypted presentation.
  if (hls.ts === undefined)
    throw originError('protected-format', hls.tsRefusal ?? 'SAMPLE-AES MPEG-TS is not available');
  return { key: hls.ts.key, iv: hls.ts.iv };
}

/** `bytes` encrypted for the HLS segment with media sequence number `n` (0: the init section). */
export function aes128(view: PlayoutView, n: number, bytes: Uint8Array): Uint8Array {
  const aes = aes128Of(view)!;
  return aes128Encrypt(aes.key, aes.iv ?? (n === 0 ? INIT_SECTION_IV : sequenceIv(n)), bytes);
}
