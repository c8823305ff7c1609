// The DRM options: set when packaging (stored in the server manifest head), never from a query
// string (a DRM option in a query is a 400: reference §1.2, "all stream options may be given as
// query parameters, except those concerning DRM and archiving"). Names follow the reference's
// mp4split where it has one (`--iss.key`, `--hls.key`, `--hls.playout`, `--mpd.protection_scheme`);
// `drm_a` is the DRM whose system id is EDEF8BA9-79D6-4ACE-A3C8-27DCD51D21ED. What they mean
// together is decided in origin/drm/protection.ts; docs/guide/drm.md explains them.

import type { OptionSpec } from './registry';

const HEX32 = '[0-9a-fA-F]{32}';
const KEY_PAIR = new RegExp(`^${HEX32}:${HEX32}$`);
const OPTIONAL_KID_PAIR = new RegExp(`^(${HEX32})?:${HEX32}$`);
const URL = /^[a-z][a-z0-9+.-]*:\S+$/i;

function drmOption(cli: string, spec: Pick<OptionSpec, 'description' | 'formats'> & Partial<OptionSpec>): OptionSpec {
  return { name: cli.replace(/\./g, '_'), cli, type: 'string', query: false, stored: true, ...spec };
}

export const DRM_OPTIONS: readonly OptionSpec[] = [
  drmOption('drm_a.key', {
    formats: ['dash'],
    secret: true,
    pattern: KEY_PAIR,
    patternHint: 'give <kid>:<cek>, each 32 hexadecimal digits',
    description:
      'Key pair of the DRM with system id EDEF8BA9-79D6-4ACE-A3C8-27DCD51D21ED: `<kid_hex>:<cek_hex>`. DASH is encrypted with it (CENC) and signals that DRM; the same pair as `iss.key` if both are given.',
  }),
  drmOption('drm_a.drm_specific_data', {
    formats: ['dash'],
    pattern: /^[A-Za-z0-9+/=]{4,8192}$/,
    patternHint: 'give the PSSH data as Base64, as the license server returned it',
    description:
      'The PSSH data of that DRM as its license server returned it (Base64), carried in its `pssh` box. Without it the origin writes the data itself (the key id).',
  }),
  drmOption('drm_a.license_server_url', {
    formats: ['dash'],
    pattern: URL,
    patternHint: 'give an absolute URL',
    description: 'License server of that DRM, advertised in the MPD for players that read it.',
  }),
  drmOption('iss.key', {
    formats: ['smooth', 'dash'],
    secret: true,
    pattern: KEY_PAIR,
    patternHint: 'give <kid>:<cek>, each 32 hexadecimal digits (the KID big-endian)',
    description:
      'PlayReady key pair `<kid_hex>:<cek_hex>` (KID big-endian, as the reference takes it): Smooth (PIFF) and DASH are encrypted with it (CENC) and carry the PlayReady header.',
  }),
  drmOption('iss.key_iv', {
    formats: ['smooth', 'dash'],
    secret: true,
    pattern: /^(0x)?[0-9a-fA-F]{16}$/,
    patternHint: 'give 16 hexadecimal digits (a 64-bit IV)',
    description:
      'Base of the 64-bit per-sample IVs of CENC output (default: derived from the key and the track). Each track adds its own offset, so no IV repeats across tracks.',
  }),
  drmOption('iss.license_server_url', {
    formats: ['smooth', 'dash'],
    pattern: URL,
    patternHint: 'give an absolute URL',
    description: 'PlayReady license server, written as `LA_URL` in the PlayReady header.',
  }),
  drmOption('hls.key', {
    formats: ['hls'],
    secret: true,
    pattern: OPTIONAL_KID_PAIR,
    patternHint: 'give [<kid>]:<cek>, each 32 hexadecimal digits (the KID may be left out for AES-128)',
    description:
      'HLS key `[kid_hex]:cek_hex`. Alone it means AES-128 whole-segment encryption; `hls.playout` switches to SAMPLE-AES.',
  }),
  drmOption('hls.key_iv', {
    formats: ['hls'],
    secret: true,
    pattern: /^(0x)?[0-9a-fA-F]{32}$/,
    patternHint: 'give 32 hexadecimal digits (a 128-bit IV)',
    description:
      'AES-128: the IV of every segment (default: each segment its media sequence number); SAMPLE-AES cbcs: the constant IV (default: derived from the key and the track); SAMPLE-AES MPEG-TS and packed audio: the IV of every key line (default: derived from the key).',
  }),
  drmOption('hls.license_server_url', {
    formats: ['hls'],
    pattern: URL,
    patternHint: 'give an absolute URL (or skd:// for FairPlay)',
    description: 'The key URI written into `EXT-X-KEY` (the key file for AES-128, the license server otherwise).',
  }),
  drmOption('hls.playout', {
    formats: ['hls'],
    type: 'enum',
    values: ['sample_aes', 'sample_aes_streamingkeydelivery'],
    description:
      'HLS encryption method: `sample_aes` (SAMPLE-AES) or `sample_aes_streamingkeydelivery` (SAMPLE-AES signalled for FairPlay). Unset with `hls.key`: AES-128.',
  }),
  drmOption('hls.protection_scheme', {
    formats: ['hls'],
    type: 'enum',
    values: ['cenc', 'cbcs'],
    description:
      'SAMPLE-AES common-encryption scheme of HLS fMP4 segments (default cbcs, which Apple devices need); setting it means SAMPLE-AES as `hls.playout=sample_aes` does.',
  }),
  drmOption('mpd.protection_scheme', {
    formats: ['dash'],
    type: 'enum',
    values: ['cenc', 'cbcs'],
    default: 'cenc',
    description: 'Common-encryption scheme of DASH segments: `cenc` (AES-CTR) or `cbcs` (AES-CBC, 1:9 pattern).',
  }),
  drmOption('clearkey.license_server_url', {
    formats: ['dash', 'hls'],
    pattern: URL,
    patternHint: 'give an absolute URL',
    description:
      'Signal W3C ClearKey: the MPD gets a ClearKey `ContentProtection` with this license URL (`dashif:Laurl`).',
  }),
  drmOption('cpix', {
    formats: ['dash', 'smooth'],
    secret: true,
    // Base64 of a CPIX document of up to 1 MiB (drm/cpix.ts MAX_CPIX_BYTES). No pattern: when
    // packaging the value given is a file or URL (package/cpix-input.ts reads it and stores the
    // document); drm/cpix-protection.ts checks the stored form.
    maxLength: 1_400_000,
    description:
      'Keys and DRM signalling per track from a CPIX 2.2/2.3 document: `origin package --cpix=<file or http(s) URL>` reads it and stores it (Base64). Its usage rules (video pixels and frame rate, audio channels, bitrate, label = track name) give each audio and video track its key; DASH is encrypted, Smooth only with one key; no key rotation. Not combinable with the key options above.',
  }),
  drmOption('clear_lead', {
    formats: ['dash', 'hls'],
    type: 'rational',
    default: '0',
    description:
      'Seconds at the start left unencrypted (rounded up to whole segments) so playback starts before the license arrives.',
  }),
];
