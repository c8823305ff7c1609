// Key acquisition from the command line, against a real key server on loopback
// (test/helpers/key-server.ts) that verifies each request's signature: `origin keys` prints the
// options, `origin package` writes them into the .ism; every failure is exit code 1 with a message
// that names it, and `origin package` then writes nothing (an existing .ism stays as it was). No run
// prints the content key (except `--show-keys` on stdout) or the signer's key or IV.

import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { media, runOrigin, tempDir } from '../../helpers/fixtures';
import {
  KeyServerFault,
  psshDataOf,
  SIGNER,
  SIGNING_IV,
  SIGNING_KEY,
  startKeyServer,
  TestKeyServer,
  TRACK_KEYS,
} from '../../helpers/key-server';

const VIDEO = media('video_baseline_400k.ismv');
const CONTENT_ID = 'tears-of-steel';
const SD = TRACK_KEYS.SD!;

let server: TestKeyServer;
beforeAll(async () => {
  server = await startKeyServer();
});
afterAll(() => server.close());
beforeEach(() => {
  server.fault = undefined;
  server.received.length = 0;
});

/** Every secret in every spelling a leak could take. */
const CONTENT_KEYS = Object.values(TRACK_KEYS).flatMap((k) => spellings(k.key));
const SIGNER_SECRETS = [...spellings(SIGNING_KEY), ...spellings(SIGNING_IV)];

function spellings(hex: string): string[] {
  const b64 = Buffer.from(hex, 'hex').toString('base64');
  return [hex.toLowerCase(), hex.toUpperCase(), b64, b64.replace(/=+$/, '')];
}

const keyArgs = (url = server.url, over: string[] = []): string[] => [
  `--key_server_url=${url}`,
  `--content_id=${CONTENT_ID}`,
  `--signer=${SIGNER}`,
  `--aes_signing_key=${SIGNING_KEY}`,
  `--aes_signing_iv=${SIGNING_IV}`,
  ...over,
];

/** Runs `origin <args>` and checks that no secret reached its output (the CEK allowed on stdout with --show-keys). */
async function origin(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const r = await runOrigin(args);
  const shown = args.includes('--show-keys');
  for (const secret of [...CONTENT_KEYS, ...SIGNER_SECRETS]) {
    expect([secret, r.stderr.includes(secret)]).toEqual([secret, false]);
    if (!(shown && CONTENT_KEYS.includes(secret))) expect([secret, r.stdout.includes(secret)]).toEqual([secret, false]);
  }
  return r;
}

const SD_DATA = psshDataOf(SD.kid, Buffer.from(CONTENT_ID)).toString('base64');

describe('origin keys', () => {
  test('asks with a signed request and prints the options, the key masked', async () => {
    const r = await origin(['keys', ...keyArgs()]);
    expect(r).toEqual({
      code: 0,
      stdout: `--drm_a.key=${SD.kid}:${'*'.repeat(32)}\n--drm_a.drm_specific_data=${SD_DATA}\n`,
      stderr: `key server ${server.url}: SD key pair, KID ${SD.kid}\n`,
    });
    expect(server.received).toEqual([
      {
        signer: SIGNER,
        signatureValid: true,
        request: {
          content_id: Buffer.from(CONTENT_ID).toString('base64'),
          tracks: [{ type: 'SD' }],
          drm_types: ['WIDEVINE'],
          policy: '',
        },
      },
    ]);
  });

  test('--show-keys prints the key; --key_track_type and --policy go into the request; -q is quiet', async () => {
    const r = await origin([
      'keys',
      '-q',
      '--show-keys',
      ...keyArgs(server.url, ['--key_track_type=AUDIO', '--policy=p1']),
    ]);
    const audio = TRACK_KEYS.AUDIO!;
    expect(r.stdout).toBe(
      `--drm_a.key=${audio.kid}:${audio.key}\n--drm_a.drm_specific_data=${psshDataOf(audio.kid, Buffer.from(CONTENT_ID)).toString('base64')}\n`,
    );
    expect(r.stderr).toBe('');
    expect(server.received[0]!.request).toMatchObject({ tracks: [{ type: 'AUDIO' }], policy: 'p1' });
  });

  test('the separated form of the options works too', async () => {
    const args = keyArgs().flatMap((a) => a.split(/=(.*)/s).slice(0, 2));
    expect((await origin(['keys', ...args])).code).toBe(0);
  });
});

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

const WRONG_KEY = SIGNING_KEY.replace(/^1f/, '2f');
const WRONG_IV = SIGNING_IV.replace(/^0a/, '0b');

interface Failure {
  fault?: KeyServerFault;
  args?: () => Promise<string[]>;
  message: RegExp;
}

