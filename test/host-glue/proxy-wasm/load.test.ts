// Load refusals with Envoy's wording (§6 items 1-6), on hand-assembled modules: the exact byte
// layout is the point, so no compiler decides it for us.

import { createProxyWasmPlugin } from '../../../host-glue/proxy-wasm/host';
import { PluginLoadError } from '../../../host-glue/proxy-wasm/http-filter';
import { closeAll, INFO, load, LogCapture, request, spec } from './helpers/harness';
import { testPlugin } from './helpers/test-plugins';
import { minimalPlugin, ModuleBuilder, op } from './helpers/wasm-encoder';

afterEach(closeAll);

async function refusal(
  wasm: Uint8Array,
  options: { script?: string; vmScript?: string } = {},
): Promise<{ error: PluginLoadError; logs: LogCapture }> {
  const logs = new LogCapture();
  try {
    await createProxyWasmPlugin(spec({ wasm, ...options }, logs));
  } catch (e) {
    if (!(e instanceof PluginLoadError)) throw e;
    return { error: e, logs };
  }
  throw new Error('the module loaded');
}

/** proxy_log(level, ptr, len) of a constant string placed at `at` in memory. */
function logConst(m: ModuleBuilder, proxyLog: number, at: number, message: string): number[] {
  m.dataAt(at, [...Buffer.from(message)]);
  return [...op.i32(2), ...op.i32(at), ...op.i32(message.length), ...op.call(proxyLog), ...op.drop];
}

describe('ABI marker (§0)', () => {
  test('a module without proxy_abi_version_* is refused', async () => {
    const wasm = minimalPlugin(undefined, { marker: 'not_a_marker' });
    const { error, logs } = await refusal(wasm);
    expect(error.message).toBe('Missing or unknown Proxy-Wasm ABI version');
    expect(logs.text()).toContain('Unable to create Wasm HTTP filter test_plugin');
  });

  test('the marker must be a function export: a global of that name does not count', async () => {
    const m = new ModuleBuilder();
    m.exportedGlobal('proxy_abi_version_0_2_1');
    m.func('proxy_on_memory_allocate', ['i32'], ['i32'], op.i32(1024));
    m.memory(1);
    expect((await refusal(m.bytes())).error.message).toBe('Missing or unknown Proxy-Wasm ABI version');
  });

  test('the first marker in the export section decides: 0.2.0 has no proxy_get_log_level', async () => {
    const build = (first: string, second: string): Uint8Array => {
      const m = new ModuleBuilder();
      m.importFunc('env', 'proxy_get_log_level', ['i32']);
      m.func(first, [], [], []);
      m.func(second, [], [], []);
      m.func('proxy_on_memory_allocate', ['i32'], ['i32'], op.i32(1024));
      m.memory(1);
      return m.bytes();
    };
    const { error } = await refusal(build('proxy_abi_version_0_2_0', 'proxy_abi_version_0_2_1'));
    expect(error.message).toBe('Failed to load Wasm module due to a missing import: env.proxy_get_log_level');
    await expect(load({ wasm: build('proxy_abi_version_0_2_1', 'proxy_abi_version_0_2_0') })).resolves.toBeDefined();
  });

  test('corrupted bytes are refused before anything runs', async () => {
    const wasm = minimalPlugin();
    const { error } = await refusal(wasm.slice(0, wasm.length - 3));
    expect(error.message).toBe('Failed to parse corrupted Wasm module');
  });
});

