// The DRM options at packaging time: stored in the server manifest, masked in a dry run unless
// --show-keys, malformed values refused without echoing them, combinations that cannot work
// refused when the presentation loads, and never accepted from a query string.

import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { media, runOrigin, tempDir } from '../../helpers/fixtures';
import { loadPresentation } from '../../helpers/presentations';
import { OriginError } from '../../../origin/errors';
import { DRM_OPTIONS } from '../../../origin/options/drm-options';
import { get, startTestOrigin, TestOrigin } from '../server/server-helpers';
import { dashWritten } from '../server/written-urls';

const KID = '00112233445566778899aabbccddeeff';
const KEY = '3a2a1b68dd2bd9b2eeb25e84c4776668';
const VIDEO = media('video_baseline_400k.ismv');

async function pack(...options: string[]): Promise<{ code: number; stdout: string; stderr: string; ism: string }> {
  const ism = path.join(tempDir('drm-options-'), 'p.ism');
  const r = await runOrigin(['package', '-q', '-o', ism, VIDEO, ...options]);
  return { ...r, ism };
}

test('the key options are stored in the server manifest head', async () => {
  const r = await pack(`--drm_a.key=${KID}:${KEY}`, '--mpd.protection_scheme=cbcs', '--clear_lead=4');
  expect(r.code).toBe(0);
  const text = readFileSync(r.ism, 'utf8');
  expect(text).toContain(`<meta name="drm_a_key" content="${KID}:${KEY}" />`);
  expect(text).toContain('<meta name="mpd_protection_scheme" content="cbcs" />');
  const p = await loadPresentation(r.ism);
  // One key: the same protection for the video track (index 0).
  expect(p.protection?.dash?.get(0)?.scheme).toBe('cbcs');
  expect(p.protection?.dash?.get(0)?.clearLeadSeconds).toBe(4);
  expect([...p.protection!.formats]).toEqual(['dash']);
});

test('a dry run masks the keys and IVs; --show-keys prints them', async () => {
  const opts = [`--iss.key=${KID}:${KEY}`, '--iss.key_iv=0x0011223344556677'];
  const masked = await runOrigin(['package', '-o', 'stdout:', VIDEO, ...opts]);
  expect(masked.code).toBe(0);
  expect(masked.stdout).toContain(`<meta name="iss_key" content="${KID}:********************************" />`);
  expect(masked.stdout).toContain('<meta name="iss_key_iv" content="****************" />');
  expect(masked.stdout + masked.stderr).not.toContain(KEY);
  const shown = await runOrigin(['package', '-o', 'stdout:', '--show-keys', VIDEO, ...opts]);
  expect(shown.stdout).toContain(`content="${KID}:${KEY}"`);
});

test('a dry run masks every secret DRM option, whatever its spelling', async () => {
  const HLS_KEY = 'c0ffee00c0ffee00c0ffee00c0ffee00';
  const HLS_IV = 'feedface00112233feedface00112233';
  const opts = [
    `--drm_a.key=${KID}:${KEY}`,
    `--iss_key=${KID}:${KEY}`,
    '--iss.key_iv=0x5a5a5a5a5a5a5a5a',
    `--hls.key=:${HLS_KEY}`,
    `--hls_key_iv=${HLS_IV}`,
    '--hls.license_server_url=https://keys.example/k',
  ];
  // Every option flagged secret in the registry is among them (cpix: cpix-encryption.test.ts).
  const given = new Set(opts.map((o) => o.slice(2, o.indexOf('=')).replace(/\./g, '_')));
  const secret = DRM_OPTIONS.filter((o) => o.secret === true && o.name !== 'cpix').map((o) => o.name);
  expect(secret.filter((n) => !given.has(n))).toEqual([]);
  const masked = await runOrigin(['package', '-o', 'stdout:', VIDEO, ...opts]);
  expect(masked.code).toBe(0);
  for (const name of secret)
    expect(masked.stdout).toMatch(new RegExp(`<meta name="${name}" content="[0-9a-f]*:?\\*+" />`));
  for (const secretValue of [KEY, HLS_KEY, HLS_IV, '5a5a5a5a5a5a5a5a'])
    expect([secretValue, (masked.stdout + masked.stderr).includes(secretValue)]).toEqual([secretValue, false]);
  const shown = await runOrigin(['package', '-o', 'stdout:', '--show-keys', VIDEO, ...opts]);
  for (const secretValue of [KEY, HLS_KEY, HLS_IV, '5a5a5a5a5a5a5a5a']) expect(shown.stdout).toContain(secretValue);
});