const FAILURES: Record<string, Failure> = {
  'connection refused': {
    args: async () => keyArgs(`http://127.0.0.1:${await closedPort()}/keys`),
    message: /key server http:\/\/127\.0\.0\.1:\d+\/keys: cannot reach it \(ECONNREFUSED\)/,
  },
  timeout: {
    fault: 'hang',
    args: async () => keyArgs(server.url, ['--key_server_timeout=1']),
    message: /no answer within 1 s \(--key_server_timeout\)/,
  },
  'HTTP 500': { fault: 'http-500', message: /answered HTTP 500 Internal Server Error, not 200/ },
  'a redirect (not followed)': { fault: 'redirect', message: /answered HTTP 302 Found, not 200/ },
  'status not OK': { fault: 'status-not-ok', message: /answered status "POLICY_UNKNOWN" instead of "OK"/ },
  'wrong signing key': {
    args: async () => keyArgs(server.url, []).map((a) => a.replace(SIGNING_KEY, WRONG_KEY)),
    message: /rejected the request's signature \(status SIGNATURE_FAILED\): check --signer, --aes_signing_key/,
  },
  'wrong signing IV': {
    args: async () => keyArgs(server.url, []).map((a) => a.replace(SIGNING_IV, WRONG_IV)),
    message: /rejected the request's signature/,
  },
  'unknown signer': {
    args: async () => keyArgs(server.url, []).map((a) => a.replace(`=${SIGNER}`, '=someone_else')),
    message: /rejected the request's signature/,
  },
  'not JSON': { fault: 'not-json', message: /malformed answer: the answer is not JSON/ },
  'response not Base64': { fault: 'response-not-base64', message: /malformed answer: response is not Base64/ },
  'no tracks': { fault: 'no-tracks', message: /malformed answer: tracks is missing/ },
  'key not Base64': { fault: 'key-not-base64', message: /malformed answer: tracks\[0\]\.key is not Base64/ },
  'key of 8 bytes': { fault: 'short-key', message: /malformed answer: tracks\[0\]\.key is 8 bytes, not 16/ },
  'KID of 20 bytes': { fault: 'long-kid', message: /malformed answer: tracks\[0\]\.key_id is 20 bytes, not 16/ },
  'two key pairs': {
    fault: 'two-pairs',
    message:
      /answered 2 different key pairs \(tracks SD, HD\); one key pair encrypts every track here: several keys need CPIX/,
  },
  'no pssh of the DRM': { fault: 'no-pssh', message: /tracks\[0\]\.pssh has no entry of drm_type "WIDEVINE"/ },
  'pssh box of other data': { fault: 'boxes-mismatch', message: /tracks\[0\]\.pssh\[0\]\.boxes holds other data/ },
  'no drm entry': { fault: 'no-drm', message: /malformed answer: drm lists no system edef8ba9/ },
  'an answer over 1 MiB': { fault: 'oversize', message: /malformed answer: larger than 1048576 bytes/ },
};

