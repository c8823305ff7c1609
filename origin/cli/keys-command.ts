// `origin keys --key_server_url=<url> --content_id=<id> --signer=<name> --aes_signing_key=<hex>
// --aes_signing_iv=<hex> [--key_track_type=SD|HD|…]`: asks a key server for the drm_a key pair
// (origin/drm/key-request.ts) and prints the `origin package` options it makes, the content key
// masked unless --show-keys (as the package dry run does). `origin package` takes the same options
// and writes the answer into the server manifest itself.

import { acquiredKeyOptions } from '../drm/key-request';
import { KEY_SERVER_OPTIONS } from '../options/key-server-options';
import { eachArg, UsageError } from './args';
import { acquire, KeyServerArgs } from './key-server-args';
import { optionHelp } from './package-command';

export const KEYS_USAGE = `Usage: origin keys --key_server_url=<url> --content_id=<id> --signer=<name>
                   --aes_signing_key=<64 hex digits> --aes_signing_iv=<32 hex digits> [options]

Asks a key server for the key pair of the DRM drm_a (system id EDEF8BA9-79D6-4ACE-A3C8-27DCD51D21ED)
with a request signed by the signer's AES key, and prints the origin package options it makes:
  --drm_a.key=<kid>:<cek>                (the content key masked unless --show-keys)
  --drm_a.drm_specific_data=<PSSH data>  (as the key server gave it)
origin package takes the same key server options and writes the key into the server manifest.

Options:
  -q, --quiet           no progress line on stderr
      --show-keys       print the content key (it is masked otherwise)
  -h, --help            this text

Exit codes: 0 printed, 1 the key server failed or answered something unusable (the message
says which), 2 bad command line.
`;

export function keysHelp(): string {
  return `${KEYS_USAGE}\nKey server options:\n${KEY_SERVER_OPTIONS.map(optionHelp).join('\n')}\n`;
}

interface KeysArgs {
  keys: KeyServerArgs;
  showKeys: boolean;
  quiet: boolean;
  help: boolean;
}

export function parseKeysArgs(argv: readonly string[]): KeysArgs {
  const a: KeysArgs = { keys: new KeyServerArgs(), showKeys: false, quiet: false, help: false };
  eachArg(argv, ({ arg, flag, value }) => {
    if (flag === '-h' || flag === '--help') a.help = true;
    else if (flag === '--show-keys') a.showKeys = true;
    else if (flag === '-q' || flag === '--quiet') a.quiet = true;
    else if (flag.startsWith('--') && KeyServerArgs.isOption(flag.slice(2))) a.keys.take(flag.slice(2), value());
    else throw new UsageError(`unexpected argument ${arg.startsWith('-') ? flag : arg} (see origin keys --help)`);
  });
  return a;
}

export async function runKeys(
  argv: readonly string[],
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
): Promise<number> {
  const a = parseKeysArgs(argv);
  if (a.help) {
    out.write(keysHelp());
    return 0;
  }
  if (!a.keys.given) throw new UsageError('give --key_server_url and the signer options (see origin keys --help)');
  const key = await acquire(a.keys, a.quiet ? () => {} : (line) => err.write(`${line}\n`));
  for (const { cli, value } of acquiredKeyOptions(key)) {
    const shown = cli === 'drm_a.key' && !a.showKeys ? `${key.kid}:${'*'.repeat(key.key.length)}` : value;
    out.write(`--${cli}=${shown}\n`);
  }
  return 0;
}
