// Key acquisition options (`origin keys`, `origin package`): where to ask for the `drm_a` key pair
// and how to sign the request (origin/drm/key-request.ts). They are packaging-time only: never
// stored in a server manifest (the signing key is a credential, not a property of the content) and
// never a query parameter. Names follow shaka-packager's Widevine key source, the public packager
// that speaks the same API (`--key_server_url --content_id --signer --aes_signing_key
// --aes_signing_iv --policy`); `key_track_type` and `key_server_timeout` are ours.

import type { OptionSpec } from './registry';

function keyOption(cli: string, spec: Pick<OptionSpec, 'description' | 'type'> & Partial<OptionSpec>): OptionSpec {
  return { name: cli, cli, formats: ['dash'], query: false, stored: false, ...spec };
}

/** The track types the key server knows (one key pair per type it is asked for). */
export const KEY_TRACK_TYPES = ['SD', 'HD', 'UHD1', 'UHD2', 'AUDIO'] as const;

export const KEY_SERVER_OPTIONS: readonly OptionSpec[] = [
  keyOption('key_server_url', {
    type: 'string',
    pattern: /^https?:\/\/[^\s/?#]+[^\s]*$/i,
    patternHint: 'give an http:// or https:// URL',
    description:
      'Ask this key server for the `drm_a` key pair (a signed POST); its answer becomes `drm_a.key` and `drm_a.drm_specific_data`. Needs `content_id`, `signer`, `aes_signing_key` and `aes_signing_iv`.',
  }),
  keyOption('content_id', {
    type: 'string',
    pattern: /^[^\x00-\x1f\x7f]{1,256}$/,
    patternHint: 'give 1 to 256 printable characters',
    description:
      'Content identifier the key server knows the content by; the request carries its UTF-8 bytes in Base64.',
  }),
  keyOption('signer', {
    type: 'string',
    pattern: /^[^\x00-\x1f\x7f]{1,256}$/,
    patternHint: 'give the signer name, 1 to 256 printable characters',
    description: 'Name of the signer the key server knows the signing key by.',
  }),
  keyOption('aes_signing_key', {
    type: 'string',
    secret: true,
    pattern: /^[0-9a-fA-F]{64}$/,
    patternHint: 'give 64 hexadecimal digits (a 256-bit AES key)',
    description:
      "The signer's AES-256 key: the request's SHA-1 is encrypted with it (AES-CBC) as its signature. A secret: never printed.",
  }),
  keyOption('aes_signing_iv', {
    type: 'string',
    secret: true,
    pattern: /^[0-9a-fA-F]{32}$/,
    patternHint: 'give 32 hexadecimal digits (a 128-bit IV)',
    description: "The signer's AES-CBC IV for the signature. A secret: never printed.",
  }),
  keyOption('key_track_type', {
    type: 'enum',
    values: KEY_TRACK_TYPES,
    default: 'SD',
    description:
      'The track type whose key pair is asked for; that one pair encrypts every track (several keys need CPIX).',
  }),
  keyOption('policy', {
    type: 'string',
    pattern: /^[^\x00-\x1f\x7f]{0,256}$/,
    patternHint: 'give up to 256 printable characters',
    default: '',
    description: 'Policy name sent with the request (may be empty).',
  }),
  keyOption('key_server_timeout', {
    type: 'integer',
    min: 1,
    max: 600,
    default: 30,
    description: 'Seconds to wait for the key server before giving up.',
  }),
];

const BY_CLI = new Map(KEY_SERVER_OPTIONS.map((o) => [o.cli, o]));

export function keyServerOption(flag: string): OptionSpec | undefined {
  return BY_CLI.get(flag);
}
