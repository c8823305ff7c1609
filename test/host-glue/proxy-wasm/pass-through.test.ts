// Responses past the filter (HttpFilterStream.responsePassesThrough / responsePassed): offered
// only while nothing the module exports can see or change the stream's response. Envoy never
// enters a VM for a callback the module does not export (docs/specs.md ABI §1.2), so a proxy
// may then skip responseHeaders/responseBody; a reply for the stream that still comes (from
// another stream's callback, through proxy_set_effective_context) takes the offer back.

import { bytes, closeAll, hexOf, INFO, load, request, response, u64le } from './helpers/harness';

afterEach(closeAll);

describe('a module without response callbacks', () => {
  test('offers the response once its request went through, and reports what passed in on_delete', async () => {
    const { plugin, logs } = await load({
      entry: 'script-plugin-request-only',
      script: 'delete prop response.code\ndelete prop response.size\ndelete prop response.code_details',
    });
    const s = plugin.newStream(INFO);
    expect(s.responsePassesThrough!()).toBe(false); // the VM has not seen the stream yet
    expect(await s.requestHeaders(request('/a'), true)).toMatchObject({ kind: 'continue' });
    expect(s.responsePassesThrough!()).toBe(true);
    s.responsePassed!(206, 0);
    expect(s.responsePassesThrough!()).toBe(true);
    s.responsePassed!(206, 1234);
    s.end();
    expect(s.responsePassesThrough!()).toBe(false); // over
    const [code, size, details] = logs.reports(2).filter((r) => r.startsWith('prop '));
    expect(hexOf(code!)).toBe(u64le(206n));
    expect(hexOf(size!)).toBe(u64le(1234n));
    expect(Buffer.from(hexOf(details!), 'hex').toString()).toBe('via_upstream');
  });

  test('a stream answered at its request headers does not offer it', async () => {
    const { plugin } = await load({
      entry: 'script-plugin-request-only',
      script: 'request_headers reply 403 denied -',
    });
    const s = plugin.newStream(INFO);
    expect(await s.requestHeaders(request('/a'), true)).toMatchObject({ kind: 'respond' });
    expect(s.responsePassesThrough!()).toBe(false);
    s.end();
  });

  test("a reply for the stream from another stream's callback, before its head: the offer is gone, the reply replaces the response", async () => {
    // Stream 2 (/a) goes through; stream 3 (/b) sets stream 2 as the effective context and replies.
    const { plugin } = await load({
      entry: 'script-plugin-request-only',
      script: 'request_headers@/b effective 2\nrequest_headers@/b reply 503 late -',
    });
    const a = plugin.newStream(INFO);
    await a.requestHeaders(request('/a'), true);
    expect(a.responsePassesThrough!()).toBe(true);
    const b = plugin.newStream(INFO);
    // Stream 3 itself stays stopped: a local reply during a callback stops it (cpp-host
    // stop_iteration_), whichever context the reply was for.
    const held = Promise.resolve(b.requestHeaders(request('/b'), true)).catch((e: Error) => e.name);
    expect(a.responsePassesThrough!()).toBe(false);
    const verdict = await a.responseHeaders(response(200), false);
    expect(verdict.kind === 'respond' && verdict.response.headers[0]).toEqual([':status', '503']);
    a.end();
    b.end();
    expect(await held).toBe('StreamEndedError');
  });

  test('... after its head went out: the offer is gone and the stream is reset (as Envoy)', async () => {
    const { plugin } = await load({
      entry: 'script-plugin-request-only',
      script: 'request_headers@/b effective 2\nrequest_headers@/b reply 503 late -',
    });
    const a = plugin.newStream(INFO);
    await a.requestHeaders(request('/a'), true);
    a.responsePassed!(200, 0);
    const b = plugin.newStream(INFO);
    const held = Promise.resolve(b.requestHeaders(request('/b'), true)).catch((e: Error) => e.name);
    expect(a.responsePassesThrough!()).toBe(false);
    const next = await a.responseBody(bytes('more'), true);
    expect(next.kind === 'respond' && next.response.reset).toBe(true);
    a.end();
    b.end();
    expect(await held).toBe('StreamEndedError');
  });
});

test('a module with response callbacks never offers it', async () => {
  const { plugin } = await load({ script: '' });
  const s = plugin.newStream(INFO);
  await s.requestHeaders(request('/a'), true);
  expect(s.responsePassesThrough!()).toBe(false);
  s.end();
});
