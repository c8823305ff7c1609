// The ingest listener takes the edge's signed URLs (--ingest-token; origin/server/ingest-auth.ts,
// url-token.ts): URLs printed by `origin sign-url` are accepted, and expired, wrong, future,
// malformed and missing tokens are refused with their statuses, the channel unharmed. With Basic
// credentials configured too, either scheme lets an encoder in. The secret never appears in an
// answer.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { media, runOrigin, tempDir } from '../../helpers/fixtures';
import { createChannel, LiveOrigin, startLiveOrigin } from '../../helpers/live';
import { IngestAnswer, loadFixture, TestEncoder } from '../../helpers/test-encoder';
import { startIngestServer } from '../../../origin/server/ingest-server';
import { readTokenRule } from '../../../origin/cli/serve-ingest';
import { UsageError } from '../../../origin/cli/args';
import { signUrl } from '../../../origin/cli/sign-url-command';

const NOW = Math.floor(Date.now() / 1000);
const SECRET = 'ingest-s3cret-value';
const TIMEOUT = 600;
const video = loadFixture(media('video_baseline_400k.ismv'));

let origin: LiveOrigin;

beforeAll(async () => {
  origin = await startLiveOrigin({ token: { secret: SECRET, prefix: 'token', timeout: TIMEOUT, skew: 60 } });
  for (const ch of ['tok', 'other']) await createChannel(origin.root, ch, ['--restart_on_encoder_reconnect']);
});
afterAll(() => origin.close());

const ingestBase = (): string => origin.ingest.url;

/** Pushes the header and two fragments to `<base><channel path>/Streams(v)`. */
async function push(channelUrl: string, credentials?: string): Promise<IngestAnswer> {
  const enc = new TestEncoder({ channelUrl, stream: 'v', fixture: video, anchorSeconds: NOW, credentials });
  await enc.open();
  await enc.send(0, 2);
  return enc.close();
}

const signed = (o: { secret?: string; path?: string; at?: number }): string =>
  ingestBase() +
  signUrl({ secret: o.secret ?? SECRET, prefix: 'token', path: o.path ?? '/live/tok.isml', timestamp: o.at ?? NOW });

const code = (a: IngestAnswer): [number, unknown] => [a.status, a.headers['x-origin-error']];

test('a URL printed by origin sign-url is taken; the channel is the .isml after the token', async () => {
  const r = await runOrigin(['sign-url', '--secret', SECRET, '--time', String(NOW), '/live/tok.isml']);
  expect(r.code).toBe(0);
  const a = await push(ingestBase() + r.stdout.trim());
  expect(a.status).toBe(200);
  expect(a.body).toMatch(/^2 fragments archived/);
  const s = await origin.state('tok');
  expect(s.tracks.map((t) => t.fragments)).toEqual([2]);
  // Not a channel under /token/: the prefix, hash and timestamp are no part of its path.
  expect(fs.existsSync(path.join(origin.root, 'token'))).toBe(false);
});

test('a token past its timestamp + timeout: 403 ingest-token-expired', async () => {
  const a = await push(signed({ at: NOW - TIMEOUT - 30 }));
  expect(code(a)).toEqual([403, 'ingest-token-expired']);
  expect(a.body).not.toContain(SECRET);
});

test('a token signed with another secret, or for another channel: 403 ingest-forbidden', async () => {
  const wrong = await push(signed({ secret: 'not-the-secret' }));
  expect(code(wrong)).toEqual([403, 'ingest-forbidden']);
  expect(wrong.body).not.toContain(SECRET);
  // Signed for /live/other.isml, used on /live/tok.isml: the hash is over the channel's path.
  const url = signed({ path: '/live/other.isml' }).replace('/live/other.isml', '/live/tok.isml');
  expect(code(await push(url))).toEqual([403, 'ingest-forbidden']);
  // One hex digit changed.
  const good = signed({});
  const flipped = good.replace(/\/token\/([0-9a-f])/, (_m, d: string) => `/token/${d === '0' ? '1' : '0'}`);
  expect(code(await push(flipped))).toEqual([403, 'ingest-forbidden']);
});

test('a timestamp ahead of the clock by more than the skew: 403', async () => {
  const a = await push(signed({ at: NOW + 3600 }));
  expect(code(a)).toEqual([403, 'ingest-forbidden']);
  expect(a.body).toMatch(/not valid yet/);
});

