// build/edge.wasm as Envoy loads it (docs/specs.md ABI §0, §1, §2, §4.2):
// the binary's sections checked against Envoy's ABI-0.2.1 tables, then the plugin driven
// through a whole VM and stream lifecycle by the test-only stub host. `npm test` builds the
// module first (pretest); run `npm run build:wasm` before running this file alone.

import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import {
  ABI_0_1_ONLY_IMPORTS,
  ABI_MARKER,
  ENVOY_CALLBACK_EXPORTS,
  ENVOY_ENV_IMPORTS_0_2_1,
  ENVOY_WASI_IMPORTS,
  OTHER_ABI_MARKERS,
  WASI_MODULES,
} from './abi-tables';
import { StubHost } from './stub-host';
import { readWasmModule, signature } from './wasm-binary';

const EDGE_WASM = path.resolve(__dirname, '..', '..', '..', 'build', 'edge.wasm');
const bytes = readFileSync(EDGE_WASM);
const info = readWasmModule(bytes);
const wasmModule = new WebAssembly.Module(bytes);

describe('binary (what Envoy checks at load time)', () => {
  test('the section reader agrees with the engine on names', () => {
    expect(info.imports.map((i) => `${i.module}.${i.name}`)).toEqual(
      WebAssembly.Module.imports(wasmModule).map((i) => `${i.module}.${i.name}`),
    );
    expect(info.exports.map((e) => e.name)).toEqual(WebAssembly.Module.exports(wasmModule).map((e) => e.name));
  });

  test('ABI marker: a function export proxy_abi_version_0_2_1, and no other version marker', () => {
    const marker = info.exports.find((e) => e.name === ABI_MARKER);
    expect(marker?.kind).toBe('func');
    for (const other of OTHER_ABI_MARKERS) expect(info.exports.map((e) => e.name)).not.toContain(other);
  });

  test("every import is in Envoy's ABI-0.2.1 set with its exact signature", () => {
    expect(info.imports.length).toBeGreaterThan(0);
    for (const imp of info.imports) {
      const where = `${imp.module}.${imp.name}`;
      expect({ where, kind: imp.kind }).toEqual({ where, kind: 'func' }); // imported globals are refused (§2.8)
      const expected =
        imp.module === 'env'
          ? ENVOY_ENV_IMPORTS_0_2_1[imp.name]
          : WASI_MODULES.includes(imp.module)
            ? ENVOY_WASI_IMPORTS[imp.name]
            : undefined;
      expect({ where, signature: signature(imp.type) }).toEqual({ where, signature: expected });
      expect(ABI_0_1_ONLY_IMPORTS).not.toContain(imp.name);
    }
  });

  test('no env.abort / seed / trace / Date imports (AssemblyScript defaults Envoy refuses)', () => {
    const names = info.imports.map((i) => i.name);
    for (const forbidden of ['abort', 'seed', 'trace', 'Date.now', 'console.log'])
      expect(names).not.toContain(forbidden);
  });

  test('every proxy_on_* / integration export has the exact signature Envoy type-checks', () => {
    const exported = info.exports.filter((e) => e.kind === 'func' && e.name in ENVOY_CALLBACK_EXPORTS);
    // Only the callbacks the plugin acts in (assembly/index.ts): Envoy skips the others (§1.2),
    // so it never enters the VM for a body, a response, a log line or a finished stream.
    expect(exported.map((e) => e.name).sort()).toEqual([
      '_initialize',
      'proxy_on_configure',
      'proxy_on_context_create',
      'proxy_on_delete',
      'proxy_on_memory_allocate',
      'proxy_on_request_headers',
      'proxy_on_vm_start',
    ]);
    for (const e of exported) {
      expect({ name: e.name, signature: signature(e.type) }).toEqual({
        name: e.name,
        signature: ENVOY_CALLBACK_EXPORTS[e.name],
      });
    }
    // Every other proxy_* export would be one Envoy does not know: a typo, not a callback.
    const unknown = info.exports.filter(
      (e) => e.name.startsWith('proxy_') && e.name !== ABI_MARKER && !(e.name in ENVOY_CALLBACK_EXPORTS),
    );
    expect(unknown.map((e) => e.name)).toEqual([]);
  });

  test('memory and an allocator are exported; _initialize, not _start; no start section', () => {
    const names = info.exports.map((e) => e.name);
    expect(info.exports.find((e) => e.name === 'memory')?.kind).toBe('memory');
    expect(info.memories).toBe(1);
    expect(names.includes('proxy_on_memory_allocate') || names.includes('malloc')).toBe(true);
    expect(names).toContain('_initialize');
    expect(names).not.toContain('_start');
    expect(info.start).toBeNull();
    expect(info.sectionIds).not.toContain(8);
  });
});

