// proxy_get_property / proxy_set_property (§3.3, §6.21): 0x00-separated paths, Envoy's value
// encodings, and when the request attributes exist.

import { closeAll, hexOf, INFO, load, request, response, u64le } from './helpers/harness';

afterEach(closeAll);

const textOf = (report: string): string => /text=(.*)$/.exec(report)![1]!;

async function inRequestHeaders(
  props: string[],
  headers = request('/v/a.ism/Manifest?x=1&y=2#frag', [
    ['user-agent', 'probe/1'],
    ['x-request-id', 'req-42'],
    ['referer', 'https://ref.test/'],
    ['x-multi', 'a'],
    ['x-multi', 'b'],
  ]),
): Promise<Awaited<ReturnType<typeof load>>['logs']> {
  const { plugin, logs } = await load({ script: props.map((p) => `request_headers ${p}`).join('\n') });
  const s = plugin.newStream({ ...INFO, connectionId: 77, localAddress: '192.0.2.1', localPort: 10000 });
  await s.requestHeaders(headers, true);
  s.end();
  return logs;
}

test('request attributes from the request map (path with query, url_path, host, method, scheme, query, ids)', async () => {
  const logs = await inRequestHeaders([
    'prop request.path',
    'prop request.url_path',
    'prop request.host',
    'prop request.method',
    'prop request.scheme',
    'prop request.query',
    'prop request.useragent',
    'prop request.id',
    'prop request.referer',
    'prop request.protocol',
  ]);
  expect(logs.reports(2).map(textOf)).toEqual([
    '/v/a.ism/Manifest?x=1&y=2#frag',
    '/v/a.ism/Manifest',
    'edge.test',
    'GET',
    'http',
    'x=1&y=2',
    'probe/1',
    'req-42',
    'https://ref.test/',
    'HTTP/1.1',
  ]);
});

test('request.headers: one header comma-joined by name, the whole map as pairs', async () => {
  const logs = await inRequestHeaders([
    'prop request.headers.x-multi',
    'prop request.headers.X-Request-Id',
    'prop request.headers.absent',
    'prop request.headers',
  ]);
  const [multi, id, absent, all] = logs.reports(2);
  expect(textOf(multi!)).toBe('a,b');
  expect(textOf(id!)).toBe('req-42');
  expect(absent).toBe('prop request.headers.absent status=1');
  const pairs = Buffer.from(hexOf(all!), 'hex');
  expect(pairs.readUInt32LE(0)).toBe(8); // 9 entries, x-multi listed once
  expect(pairs.toString('latin1')).toContain('x-multi\0a,b\0');
});

test('integers and timestamps are 8-byte little-endian: request.time, source.port, connection_id', async () => {
  const before = BigInt(Date.now()) * 1_000_000n;
  const logs = await inRequestHeaders([
    'prop request.time',
    'prop source.port',
    'prop source.address',
    'prop connection_id',
    'prop destination.address',
    'prop destination.port',
  ]);
  const [time, port, address, conn, dest, destPort] = logs.reports(2);
  const ns = Buffer.from(hexOf(time!), 'hex').readBigUInt64LE(0);
  expect(ns).toBeGreaterThanOrEqual(before - 1_000_000n);
  expect(ns).toBeLessThanOrEqual(BigInt(Date.now()) * 1_000_000n + 1_000_000n);
  expect(hexOf(port!)).toBe(u64le(43210n));
  expect(textOf(address!)).toBe('10.1.2.3:43210');
  expect(hexOf(conn!)).toBe(u64le(77n));
  expect(textOf(dest!)).toBe('192.0.2.1:10000');
  expect(hexOf(destPort!)).toBe(u64le(10000n));
});

test('plugin_name, plugin_root_id, plugin_vm_id', async () => {
  const logs = await inRequestHeaders(['prop plugin_name', 'prop plugin_root_id', 'prop plugin_vm_id']);
  expect(logs.reports(2).map(textOf)).toEqual(['test_plugin', 'test_root', 'test_vm']);
});

test('path syntax: a dotted name is one segment (NOT_FOUND), a trailing NUL is tolerated, maps need a leaf', async () => {
  const logs = await inRequestHeaders([
    'propraw request.path',
    'propraw request\\0path\\0',
    'propraw request\\0\\0path',
    'prop no_such_thing',
    'prop request',
    'propraw -',
    'prop request.path.deeper',
  ]);
  expect(logs.reports(2)).toEqual([
    'prop request.path status=1',
    expect.stringMatching(/^prop request\\x00path\\x00 status=0 hex=[0-9a-f]+ text=\/v\/a\.ism/),
    'prop request\\x00\\x00path status=1',
    'prop no_such_thing status=1',
    'prop request status=3', // SERIALIZATION_FAILURE: an attribute record cannot be listed
    'prop  status=3',
    'prop request.path.deeper status=1',
  ]);
});

test('after the request continued, header attributes are gone (as in Envoy); stream-info ones stay', async () => {
  const { plugin, logs } = await load({
    script:
      'response_headers prop request.path\nresponse_headers prop request.protocol\nresponse_headers prop response.code',
  });
  const s = plugin.newStream(INFO);
  await s.requestHeaders(request('/gone'), true);
  await s.responseHeaders(response(206), true);
  const [path, protocol, code] = logs.reports(2);
  expect(path).toBe('prop request.path status=1');
  expect(textOf(protocol!)).toBe('HTTP/1.1');
  expect(hexOf(code!)).toBe(u64le(206n));
  s.end();
});

test('on_log reads the final request and response (access-log maps) and the duration', async () => {
  const { plugin, logs } = await load({
    script:
      'request_headers replace 0 :path /rewritten\nlog prop request.path\nlog prop response.code\nlog prop response.code_details\nlog prop request.duration',
  });
  const s = plugin.newStream(INFO);
  await s.requestHeaders(request('/original'), true);
  await s.responseHeaders(response(404), true);
  s.end();
  const [, path, code, details, duration] = logs.reports(2);
  expect(textOf(path!)).toBe('/rewritten');
  expect(hexOf(code!)).toBe(u64le(404n));
  expect(textOf(details!)).toBe('via_upstream');
  expect(Buffer.from(hexOf(duration!), 'hex').readBigUInt64LE(0)).toBeGreaterThan(0n);
});

test('proxy_set_property writes filter state that later callbacks read back; the root context has none', async () => {
  const { plugin, logs } = await load({
    script:
      'configure setprop k v\nconfigure prop k\nconfigure prop plugin_name\nconfigure prop request.path\n' +
      'request_headers setprop auth.user alice\nresponse_headers propraw auth.user\nlog propraw auth.user',
  });
  expect(logs.reports(1).slice(0, 4)).toEqual([
    'setprop k status=1',
    'prop k status=1',
    'prop plugin_name status=0 hex=746573745f706c7567696e text=test_plugin',
    'prop request.path status=1',
  ]);
  const s = plugin.newStream(INFO);
  await s.requestHeaders(request(), true);
  await s.responseHeaders(response(200), true);
  s.end();
  expect(logs.reports(2).map((r) => r.replace(/ hex=\S+/, ''))).toEqual([
    'setprop auth.user status=0',
    'prop auth.user status=0 text=alice',
    'prop auth.user status=0 text=alice',
  ]);
});
