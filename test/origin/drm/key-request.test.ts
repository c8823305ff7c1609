// The pure part of key acquisition: the request's bytes and signature (a known answer computed with
// the openssl command line, not node), and the reading of answers: every malformed shape refused
// with a message naming the field and never the key.

import { createDecipheriv, createHash } from 'node:crypto';
import {
  acquiredKeyOptions,
  KeyRequest,
  keyRequestBody,
  keyRequestJson,
  keyRequestSignature,
  parseKeyAnswer,
} from '../../../origin/drm/key-request';
import { KeyServerError, KeyServerFailure } from '../../../origin/drm/key-server-error';

// The public test signer of the reference (origin-reference §7.1; shaka-packager's Widevine tutorial).
const TEST_KEY = '1AE8CCD0E7985CC0B6203A55855A1034AFC252980E970CA90E5202689F947AB9';
const TEST_IV = 'D58CE954203B7C9A9A9D467F59839249';

const REQUEST: KeyRequest = {
  contentId: 'test content id',
  trackType: 'SD',
  policy: '',
  signer: 'widevine_test',
  signingKey: Buffer.from(TEST_KEY, 'hex'),
  signingIv: Buffer.from(TEST_IV, 'hex'),
};

test('the request JSON: content_id as Base64 of its UTF-8, one track, the DRM, the policy', () => {
  expect(keyRequestJson(REQUEST).toString('utf8')).toBe(
    '{"content_id":"dGVzdCBjb250ZW50IGlk","tracks":[{"type":"SD"}],"drm_types":["WIDEVINE"],"policy":""}',
  );
  const other = keyRequestJson({ ...REQUEST, contentId: 'é', trackType: 'AUDIO', policy: 'p1' });
  expect(JSON.parse(other.toString('utf8'))).toEqual({
    content_id: Buffer.from('é', 'utf8').toString('base64'),
    tracks: [{ type: 'AUDIO' }],
    drm_types: ['WIDEVINE'],
    policy: 'p1',
  });
});

test('the signature of the test signer matches openssl (known answer)', () => {
  // printf '%s' "$json" | openssl dgst -sha1 -binary \
  //   | openssl enc -aes-256-cbc -K $TEST_KEY -iv $TEST_IV | base64
  expect(keyRequestSignature(keyRequestJson(REQUEST), REQUEST.signingKey, REQUEST.signingIv)).toBe(
    '89HSTJDhdvnqAE6oUCIDuzCgIB7IAbYA3Gs86/NRKJw=',
  );
});

test('the body: request is Base64 of the very bytes signed; the signature decrypts to their SHA-1', () => {
  const body = JSON.parse(keyRequestBody(REQUEST)) as Record<string, string>;
  expect(Object.keys(body).sort()).toEqual(['request', 'signature', 'signer']);
  expect(body.signer).toBe('widevine_test');
  const bytes = Buffer.from(body.request!, 'base64');
  expect(bytes.equals(keyRequestJson(REQUEST))).toBe(true);
  const decipher = createDecipheriv('aes-256-cbc', REQUEST.signingKey, REQUEST.signingIv);
  const digest = Buffer.concat([decipher.update(Buffer.from(body.signature!, 'base64')), decipher.final()]);
  expect(digest.equals(createHash('sha1').update(bytes).digest())).toBe(true);
  expect(Buffer.from(body.signature!, 'base64')).toHaveLength(32); // 20 bytes + 12 of PKCS#7
});

test('a signing key or IV of the wrong length is an internal error, not a signature', () => {
  expect(() => keyRequestSignature(Buffer.from('x'), Buffer.alloc(16), Buffer.alloc(16))).toThrow(/32 bytes/);
  expect(() => keyRequestSignature(Buffer.from('x'), Buffer.alloc(32), Buffer.alloc(8))).toThrow(/IV 16/);
});

// Answers.

const KID = '00112233445566778899aabbccddeeff';
const KEY = 'c0ffee00c0ffee00c0ffee00c0ffee00';
const KEY_B64 = Buffer.from(KEY, 'hex').toString('base64');
const DATA = Buffer.from([0x12, 0x10, ...Buffer.from(KID, 'hex')]);
const DRM_A_ID = 'edef8ba979d64acea3c827dcd51d21ed';

function box(data: Buffer, systemId = DRM_A_ID): Buffer {
  const head = Buffer.alloc(32);
  head.writeUInt32BE(32 + data.length, 0);
  head.write('pssh', 4, 'latin1');
  Buffer.from(systemId, 'hex').copy(head, 12);
  head.writeUInt32BE(data.length, 28);
  return Buffer.concat([head, data]);
}

type Inner = Record<string, unknown>;
type Track = Record<string, unknown>;

