// What a presentation's DRM options (origin/options/drm-options.ts) mean together: which formats
// are encrypted, with which key, scheme and IVs, and which DRM systems are signalled. Decided
// once when the presentation is built; a combination that cannot work is a bad-option error that
// names the options, and never echoes a key. A CPIX document (the `cpix` option) replaces the key
// options and gives each track its own key: drm/cpix-protection.ts.

import { originError } from '../errors';
import type { StreamOptions } from '../options/registry';
import type { PresentationTrack } from '../model/presentation';
import type { CencProtection, ContentKey, DrmSystem, ProtectedFormat, Protection } from '../model/protection';
import { drmAPsshData, playReadyObject, psshBox } from './pssh';
import { CLEARKEY, COMMON, DRM_A, PLAYREADY } from './systems';
import { hlsProtection } from './hls-protection';
import { isEncryptedTrack } from './encrypted-tracks';
import { cpixProtection } from './cpix-protection';

/** The protection of a presentation, or undefined when no DRM option is set. */
export function protectionOf(
  options: StreamOptions,
  tracks: readonly PresentationTrack[],
  subject: string,
): Protection | undefined {
  const bad = (message: string): never => {
    throw originError('bad-option', message, { subject });
  };
  if (options.isSet('cpix')) {
    const mixed = keyOptionsBesideCpix(options);
    if (mixed.length > 0) bad(`--cpix cannot be combined with ${mixed.join(', ')}: the CPIX document gives the keys`);
    return cpixProtection(options, tracks, subject);
  }
  const drmA = keyPair(options.str('drm_a_key'));
  const iss = keyPair(options.str('iss_key'));
  const hls = options.str('hls_key');
  for (const name of ['drm_a_drm_specific_data', 'drm_a_license_server_url']) {
    if (options.isSet(name) && drmA === undefined) bad(`${dotted(name)} needs --drm_a.key`);
  }
  for (const name of ['iss_key_iv', 'iss_license_server_url']) {
    if (options.isSet(name) && iss === undefined) bad(`${dotted(name)} needs --iss.key`);
  }
  for (const name of ['hls_key_iv', 'hls_license_server_url', 'hls_playout', 'hls_protection_scheme']) {
    if (options.isSet(name) && hls === undefined) bad(`${dotted(name)} needs --hls.key`);
  }
  if (drmA !== undefined && iss !== undefined && !sameKey(drmA, iss)) {
    bad('--drm_a.key and --iss.key must be the same key pair: one CENC encryption serves both DRMs');
  }
  const cencKey = drmA ?? iss;
  if (options.isSet('clearkey_license_server_url') && cencKey === undefined && hls === undefined) {
    bad('--clearkey.license_server_url needs a key (--drm_a.key, --iss.key or --hls.key)');
  }
  const formats = new Set<ProtectedFormat>();
  if (cencKey !== undefined) formats.add('dash');
  if (iss !== undefined) formats.add('smooth');
  if (hls !== undefined) formats.add('hls');
  if (formats.size === 0) return undefined;
  const dash =
    cencKey === undefined ? undefined : dashProtection(options, cencKey, drmA !== undefined, iss !== undefined);
  // One key for every encrypted track.
  const dashTracks =
    dash === undefined ? undefined : new Map(tracks.filter(isEncryptedTrack).map((t) => [t.index, dash]));
  const hlsFmp4 = hls === undefined ? undefined : hlsProtection(options, hls, { drmA, iss }, subject);
  return {
    formats,
    dash: dashTracks,
    smooth: iss === undefined ? undefined : smoothProtection(options, iss),
    hls: hlsFmp4,
    clearKeyLicense: options.str('clearkey_license_server_url'),
  };
}

/** The options of the one-key form that are set (as `--name`): a CPIX document replaces them all. */
export function keyOptionsBesideCpix(options: StreamOptions): string[] {
  return KEY_OPTIONS.filter((n) => options.isSet(n)).map(dotted);
}

