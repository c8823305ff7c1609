// Traps and failure policies (§5.1, §6.15): a trap fails the VM; fail-closed answers 503
// `wasm_fail_stream` now and for every later request on that VM, fail-open bypasses the
// filter, FAIL_RELOAD brings up a fresh VM for the next request.

import { FailState } from '../../../host-glue/proxy-wasm/abi';
import { bytes, closeAll, INFO, load, request, response } from './helpers/harness';
import { minimalPlugin, op } from './helpers/wasm-encoder';

afterEach(closeAll);

const FAIL_503 = {
  kind: 'respond',
  response: { headers: [[':status', '503']], body: new Uint8Array(0), details: 'wasm_fail_stream' },
};

test('a trap in on_request_headers: 503 wasm_fail_stream for this request and every later one', async () => {
  const { plugin, logs } = await load({ script: 'all trace\nrequest_headers trap' });
  const first = plugin.newStream(INFO);
  expect(await first.requestHeaders(request(), true)).toEqual(FAIL_503);
  first.end();
  expect(logs.text()).toContain('Function: proxy_on_request_headers failed: Uncaught RuntimeError: unreachable');
  expect(plugin.failState).toBe(FailState.RuntimeError);
  // no on_log/on_done/on_delete for a failed VM
  expect(logs.calls(2)).toEqual(['context_create 1', 'request_headers 4 1']);
  logs.clear();
  for (let i = 0; i < 3; i++) {
    const later = plugin.newStream(INFO);
    expect(await later.requestHeaders(request(), true)).toEqual(FAIL_503);
    expect(await later.requestBody(bytes('x'), true)).toEqual(FAIL_503);
    later.end();
  }
  expect(logs.calls()).toEqual([]); // the failed VM is never called again
});

test('a trap in on_log: the request was served; the next one gets the 503', async () => {
  const { plugin, logs } = await load({ script: 'log trap' });
  const s = plugin.newStream(INFO);
  expect((await s.requestHeaders(request(), true)).kind).toBe('continue');
  expect((await s.responseHeaders(response(200), true)).kind).toBe('continue');
  s.end();
  expect(logs.text()).toContain('Function: proxy_on_log failed: Uncaught RuntimeError: unreachable');
  const next = plugin.newStream(INFO);
  expect(await next.requestHeaders(request(), true)).toEqual(FAIL_503);
});

test('a trap in on_response_headers replaces the upstream response with the 503 (headers not sent yet)', async () => {
  const { plugin } = await load({ script: 'response_headers trap' });
  const s = plugin.newStream(INFO);
  await s.requestHeaders(request(), true);
  expect(await s.responseHeaders(response(200), false)).toEqual(FAIL_503);
  s.end();
});

test('a trap in on_response_body after the headers went downstream resets the stream', async () => {
  const { plugin } = await load({ script: 'response_body trap' });
  const s = plugin.newStream(INFO);
  await s.requestHeaders(request(), true);
  await s.responseHeaders(response(200), false);
  const v = await s.responseBody(bytes('data'), true);
  expect(v).toMatchObject({ kind: 'respond', response: { reset: true, details: 'wasm_fail_stream' } });
  s.end();
});

test('an AssemblyScript abort is routed to proxy_log, then the trap fails the stream', async () => {
  const { plugin, logs } = await load({ script: 'request_headers abort bad\\sinput' });
  const s = plugin.newStream(INFO);
  expect(await s.requestHeaders(request(), true)).toEqual(FAIL_503);
  expect(logs.lines).toContainEqual({
    level: 'critical',
    line: expect.stringMatching(/: abort: bad input at .*runtime\.ts:\d+:\d+$/),
  });
});

test('fail-open: the trapping request goes on unchanged, later requests bypass the filter', async () => {
  const { plugin, logs } = await load({
    script: 'all trace\nrequest_headers add 0 x-before-trap 1\nrequest_headers trap',
    failurePolicy: 'FAIL_OPEN',
  });
  const s = plugin.newStream(INFO);
  const v = await s.requestHeaders(request('/open'), true);
  // the callback's result counts as Continue; what the plugin did before the trap stays
  expect(v).toEqual({ kind: 'continue', headers: [...request('/open'), ['x-before-trap', '1']] });
  expect(await s.responseHeaders(response(200), true)).toEqual({ kind: 'continue', headers: response(200) });
  s.end();
  logs.clear();
  const later = plugin.newStream(INFO);
  expect(await later.requestHeaders(request('/later'), true)).toEqual({ kind: 'continue', headers: request('/later') });
  expect(await later.responseBody(bytes('b'), true)).toEqual({ kind: 'continue', data: bytes('b') });
  later.end();
  expect(logs.calls()).toEqual([]);
});

