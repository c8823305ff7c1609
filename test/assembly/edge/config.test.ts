// The plugin configuration through the real host's start-up (canary, then worker: on_configure
// returning 0 makes createPlugin throw Envoy's "Failed to configure base Wasm plugin"): every
// refusal names the member at fault in one error line, and accepted configurations are
// summarised in one info line, without secrets.

import { createHash } from 'node:crypto';
import { closeAll, loadEdge, refusal, send } from './plugin-helpers';

afterAll(closeAll);

const SHA_ALICE = `alice:{SHA}${createHash('sha1').update('wonderland').digest('base64')}`;
const loc = (extra: Record<string, unknown>): unknown => ({ locations: [{ prefix: '/', ...extra }] });
const token = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  secret: 'TOPSECRET',
  prefix: 'token',
  ...extra,
});

describe('refused configurations name the member', () => {
  test.each([
    ['not JSON', '{"locations": [', 'edge: invalid JSON configuration at byte 15: unexpected end of input'],
    ['not an object', '[]', 'edge: the configuration must be a JSON object'],
    ['an unknown top-level member', { location: [] }, 'location: unknown member (allowed: locations)'],
    ['locations not an array', { locations: {} }, 'locations: must be an array of objects'],
    ['a location not an object', { locations: [1] }, 'locations[0]: must be an object'],
    ['no prefix', { locations: [{}] }, 'locations[0].prefix: required'],
    ['a prefix not a string', { locations: [{ prefix: 5 }] }, 'locations[0].prefix: must be a string'],
    ['a relative prefix', { locations: [{ prefix: 'vod' }] }, 'locations[0].prefix: the path must start with /'],
    [
      'a dot segment in a prefix',
      { locations: [{ prefix: '/a/../b' }] },
      'locations[0].prefix: dot segment (. or ..) in the path',
    ],
    [
      'the same prefix twice',
      { locations: [{ prefix: '/a' }, { prefix: '/a/' }] },
      'locations[1].prefix: "/a/" is the prefix of an earlier location too',
    ],
    [
      'an unknown location member',
      loc({ auth: {} }),
      'locations[0].auth: unknown member (allowed: prefix, skip_rewrite, rewrite, auth_token, auth_basic, validate_filter)',
    ],
    ['skip_rewrite not a boolean', loc({ skip_rewrite: 'off' }), 'locations[0].skip_rewrite: must be true or false'],
    [
      'validate_filter not a boolean',
      loc({ validate_filter: 1 }),
      'locations[0].validate_filter: must be true or false',
    ],
    [
      'auth_token without skip_rewrite',
      loc({ auth_token: token() }),
      'locations[0].auth_token: needs "skip_rewrite": false in the same location',
    ],
    [
      'auth_token with skip_rewrite true',
      loc({ skip_rewrite: true, auth_token: token() }),
      'locations[0].auth_token: needs "skip_rewrite": false',
    ],
    [
      'auth_token not an object',
      loc({ skip_rewrite: false, auth_token: 'x' }),
      'locations[0].auth_token: must be an object',
    ],
    [
      'no secret',
      loc({ skip_rewrite: false, auth_token: { prefix: 'token' } }),
      'locations[0].auth_token.secret: required',
    ],
    [
      'an empty secret',
      loc({ skip_rewrite: false, auth_token: token({ secret: '' }) }),
      'locations[0].auth_token.secret: must be a non-empty string',
    ],
    [
      'a numeric secret',
      loc({ skip_rewrite: false, auth_token: token({ secret: 1234 }) }),
      'locations[0].auth_token.secret: must be a non-empty string',
    ],
    [
      'no token prefix',
      loc({ skip_rewrite: false, auth_token: { secret: 's' } }),
      'locations[0].auth_token.prefix: required',
    ],
    [
      'a timeout as a string',
      loc({ skip_rewrite: false, auth_token: token({ timeout: '3600' }) }),
      'locations[0].auth_token.timeout: must be an integer from 1 to 2147483647 (seconds)',
    ],
    [
      'a zero timeout',
      loc({ skip_rewrite: false, auth_token: token({ timeout: 0 }) }),
      'locations[0].auth_token.timeout: must be an integer from 1',
    ],
    [
      'a fractional timeout',
      loc({ skip_rewrite: false, auth_token: token({ timeout: 1.5 }) }),
      'locations[0].auth_token.timeout: must be an integer',
    ],
    [
      'a negative skew',
      loc({ skip_rewrite: false, auth_token: token({ skew: -1 }) }),
      'locations[0].auth_token.skew: must be an integer from 0 to 2147483647 (seconds)',
    ],
    [
      'an unknown auth_token member',
      loc({ skip_rewrite: false, auth_token: token({ expiry: 5 }) }),
      'locations[0].auth_token.expiry: unknown member (allowed: secret, prefix, timeout, skew)',
    ],
    [
      'a token prefix outside the location',
      { locations: [{ prefix: '/vod/', skip_rewrite: false, auth_token: token() }] },
      'locations[0].auth_token.prefix: "/token/" lies outside the location "/vod/"',
    ],
    [
      'auth_basic without a realm',
      loc({ auth_basic: { users: [SHA_ALICE] } }),
      'locations[0].auth_basic.realm: required',
    ],
    [
      'a realm with a line break',
      loc({ auth_basic: { realm: 'a\nb', users: [SHA_ALICE] } }),
      'locations[0].auth_basic.realm: printable ASCII only',
    ],
    [
      'no users',
      loc({ auth_basic: { realm: 'r', users: [] } }),
      'locations[0].auth_basic.users: must be a non-empty array',
    ],
    [
      'users not an array',
      loc({ auth_basic: { realm: 'r', users: SHA_ALICE } }),
      'locations[0].auth_basic.users: must be a non-empty array',
    ],
    [
      'a user entry not a string',
      loc({ auth_basic: { realm: 'r', users: [SHA_ALICE, 7] } }),
      'locations[0].auth_basic.users[1]: must be a string "user:hash"',
    ],
    [
      'an entry without a colon',
      loc({ auth_basic: { realm: 'r', users: ['alice'] } }),
      'locations[0].auth_basic.users[0]: expected "user:hash"',
    ],
    [
      'a bcrypt entry',
      loc({ auth_basic: { realm: 'r', users: ['bob:$2y$05$abcdefghijklmnopqrstuu5s2v8.iXieOjg/.AySBTTZIIVFJeBui'] } }),
      'locations[0].auth_basic.users[0]: bcrypt entries are not supported',
    ],
    [
      'a plain-text entry',
      loc({ auth_basic: { realm: 'r', users: ['bob:secret'] } }),
      'locations[0].auth_basic.users[0]: unsupported hash',
    ],
    [
      'a short {SHA} digest',
      loc({ auth_basic: { realm: 'r', users: ['bob:{SHA}AAAA'] } }),
      'locations[0].auth_basic.users[0]: {SHA} needs the base64 of a 20-byte SHA-1 digest',
    ],
    [
      'an $apr1$ salt too long',
      loc({ auth_basic: { realm: 'r', users: ['bob:$apr1$123456789$yAAkm4libquA.ZWLHbSBq/'] } }),
      'locations[0].auth_basic.users[0]: $apr1$ needs a salt of 1 to 8 characters',
    ],
    [
      'an $apr1$ hash too short',
      loc({ auth_basic: { realm: 'r', users: ['bob:$apr1$saltsalt$yAAkm4'] } }),
      'locations[0].auth_basic.users[0]: $apr1$ needs a 22-character hash',
    ],
    [
      'a user listed twice',
      loc({ auth_basic: { realm: 'r', users: [SHA_ALICE, SHA_ALICE] } }),
      'locations[0].auth_basic.users[1]: user "alice" is listed twice',
    ],
    ['rewrite without skip_rewrite false', loc({ rewrite: {} }), 'locations[0].rewrite: needs "skip_rewrite": false'],
    [
      'a rewrite member the rewrite engine refuses',
      loc({ skip_rewrite: false, rewrite: { bogus: 1 } }),
      'locations[0].rewrite.bogus: unknown member',
    ],
    [
      'too many locations',
      { locations: Array.from({ length: 257 }, (_, i) => ({ prefix: `/p${i}` })) },
      'locations: at most 256 locations',
    ],
  ])('%s', async (_what, config, message) => {
    const logs = await refusal(config);
    const line = logs.find((l) => l.includes(message));
    expect(line).toBeDefined();
    expect(
      line!.startsWith(
        message.startsWith('edge: ')
          ? '[error] wasm log edge edge: '
          : '[error] wasm log edge edge: edge: configuration refused: ',
      ),
    ).toBe(true);
    for (const l of logs) expect(l).not.toContain('TOPSECRET');
  });
});