describe.each(Object.entries(FAILURES))('%s', (_name, failure) => {
  test('origin keys: exit code 1 and the message, nothing on stdout', async () => {
    server.fault = failure.fault;
    const args = failure.args ? await failure.args() : keyArgs();
    const r = await origin(['keys', ...args]);
    expect([r.code, r.stdout]).toEqual([1, '']);
    expect(r.stderr).toMatch(/^origin keys: error: key server http:\/\/127\.0\.0\.1:\d+\//);
    expect(r.stderr).toMatch(failure.message);
    expect(r.stderr.split('\n')).toHaveLength(2); // one line
  }, 10_000);

  test('origin package: exit code 1, no .ism written, an existing one left as it was', async () => {
    server.fault = failure.fault;
    const args = failure.args ? await failure.args() : keyArgs();
    const dir = tempDir('keys-fail-');
    const fresh = path.join(dir, 'fresh.ism');
    const r = await origin(['package', '-o', fresh, VIDEO, ...args]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(failure.message);
    expect(existsSync(fresh)).toBe(false);
    const kept = path.join(dir, 'kept.ism');
    writeFileSync(kept, 'the previous server manifest');
    expect((await origin(['package', '-o', kept, VIDEO, ...args])).code).toBe(1);
    expect(readFileSync(kept, 'utf8')).toBe('the previous server manifest');
    expect(readdirSync(dir)).toEqual(['kept.ism']); // no temporary file left either
  }, 10_000);
});

describe('origin package with the key options', () => {
  test('writes the KID and key as hex and the PSSH data as given into the .ism', async () => {
    const ism = path.join(tempDir('keys-ok-'), 'movie.ism');
    const r = await origin(['package', '-o', ism, VIDEO, ...keyArgs()]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`key server ${server.url}: SD key pair, KID ${SD.kid}\n`);
    const text = readFileSync(ism, 'utf8');
    expect(text).toContain(`<meta name="drm_a_key" content="${SD.kid}:${SD.key}" />`);
    expect(text).toContain(`<meta name="drm_a_drm_specific_data" content="${SD_DATA}" />`);
    // Nothing of the request is stored: the signer's credentials are not the content's.
    for (const word of ['key_server', 'signer', 'signing', CONTENT_ID]) expect(text).not.toContain(word);
  });

  test('a dry run masks the key; --show-keys prints it', async () => {
    const masked = await origin(['package', '-o', 'stdout:', VIDEO, ...keyArgs()]);
    expect(masked.stdout).toContain(`<meta name="drm_a_key" content="${SD.kid}:${'*'.repeat(32)}" />`);
    const shown = await origin(['package', '-o', 'stdout:', '--show-keys', VIDEO, ...keyArgs()]);
    expect(shown.stdout).toContain(`<meta name="drm_a_key" content="${SD.kid}:${SD.key}" />`);
  });

  test('goes with the other DRM options: a license URL, cbcs, the same pair for PlayReady', async () => {
    const ism = path.join(tempDir('keys-with-'), 'movie.ism');
    const extra = ['--drm_a.license_server_url=https://license.example/a', '--mpd.protection_scheme=cbcs'];
    const r = await origin(['package', '-o', ism, VIDEO, ...extra, `--iss.key=${SD.kid}:${SD.key}`, ...keyArgs()]);
    expect(r.code).toBe(0);
    expect(readFileSync(ism, 'utf8')).toContain('<meta name="drm_a_license_server_url"');
  });

  test('another pair given for PlayReady is refused before anything is written', async () => {
    const ism = path.join(tempDir('keys-clash-'), 'movie.ism');
    const r = await origin(['package', '-o', ism, VIDEO, `--iss.key=${SD.kid}:${'0'.repeat(32)}`, ...keyArgs()]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('--drm_a.key and --iss.key must be the same key pair');
    expect(existsSync(ism)).toBe(false);
  });
});

describe('command-line errors: exit code 2, no request sent, no secret echoed', () => {
  test.each([
    [
      '--drm_a.key',
      `--drm_a.key=${SD.kid}:${SD.key}`,
      /--drm_a.key is what the key server gives: give it or --key_server_url, not both/,
    ],
    [
      '--drm_a.drm_specific_data',
      '--drm_a.drm_specific_data=AAAA',
      /--drm_a.drm_specific_data is what the key server gives/,
    ],
  ])('origin package %s and a key server', async (_name, extra, message) => {
    const r = await origin(['package', '-o', 'stdout:', VIDEO, extra, ...keyArgs()]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  test.each([
    [() => keyArgs().filter((a) => !a.startsWith('--signer=')), /missing: --signer/],
    [() => keyArgs().filter((a) => !a.startsWith('--aes_signing_')), /missing: --aes_signing_key, --aes_signing_iv/],
    [() => [`--content_id=${CONTENT_ID}`], /asking a key server needs --key_server_url, .*; missing: --key_server_url/],
    [() => keyArgs(server.url, [`--aes_signing_key=${SIGNING_KEY}`]), /--aes_signing_key is given twice/],
    [
      () => keyArgs().map((a) => a.replace(SIGNING_KEY, SIGNING_KEY.slice(2))),
      /--aes_signing_key: the value \(not shown\) is not valid: give 64 hexadecimal digits/,
    ],
    [
      () => keyArgs().map((a) => a.replace(SIGNING_IV, `${SIGNING_IV}00`)),
      /--aes_signing_iv: the value \(not shown\) is not valid: give 32 hexadecimal digits/,
    ],
    [() => keyArgs(server.url, ['--key_track_type=XL']), /"XL" is not allowed; use one of: SD, HD, UHD1, UHD2, AUDIO/],
    [() => keyArgs(server.url, ['--key_server_timeout=0']), /--key_server_timeout: 0 is out of range 1..600/],
    [
      () => keyArgs('ftp://127.0.0.1/keys'),
      /--key_server_url: "ftp:\/\/127.0.0.1\/keys" is not valid: give an http:\/\/ or https:\/\/ URL/,
    ],
    [
      () => keyArgs(server.url, [`--aes_signing_kye=${SIGNING_KEY}`]),
      /unexpected argument --aes_signing_kye \(see origin keys --help\)/,
    ],
  ])('origin keys %#', async (args, message) => {
    const r = await origin(['keys', ...args()]);
    expect([r.code, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toMatch(message);
    expect(server.received).toEqual([]);
  });

  test('origin package rendering a client manifest takes no key server options', async () => {
    const ism = path.join(tempDir('keys-render-'), 'clear.ism');
    expect((await origin(['package', '-q', '-o', ism, VIDEO])).code).toBe(0);
    const r = await origin(['package', '-o', 'stdout:', ism, '.mpd', ...keyArgs()]);
    expect([r.code, r.stderr]).toEqual([
      2,
      'origin package: key acquisition options make a server manifest, not a client manifest\n',
    ]);
    expect(server.received).toEqual([]);
  });

  test('origin keys with no options, and origin package with a misspelt one', async () => {
    expect((await origin(['keys'])).stderr).toMatch(/give --key_server_url and the signer options/);
    const r = await origin(['package', '-o', 'stdout:', VIDEO, `--aes_signing_kye=${SIGNING_KEY}`]);
    expect([r.code, r.stderr]).toEqual([
      2,
      expect.stringMatching(/unknown option --aes_signing_kye; did you mean --aes_signing_key\?/),
    ]);
  });
});