const goodTrack = (over: Track = {}): Track => ({
  type: 'SD',
  key_id: Buffer.from(KID, 'hex').toString('base64'),
  key: KEY_B64,
  pssh: [{ drm_type: 'WIDEVINE', data: DATA.toString('base64'), boxes: box(DATA).toString('base64') }],
  entitled_key: [],
  content_groups: [],
  ...over,
});

const goodInner = (over: Inner = {}): Inner => ({
  status: 'OK',
  drm: [{ type: 'WIDEVINE', system_id: DRM_A_ID }],
  tracks: [goodTrack()],
  ...over,
});

const answer = (inner: Inner): Buffer =>
  Buffer.from(JSON.stringify({ response: Buffer.from(JSON.stringify(inner)).toString('base64') }));

test('a good answer: KID and key as hex, the PSSH data as given, the options written', () => {
  const k = parseKeyAnswer(answer(goodInner()), 'SD');
  expect(k).toEqual({ trackType: 'SD', kid: KID, key: KEY, psshData: DATA.toString('base64') });
  expect(acquiredKeyOptions(k)).toEqual([
    { cli: 'drm_a.key', value: `${KID}:${KEY}` },
    { cli: 'drm_a.drm_specific_data', value: DATA.toString('base64') },
  ]);
});

test('fields the origin does not use may be absent or extra; the drm_a entry is found by system id', () => {
  const inner = goodInner({
    drm: [
      { type: 'PLAYREADY', system_id: '9a04f07998404286ab92e65be0885f95' },
      { type: 'WV', system_id: DRM_A_ID.toUpperCase() },
    ],
    tracks: [
      goodTrack({
        pssh: [
          { drm_type: 'PLAYREADY', data: 'AAAA' },
          { drm_type: 'WV', data: DATA.toString('base64') },
        ],
        entitled_key: undefined,
        content_groups: undefined,
        extra: 1,
      }),
    ],
    already_used: false,
  });
  expect(parseKeyAnswer(answer(inner), 'SD').psshData).toBe(DATA.toString('base64'));
});

test('the same pair for several track types is one key pair', () => {
  const inner = goodInner({ tracks: [goodTrack(), goodTrack({ type: 'HD' })] });
  expect(parseKeyAnswer(answer(inner), 'HD')).toMatchObject({ trackType: 'HD', kid: KID });
});

const other = Buffer.from('ffeeddccbbaa99887766554433221100', 'hex').toString('base64');

