// Key acquisition over HTTPS: the test key server serves a certificate made here with openssl.
// The built CLI (bin/origin.js, as a separate process) trusts it through NODE_EXTRA_CA_CERTS, which
// node reads at start-up, and gets the key; without that CA the TLS failure is named (exit 1).

import { readFileSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { ROOT, runOrigin, tempDir } from '../../helpers/fixtures';
import { SIGNER, SIGNING_IV, SIGNING_KEY, startKeyServer, TestKeyServer, TRACK_KEYS } from '../../helpers/key-server';
import { run, runSync } from '../../helpers/process';

const dir = tempDir('keys-https-');
const CERT = path.join(dir, 'cert.pem');
let server: TestKeyServer;

beforeAll(async () => {
  const made = runSync('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-subj',
    '/CN=127.0.0.1',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
    '-days',
    '1',
    '-keyout',
    path.join(dir, 'key.pem'),
    '-out',
    CERT,
  ]);
  expect(made.code).toBe(0);
  server = await startKeyServer({
    key: readFileSync(path.join(dir, 'key.pem'), 'utf8'),
    cert: readFileSync(CERT, 'utf8'),
  });
});

afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

const args = (): string[] => [
  'keys',
  `--key_server_url=${server.url}`,
  '--content_id=over-tls',
  `--signer=${SIGNER}`,
  `--aes_signing_key=${SIGNING_KEY}`,
  `--aes_signing_iv=${SIGNING_IV}`,
];

test('with the CA trusted, the key comes over HTTPS', async () => {
  const r = await run(process.execPath, [path.join(ROOT, 'bin', 'origin.js'), ...args()], {
    NODE_EXTRA_CA_CERTS: CERT,
  });
  expect([r.code, r.stderr]).toEqual([0, `key server ${server.url}: SD key pair, KID ${TRACK_KEYS.SD!.kid}\n`]);
  expect(r.stdout).toMatch(new RegExp(`^--drm_a.key=${TRACK_KEYS.SD!.kid}:\\*{32}\\n--drm_a.drm_specific_data=`));
  expect(server.received.map((x) => x.signatureValid)).toEqual([true]);
}, 30_000);

test('a certificate nobody vouches for is a named TLS failure, exit code 1', async () => {
  const r = await runOrigin(args());
  expect([r.code, r.stdout]).toEqual([1, '']);
  expect(r.stderr).toBe(`origin keys: error: key server ${server.url}: TLS failed (DEPTH_ZERO_SELF_SIGNED_CERT)\n`);
});
