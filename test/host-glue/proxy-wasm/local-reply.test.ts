// proxy_send_local_response as Envoy handles it (§2.6, §6.11, §6.12): deferred until the
// callback returns, forcing a stop; Envoy's header rules; through the plugin's own response
// callbacks when sent before any response; directly (or as a reset) afterwards.

import type { LocalResponse } from '../../../host-glue/proxy-wasm/http-filter';
import { bytes, closeAll, INFO, load, request, response, text } from './helpers/harness';

afterEach(closeAll);

async function replyTo(
  script: string,
  method = 'GET',
): Promise<{ reply: LocalResponse; logs: Awaited<ReturnType<typeof load>>['logs'] }> {
  const { plugin, logs } = await load({ script: `all trace\n${script}` });
  const s = plugin.newStream(INFO);
  const v = await s.requestHeaders(request('/a', [], method), true);
  s.end();
  if (v.kind !== 'respond') throw new Error(`expected a local reply, got ${JSON.stringify(v)}\n${logs.dump()}`);
  return { reply: v.response, logs };
}

test('a non-empty body gets content-length and content-type: text/plain; details spaces become _', async () => {
  const { reply } = await replyTo('request_headers reply 403 denied\\sby\\sedge token\\sinvalid x-a=1,X-B=2');
  expect(reply.headers).toEqual([
    [':status', '403'],
    ['x-a', '1'],
    ['x-b', '2'],
    ['content-length', '14'],
    ['content-type', 'text/plain'],
  ]);
  expect(text(reply.body)).toBe('denied by edge');
  expect(reply.details).toBe('token_invalid');
});

test("the plugin's content-type is kept for a non-empty body; its content-length is corrected", async () => {
  const { reply } = await replyTo('request_headers reply 401 {} - content-type=application/json,content-length=99');
  expect(reply.headers).toEqual([
    [':status', '401'],
    ['content-type', 'application/json'],
    ['content-length', '2'],
  ]);
});

test("an empty body drops content-length and content-type, even the plugin's", async () => {
  const { reply } = await replyTo(
    'request_headers reply 302 - redirect location=/elsewhere,content-type=text/html,content-length=0',
  );
  expect(reply.headers).toEqual([
    [':status', '302'],
    ['location', '/elsewhere'],
  ]);
  expect(reply.body).toHaveLength(0);
});

test('malformed extra-header pairs mean no extra headers (Envoy parses them to an empty map)', async () => {
  const { reply } = await replyTo('request_headers reply_hex 400 bad - 01000000ffffffff00000000');
  expect(reply.headers).toEqual([
    [':status', '400'],
    ['content-length', '3'],
    ['content-type', 'text/plain'],
  ]);
});

test('HEAD: the same headers, no body', async () => {
  const { reply } = await replyTo('request_headers reply 403 denied -', 'HEAD');
  expect(reply.headers).toEqual([
    [':status', '403'],
    ['content-length', '6'],
    ['content-type', 'text/plain'],
  ]);
  expect(reply.body).toHaveLength(0);
});

test('the reply is deferred: the callback runs to its end first, and its Continue is overridden', async () => {
  const { logs } = await replyTo(
    'request_headers reply 403 - -\nrequest_headers echo after-reply\nrequest_headers return 0',
  );
  // the same callback kept running after proxy_send_local_response returned OK
  expect(logs.reports(2).filter((r) => !r.startsWith('called '))).toEqual(['reply 403 status=0', 'after-reply']);
});

test("the local reply passes through the plugin's own on_response_headers and on_response_body", async () => {
  const { reply, logs } = await replyTo(
    [
      'request_headers reply 403 denied - -',
      'response_headers pairs 2',
      'response_headers add 2 x-edge seen',
      'response_body body 1',
      'response_body set_body 1 6 0 !',
    ].join('\n'),
  );
  expect(logs.calls(2)).toEqual([
    'context_create 1',
    'request_headers 4 1',
    'response_headers 3 0',
    'response_body 6 1',
    'log',
    'done',
    'delete',
  ]);
  expect(logs.report('pairs 2', 2)).toBe('pairs 2 status=0 :status=403|content-length=6|content-type=text/plain');
  expect(logs.report('body 1', 2)).toMatch(/^body 1 status=0 size=6 .* text=denied$/);
  expect(reply.headers).toContainEqual(['x-edge', 'seen']);
  expect(text(reply.body)).toBe('denied!');
});

test('an empty-bodied local reply reaches on_response_headers with end_of_stream=1 and no body callback', async () => {
  const { logs } = await replyTo('request_headers reply 204 - -');
  expect(logs.calls(2)).toEqual([
    'context_create 1',
    'request_headers 4 1',
    'response_headers 1 1',
    'log',
    'done',
    'delete',
  ]);
});

test('a local reply from on_response_headers replaces the upstream response directly (no second pass)', async () => {
  const { plugin, logs } = await load({ script: 'all trace\nresponse_headers reply 403 forbidden - x-why=policy' });
  const s = plugin.newStream(INFO);
  await s.requestHeaders(request(), true);
  const v = await s.responseHeaders(response(200, [['content-type', 'video/mp4']]), false);
  expect(v).toEqual({
    kind: 'respond',
    response: {
      headers: [
        [':status', '403'],
        ['x-why', 'policy'],
        ['content-length', '9'],
        ['content-type', 'text/plain'],
      ],
      body: bytes('forbidden'),
      details: '',
    },
  });
  // the upstream body that follows is not given to the plugin
  expect(await s.responseBody(bytes('mp4 data'), true)).toEqual(v);
  s.end();
  expect(logs.calls(2)).toEqual([
    'context_create 1',
    'request_headers 4 1',
    'response_headers 2 0',
    'log',
    'done',
    'delete',
  ]);
});

test('a local reply after the response headers went downstream resets the stream', async () => {
  const { plugin } = await load({ script: 'response_body reply 500 late -' });
  const s = plugin.newStream(INFO);
  await s.requestHeaders(request(), true);
  expect((await s.responseHeaders(response(200), false)).kind).toBe('continue');
  const v = await s.responseBody(bytes('chunk'), false);
  expect(v.kind === 'respond' && v.response.reset).toBe(true);
  s.end();
});

test('proxy_close_stream resets the stream with details wasm_close_stream', async () => {
  const { plugin, logs } = await load({ script: 'request_headers close 0' });
  const s = plugin.newStream(INFO);
  const v = await s.requestHeaders(request(), true);
  expect(logs.report('close', 2)).toBe('close 0 status=0');
  expect(v).toMatchObject({ kind: 'respond', response: { reset: true, details: 'wasm_close_stream' } });
  s.end();
});

test('from the root context (no stream) a local reply is ignored with OK', async () => {
  const { logs } = await load({ script: 'configure reply 403 - -' });
  expect(logs.reports(1)).toEqual(['reply 403 status=0', 'reply 403 status=0']); // canary + worker, nothing else
});
