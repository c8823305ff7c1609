// PAUSE and proxy_continue_stream (§1.2, §2.3, §6.10): a headers PAUSE holds the stream until
// the plugin continues it (here from on_tick through proxy_set_effective_context, as a real
// plugin would after a callout); a body PAUSE buffers and re-calls with the cumulative size.

import { StreamEndedError } from '../../../host-glue/proxy-wasm/stream-state';
import { bytes, closeAll, INFO, load, request, response, settlesWithin, text } from './helpers/harness';

afterEach(closeAll);

test('request headers PAUSE: held until on_tick continues it; the map stays usable while paused', async () => {
  const { plugin, logs } = await load({
    script: [
      'request_headers pause',
      'configure tick 40',
      'tick effective 2', // the paused stream (context id 2)
      'tick get 0 :path',
      'tick add 0 x-resumed yes',
      'tick resume 0',
      'tick tick 0',
    ].join('\n'),
  });
  const s = plugin.newStream(INFO);
  const verdict = s.requestHeaders(request('/held'), true);
  expect(await settlesWithin(verdict, 10)).toBe(false);
  expect(await verdict).toEqual({ kind: 'continue', headers: [...request('/held'), ['x-resumed', 'yes']] });
  expect(logs.reports(1)).toEqual(
    expect.arrayContaining([
      'effective 2 status=0',
      'get 0 :path status=0 value=/held', // through the effective context, the paused request map
      'add 0 x-resumed status=0',
      'resume 2 effective=0 status=0',
    ]),
  );
  s.end();
});

test('after proxy_continue_stream the request map is released (BAD_ARGUMENT), even in the same callback', async () => {
  const { plugin, logs } = await load({
    script: 'request_headers continue 0\nrequest_headers get 0 :path\nrequest_headers pause',
  });
  const s = plugin.newStream(INFO);
  expect((await s.requestHeaders(request(), true)).kind).toBe('continue'); // continued despite the PAUSE
  expect(logs.reports(2)).toEqual(['continue 0 status=0', 'get 0 :path status=2']);
  s.end();
});

test('response headers PAUSE, continued with proxy_continue_stream(HTTP_RESPONSE)', async () => {
  const { plugin } = await load({ script: 'response_headers pause\nconfigure tick 20\ntick resume 1' });
  const s = plugin.newStream(INFO);
  await s.requestHeaders(request(), true);
  const verdict = s.responseHeaders(response(200), true);
  expect(await settlesWithin(verdict, 5)).toBe(false);
  expect(await verdict).toEqual({ kind: 'continue', headers: response(200) });
  s.end();
});

test('proxy_continue_stream arguments: > 3 is BAD_ARGUMENT, UPSTREAM is UNIMPLEMENTED', async () => {
  const { plugin, logs } = await load({ script: 'request_headers continue 4\nrequest_headers continue 3' });
  const s = plugin.newStream(INFO);
  await s.requestHeaders(request(), true);
  expect(logs.reports(2)).toEqual(['continue 4 status=2', 'continue 3 status=12']);
  s.end();
});

test('headers return values: 2 (ContinueAndEndStream) continues; 3, 4 and anything above stop', async () => {
  for (const [value, continues] of [
    [2, true],
    [3, false],
    [4, false],
    [7, false],
  ] as const) {
    const { plugin } = await load({ script: `request_headers return ${value}` });
    const s = plugin.newStream(INFO);
    const verdict = s.requestHeaders(request(), true);
    expect([value, await settlesWithin(verdict, 5)]).toEqual([value, continues]);
    s.end();
    await Promise.resolve(verdict).catch(() => undefined);
  }
});

test('body PAUSE buffers: the proxy is told to hold, the plugin sees the cumulative size, Continue releases all', async () => {
  const { plugin, logs } = await load({
    script: 'all trace\nrequest_body@/upload pause\nrequest_body body 0\nrequest_headers@/upload echo upload',
  });
  const s = plugin.newStream(INFO);
  await s.requestHeaders(request('/upload', [], 'POST'), false);
  expect(await s.requestBody(bytes('abc'), false)).toEqual({ kind: 'buffer' });
  expect(await s.requestBody(bytes('defg'), false)).toEqual({ kind: 'buffer' });
  s.end();
  expect(logs.calls(2)).toEqual([
    'context_create 1',
    'request_headers 4 0',
    'request_body 3 0',
    'request_body 7 0',
    'log',
    'done',
    'delete',
  ]);
  expect(logs.reports(2).filter((r) => r.startsWith('body 0'))).toEqual([
    expect.stringMatching(/^body 0 status=0 size=3 .* text=abc$/),
    expect.stringMatching(/^body 0 status=0 size=7 .* text=abcdefg$/),
  ]);
});

test('body: a PAUSE at end of stream holds the stream until the plugin continues (or the stream ends)', async () => {
  const { plugin } = await load({ script: 'response_body return 1' });
  const s = plugin.newStream(INFO);
  await s.requestHeaders(request(), true);
  await s.responseHeaders(response(200), false);
  expect(await s.responseBody(bytes('one'), false)).toEqual({ kind: 'buffer' });
  // at end of stream a PAUSE holds the stream until continued
  const last = s.responseBody(bytes('two'), true);
  expect(await settlesWithin(last, 10)).toBe(false);
  s.end();
  await expect(last).rejects.toBeInstanceOf(StreamEndedError);
});

test('body: a plugin that stops at end of stream and continues from on_tick releases the buffered body', async () => {
  const { plugin } = await load({
    script: 'request_body pause\nrequest_body set_body 0 99999 0 !\nconfigure tick 20\ntick resume 0',
  });
  const s = plugin.newStream(INFO);
  await s.requestHeaders(request('/u', [], 'PUT'), false);
  expect(await s.requestBody(bytes('part1-'), false)).toEqual({ kind: 'buffer' });
  const v = await s.requestBody(bytes('part2'), true);
  expect(v.kind === 'continue' && text(v.data)).toBe('part1-!part2!');
  s.end();
});

test('proxy_set_buffer_bytes: start 0 replaces/prepends, start >= size appends, anything else BAD_ARGUMENT', async () => {
  const { plugin, logs } = await load({
    script:
      'request_body set_body 0 0 3 XY\nrequest_body set_body 0 0 0 <\nrequest_body set_body 0 50 0 >\nrequest_body set_body 0 2 1 ?\nrequest_body set_body 7 0 0 x',
  });
  const s = plugin.newStream(INFO);
  await s.requestHeaders(request('/b', [], 'POST'), false);
  const v = await s.requestBody(bytes('abcdef'), true);
  expect(v.kind === 'continue' && text(v.data)).toBe('<XYdef>');
  expect(logs.reports(2)).toEqual([
    'set_body 0 status=0',
    'set_body 0 status=0',
    'set_body 0 status=0',
    'set_body 0 status=2',
    'set_body 7 status=1',
  ]);
  s.end();
});

test('end() while the plugin holds the stream: the seam call rejects, on_log/on_done/on_delete still run', async () => {
  const { plugin, logs } = await load({ script: 'all trace\nrequest_headers pause' });
  const s = plugin.newStream(INFO);
  const verdict = s.requestHeaders(request(), true);
  s.end();
  await expect(verdict).rejects.toBeInstanceOf(StreamEndedError);
  expect(logs.calls(2)).toEqual(['context_create 1', 'request_headers 4 1', 'log', 'done', 'delete']);
});