test('FAIL_RELOAD: after a runtime error the next request runs on a fresh VM (after the backoff)', async () => {
  const { plugin, logs } = await load({
    script: 'request_headers@/boom trap\nrequest_headers echo fine',
    failurePolicy: 'FAIL_RELOAD',
    reloadBackoffMs: 0,
  });
  const boom = plugin.newStream(INFO);
  expect(await boom.requestHeaders(request('/boom'), true)).toEqual(FAIL_503);
  boom.end();
  expect(plugin.failState).toBe(FailState.RuntimeError);
  const next = plugin.newStream(INFO);
  expect((await next.requestHeaders(request('/ok'), true)).kind).toBe('continue');
  next.end();
  expect(plugin.reloads).toBe(1);
  expect(plugin.failState).toBe(FailState.Ok);
  expect(logs.reports(2)).toEqual(['fine']); // the new VM starts its context ids again at 2
});

test('FAIL_RELOAD honours the backoff: within it the failed VM still answers 503', async () => {
  const { plugin } = await load({
    script: 'request_headers trap',
    failurePolicy: 'FAIL_RELOAD',
    reloadBackoffMs: 60_000,
  });
  const s = plugin.newStream(INFO);
  expect(await s.requestHeaders(request(), true)).toEqual(FAIL_503);
  const next = plugin.newStream(INFO);
  expect(await next.requestHeaders(request(), true)).toEqual(FAIL_503);
  expect(plugin.reloads).toBe(0);
});

test('a hostcall from inside the allocator traps restricted_callback (§1.1) and fails the VM', async () => {
  const { plugin, logs } = await load({ script: 'request_headers malloc_hostcall\nrequest_headers get 0 :path' });
  const s = plugin.newStream(INFO);
  expect(await s.requestHeaders(request(), true)).toEqual(FAIL_503);
  expect(logs.text()).toContain('Function: proxy_on_memory_allocate failed: Uncaught Error: restricted_callback');
  // the hostcall that needed the memory answered INVALID_MEMORY_ACCESS
  expect(logs.reports(2)).toEqual(['get 0 :path status=6']);
});

test('one VM per plugin: a failure does not leak into another plugin instance', async () => {
  const broken = await load({ script: 'request_headers trap' });
  const healthy = await load({ script: 'request_headers echo ok' });
  const a = broken.plugin.newStream(INFO);
  expect(await a.requestHeaders(request(), true)).toEqual(FAIL_503);
  const b = healthy.plugin.newStream(INFO);
  expect((await b.requestHeaders(request(), true)).kind).toBe('continue');
});

/**
 * on_configure succeeds only the first time it runs for a vm_id: it returns whether the shared
 * key "k" was absent, then sets it. So the canary passes and the worker fails.
 */
function configuresOnce(): Uint8Array {
  return minimalPlugin((m) => {
    const get = m.importFunc('env', 'proxy_get_shared_data', ['i32', 'i32', 'i32', 'i32', 'i32']);
    const set = m.importFunc('env', 'proxy_set_shared_data', ['i32', 'i32', 'i32', 'i32', 'i32']);
    m.dataAt(64, [0x6b, 0x76]); // "k", "v"
    m.func(
      'proxy_on_configure',
      ['i32', 'i32'],
      ['i32'],
      [
        ...op.i32(64),
        ...op.i32(1),
        ...op.i32(128),
        ...op.i32(132),
        ...op.i32(136),
        ...op.call(get),
        ...op.i32(1),
        ...op.i32Eq,
        ...op.localSet(2),
        ...op.i32(64),
        ...op.i32(1),
        ...op.i32(65),
        ...op.i32(1),
        ...op.i32(0),
        ...op.call(set),
        ...op.drop,
        ...op.localGet(2),
      ],
      ['i32'],
    );
  });
}

test('a worker VM failing after the canary passed: fail-closed answers 503, fail-open bypasses', async () => {
  const closed = await load({ wasm: configuresOnce(), vmId: 'configures_once_closed' });
  expect(closed.logs.text()).toEqual(
    expect.arrayContaining(['Failed to configure base Wasm plugin', 'Plugin configured to fail closed failed to load']),
  );
  expect(await closed.plugin.newStream(INFO).requestHeaders(request(), true)).toEqual(FAIL_503);
  const open = await load({ wasm: configuresOnce(), vmId: 'configures_once_open', failurePolicy: 'FAIL_OPEN' });
  expect(open.logs.text()).toContain('Plugin configured to fail open failed to load');
  expect(await open.plugin.newStream(INFO).requestHeaders(request('/x'), true)).toEqual({
    kind: 'continue',
    headers: request('/x'),
  });
});
