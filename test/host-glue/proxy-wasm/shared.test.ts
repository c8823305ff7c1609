// Hostcalls beyond HTTP (§2.3): shared data per vm_id, metrics, effective context, time.

import { closeAll, INFO, load, request } from './helpers/harness';

afterEach(closeAll);

test('shared data is per vm_id: every VM of that id (canary, worker, another plugin) sees it', async () => {
  const writer = await load({ vmId: 'shared_vm_a', script: 'configure shared_set greeting hello' });
  const reader = await load({ vmId: 'shared_vm_a', script: 'request_headers shared_get greeting' });
  const other = await load({ vmId: 'shared_vm_b', script: 'request_headers shared_get greeting' });
  expect(writer.logs.reports(1)).toEqual(['shared_set greeting status=0', 'shared_set greeting status=0']);
  for (const { plugin } of [reader, other]) {
    const s = plugin.newStream(INFO);
    await s.requestHeaders(request(), true);
    s.end();
  }
  expect(reader.logs.reports(2)).toEqual(['shared_get greeting status=0 value=hello']);
  expect(other.logs.reports(2)).toEqual(['shared_get greeting status=1']);
});

test("a counter metric counts per request; the stats are the plugin's", async () => {
  const { plugin, logs } = await load({ script: 'request_headers counter edge_requests' });
  for (let i = 0; i < 3; i++) {
    const s = plugin.newStream(INFO);
    await s.requestHeaders(request(), true);
    s.end();
  }
  expect(logs.reports(2)).toEqual(['counter edge_requests define=0 increment=0']);
  expect(plugin.metric('edge_requests')).toBe(3n);
});

test('proxy_set_effective_context: an unknown id is BAD_ARGUMENT; the effect ends with the callback', async () => {
  const { plugin, logs } = await load({
    script:
      'request_headers effective 999\nrequest_headers effective 1\nrequest_headers get 0 :path\nresponse_headers get 2 :status',
  });
  const s = plugin.newStream(INFO);
  await s.requestHeaders(request(), true);
  // on the root context (id 1) there is no request map
  expect(logs.reports(2)).toEqual(['effective 999 status=2', 'effective 1 status=0', 'get 0 :path status=2']);
  await s.responseHeaders([[':status', '200']], true);
  // the next callback runs on its own context again
  expect(logs.reports(2)[3]).toBe('get 2 :status status=0 value=200');
  s.end();
});

test('proxy_get_current_time_nanoseconds is the wall clock in ns (u64 LE)', async () => {
  const { plugin, logs } = await load({ script: 'request_headers now' });
  const before = BigInt(Date.now()) * 1_000_000n;
  const s = plugin.newStream(INFO);
  await s.requestHeaders(request(), true);
  const ns = BigInt(/value=(\d+)/.exec(logs.report('now', 2))![1]!);
  expect(ns).toBeGreaterThanOrEqual(before - 5_000_000n);
  expect(ns).toBeLessThanOrEqual(BigInt(Date.now()) * 1_000_000n + 5_000_000n);
  s.end();
});
