// The S3 storage's pieces without a server: the SigV4 signature of our signer (io/remote/s3-signer.ts,
// @smithy/signature-v4 underneath) against AWS's published example, the independent check of
// test/helpers/signature-gate.ts against the same example, credentials from the environment and
// the shared file, and the bucket's base URL in both styles.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { OriginError } from '../../../origin/errors';
import {
  environmentCredentials,
  parseIni,
  profileCredentials,
  resolveCredentials,
} from '../../../origin/io/remote/s3-credentials';
import { encodeS3, parseS3Url, s3BaseUrl } from '../../../origin/io/remote/s3-address';
import { s3Signer } from '../../../origin/io/remote/s3-signer';
import { tempDir } from '../../helpers/fixtures';
import { expectedSignature } from '../../helpers/signature-gate';

// AWS's documented example "GET Object" request of the S3 API reference's SigV4 header-signing
// page: these keys, this time and request, this signature (facts of the published example).
const EXAMPLE = {
  accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  date: new Date(Date.UTC(2013, 4, 24)),
  url: 'https://examplebucket.s3.amazonaws.com/test.txt',
  range: 'bytes=0-9',
  authorization:
    'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,' +
    'SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,' +
    'Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41',
  emptyHash: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
};

test("the signer signs AWS's published GET Object example to its published signature", async () => {
  const sign = s3Signer({ region: 'us-east-1', credentials: async () => EXAMPLE, now: () => EXAMPLE.date });
  const h = await sign('GET', new URL(EXAMPLE.url), { range: EXAMPLE.range });
  // The example separates the fields with ',' and the signer with ', ': both are the header's grammar.
  expect(h.authorization!.replace(/, /g, ',')).toBe(EXAMPLE.authorization);
  expect(h['x-amz-date']).toBe('20130524T000000Z');
  expect(h['x-amz-content-sha256']).toBe(EXAMPLE.emptyHash);
  expect(h['x-amz-security-token']).toBeUndefined();
});

test('a session token is sent and signed', async () => {
  const sign = s3Signer({
    region: 'eu-west-1',
    credentials: async () => ({ ...EXAMPLE, sessionToken: 'TOKEN' }),
    now: () => EXAMPLE.date,
  });
  const h = await sign('HEAD', new URL(EXAMPLE.url), {});
  expect(h['x-amz-security-token']).toBe('TOKEN');
  expect(h.authorization).toContain('/20130524/eu-west-1/s3/aws4_request');
  expect(h.authorization).toMatch(/SignedHeaders=[a-z0-9;-]*x-amz-security-token/);
});

test("the gate's own check agrees with the published example, and refuses another secret", () => {
  const req = {
    method: 'GET',
    url: '/test.txt',
    headers: {
      host: 'examplebucket.s3.amazonaws.com',
      range: EXAMPLE.range,
      'x-amz-date': '20130524T000000Z',
      'x-amz-content-sha256': EXAMPLE.emptyHash,
      authorization: EXAMPLE.authorization,
    },
  };
  const right = expectedSignature(req, EXAMPLE.secretAccessKey);
  expect(typeof right).toBe('object');
  expect(right).toEqual({ given: expect.any(String), expected: (right as { given: string }).given });
  const wrong = expectedSignature(req, 'another secret') as { given: string; expected: string };
  expect(wrong.expected).not.toBe(wrong.given);
});

test('the signer and the gate agree on a key with characters S3 escapes', async () => {
  const sign = s3Signer({ region: 'us-east-1', credentials: async () => EXAMPLE });
  const base = s3BaseUrl({ bucket: 'media', prefix: 'a b/(1)!/' }, 'http://127.0.0.1:9000', 'path');
  const url = new URL(encodeS3("x*'y.ismv"), base);
  expect(url.pathname).toBe('/media/a%20b/%281%29%21/x%2A%27y.ismv');
  const headers = await sign('GET', url, { range: 'bytes=0-1' });
  const check = expectedSignature({ method: 'GET', url: url.pathname, headers }, EXAMPLE.secretAccessKey);
  expect(check).toEqual({ given: expect.any(String), expected: (check as { given: string }).given });
});

test('base URLs: virtual-host and path style, an endpoint with a path', () => {
  const s3 = { bucket: 'my-bucket', prefix: 'vod/2024/' };
  expect(s3BaseUrl(s3, 'https://s3.eu-west-1.amazonaws.com', 'virtual-host').href).toBe(
    'https://my-bucket.s3.eu-west-1.amazonaws.com/vod/2024/',
  );
  expect(s3BaseUrl(s3, 'https://s3.eu-west-1.amazonaws.com', 'path').href).toBe(
    'https://s3.eu-west-1.amazonaws.com/my-bucket/vod/2024/',
  );
  expect(s3BaseUrl({ bucket: 'b12', prefix: '' }, 'http://minio.local:9000/s3', 'path').href).toBe(
    'http://minio.local:9000/s3/b12/',
  );
});