const KEY_OPTIONS = [
  'drm_a_key',
  'drm_a_drm_specific_data',
  'drm_a_license_server_url',
  'iss_key',
  'iss_key_iv',
  'iss_license_server_url',
  'hls_key',
  'hls_key_iv',
  'hls_license_server_url',
  'hls_playout',
  'hls_protection_scheme',
];

/** Smooth: PIFF sample encryption is cenc; its manifest carries the PlayReady header (MS-SSTR §2.2.2.2). */
function smoothProtection(options: StreamOptions, key: ContentKey): CencProtection {
  const licenseUrl = options.str('iss_license_server_url');
  const pro = playReadyObject(key.kid, key.key, 'cenc', licenseUrl);
  const iv = options.str('iss_key_iv');
  return {
    scheme: 'cenc',
    key,
    ivBase: iv === undefined ? undefined : hex(iv.replace(/^0x/, '')),
    constantIv: undefined,
    systems: [{ systemId: PLAYREADY, pssh: psshBox(PLAYREADY, pro), playReadyObject: pro, licenseUrl }],
    clearLeadSeconds: 0,
  };
}

function dashProtection(options: StreamOptions, key: ContentKey, drmA: boolean, playReady: boolean): CencProtection {
  const scheme = options.str('mpd_protection_scheme') === 'cbcs' ? 'cbcs' : 'cenc';
  // The W3C Common PSSH first: the one every ClearKey CDM reads (Chromium accepts nothing else).
  const systems: DrmSystem[] = [
    {
      systemId: COMMON,
      pssh: psshBox(COMMON, new Uint8Array(0), [key.kid]),
      playReadyObject: undefined,
      licenseUrl: undefined,
    },
  ];
  if (drmA) {
    const given = options.str('drm_a_drm_specific_data');
    systems.push({
      systemId: DRM_A,
      pssh: given === undefined ? psshBox(DRM_A, drmAPsshData([key.kid], scheme)) : givenPssh(given),
      playReadyObject: undefined,
      licenseUrl: options.str('drm_a_license_server_url'),
    });
  }
  if (playReady) {
    const licenseUrl = options.str('iss_license_server_url');
    const pro = playReadyObject(key.kid, key.key, scheme, licenseUrl);
    systems.push({ systemId: PLAYREADY, pssh: psshBox(PLAYREADY, pro), playReadyObject: pro, licenseUrl });
  }
  const clearKeyUrl = options.str('clearkey_license_server_url');
  if (clearKeyUrl !== undefined) {
    systems.push({ systemId: CLEARKEY, pssh: undefined, playReadyObject: undefined, licenseUrl: clearKeyUrl });
  }
  const iv = options.str('iss_key_iv');
  const lead = options.rational('clear_lead');
  return {
    scheme,
    key,
    ivBase: iv === undefined ? undefined : hex(iv.replace(/^0x/, '')),
    constantIv: undefined,
    systems,
    clearLeadSeconds: lead === undefined ? 0 : lead.num / lead.den,
  };
}

/** `--drm_a.drm_specific_data`: the pssh data as the license server gave it, or a whole pssh box. */
function givenPssh(base64: string): Uint8Array {
  const bytes = Uint8Array.from(Buffer.from(base64, 'base64'));
  const isBox =
    bytes.byteLength >= 32 &&
    Buffer.from(bytes).readUInt32BE(0) === bytes.byteLength &&
    Buffer.from(bytes.subarray(4, 8)).toString('latin1') === 'pssh';
  return isBox ? bytes : psshBox(DRM_A, bytes);
}

function keyPair(value: string | undefined): ContentKey | undefined {
  if (value === undefined) return undefined;
  const [kid, key] = value.split(':');
  return { kid: hex(kid!), key: hex(key!) };
}

function sameKey(a: ContentKey, b: ContentKey): boolean {
  return Buffer.from(a.kid).equals(Buffer.from(b.kid)) && Buffer.from(a.key).equals(Buffer.from(b.key));
}

const hex = (s: string): Uint8Array => Uint8Array.from(Buffer.from(s, 'hex'));
const dotted = (name: string): string => `--${name.replace(/^(drm_a|iss|hls|mpd|clearkey)_/, '$1.')}`;
