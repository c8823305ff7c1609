// The key acquisition options as `origin keys` and `origin package` take them
// (origin/options/key-server-options.ts), and the one call both make with them. Values are checked
// as they are read (a bad signing key or IV is refused without being echoed); which options go
// together is checked once all are read.

import { OriginError } from '../errors';
import { acquireKey, KeyServer, shownUrl } from '../drm/key-client';
import { AcquiredKey, KeyRequest, KeyTrackType } from '../drm/key-request';
import { KEY_SERVER_OPTIONS, keyServerOption } from '../options/key-server-options';
import { parseOptionValue } from '../options/registry';
import { UsageError } from './args';

/** Options without which no request can be made (the rest have defaults). */
const REQUIRED = ['key_server_url', 'content_id', 'signer', 'aes_signing_key', 'aes_signing_iv'];

export class KeyServerArgs {
  private readonly values = new Map<string, string | number>();

  /** Whether `flag` (without `--`) is a key acquisition option. */
  static isOption(flag: string): boolean {
    return keyServerOption(flag) !== undefined;
  }

  /** Reads one `--flag=value`; a bad value or a repeated option is a usage error. */
  take(flag: string, value: string | undefined): void {
    const spec = keyServerOption(flag)!;
    if (this.values.has(spec.name)) throw new UsageError(`--${flag} is given twice`);
    try {
      this.values.set(spec.name, parseOptionValue(spec, value, `--${flag}`) as string | number);
    } catch (e) {
      if (e instanceof OriginError) throw new UsageError(e.message);
      throw e;
    }
  }

  /** Whether any key acquisition option was given. */
  get given(): boolean {
    return this.values.size > 0;
  }

  /** The key server and the request to send it; a usage error when an option it needs is missing. */
  request(): { server: KeyServer; request: KeyRequest } {
    const missing = REQUIRED.filter((n) => !this.values.has(n));
    if (missing.length > 0) {
      const given = [...this.values.keys()].map((n) => `--${n}`).join(', ');
      throw new UsageError(
        `asking a key server needs ${REQUIRED.map((n) => `--${n}`).join(', ')}; missing: ${missing.map((n) => `--${n}`).join(', ')}${given ? ` (given: ${given})` : ''}`,
      );
    }
    const value = (name: string): string | number => {
      const v = this.values.get(name);
      if (v !== undefined) return v;
      return KEY_SERVER_OPTIONS.find((o) => o.name === name)!.default as string | number;
    };
    const str = (name: string): string => String(value(name));
    return {
      server: { url: str('key_server_url'), timeoutMs: Number(value('key_server_timeout')) * 1000 },
      request: {
        contentId: str('content_id'),
        trackType: str('key_track_type') as KeyTrackType,
        policy: str('policy'),
        signer: str('signer'),
        signingKey: Uint8Array.from(Buffer.from(str('aes_signing_key'), 'hex')),
        signingIv: Uint8Array.from(Buffer.from(str('aes_signing_iv'), 'hex')),
      },
    };
  }
}

/** Asks the key server; a line on `progress` says what came back (the KID, never the key). */
export async function acquire(args: KeyServerArgs, progress: (line: string) => void): Promise<AcquiredKey> {
  const { server, request } = args.request();
  const key = await acquireKey(server, request);
  progress(`key server ${shownUrl(server.url)}: ${key.trackType} key pair, KID ${key.kid}`);
  return key;
}