test.each([
  ['s3://media/', { bucket: 'media', prefix: '' }],
  ['s3://media.example/a/b/', { bucket: 'media.example', prefix: 'a/b/' }],
])('parseS3Url(%s)', (v, want) => expect(parseS3Url(v)).toEqual(want));

test.each([
  ['s3://media', /expected s3:\/\/bucket\/prefix\//],
  ['s3://Media/', /not an S3 bucket name/],
  ['s3://ab/', /not an S3 bucket name/],
  ['s3://a..b/', /not an S3 bucket name/],
  ['s3://media/a', /end it with "\/"/],
  ['s3://media/a//b/', /empty, "." or ".." segment/],
  ['s3://media/../', /empty, "." or ".." segment/],
  ['s3://media/a?x=1/', /expected s3:\/\//],
])('parseS3Url(%s) is refused', (v, why) => expect(parseS3Url(v)).toMatch(why));

test('the INI reader: sections, [profile x], comments, spaces', () => {
  const ini = parseIni('# c\n[default]\naws_access_key_id = A \n; c\n[profile p]\nAWS_SECRET_ACCESS_KEY=S=x\n');
  expect(ini.get('default')?.get('aws_access_key_id')).toBe('A');
  expect(ini.get('p')?.get('aws_secret_access_key')).toBe('S=x');
});

test('credentials from the environment: both keys needed, the token optional', () => {
  expect(environmentCredentials({ AWS_ACCESS_KEY_ID: 'A', AWS_SECRET_ACCESS_KEY: 'S' })).toEqual({
    accessKeyId: 'A',
    secretAccessKey: 'S',
  });
  expect(
    environmentCredentials({ AWS_ACCESS_KEY_ID: 'A', AWS_SECRET_ACCESS_KEY: 'S', AWS_SESSION_TOKEN: 'T' }),
  ).toEqual({ accessKeyId: 'A', secretAccessKey: 'S', sessionToken: 'T' });
  expect(environmentCredentials({ AWS_ACCESS_KEY_ID: 'A' })).toBeUndefined();
  expect(environmentCredentials({ AWS_SECRET_ACCESS_KEY: 'S', AWS_ACCESS_KEY_ID: '' })).toBeUndefined();
});

test('a profile without a secret, or no such profile: storage-denied naming what is missing, never a value', () => {
  const text = '[p]\naws_access_key_id = AKIDVALUE\n[q]\naws_secret_access_key = SECRETVALUE\n';
  for (const [profile, why] of [
    ['p', /\[p\] has no aws_secret_access_key/],
    ['q', /\[q\] has no aws_access_key_id/],
    ['r', /has no profile "r"/],
  ] as const) {
    let e: unknown;
    try {
      profileCredentials(text, profile, '/f');
    } catch (caught) {
      e = caught;
    }
    expect(e).toBeInstanceOf(OriginError);
    expect((e as OriginError).code).toBe('storage-denied');
    expect((e as OriginError).message).toMatch(why);
    expect((e as OriginError).message).not.toMatch(/AKIDVALUE|SECRETVALUE/);
  }
});

test('resolveCredentials: the environment first, else the file (AWS_PROFILE, default); a named profile wins', async () => {
  const file = path.join(tempDir('origin-aws-'), 'credentials');
  await fs.writeFile(
    file,
    '[default]\naws_access_key_id=D\naws_secret_access_key=DS\n[x]\naws_access_key_id=X\naws_secret_access_key=XS\naws_session_token=XT\n',
  );
  const env = { AWS_SHARED_CREDENTIALS_FILE: file };
  const withKeys = { ...env, AWS_ACCESS_KEY_ID: 'E', AWS_SECRET_ACCESS_KEY: 'ES' };
  expect(await resolveCredentials(undefined, withKeys)).toEqual({ accessKeyId: 'E', secretAccessKey: 'ES' });
  expect(await resolveCredentials(undefined, env)).toEqual({ accessKeyId: 'D', secretAccessKey: 'DS' });
  expect(await resolveCredentials(undefined, { ...env, AWS_PROFILE: 'x' })).toEqual({
    accessKeyId: 'X',
    secretAccessKey: 'XS',
    sessionToken: 'XT',
  });
  expect((await resolveCredentials('x', withKeys)).accessKeyId).toBe('X');
  await expect(resolveCredentials(undefined, { AWS_SHARED_CREDENTIALS_FILE: file + '.none' })).rejects.toMatchObject({
    code: 'storage-denied',
  });
});
