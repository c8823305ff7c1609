// What `--hls.*` means. `--hls.key` alone is AES-128 whole-segment encryption of every segment
// (RFC 8216 §4.3.2.4), as in the reference: the key file at `--hls.license_server_url`, the IV
// `--hls.key_iv` or each segment's media sequence number. With `--hls.playout` (or
// `--hls.protection_scheme`) it is SAMPLE-AES (RFC 8216bis §4.4.4.4): fMP4 segments are
// common-encrypted (cbcs by default, which Apple devices need; cenc on request) and the playlists
// carry one EXT-X-KEY per DRM that signals it:
// - ClearKey (`--clearkey.license_server_url`): KEYFORMAT "org.w3.clearkey" with the license URL,
//   and nothing else (an identity line next to it sends hls.js down the wrong path, measured);
// - FairPlay (`--hls.playout=sample_aes_streamingkeydelivery`): KEYFORMAT
//   "com.apple.streamingkeydelivery", URI skd://… (the license server URL when it is one), no IV;
// - drm_a and PlayReady when their key is the HLS key: their pssh as a data: URI;
// - otherwise identity: URI = `--hls.license_server_url`, the key file.
// The constant IV of cbcs is in every init segment's `tenc`: no IV attribute is written.
//
// MPEG-TS and packed audio get Apple's SAMPLE-AES (origin/drm/sample-aes-ts.ts) with the same key,
// which players decrypt themselves, outside EME: only FairPlay's line (Apple devices) and the
// identity line (the key file at `--hls.license_server_url`: hls.js, ffmpeg) apply, never the
// ClearKey, drm_a or PlayReady lines (EME key systems, fMP4 only). Without one of those two, TS is
// refused (drm/refusals.ts). Every TS key line carries the IV (hls.js takes SAMPLE-AES without one
// for clear): `--hls.key_iv`, else one derived from the key (drm/ivs.ts), the same for every segment.

import { originError } from '../errors';
import type { StreamOptions } from '../options/registry';
import type { CencProtection, ContentKey, DrmSystem, HlsKeyLine, HlsProtection } from '../model/protection';
import { drmAPsshData, playReadyObject, psshBox } from './pssh';
import { COMMON, DRM_A, PLAYREADY } from './systems';
import { sampleAesTsIv } from './ivs';

