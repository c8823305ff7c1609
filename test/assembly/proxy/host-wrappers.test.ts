// The safe host-call wrappers, context dispatch and abort handler of the AssemblyScript layer
// (assembly/proxy/), driven through the test-only probe plugin (assembly/probe/) and the stub
// host: what each wrapper sends across the boundary and what it makes of the answer
// (docs/specs.md ABI §2.3-§2.6, §3.1-§3.3).

import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { newProbe } from './probe';
import { StubHost } from './stub-host';

function startedProbe(configuration = ''): StubHost {
  const { host } = newProbe();
  host.pluginConfiguration = Buffer.from(configuration, 'utf8');
  host.call('proxy_on_context_create', 1, 0);
  expect(host.call('proxy_on_vm_start', 1, 0)).toBe(1);
  expect(host.call('proxy_on_configure', 1, host.pluginConfiguration.length)).toBe(1);
  host.logs = [];
  host.calls = [];
  return host;
}

let nextId = 2;
function request(host: StubHost, probe: string, headers: Array<[string, string]> = []): { id: number; action: number } {
  const id = nextId++;
  host.requestHeaders = [[':path', '/a?b=1'], [':method', 'GET'], ['x-probe', probe], ...headers];
  host.call('proxy_on_context_create', id, 1);
  const action = host.call('proxy_on_request_headers', id, host.requestHeaders.length, 1);
  return { id, action };
}

test('the plugin configuration reaches onConfigure as bytes', () => {
  const { host } = newProbe();
  host.pluginConfiguration = Buffer.from('{"k": "é"}', 'utf8');
  host.call('proxy_on_context_create', 1, 0);
  expect(host.call('proxy_on_configure', 1, host.pluginConfiguration.length)).toBe(1);
  expect(host.logs).toEqual([{ level: 2, message: 'configure 11 {"k": "é"}' }]);
});

test('proxy_on_vm_start hands over the VM configuration; false fails the VM', () => {
  const { host } = newProbe();
  host.vmConfiguration = Buffer.from('fail');
  host.call('proxy_on_context_create', 1, 0);
  expect(host.call('proxy_on_vm_start', 1, 4)).toBe(0);
});

test('getRequestHeaders: all pairs in wire order, duplicates kept', () => {
  const host = startedProbe();
  request(host, 'headers', [
    ['set-cookie', 'a=1'],
    ['set-cookie', 'b=2'],
    ['x-utf8', 'é日本'],
  ]);
  expect(host.logs).toEqual([
    {
      level: 2,
      message:
        'headers 6 [[":path","/a?b=1"],[":method","GET"],["x-probe","headers"],["set-cookie","a=1"],["set-cookie","b=2"],["x-utf8","é日本"]]',
    },
  ]);
});

test('getRequestHeader: missing is null, not ""', () => {
  const host = startedProbe();
  request(host, 'missing');
  expect(host.logs).toEqual([{ level: 2, message: 'missing null' }]);
  request(host, 'missing', [['x-not-there', '']]);
  expect(host.logs.at(-1)).toEqual({ level: 2, message: 'missing ""' });
});

test('replace / add / remove request headers', () => {
  const host = startedProbe();
  const { action } = request(host, 'rewrite', [
    ['x-remove-me', '1'],
    ['x-remove-me', '2'],
  ]);
  expect(action).toBe(0);
  expect(host.requestHeaders).toEqual([
    [':method', 'GET'],
    ['x-probe', 'rewrite'],
    [':path', '/rewritten?q=1'],
    ['x-added', 'yes'],
  ]);
});

test('sendLocalResponse: status, details, body and headers in the pairs format', () => {
  const host = startedProbe();
  const { action } = request(host, 'deny');
  expect(action).toBe(1);
  expect(host.localResponses).toEqual([
    {
      status: 401,
      details: 'probe denied',
      body: 'no entry',
      headers: [
        ['www-authenticate', 'Basic realm="edge"'],
        ['x-probe', 'é'],
      ],
      grpcStatus: -1,
    },
  ]);
});

test('getProperty: path segments joined by NUL, integers as 8-byte LE, missing is null', () => {
  const host = startedProbe();
  host.properties.set('request\0path', Buffer.from('/a?b=1'));
  const port = Buffer.alloc(8);
  port.writeBigInt64LE(54321n);
  host.properties.set('source\0port', port);
  request(host, 'property');
  expect(host.logs).toEqual([{ level: 2, message: 'property /a?b=1 54321 null' }]);
});

test('currentTimeNanoseconds reads the host u64', () => {
  const host = startedProbe();
  request(host, 'time');
  expect(host.logs).toEqual([{ level: 2, message: `time ${host.now}` }]);
});

test('request body: getBuffer, getBufferSize, setBuffer', () => {
  const host = startedProbe();
  const { id } = request(host, 'body');
  host.requestBody = Buffer.from('hello body');
  expect(host.call('proxy_on_request_body', id, 10, 1)).toBe(0);
  expect(host.logs).toEqual([{ level: 2, message: 'body 10 10 hello body' }]);
  expect(host.bufferWrites).toEqual([{ type: 0, start: 0, size: 10, data: 'replaced' }]);
});

test('response headers and continueStream', () => {
  const host = startedProbe();
  const { id, action } = request(host, 'pause');
  expect(action).toBe(1);
  host.responseHeaders = [[':status', '200']];
  expect(host.call('proxy_on_response_headers', id, 1, 0)).toBe(0);
  expect(host.continued).toEqual([0]);
  const second = request(host, 'response');
  host.logs = [];
  host.call('proxy_on_response_headers', second.id, 1, 0);
  expect(host.logs).toEqual([{ level: 2, message: 'response [[":status","200"],["x-edge","1"]]' }]);
});

test('context dispatch: on_log/on_delete reach the stream, then it is dropped', () => {
  const host = startedProbe();
  const before = host.call('contexts');
  const { id } = request(host, '');
  expect(host.call('contexts')).toBe(before + 1);
  host.call('proxy_on_log', id);
  expect(host.call('proxy_on_done', id)).toBe(1);
  host.call('proxy_on_delete', id);
  expect(host.logs).toEqual([
    { level: 1, message: `onLog ${id}` },
    { level: 1, message: `onDelete ${id}` },
  ]);
  expect(host.call('contexts')).toBe(before);
  host.call('proxy_on_delete', id); // twice: nothing happens
  expect(host.call('proxy_on_request_headers', id, 0, 1)).toBe(0);
  host.call('proxy_on_delete', 1);
  expect(host.call('contexts')).toBe(0);
});

test('abort is routed to proxy_log at critical level with file and line, then traps', () => {
  const { host } = newProbe();
  const source = readFileSync(path.resolve(__dirname, '..', '..', 'wasm', 'edge-abi-probe.ts'), 'utf8');
  const line = source.split('\n').findIndex((l) => /assert\(false, ['"]probe assertion['"]\)/.test(l)) + 1;
  expect(line).toBeGreaterThan(0);
  expect(() => host.call('abortNow')).toThrow(WebAssembly.RuntimeError);
  expect(host.logs).toHaveLength(1);
  expect(host.logs[0]!.level).toBe(5);
  expect(host.logs[0]!.message).toMatch(
    new RegExp(`^abort: probe assertion at test/wasm/edge-abi-probe\\.ts:${line}:\\d+$`),
  );
  expect(host.calls).toEqual(['proxy_log']);
});