describe('lifecycle against the stub host', () => {
  function start(configuration: string | Uint8Array, logLevel = 0): StubHost {
    const host = new StubHost();
    host.logLevel = logLevel;
    host.pluginConfiguration = typeof configuration === 'string' ? Buffer.from(configuration, 'utf8') : configuration;
    host.instantiate(wasmModule);
    host.call('_initialize');
    expect(host.calls).toEqual([]); // top-level code calls no host function (§1.1, §4.2 item 3)
    host.call('proxy_on_context_create', 1, 0);
    expect(host.call('proxy_on_vm_start', 1, 0)).toBe(1);
    return host;
  }

  const configure = (host: StubHost): number => host.call('proxy_on_configure', 1, host.pluginConfiguration.length);

  // Issue 7: the configuration has a schema (docs/reference/edge-config.md; the
  // refusals are tested in test/assembly/edge/config.test.ts).
  test('a valid configuration is accepted and summarised (never its secrets)', () => {
    const host = start(
      '{"locations": [{"prefix": "/", "skip_rewrite": false, "auth_token": {"secret": "s3cr3t", "prefix": "token"}}]}',
    );
    expect(configure(host)).toBe(1);
    expect(host.logs).toEqual([{ level: 2, message: 'edge: 1 location: / [auth_token /token/]' }]);
    expect(host.logs[0]!.message).not.toContain('s3cr3t');
  });

  test('no configuration means {}', () => {
    const host = start('');
    expect(configure(host)).toBe(1);
    expect(host.calls).not.toContain('proxy_get_buffer_bytes');
    expect(host.logs).toEqual([{ level: 2, message: 'edge: no configuration, using {}' }]);
  });

  test.each([
    [
      '{"a": 1,}',
      "edge: invalid JSON configuration at byte 8: unexpected character '}' (expected a member name in double quotes)",
    ],
    ['{"a": tru}', "edge: invalid JSON configuration at byte 9: unexpected character '}' (expected 'true')"],
    ['[1, 2]', 'edge: the configuration must be a JSON object'],
    ['"text"', 'edge: the configuration must be a JSON object'],
  ])(
    'invalid configuration %j: logged at error level, proxy_on_configure returns 0 (Envoy refuses it)',
    (configuration, message) => {
      const host = start(configuration);
      expect(configure(host)).toBe(0);
      expect(host.logs).toEqual([{ level: 4, message }]);
    },
  );

  test('a configuration over 1 MiB is refused without reading it', () => {
    const host = start('');
    expect(host.call('proxy_on_configure', 1, (1 << 20) + 1)).toBe(0);
    expect(host.calls).not.toContain('proxy_get_buffer_bytes');
    expect(host.logs[0]).toMatchObject({
      level: 4,
      message: expect.stringContaining('plugin configuration is 1048577 bytes'),
    });
  });

  test('a request passes through and is logged at debug level; state is dropped in proxy_on_delete', () => {
    const host = start('{}', 1);
    expect(configure(host)).toBe(1);
    host.requestHeaders = [
      [':authority', 'edge.example'],
      [':path', '/vod/a.ism/Manifest?x=1'],
      [':method', 'GET'],
      [':scheme', 'https'],
    ];
    host.responseHeaders = [[':status', '200']];
    host.logs = [];
    host.call('proxy_on_context_create', 2, 1);
    expect(host.call('proxy_on_request_headers', 2, 4, 1)).toBe(0);
    // Envoy's other per-stream callbacks are not exported: it calls none of them.
    for (const name of [
      'proxy_on_request_body',
      'proxy_on_request_trailers',
      'proxy_on_response_headers',
      'proxy_on_response_body',
      'proxy_on_response_trailers',
      'proxy_on_log',
      'proxy_on_done',
    ]) {
      expect(WebAssembly.Module.exports(wasmModule).map((e) => e.name)).not.toContain(name);
    }
    host.call('proxy_on_delete', 2);
    expect(host.logs).toEqual([{ level: 1, message: 'edge: GET /vod/a.ism/Manifest?x=1' }]);
    // pass-through: nothing was changed or answered
    expect(host.calls.filter((c) => /replace|add_header|remove|send_local|set_/.test(c))).toEqual([]);
  });

  test('the debug line is not built (no :method lookup) when debug logging is off', () => {
    const host = start('{}', 2);
    configure(host);
    host.requestHeaders = [
      [':path', '/a'],
      [':method', 'GET'],
    ];
    host.calls = [];
    host.call('proxy_on_context_create', 2, 1);
    expect(host.call('proxy_on_request_headers', 2, 2, 1)).toBe(0);
    // :path only (issue 7 reads it), the request counter, the log level
    expect(host.calls).toEqual(['proxy_get_header_map_value', 'proxy_increment_metric', 'proxy_get_log_level']);
  });

  test('callbacks for unknown or deleted contexts are harmless', () => {
    const host = start('{}');
    configure(host);
    host.call('proxy_on_delete', 7);
    expect(host.call('proxy_on_request_headers', 7, 0, 0)).toBe(0);
    host.call('proxy_on_context_create', 9, 42); // parent that does not exist
    expect(host.call('proxy_on_request_headers', 9, 0, 0)).toBe(0);
    host.call('proxy_on_delete', 9);
    host.call('proxy_on_delete', 1);
  });

  const REASONS = [
    'bad_path',
    'url_too_long',
    'bad_query',
    'bad_filter',
    'token_malformed',
    'token_expired',
    'token_mismatch',
    'token_future',
    'basic_auth_missing',
    'basic_auth_failed',
    'rewrite_bad_path',
  ];

  /** One request with this :path on a new stream context; the action returned. */
  const send = (host: StubHost, id: number, target: string): number => {
    host.requestHeaders = [
      [':path', target],
      [':method', 'GET'],
    ];
    host.call('proxy_on_context_create', id, 1);
    const action = host.call('proxy_on_request_headers', id, 2, 1);
    host.call('proxy_on_delete', id);
    return action;
  };

  test('its counters are defined in proxy_on_vm_start, once per VM, from a closed set of names', () => {
    const host = start('{}');
    expect([...host.metrics.values()].map((m) => m.name)).toEqual([
      'edge_requests_total',
      ...REASONS.map((r) => `edge_refusals_total.reason.${r}`),
      'edge_rewrites_total',
      'edge_filter_checks_total.cache.hit',
      'edge_filter_checks_total.cache.miss',
    ]);
    expect(host.logs).toEqual([]);
    // A second root context in the same VM (another plugin sharing it) defines nothing more.
    host.call('proxy_on_context_create', 2, 0);
    expect(host.call('proxy_on_vm_start', 2, 0)).toBe(1);
    expect(host.metrics.size).toBe(15);
  });

  test('a request counts once, a refusal by its reason; nothing else moves', () => {
    const host = start('{}');
    configure(host);
    expect(send(host, 3, '/vod/a.ism/Manifest')).toBe(0);
    expect(send(host, 4, '/a/../b')).toBe(1);
    expect(send(host, 5, `/${'a'.repeat(9000)}`)).toBe(1);
    const values = Object.fromEntries([...host.metrics.values()].map((m) => [m.name, Number(m.value)]));
    expect(Object.entries(values).filter(([, v]) => v !== 0)).toEqual([
      ['edge_requests_total', 3],
      ['edge_refusals_total.reason.bad_path', 1],
      ['edge_refusals_total.reason.url_too_long', 1],
    ]);
  });

  test('a host that refuses the counters: one warning each, and the plugin works on without them', () => {
    const host = new StubHost();
    host.refuseMetrics = true;
    host.instantiate(wasmModule);
    host.call('_initialize');
    host.call('proxy_on_context_create', 1, 0);
    expect(host.call('proxy_on_vm_start', 1, 0)).toBe(1);
    expect(host.logs).toHaveLength(15);
    expect(host.logs[0]).toEqual({
      level: 3,
      message: 'edge: the host refused the counter edge_requests_total; the plugin goes on without it',
    });
    host.logs = [];
    host.pluginConfiguration = Buffer.from('{}');
    expect(configure(host)).toBe(1);
    expect(send(host, 2, '/a/../b')).toBe(1);
    expect(host.localResponses.map((r) => r.status)).toEqual([400]);
    expect(send(host, 3, '/fine')).toBe(0);
    expect(host.calls).not.toContain('proxy_increment_metric');
  });

  test('many requests: memory stays bounded (contexts are freed)', () => {
    const host = start('{}', 1);
    configure(host);
    host.requestHeaders = [
      [':path', `/${'p'.repeat(2000)}`],
      [':method', 'GET'],
    ];
    const run = (from: number, count: number): void => {
      for (let id = from; id < from + count; id++) {
        host.call('proxy_on_context_create', id, 1);
        host.call('proxy_on_request_headers', id, 2, 1);
        host.call('proxy_on_delete', id);
      }
      host.logs = [];
    };
    run(2, 2000);
    const after2000 = host.bytes().length;
    run(2002, 20000);
    expect(host.bytes().length).toBeLessThanOrEqual(after2000 * 2);
  });

  test('the allocator refuses impossible sizes instead of trapping', () => {
    const host = start('{}');
    expect(host.call('proxy_on_memory_allocate', 0x7fffffff)).toBe(0);
    expect(host.call('proxy_on_memory_allocate', 100)).toBeGreaterThan(0);
    expect(host.call('proxy_on_memory_allocate', 0)).toBeGreaterThan(0);
  });
});