describe('accepted configurations', () => {
  test('none at all, and {}: only path normalisation', async () => {
    const empty = await loadEdge('');
    expect(empty.logs).toContain('[info] wasm log edge edge: edge: no configuration, using {}');
    const braces = await loadEdge('{}');
    expect(braces.logs).toContain(
      '[info] wasm log edge edge: edge: no locations: paths are normalised, no location rules',
    );
    expect((await send(braces.plugin, '/a/../b')).status).toBe(400);
  });

  test("the issue's example, pretty-printed as an Istio pluginConfig Struct arrives, logged without secrets", async () => {
    const config = {
      locations: [
        {
          prefix: '/',
          skip_rewrite: false,
          rewrite: {},
          auth_token: { secret: 'TOPSECRET', prefix: 'token', timeout: 3600, skew: 60 },
          validate_filter: true,
        },
        {
          prefix: '/secure/',
          auth_basic: { realm: 'Origin', users: [SHA_ALICE, 'bob:$apr1$saltsalt$yAAkm4libquA.ZWLHbSBq/'] },
        },
        { prefix: '/raw' },
      ],
    };
    const { logs } = await loadEdge(JSON.stringify(config, null, 2));
    expect(logs.filter((l) => l.startsWith('[info]'))).toContain(
      '[info] wasm log edge edge: edge: 3 locations: /secure/ [auth_basic (2 users)]; /raw [nothing]; / [auth_token /token/, rewrite, validate_filter]',
    );
    for (const l of logs) expect(l).not.toContain('TOPSECRET');
  });

  test('prefixes match whole segments, the longest wins whatever the order', async () => {
    const { plugin } = await loadEdge({ locations: [{ prefix: '/a', validate_filter: true }, { prefix: '/a/b/' }] });
    expect((await send(plugin, '/a/x.ism/.mpd?filter=type=')).status).toBe(400);
    expect((await send(plugin, '/a?filter=type=')).status).toBe(400);
    expect((await send(plugin, '/a/b/x.ism/.mpd?filter=type=')).status).toBe(0);
    expect((await send(plugin, '/ab/x.ism/.mpd?filter=type=')).status).toBe(0);
  });
});
