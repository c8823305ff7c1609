// Where the S3 storage's credentials come from, in the order the AWS SDKs and CLI look: the
// environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN), else a profile of the
// shared credentials file (AWS_SHARED_CREDENTIALS_FILE, else ~/.aws/credentials; the profile from
// the location's `s3_profile`, else AWS_PROFILE, else "default"). The values never leave this
// module and the signer: no message, log line or response carries them (they are not even named in
// an error: "the profile has no aws_secret_access_key" says what is missing, not what is there).

import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { originError } from '../../errors';

export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/**
 * The sections of an INI text (the shared credentials file's format): `[name]` lines open a
 * section, `key = value` lines fill it; `#` and `;` start comment lines. Pure.
 */
export function parseIni(text: string): Map<string, Map<string, string>> {
  const sections = new Map<string, Map<string, string>>();
  let current: Map<string, string> | undefined;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[\s*([^\]]+?)\s*\]$/.exec(line);
    if (header !== null) {
      // The config file's `[profile name]` spelling is accepted too.
      const name = header[1]!.replace(/^profile\s+/, '');
      current = sections.get(name) ?? new Map<string, string>();
      sections.set(name, current);
      continue;
    }
    const eq = line.indexOf('=');
    if (eq <= 0 || current === undefined) continue;
    current.set(line.slice(0, eq).trim().toLowerCase(), line.slice(eq + 1).trim());
  }
  return sections;
}

/** The credentials in the environment, or undefined when it has none (both keys needed). */
export function environmentCredentials(env: NodeJS.ProcessEnv): S3Credentials | undefined {
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  if (accessKeyId === undefined || accessKeyId === '' || secretAccessKey === undefined || secretAccessKey === '')
    return undefined;
  const sessionToken = env.AWS_SESSION_TOKEN;
  return sessionToken === undefined || sessionToken === ''
    ? { accessKeyId, secretAccessKey }
    : { accessKeyId, secretAccessKey, sessionToken };
}

/** The credentials of `profile` in a shared credentials file's text; errors name file and profile. */
export function profileCredentials(text: string, profile: string, file: string): S3Credentials {
  const section = parseIni(text).get(profile);
  if (section === undefined) throw denied(`${file} has no profile "${profile}"`);
  const accessKeyId = section.get('aws_access_key_id');
  const secretAccessKey = section.get('aws_secret_access_key');
  if (accessKeyId === undefined || accessKeyId === '') throw denied(`${file} [${profile}] has no aws_access_key_id`);
  if (secretAccessKey === undefined || secretAccessKey === '')
    throw denied(`${file} [${profile}] has no aws_secret_access_key`);
  const sessionToken = section.get('aws_session_token');
  return sessionToken === undefined || sessionToken === ''
    ? { accessKeyId, secretAccessKey }
    : { accessKeyId, secretAccessKey, sessionToken };
}

/** The shared credentials file the environment names, else ~/.aws/credentials. */
export function credentialsFile(env: NodeJS.ProcessEnv): string {
  const named = env.AWS_SHARED_CREDENTIALS_FILE;
  return named !== undefined && named !== '' ? named : path.join(os.homedir(), '.aws', 'credentials');
}

/**
 * The credentials a location signs with: the environment's, else the profile's in the shared
 * file (read once per call; the caller keeps the promise). Fails with storage-denied.
 */
export async function resolveCredentials(
  profile: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Promise<S3Credentials> {
  // A profile named in the configuration is meant: it wins over the environment's keys.
  if (profile === undefined) {
    const fromEnv = environmentCredentials(env);
    if (fromEnv !== undefined) return fromEnv;
  }
  const file = credentialsFile(env);
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (e) {
    throw denied(
      `no AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY in the environment and ${file} cannot be read ` +
        `(${(e as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  const name = profile ?? (env.AWS_PROFILE !== undefined && env.AWS_PROFILE !== '' ? env.AWS_PROFILE : 'default');
  return profileCredentials(text, name, file);
}

function denied(why: string): Error {
  return originError('storage-denied', `S3 credentials: ${why}`);
}