test.each<[string, Buffer, KeyServerFailure, RegExp]>([
  ['body not JSON', Buffer.from('<html>'), 'malformed', /the answer is not JSON/],
  ['body an array', Buffer.from('[]'), 'malformed', /the answer is not a JSON object/],
  ['no response', Buffer.from('{}'), 'malformed', /response is missing/],
  ['response not Base64', Buffer.from('{"response":"{}"}'), 'malformed', /response is not Base64/],
  [
    'response not JSON',
    Buffer.from(`{"response":"${Buffer.from('nope').toString('base64')}"}`),
    'malformed',
    /the decoded response is not JSON/,
  ],
  ['no status', answer(goodInner({ status: undefined })), 'malformed', /status is missing/],
  ['status not OK', answer({ status: 'POLICY_UNKNOWN' }), 'status', /answered status "POLICY_UNKNOWN" instead of "OK"/],
  ['signature refused', answer({ status: 'SIGNATURE_FAILED' }), 'signature', /rejected the request's signature/],
  ['no drm', answer(goodInner({ drm: undefined })), 'malformed', /drm is missing/],
  [
    'drm of another system',
    answer(goodInner({ drm: [{ type: 'X', system_id: '00'.repeat(16) }] })),
    'malformed',
    /drm lists no system edef8ba9/,
  ],
  [
    'system id not hex',
    answer(goodInner({ drm: [{ type: 'X', system_id: 'edef8ba9' }] })),
    'malformed',
    /drm\[0\]\.system_id is not 32 hexadecimal digits/,
  ],
  ['no tracks', answer(goodInner({ tracks: undefined })), 'malformed', /tracks is missing/],
  ['tracks empty', answer(goodInner({ tracks: [] })), 'malformed', /tracks is empty/],
  ['tracks not an array', answer(goodInner({ tracks: {} })), 'malformed', /tracks is not an array/],
  [
    'unknown type',
    answer(goodInner({ tracks: [goodTrack({ type: 'XL' })] })),
    'malformed',
    /tracks\[0\]\.type "XL" is none of SD, HD/,
  ],
  [
    'type asked for missing',
    answer(goodInner({ tracks: [goodTrack({ type: 'HD' })] })),
    'malformed',
    /no track of type SD, which was asked for \(tracks: HD\)/,
  ],
  [
    'no key',
    answer(goodInner({ tracks: [goodTrack({ key: undefined })] })),
    'malformed',
    /tracks\[0\]\.key is missing/,
  ],
  [
    'key a number',
    answer(goodInner({ tracks: [goodTrack({ key: 7 })] })),
    'malformed',
    /tracks\[0\]\.key is not a string/,
  ],
  [
    'key not Base64',
    answer(goodInner({ tracks: [goodTrack({ key: `${KEY_B64}!` })] })),
    'malformed',
    /tracks\[0\]\.key is not Base64/,
  ],
  [
    'key URL-safe Base64',
    answer(goodInner({ tracks: [goodTrack({ key: 'wP_uAMD_7gDA_-4AwP_uAA==' })] })),
    'malformed',
    /tracks\[0\]\.key is not Base64/,
  ],
  [
    'key 8 bytes',
    answer(goodInner({ tracks: [goodTrack({ key: Buffer.from(KEY.slice(0, 16), 'hex').toString('base64') })] })),
    'malformed',
    /tracks\[0\]\.key is 8 bytes, not 16/,
  ],
  [
    'KID 32 bytes',
    answer(goodInner({ tracks: [goodTrack({ key_id: Buffer.alloc(32).toString('base64') })] })),
    'malformed',
    /tracks\[0\]\.key_id is 32 bytes, not 16/,
  ],
  [
    'no pssh',
    answer(goodInner({ tracks: [goodTrack({ pssh: undefined })] })),
    'malformed',
    /tracks\[0\]\.pssh is missing/,
  ],
  [
    'pssh of another DRM only',
    answer(goodInner({ tracks: [goodTrack({ pssh: [{ drm_type: 'PLAYREADY', data: 'AAAA' }] })] })),
    'malformed',
    /tracks\[0\]\.pssh has no entry of drm_type "WIDEVINE"/,
  ],
  [
    'pssh data not Base64',
    answer(goodInner({ tracks: [goodTrack({ pssh: [{ drm_type: 'WIDEVINE', data: 'a b' }] })] })),
    'malformed',
    /tracks\[0\]\.pssh\[0\]\.data is not Base64/,
  ],
  [
    'pssh boxes of other data',
    answer(
      goodInner({
        tracks: [
          goodTrack({
            pssh: [
              { drm_type: 'WIDEVINE', data: DATA.toString('base64'), boxes: box(Buffer.from('xx')).toString('base64') },
            ],
          }),
        ],
      }),
    ),
    'malformed',
    /boxes holds other data than/,
  ],
  [
    'pssh boxes of another system',
    answer(
      goodInner({
        tracks: [
          goodTrack({
            pssh: [
              {
                drm_type: 'WIDEVINE',
                data: DATA.toString('base64'),
                boxes: box(DATA, '00'.repeat(16)).toString('base64'),
              },
            ],
          }),
        ],
      }),
    ),
    'malformed',
    /boxes is not one pssh box of drm_a/,
  ],
  [
    'pssh boxes truncated',
    answer(
      goodInner({
        tracks: [
          goodTrack({
            pssh: [
              {
                drm_type: 'WIDEVINE',
                data: DATA.toString('base64'),
                boxes: box(DATA).subarray(0, 40).toString('base64'),
              },
            ],
          }),
        ],
      }),
    ),
    'malformed',
    /boxes is not one pssh box of drm_a/,
  ],
  [
    'entitled keys',
    answer(goodInner({ tracks: [goodTrack({ entitled_key: [{ key: KEY_B64 }] })] })),
    'several-keys',
    /entitled_key is not empty/,
  ],
  [
    'content_groups not an array',
    answer(goodInner({ tracks: [goodTrack({ content_groups: 'x' })] })),
    'malformed',
    /content_groups is not an array/,
  ],
  [
    'two different pairs',
    answer(goodInner({ tracks: [goodTrack(), goodTrack({ type: 'HD', key: other })] })),
    'several-keys',
    /answered 2 different key pairs \(tracks SD, HD\); .* several keys need CPIX/,
  ],
])('%s: refused without the key in the message', (_name, body, failure, message) => {
  let caught: unknown;
  try {
    parseKeyAnswer(body, 'SD');
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(KeyServerError);
  const e = caught as KeyServerError;
  expect([e.failure, e.message]).toEqual([failure, expect.stringMatching(message)]);
  for (const secret of [KEY, KEY_B64, other, KEY.slice(0, 16)]) expect(e.message).not.toContain(secret);
});

test('a status the server chose is printed only as short printable text', () => {
  const long = `BAD\u0000${'X'.repeat(100)}`;
  expect(() => parseKeyAnswer(answer({ status: long }), 'SD')).toThrow(/status "BAD\?X{60}…" instead of "OK"/);
});