test.each([
  [`--drm_a.key=${KID}`, '--drm_a.key: the value (not shown) is not valid'],
  [`--drm_a.key=${KID}:${KEY.slice(1)}`, '--drm_a.key: the value (not shown) is not valid'],
  [`--iss.key_iv=${KEY}`, '--iss.key_iv: the value (not shown) is not valid'],
  ['--mpd.protection_scheme=cbc1', '"cbc1" is not allowed; use one of: cenc, cbcs'],
  ['--drm_a.license_server_url=not a url', 'give an absolute URL'],
])('%s is refused without echoing it', async (option, message) => {
  const r = await pack(option);
  expect(r.code).not.toBe(0);
  expect(r.stderr).toContain(message);
  expect(r.stderr).not.toContain(KEY);
  expect(r.stderr).not.toContain(KEY.slice(1));
});

test.each([
  [[`--drm_a.key=${KID}:${KEY}`, `--iss.key=${KID}:${'0'.repeat(32)}`], 'must be the same key pair'],
  [['--drm_a.drm_specific_data=CAESEAA='], '--drm_a.drm_specific_data needs --drm_a.key'],
  [['--iss.key_iv=0011223344556677'], '--iss.key_iv needs --iss.key'],
  [['--clearkey.license_server_url=http://127.0.0.1/license'], 'needs a key'],
])('%j: the presentation does not load, and says why', async (options, message) => {
  const r = await pack(...options);
  expect(r.code).toBe(0); // each option is well-formed; together they are not
  const e = await loadPresentation(r.ism).catch((x: unknown) => x);
  expect(e).toBeInstanceOf(OriginError);
  expect((e as OriginError).message).toContain(message);
  expect((e as OriginError).message).not.toContain(KEY);
});

test('a whole pssh box given as drm_a data is used as it is', async () => {
  // A version 0 pssh of drm_a's system id with no data: 32 bytes.
  const box = Buffer.from('0000002070737368' + '00000000' + 'edef8ba979d64acea3c827dcd51d21ed' + '00000000', 'hex');
  const r = await pack(`--drm_a.key=${KID}:${KEY}`, `--drm_a.drm_specific_data=${box.toString('base64')}`);
  const p = await loadPresentation(r.ism);
  const drmA = p.protection!.dash!.get(0)!.systems.find((s) => s.systemId.startsWith('edef8ba9'))!;
  expect(Buffer.from(drmA.pssh!).equals(box)).toBe(true);
});

describe('never from a query string', () => {
  let origin: TestOrigin;
  // HDS of the protected presentation is 403 protected-format whatever the query: the clear one's here.
  const urls: string[] = ['/p.ism/.mpd', '/p.ism/Manifest', '/p.ism/.m3u8', '/c.ism/.mpd', '/c.ism/.f4m'];

  beforeAll(async () => {
    origin = await startTestOrigin(
      { p: ['video_baseline_400k.ismv'], c: ['video_baseline_400k.ismv'] },
      {
        p: [
          `--drm_a.key=${KID}:${KEY}`,
          `--iss.key=${KID}:${KEY}`,
          `--hls.key=:${KEY}`,
          '--hls.license_server_url=https://keys.example/k',
        ],
      },
    );
    // A media segment and an init segment URL too: every request reads the query.
    const mpd = await get(origin.url, '/p.ism/.mpd');
    const written = dashWritten(mpd.text, `${origin.url}/p.ism/.mpd`);
    for (const kind of ['init', 'media']) urls.push(new URL(written.find((w) => w.kind === kind)!.url).pathname);
  }, 60_000);

  afterAll(() => origin?.server.close());

  test('the URLs answer without a query', async () => {
    for (const url of urls) {
      const r = await get(origin.url, url);
      expect([url, r.status]).toEqual([url, 200]);
    }
  });

  // Reference §1.2: every stream option may be a query parameter except those of DRM and archiving.
  test.each(DRM_OPTIONS.flatMap((o) => [o.name, o.cli]).filter((n, i, all) => all.indexOf(n) === i))(
    '?%s=… → 400 bad-option naming it, on every manifest and segment URL, clear or protected',
    async (name) => {
      for (const url of urls) {
        const r = await get(origin.url, `${url}?${name}=${KID}:${KEY}`);
        expect([url, r.status, r.headers['x-origin-error']]).toEqual([url, 400, 'bad-option']);
        expect(r.text).toContain(name);
        expect(r.text).not.toContain(KEY);
      }
    },
  );
});