/** `hls`: the `--hls.key` value; `cenc`: the DRM keys of DASH, whose signalling HLS shares when the KID is the same. */
export function hlsProtection(
  options: StreamOptions,
  hls: string,
  cenc: { drmA: ContentKey | undefined; iss: ContentKey | undefined },
  subject: string,
): HlsProtection {
  const bad = (message: string): never => {
    throw originError('bad-option', message, { subject });
  };
  const [kidHex, keyHex] = hls.split(':') as [string, string];
  const key: ContentKey = { kid: hex(kidHex === '' ? '0'.repeat(32) : kidHex), key: hex(keyHex) };
  const licenseUrl = options.str('hls_license_server_url');
  if (!options.isSet('hls_playout') && !options.isSet('hls_protection_scheme')) {
    if (options.isSet('clearkey_license_server_url')) {
      bad('ClearKey signalling for HLS is SAMPLE-AES: add --hls.playout=sample_aes (AES-128 has no key system)');
    }
    if (licenseUrl === undefined) bad('--hls.key (AES-128) needs --hls.license_server_url, the key file URI');
    const iv = options.str('hls_key_iv');
    return {
      method: 'AES-128',
      key: key.key,
      iv: iv === undefined ? undefined : hex(iv.replace(/^0x/, '')),
      uri: licenseUrl!,
    };
  }
  const scheme = options.str('hls_protection_scheme') === 'cenc' ? 'cenc' : 'cbcs';
  const fairPlay = options.str('hls_playout') === 'sample_aes_streamingkeydelivery';
  if (fairPlay && scheme !== 'cbcs') bad('FairPlay (--hls.playout=sample_aes_streamingkeydelivery) needs cbcs');
  const iv = options.str('hls_key_iv');
  if (iv !== undefined && scheme !== 'cbcs') bad('--hls.key_iv is the constant IV of cbcs: it does not apply to cenc');
  const same = (k: ContentKey | undefined): boolean =>
    k !== undefined &&
    Buffer.from(k.kid).equals(Buffer.from(key.kid)) &&
    Buffer.from(k.key).equals(Buffer.from(key.key));
  const drmA = same(cenc.drmA);
  const playReady = same(cenc.iss);

  const systems: DrmSystem[] = [
    {
      systemId: COMMON,
      pssh: psshBox(COMMON, new Uint8Array(0), [key.kid]),
      playReadyObject: undefined,
      licenseUrl: undefined,
    },
  ];
  const drmAPssh = psshBox(DRM_A, drmAPsshData([key.kid], scheme));
  if (drmA) systems.push({ systemId: DRM_A, pssh: drmAPssh, playReadyObject: undefined, licenseUrl: undefined });
  const pro = playReadyObject(key.kid, key.key, scheme, options.str('iss_license_server_url'));
  if (playReady)
    systems.push({ systemId: PLAYREADY, pssh: psshBox(PLAYREADY, pro), playReadyObject: pro, licenseUrl: undefined });
  const fmp4: CencProtection = {
    scheme,
    key,
    ivBase: undefined,
    constantIv: iv === undefined ? undefined : hex(iv.replace(/^0x/, '')),
    systems,
    clearLeadSeconds: 0,
  };

  const method = scheme === 'cbcs' ? 'SAMPLE-AES' : 'SAMPLE-AES-CTR';
  const fairPlayLine: HlsKeyLine | undefined = fairPlay
    ? {
        method: 'SAMPLE-AES',
        uri: licenseUrl?.startsWith('skd://') ? licenseUrl : `skd://${Buffer.from(key.kid).toString('hex')}`,
        keyFormat: 'com.apple.streamingkeydelivery',
        keyId: undefined,
      }
    : undefined;
  const tsLine: HlsKeyLine | undefined =
    fairPlayLine ??
    (licenseUrl === undefined
      ? undefined
      : { method: 'SAMPLE-AES', uri: licenseUrl, keyFormat: undefined, keyId: undefined });
  const ts = {
    ts: tsLine === undefined ? undefined : { key: key.key, iv: fmp4.constantIv ?? sampleAesTsIv(key), keys: [tsLine] },
    tsRefusal:
      tsLine === undefined
        ? 'SAMPLE-AES MPEG-TS needs a key players fetch themselves: --hls.license_server_url (the key file) or ' +
          'FairPlay (--hls.playout=sample_aes_streamingkeydelivery); ClearKey, drm_a and PlayReady are EME key ' +
          'systems, which decrypt fMP4 only: request hls_fmp4=true'
        : undefined,
  };
  const clearKey = options.str('clearkey_license_server_url');
  if (clearKey !== undefined) {
    return {
      method: 'SAMPLE-AES',
      fmp4,
      keys: [{ method, uri: clearKey, keyFormat: 'org.w3.clearkey', keyId: key.kid }],
      ...ts,
    };
  }
  const keys: HlsKeyLine[] = [];
  if (fairPlayLine !== undefined) keys.push(fairPlayLine);
  if (drmA) {
    const uri = `data:text/plain;base64,${Buffer.from(drmAPssh).toString('base64')}`;
    keys.push({ method, uri, keyFormat: `urn:uuid:${DRM_A}`, keyId: key.kid });
  }
  if (playReady) {
    const uri = `data:text/plain;charset=UTF-16;base64,${Buffer.from(pro).toString('base64')}`;
    keys.push({ method, uri, keyFormat: 'com.microsoft.playready', keyId: key.kid });
  }
  if (keys.length === 0) {
    if (licenseUrl === undefined) {
      bad('--hls.key needs --hls.license_server_url (the key URI players fetch) or a DRM that signals it');
    }
    keys.push({ method, uri: licenseUrl!, keyFormat: undefined, keyId: undefined });
  }
  return { method: 'SAMPLE-AES', fmp4, keys, ...ts };
}

const hex = (s: string): Uint8Array => Uint8Array.from(Buffer.from(s, 'hex'));