test('no token, or a malformed one: 401 ingest-unauthorized without a Basic challenge', async () => {
  const none = await push(`${ingestBase()}/live/tok.isml`);
  expect(code(none)).toEqual([401, 'ingest-unauthorized']);
  expect(none.headers['www-authenticate']).toBeUndefined();
  const short = signed({}).replace(/\/token\/[0-9a-f]/, '/token/');
  expect(code(await push(short))).toEqual([401, 'ingest-unauthorized']);
  expect(code(await push(`${ingestBase()}/token/live/tok.isml`))).toEqual([401, 'ingest-unauthorized']);
});

test('the refused pushes left the channel as it was', async () => {
  const s = await origin.state('tok');
  expect(s.tracks.map((t) => t.fragments)).toEqual([2]);
});

describe('with Basic credentials too', () => {
  let both: Awaited<ReturnType<typeof startIngestServer>>;
  beforeAll(async () => {
    both = await startIngestServer({
      root: origin.root,
      host: '127.0.0.1',
      port: 0,
      credentials: ['enc:basic-pass'],
      token: { secret: SECRET, prefix: '/signed/', timeout: TIMEOUT, skew: 60 },
      sync: false,
    });
  });
  afterAll(() => both.close());

  test('either scheme lets an encoder in; neither: 401 with the Basic challenge', async () => {
    const plain = `${both.url}/live/other.isml`;
    const none = await push(plain);
    expect(code(none)).toEqual([401, 'ingest-unauthorized']);
    expect(none.headers['www-authenticate']).toMatch(/^Basic /);
    expect((await push(plain, 'enc:basic-pass')).status).toBe(200);
    const url = both.url + signUrl({ secret: SECRET, prefix: 'signed', path: '/live/other.isml', timestamp: NOW });
    expect((await push(url)).status).toBe(200);
    // Under the token prefix the token decides, whatever credentials come along.
    const bad = both.url + signUrl({ secret: 'x', prefix: 'signed', path: '/live/other.isml', timestamp: NOW });
    expect(code(await push(bad, 'enc:basic-pass'))).toEqual([403, 'ingest-forbidden']);
  });

  test('a listener with a token may listen beyond loopback', async () => {
    const open = await startIngestServer({
      root: origin.root,
      host: '0.0.0.0',
      port: 0,
      token: { secret: SECRET, prefix: 'token', timeout: 60, skew: 60 },
      sync: false,
    });
    await open.close();
  });
});

describe('--ingest-token files', () => {
  const dir = tempDir('origin-ingest-token-');
  const file = (name: string, text: string): string => {
    fs.writeFileSync(path.join(dir, name), text);
    return path.join(dir, name);
  };

  test('the edge auth_token object, with its defaults', async () => {
    expect(await readTokenRule(file('a.json', `{"secret": "${SECRET}"}`))).toEqual({
      secret: SECRET,
      prefix: 'token',
      timeout: 60,
      skew: 60,
    });
    const full = `{"secret": "k", "prefix": "/live/signed/", "timeout": 86400, "skew": 0}`;
    expect(await readTokenRule(file('b.json', full))).toEqual({
      secret: 'k',
      prefix: '/live/signed/',
      timeout: 86400,
      skew: 0,
    });
  });

  test.each([
    ['no secret', '{"prefix": "token"}', /secret: must be/],
    ['an empty secret', '{"secret": ""}', /secret: must be/],
    ['an unknown member', `{"secret": "${SECRET}", "secrte": 1}`, /unknown member "secrte"/],
    ['a timeout of 0', `{"secret": "${SECRET}", "timeout": 0}`, /timeout: must be an integer from 1/],
    ['a negative skew', `{"secret": "${SECRET}", "skew": -1}`, /skew: must be/],
    ['a prefix with an empty segment', `{"secret": "${SECRET}", "prefix": "a//b"}`, /prefix: must be/],
    ['not JSON', `secret=${SECRET}`, /not JSON/],
    ['an array', '[]', /not a JSON object/],
  ])('%s is refused without showing the secret', async (_name, text, why) => {
    const p = file('bad.json', text);
    const e = await readTokenRule(p).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(UsageError);
    expect((e as Error).message).toMatch(why);
    expect((e as Error).message).not.toContain(SECRET);
  });

  test('a file that is not there', async () => {
    await expect(readTokenRule(path.join(dir, 'none.json'))).rejects.toThrow(/ENOENT/);
  });
});