describe('imports (§2.8, §6.2)', () => {
  test('an import Envoy does not register is refused with its name', async () => {
    const wasm = minimalPlugin((m) => m.importFunc('env', 'abort', ['i32', 'i32', 'i32', 'i32'], []));
    const { error, logs } = await refusal(wasm);
    expect(error.message).toBe('Failed to load Wasm module due to a missing import: env.abort');
    expect(logs.text()).toEqual(
      expect.arrayContaining([
        'Failed to load Wasm module due to a missing import: env.abort',
        'Failed to initialize Wasm code',
        'Unable to create Wasm HTTP filter test_plugin',
      ]),
    );
  });

  test('ABI-0.1-only hostcalls do not exist under 0.2.1', async () => {
    const wasm = minimalPlugin((m) => m.importFunc('env', 'proxy_continue_request', []));
    expect((await refusal(wasm)).error.message).toBe(
      'Failed to load Wasm module due to a missing import: env.proxy_continue_request',
    );
  });

  test('a known import with the wrong type is refused with both signatures', async () => {
    const wasm = minimalPlugin((m) => m.importFunc('env', 'proxy_log', ['i32', 'i32', 'i32'], []));
    expect((await refusal(wasm)).error.message).toBe(
      'Failed to load Wasm module due to an import type mismatch: env.proxy_log, want: i32 i32 i32 -> void, ' +
        'but host exports: i32 i32 i32 -> i32',
    );
  });

  test('imported globals are refused; WASI is there under both module names', async () => {
    const global = minimalPlugin((m) => m.importGlobal('env', '__stack_pointer'));
    expect((await refusal(global)).error.message).toBe(
      'Failed to load Wasm module due to a missing import: env.__stack_pointer',
    );
    const wasi = minimalPlugin((m) => {
      m.importFunc('wasi_snapshot_preview1', 'fd_write', ['i32', 'i32', 'i32', 'i32']);
      m.importFunc('wasi_unstable', 'clock_time_get', ['i32', 'i64', 'i32']);
      m.importFunc('wasi_snapshot_preview1', 'proc_exit', ['i32'], []);
    });
    await expect(load({ wasm: wasi })).resolves.toBeDefined();
    const notProvided = minimalPlugin((m) =>
      m.importFunc('wasi_snapshot_preview1', 'path_filestat_get', ['i32', 'i32', 'i32', 'i32', 'i32']),
    );
    expect((await refusal(notProvided)).error.message).toBe(
      'Failed to load Wasm module due to a missing import: wasi_snapshot_preview1.path_filestat_get',
    );
  });
});

describe('exports (§1.1, §6.3, §6.4)', () => {
  test('a callback with the wrong signature is refused like V8 does', async () => {
    const wasm = minimalPlugin((m) => m.func('proxy_on_done', ['i32'], [], []));
    expect((await refusal(wasm)).error.message).toBe(
      'Bad function signature for: proxy_on_done, want: i32 -> i32, but the module exports: i32 -> void',
    );
  });

  test('an i64 parameter is a wrong signature too', async () => {
    const wasm = minimalPlugin((m) => m.func('proxy_on_request_headers', ['i32', 'i64', 'i32'], ['i32'], op.i32(0)));
    expect((await refusal(wasm)).error.message).toBe(
      'Bad function signature for: proxy_on_request_headers, want: i32 i32 i32 -> i32, but the module exports: i32 i64 i32 -> i32',
    );
  });

  test('no malloc and no proxy_on_memory_allocate: "Wasm module is missing malloc function."', async () => {
    const wasm = minimalPlugin(undefined, { allocator: null });
    expect((await refusal(wasm)).error.message).toBe('Wasm module is missing malloc function.');
    await expect(load({ wasm: minimalPlugin(undefined, { allocator: 'malloc' }) })).resolves.toBeDefined();
  });

  test('_start is not looked up (so not checked) when _initialize exists', async () => {
    const both = minimalPlugin((m) => {
      m.func('_initialize', [], [], []);
      m.func('_start', ['i32'], ['i32'], op.i32(0));
    });
    await expect(load({ wasm: both })).resolves.toBeDefined();
    const alone = minimalPlugin((m) => m.func('_start', ['i32'], ['i32'], op.i32(0)));
    expect((await refusal(alone)).error.message).toBe(
      'Bad function signature for: _start, want: void -> void, but the module exports: i32 -> i32',
    );
  });

  test('ABI 0.1.0 modules are refused by this host (it implements 0.2.x only)', async () => {
    const wasm = minimalPlugin(undefined, { marker: 'proxy_abi_version_0_1_0' });
    expect((await refusal(wasm)).error.message).toMatch(/ABI 0\.1\.0 is not supported/);
  });
});

