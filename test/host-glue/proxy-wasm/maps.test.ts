// Which header maps are readable/writable in which callback (§2.4, §6.9), header edits with
// Envoy's semantics (§2.3), strict pairs in proxy_set_header_map_pairs (§3.1, §6.19), and the
// rewritten request headers coming back for routing (§3.4, §6.13).

import { closeAll, INFO, load, request, response } from './helpers/harness';

afterEach(closeAll);

const REQ = 0;
const RESP = 2;

async function exchange(
  script: string,
): Promise<{ logs: Awaited<ReturnType<typeof load>>['logs']; requestHeaders: unknown; responseHeaders: unknown }> {
  const { plugin, logs } = await load({ script });
  const s = plugin.newStream(INFO);
  const req = await s.requestHeaders(request('/v/a.ism/Manifest?x=1', [['accept', '*/*']]), true);
  const res = await s.responseHeaders(response(200, [['content-type', 'text/xml']]), true);
  s.end();
  return {
    logs,
    requestHeaders: req.kind === 'continue' ? req.headers : req,
    responseHeaders: res.kind === 'continue' ? res.headers : res,
  };
}

test('on_request_headers: the request map is readable in order; the response map is not available', async () => {
  const { logs } = await exchange(
    [
      `request_headers pairs ${REQ}`,
      `request_headers get ${REQ} :path`,
      `request_headers get ${REQ} ACCEPT`,
      `request_headers get ${REQ} x-missing`,
      `request_headers size ${REQ}`,
      `request_headers get ${RESP} :status`,
      `request_headers pairs ${RESP}`,
      `request_headers add ${RESP} x-a 1`,
      `request_headers size ${RESP}`,
    ].join('\n'),
  );
  expect(logs.reports(2)).toEqual([
    `pairs ${REQ} status=0 :authority=edge.test|:path=/v/a.ism/Manifest?x=1|:method=GET|:scheme=http|accept=*/*`,
    `get ${REQ} :path status=0 value=/v/a.ism/Manifest?x=1`,
    `get ${REQ} ACCEPT status=0 value=*/*`, // keys are lowercased
    `get ${REQ} x-missing status=1`, // NOT_FOUND (0.2.x)
    // byteSize: keys + values, not the serialized size (§8)
    `size ${REQ} status=0 value=${':authority'.length + 9 + ':path'.length + 21 + ':method'.length + 3 + ':scheme'.length + 4 + 'accept'.length + 3}`,
    `get ${RESP} :status status=2`, // BAD_ARGUMENT: map not available
    `pairs ${RESP} status=0 (none)`, // OK, ptr 0 / size 0
    `add ${RESP} x-a status=2`,
    `size ${RESP} status=2`,
  ]);
});

test('on_response_headers: the request map is gone after Continue; the response map is there', async () => {
  const { logs } = await exchange(
    [
      `response_headers get ${REQ} :path`,
      `response_headers pairs ${REQ}`,
      `response_headers add ${REQ} x-late 1`,
      `response_headers pairs ${RESP}`,
      `response_headers get ${RESP} content-type`,
    ].join('\n'),
  );
  expect(logs.reports(2)).toEqual([
    `get ${REQ} :path status=2`,
    `pairs ${REQ} status=0 (none)`,
    `add ${REQ} x-late status=2`,
    `pairs ${RESP} status=0 :status=200|content-type=text/xml`,
    `get ${RESP} content-type status=0 value=text/xml`,
  ]);
});

test('on_log: request and response maps are readable, read-only; a missing map is NOT_FOUND', async () => {
  const { logs } = await exchange(
    [
      `request_headers add ${REQ} x-added yes`,
      `response_headers add ${RESP} x-resp yes`,
      `log get ${REQ} x-added`,
      `log get ${RESP} x-resp`,
      `log get ${REQ} x-missing`,
      'log get 1 anything',
      `log pairs ${RESP}`,
      `log add ${RESP} x-more 1`,
      `log replace ${REQ} :path /x`,
      `log size ${REQ}`,
    ].join('\n'),
  );
  expect(logs.reports(2).slice(2)).toEqual([
    `get ${REQ} x-added status=0 value=yes`, // the final request, as the access log sees it
    `get ${RESP} x-resp status=0 value=yes`,
    `get ${REQ} x-missing status=1`,
    'get 1 anything status=1', // request trailers: none in the access-log phase -> NOT_FOUND
    `pairs ${RESP} status=0 :status=200|content-type=text/xml|x-resp=yes`,
    `add ${RESP} x-more status=2`,
    `replace ${REQ} :path status=2`,
    `size ${REQ} status=2`,
  ]);
});

test('map types above 7 are BAD_ARGUMENT; callout maps never exist here', async () => {
  const { logs } = await exchange(
    'request_headers get 8 :path\nrequest_headers pairs 99\nrequest_headers get 6 :status\nrequest_headers pairs 4',
  );
  expect(logs.reports(2)).toEqual([
    'get 8 :path status=2',
    'pairs 99 status=2',
    'get 6 :status status=2',
    'pairs 4 status=0 (none)',
  ]);
});

test('rewriting :path and other headers: the proxy gets the final map (routing happens after the filter)', async () => {
  const { requestHeaders } = await exchange(
    [
      `request_headers replace ${REQ} :path /new/path?y=2`,
      `request_headers add ${REQ} X-Token abc`,
      `request_headers add ${REQ} x-token def`,
      `request_headers remove ${REQ} accept`,
      `request_headers add ${REQ} :custom-pseudo z`,
    ].join('\n'),
  );
  expect(requestHeaders).toEqual([
    [':authority', 'edge.test'],
    [':method', 'GET'],
    [':scheme', 'http'],
    // replace = remove all + add: a pseudo-header goes to the end of the pseudo-headers
    [':path', '/new/path?y=2'],
    [':custom-pseudo', 'z'],
    ['x-token', 'abc'],
    ['x-token', 'def'], // add keeps duplicates, keys lowercased
  ]);
});

test('replace removes every entry of the key; get returns the first of repeated values', async () => {
  const { requestHeaders, logs } = await exchange(
    [
      `request_headers add ${REQ} x-dup 1`,
      `request_headers add ${REQ} x-dup 2`,
      `request_headers get ${REQ} x-dup`,
      `request_headers replace ${REQ} x-dup 3`,
      `request_headers pairs ${REQ}`,
    ].join('\n'),
  );
  expect(logs.reports(2)[2]).toBe(`get ${REQ} x-dup status=0 value=1`);
  expect(requestHeaders).toEqual(expect.arrayContaining([['x-dup', '3']]));
  expect((requestHeaders as Array<[string, string]>).filter(([k]) => k === 'x-dup')).toHaveLength(1);
});

test('proxy_set_header_map_pairs: valid pairs replace the map; malformed pairs wipe it (Envoy: empty map)', async () => {
  const valid = await exchange(`response_headers set_pairs ${RESP} :status=201,x-new=1`);
  expect(valid.responseHeaders).toEqual([
    [':status', '201'],
    ['x-new', '1'],
  ]);
  // the fixture's trailing-garbage case: a valid one-pair map plus one byte
  const malformed = await exchange(`response_headers set_pairs_hex ${RESP} 0100000001000000010000006100310${'0'}7a`);
  expect(malformed.logs.reports(2)).toEqual([`set_pairs_hex ${RESP} status=0`]);
  expect(malformed.responseHeaders).toEqual([]);
});