describe('never traps on bad input (a trap fails every later request on the worker, §5.1)', () => {
  test('random configuration bytes: accepted iff a JSON object (as JSON.parse reads it)', () => {
    const objectish = fc.oneof(
      fc.uint8Array({ maxLength: 80 }),
      fc.jsonValue({ maxDepth: 4 }).map((v) => Buffer.from(JSON.stringify(v), 'utf8')),
      fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 3 })).chain((o) =>
        fc.nat().map((cut) => {
          const text = Buffer.from(JSON.stringify(o), 'utf8');
          return cut % 3 === 0 ? text.subarray(0, cut % (text.length + 1)) : text;
        }),
      ),
    );
    fc.assert(
      fc.property(objectish, (configuration) => {
        const host = new StubHost();
        host.pluginConfiguration = configuration;
        host.instantiate(wasmModule);
        host.call('_initialize');
        host.call('proxy_on_context_create', 1, 0);
        const accepted = host.call('proxy_on_configure', 1, configuration.length);
        let isObject: boolean;
        try {
          const v: unknown = configuration.length === 0 ? {} : JSON.parse(Buffer.from(configuration).toString('utf8'));
          isObject = typeof v === 'object' && v !== null && !Array.isArray(v);
        } catch {
          isObject = false;
        }
        // The module may be stricter than JSON.parse (invalid UTF-8, duplicate names), never looser.
        if (accepted === 1) expect(isObject).toBe(true);
        else expect(host.logs.at(-1)?.level).toBe(4);
        // Issue 7: an object must also follow the schema (refusals name the member).
        if (isObject && accepted === 0)
          expect(host.logs.at(-1)?.message).toMatch(
            /invalid UTF-8|duplicate member name|out of range|nesting|configuration refused: /,
          );
      }),
      { numRuns: 400 },
    );
  });

  // Issue 7: a :path the edge refuses gets a local reply (PAUSE, forced stop); the rest passes.
  test('random request header values: pass through or a local reply, never a trap', () => {
    const host = new StubHost();
    host.logLevel = 0;
    host.instantiate(wasmModule);
    host.call('_initialize');
    host.call('proxy_on_context_create', 1, 0);
    host.call('proxy_on_configure', 1, 0);
    let id = 2;
    fc.assert(
      fc.property(
        fc.option(fc.string({ maxLength: 300 })),
        fc.option(fc.string({ maxLength: 300 })),
        (method, requestPath) => {
          host.requestHeaders = [];
          if (method !== null) host.requestHeaders.push([':method', method]);
          if (requestPath !== null) host.requestHeaders.push([':path', requestPath]);
          host.logs = [];
          host.localResponses = [];
          host.call('proxy_on_context_create', id, 1);
          const action = host.call('proxy_on_request_headers', id, host.requestHeaders.length, 1);
          host.call('proxy_on_delete', id++);
          expect(action).toBe(host.localResponses.length === 0 ? 0 : 1);
          if (action === 0) expect(host.logs[0]?.message.startsWith(`edge: ${method === null ? '-' : ''}`)).toBe(true);
          else expect([400, 414]).toContain(host.localResponses[0]!.status);
        },
      ),
      { numRuns: 300 },
    );
  });
});