describe('start-up (§1.1, §6.5, §6.6)', () => {
  test('_initialize runs in every VM (base, canary, worker) with proxy_log allowed; its lines have no prefix', async () => {
    const wasm = minimalPlugin((m) => {
      const log = m.importFunc('env', 'proxy_log', ['i32', 'i32', 'i32']);
      m.func('_initialize', [], [], logConst(m, log, 64, 'initialised'));
    });
    const { logs } = await load({ wasm });
    // The VM context (id 0) has no root log prefix in cpp-host: `wasm log: <msg>`.
    expect(logs.text().filter((l) => l === 'wasm log: initialised')).toHaveLength(3);
  });

  test('a hostcall outside the start-up allow-list traps restricted_callback and refuses the load', async () => {
    const wasm = minimalPlugin((m) => {
      const tick = m.importFunc('env', 'proxy_set_tick_period_milliseconds', ['i32']);
      m.func('_initialize', [], [], [...op.i32(10), ...op.call(tick), ...op.drop]);
    });
    const { error } = await refusal(wasm);
    expect(error.message).toBe('Function: _initialize failed: Uncaught Error: restricted_callback');
  });

  test('a trap in _initialize refuses the load, naming the function', async () => {
    const wasm = minimalPlugin((m) => m.func('_initialize', [], [], op.unreachable));
    const { error, logs } = await refusal(wasm);
    expect(error.message).toBe('Function: _initialize failed: Uncaught RuntimeError: unreachable');
    expect(logs.text()).toContain('Failed to initialize Wasm code');
  });

  test('the in-VM backtrace names functions when the module has a name section (§5.1)', async () => {
    const m = new ModuleBuilder();
    const inner = m.func(null, [], [], op.unreachable);
    const init = m.func('_initialize', [], [], op.call(inner));
    m.nameFunc(inner, 'explode').nameFunc(init, 'init');
    m.func('proxy_abi_version_0_2_1', [], [], []);
    m.func('proxy_on_memory_allocate', ['i32'], ['i32'], op.i32(1024));
    m.memory(1);
    const { logs } = await refusal(m.bytes());
    const failure = logs.text().find((l) => l.startsWith('Function: _initialize failed'))!;
    expect(failure.split('\n')).toEqual([
      'Function: _initialize failed: Uncaught RuntimeError: unreachable',
      'Proxy-Wasm plugin in-VM backtrace:',
      expect.stringMatching(/^ {2}0: {2}0x[0-9a-f]+ - explode$/),
      expect.stringMatching(/^ {2}1: {2}0x[0-9a-f]+ - init$/),
    ]);
  });

  test('a wasm start section that calls the host is refused (Envoy has no context yet)', async () => {
    const wasm = minimalPlugin((m) => {
      const log = m.importFunc('env', 'proxy_log', ['i32', 'i32', 'i32']);
      m.start(m.func(null, [], [], logConst(m, log, 64, 'too early')));
    });
    const { error } = await refusal(wasm);
    expect(error.message).toMatch(/env\.proxy_log called from the wasm start section/);
  });

  test('on_vm_start returning 0 refuses the plugin', async () => {
    const { error } = await refusal(testPlugin(), { vmScript: 'vm_start return 0' });
    expect(error.message).toBe('Failed to start base Wasm');
  });

  test('on_configure returning 0 refuses the configuration; a trap there names the callback', async () => {
    expect((await refusal(testPlugin(), { script: 'configure return 0' })).error.message).toBe(
      'Failed to configure base Wasm plugin',
    );
    expect((await refusal(testPlugin(), { script: 'configure trap' })).error.message).toBe(
      'Function: proxy_on_configure failed: Uncaught RuntimeError: unreachable',
    );
  });

  test('the plugin configuration is readable in on_configure only; the VM configuration always', async () => {
    const vmScript = 'vm_start body 7\nvm_start body 6';
    const script = 'configure body 7\nrequest_headers body 7\nrequest_headers body 6';
    const { logs, plugin } = await load({ vmScript, script });
    const root = logs.reports(1);
    // canary and worker each report once
    expect(root.filter((r) => r === 'body 7 status=1 buffer_status=1')).toHaveLength(2);
    expect(root.filter((r) => r.startsWith(`body 6 status=0 size=${vmScript.length} `))).toHaveLength(2);
    expect(root.filter((r) => r.startsWith(`body 7 status=0 size=${script.length} `))).toHaveLength(2);
    const s = plugin.newStream(INFO);
    await s.requestHeaders(request(), true);
    expect(logs.report('body 7', 2)).toBe('body 7 status=1 buffer_status=1');
    expect(logs.report('body 6', 2)).toMatch(new RegExp(`^body 6 status=0 size=${vmScript.length} `));
    s.end();
  });
});
