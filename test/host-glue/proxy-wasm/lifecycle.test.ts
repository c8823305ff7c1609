// Call order and context ids (§1.3, §6 items 6, 7, 14), logging (§6.22, §6.23), shutdown.

import { bytes, closeAll, INFO, load, LogCapture, PREFIX, request, response, spec } from './helpers/harness';
import { createProxyWasmPlugin } from '../../../host-glue/proxy-wasm/host';
import { ContextTable } from '../../../host-glue/proxy-wasm/vm';
import type { ContextBase } from '../../../host-glue/proxy-wasm/context';

afterEach(closeAll);

describe('start-up order (§1.3 VM/plugin start-up)', () => {
  test('canary and worker each run on_context_create(1, 0), on_vm_start, on_configure', async () => {
    const vmScript = 'all trace';
    const script = 'all trace';
    const { logs } = await load({ vmScript, script });
    expect(logs.calls(1)).toEqual([
      // canary
      'context_create 0',
      `vm_start ${vmScript.length}`,
      `configure ${script.length}`,
      // worker
      'context_create 0',
      `vm_start ${vmScript.length}`,
      `configure ${script.length}`,
    ]);
  });
});

describe('per stream (§1.3 per HTTP request)', () => {
  test('create -> request headers -> body -> response headers -> body -> log -> done -> delete', async () => {
    const { plugin, logs } = await load({ script: 'all trace' });
    const s = plugin.newStream(INFO);
    expect(logs.calls(2)).toEqual([]); // nothing before the request headers arrive
    await s.requestHeaders(request('/a', [['content-length', '5']], 'POST'), false);
    await s.requestBody(bytes('hel'), false);
    await s.requestBody(bytes('lo'), true);
    await s.responseHeaders(response(200), false);
    await s.responseBody(bytes('world'), true);
    s.end();
    s.end(); // idempotent
    expect(logs.calls(2)).toEqual([
      'context_create 1',
      'request_headers 5 0',
      'request_body 3 0',
      'request_body 2 1',
      'response_headers 1 0',
      'response_body 5 1',
      'log',
      'done',
      'delete',
    ]);
  });

  test('headers-only exchange: end_of_stream=1 and no body callbacks', async () => {
    const { plugin, logs } = await load({ script: 'all trace' });
    const s = plugin.newStream(INFO);
    await s.requestHeaders(request(), true);
    await s.responseHeaders(response(204), true);
    s.end();
    expect(logs.calls(2)).toEqual([
      'context_create 1',
      'request_headers 4 1',
      'response_headers 1 1',
      'log',
      'done',
      'delete',
    ]);
  });

  test('stream context ids are monotonic from 2 and never reused; the root is 1', async () => {
    const { plugin, logs } = await load({ script: 'all trace' });
    for (let i = 0; i < 3; i++) {
      const s = plugin.newStream(INFO);
      await s.requestHeaders(request(), true);
      s.end();
    }
    expect(
      logs.reports().filter((r) => r.startsWith('called context_create ') && r !== 'called context_create 0'),
    ).toEqual(['called context_create 1', 'called context_create 1', 'called context_create 1']);
    expect([2, 3, 4].map((id) => logs.calls(id)[0])).toEqual([
      'context_create 1',
      'context_create 1',
      'context_create 1',
    ]);
    expect(plugin.liveContexts).toBe(2); // the VM context and the root: streams are gone
  });

  test('the context table: get, has, set, delete and size as a Map', () => {
    const table = new ContextTable();
    const ctx = (n: number): ContextBase => ({ id: n }) as unknown as ContextBase;
    const model = new Map<number, ContextBase>();
    for (let i = 1; i <= 2000; i++) {
      const c = ctx(i);
      table.set(i, c);
      model.set(i, c);
      if (i % 3 !== 0) {
        expect(table.delete(i - 1)).toBe(model.delete(i - 1));
      }
      expect(table.size).toBe(model.size);
    }
    table.set(5, ctx(55)); // replacing keeps the count
    model.set(5, ctx(55));
    for (let i = 0; i <= 2001; i++) {
      expect(table.has(i)).toBe(model.has(i));
      expect(table.get(i)).toEqual(model.get(i));
    }
    expect(table.delete(999_999)).toBe(false);
    expect(table.size).toBe(model.size);
  });

  test('the context table under colliding ids, deletes in any order, growth and wrap-around', () => {
    // Ids that share a slot (multiples of the table size apart), runs that wrap past the last
    // slot, and deletes from the middle of a probe run: every live id stays reachable.
    const table = new ContextTable();
    const model = new Map<number, ContextBase>();
    let seed = 12345;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const pool = [0, 1, 2, 3, 4].flatMap((k) => [
      60 + 64 * k,
      61 + 64 * k,
      62 + 64 * k,
      63 + 64 * k,
      64 + 64 * k,
      65 + 64 * k,
    ]);
    for (let step = 0; step < 20_000; step++) {
      const phase = Math.floor(step / 5000); // grows, then shrinks back, twice
      const id = phase % 2 === 0 ? pool[random(pool.length)]! + 1024 * random(phase + 1) : pool[random(pool.length)]!;
      if (random(3) === 0 || model.size > 150) expect(table.delete(id)).toBe(model.delete(id));
      else {
        const c = { id } as unknown as ContextBase;
        table.set(id, c);
        model.set(id, c);
      }
      expect(table.size).toBe(model.size);
      if (step % 97 === 0) for (const [k, v] of model) expect(table.get(k)).toBe(v);
    }
    for (const [k, v] of model) expect(table.get(k)).toBe(v);
    for (const k of [...model.keys()]) expect(table.delete(k)).toBe(true);
    expect(table.size).toBe(0);
    for (const k of pool) expect(table.has(k)).toBe(false);
    expect(() => table.set(-1, {} as ContextBase)).toThrow(RangeError);
    table.set(0, { id: 0 } as unknown as ContextBase); // the VM context
    expect(table.has(0) && table.size === 1).toBe(true);
    expect(table.get(-1)).toBeUndefined();
  });

  test('many overlapping streams: each found by its id while alive, none left after end()', async () => {
    const { plugin } = await load({ script: '' });
    const open: ReturnType<typeof plugin.newStream>[] = [];
    for (let i = 0; i < 5000; i++) {
      const s = plugin.newStream(INFO);
      open.push(s);
      await s.requestHeaders(request(), true);
      if (open.length > 7) open.shift()!.end(); // up to 8 alive at once, ended in order
      expect(plugin.liveContexts).toBe(2 + open.length);
    }
    for (const s of open.splice(0)) s.end();
    expect(plugin.liveContexts).toBe(2);
  });

  test('a stream ended before its headers still gets create + log + done + delete (access-log path)', async () => {
    const { plugin, logs } = await load({ script: 'all trace' });
    plugin.newStream(INFO).end();
    expect(logs.calls(2)).toEqual(['context_create 1', 'log', 'done', 'delete']);
  });

  test('on_done returning 0 is ignored for HTTP streams: on_delete follows', async () => {
    const { plugin, logs } = await load({ script: 'all trace\ndone@/a return 0' });
    const s = plugin.newStream(INFO);
    await s.requestHeaders(request(), true);
    s.end();
    expect(logs.calls(2).slice(-2)).toEqual(['done', 'delete']);
  });
});

describe('root shutdown (§1.3)', () => {
  test('on_done(1) returning 1 is followed by on_delete(1)', async () => {
    const { plugin, logs } = await load({ script: 'all trace' });
    await plugin.shutdown();
    expect(logs.calls(1).slice(-2)).toEqual(['done', 'delete']);
  });

  test('on_done(1) returning 0 waits for proxy_done(), called here from on_tick', async () => {
    const { plugin, logs } = await load({ script: 'all trace\ndone return 0\ntick done\nconfigure tick 5' });
    await plugin.shutdown();
    const calls = logs.calls(1);
    const done = calls.lastIndexOf('done');
    expect(calls.slice(done)).toEqual(['done', 'tick', 'delete']);
    expect(logs.reports(1)).toContain('done status=0');
  });

  test('proxy_done() outside a pending shutdown is NOT_FOUND', async () => {
    const { logs } = await load({ script: 'configure done' });
    expect(logs.reports(1)).toContain('done status=1');
  });
});

describe("Envoy's wasm log (§2.3, §6.22, §6.23)", () => {
  test('lines read `wasm log <name> <root_id> <vm_id>: <msg>` at the level given', async () => {
    const { plugin, logs } = await load({
      script: 'request_headers log 3 careful\nrequest_headers log 4 broken\nrequest_headers log 5 fatal',
    });
    const s = plugin.newStream(INFO);
    await s.requestHeaders(request(), true);
    s.end();
    expect(logs.lines.filter((l) => l.line.startsWith(PREFIX) && !l.line.includes('#'))).toEqual([
      { level: 'warn', line: `${PREFIX}careful` },
      { level: 'error', line: `${PREFIX}broken` },
      { level: 'critical', line: `${PREFIX}fatal` },
    ]);
  });

  test('root-context lines carry ` <root_id> <vm_id>`, stream lines ` <name> <root_id> <vm_id>`', async () => {
    // cpp-host context.h log_prefix(): a root context uses makeRootLogPrefix (no plugin name),
    // every other context the plugin's makeLogPrefix; fd_write lines follow the same rule.
    const { plugin, logs } = await load({
      script:
        'configure log 2 from-root\nconfigure stdout root-out\nrequest_headers log 2 from-stream\nrequest_headers stdout stream-out',
    });
    const s = plugin.newStream(INFO);
    await s.requestHeaders(request(), true);
    s.end();
    const plain = logs.text().filter((l) => !l.includes('#'));
    // the canary and the worker VM each configure
    expect(plain).toEqual([
      'wasm log test_root test_vm: from-root',
      'wasm log test_root test_vm: root-out',
      'wasm log test_root test_vm: from-root',
      'wasm log test_root test_vm: root-out',
      `${PREFIX}from-stream`,
      `${PREFIX}stream-out`,
    ]);
    expect(PREFIX).toBe('wasm log test_plugin test_root test_vm: ');
  });

  test('empty parts are left out of both prefixes', async () => {
    const logs = new LogCapture();
    const plugin = await createProxyWasmPlugin({
      ...spec({ script: 'configure log 2 r\nrequest_headers log 2 s' }, logs),
      rootId: '',
      vmId: '',
    });
    const s = plugin.newStream(INFO);
    await s.requestHeaders(request(), true);
    s.end();
    await plugin.shutdown();
    expect(logs.text().filter((l) => !l.includes('#'))).toEqual([
      'wasm log: r',
      'wasm log: r',
      'wasm log test_plugin: s',
    ]);
  });

  test('the threshold filters lines and proxy_get_log_level reports it; a level over 5 is BAD_ARGUMENT', async () => {
    const script =
      'request_headers log 1 debug-line\nrequest_headers log 2 info-line\nrequest_headers log 6 bad\nrequest_headers level';
    const info = await load({ script });
    let s = info.plugin.newStream(INFO);
    await s.requestHeaders(request(), true);
    expect(info.logs.text()).toContain(`${PREFIX}info-line`);
    expect(info.logs.text()).not.toContain(`${PREFIX}debug-line`);
    expect(info.logs.reports(2)).toEqual(['log status=2', 'level status=0 value=2']);
    const debug = await load({ script, logLevel: 'debug' });
    s = debug.plugin.newStream(INFO);
    await s.requestHeaders(request(), true);
    expect(debug.logs.text()).toContain(`${PREFIX}debug-line`);
    expect(debug.logs.report('level', 2)).toBe('level status=0 value=1');
  });

  test('at trace level the host traces every call both ways, like --component-log-level wasm:trace', async () => {
    const { plugin, logs } = await load({ script: 'request_headers pause', logLevel: 'trace' });
    const s = plugin.newStream(INFO);
    void Promise.resolve(s.requestHeaders(request(), true)).catch(() => undefined);
    expect(logs.text()).toEqual(
      expect.arrayContaining([
        '[host->vm] proxy_on_context_create(2, 1)',
        '[host->vm] proxy_on_request_headers(2, 4, 1)',
        '[host<-vm] proxy_on_request_headers return: 1',
      ]),
    );
    s.end();
  });

  test('WASI fd_write: fd 1 -> info, fd 2 -> error, one trailing newline stripped; proc_exit returns', async () => {
    const { plugin, logs } = await load({
      script: 'request_headers stdout out\\n\nrequest_headers stderr err\\n\\n\nrequest_headers proc_exit 3',
    });
    const s = plugin.newStream(INFO);
    await s.requestHeaders(request(), true);
    expect(logs.lines).toEqual(
      expect.arrayContaining([
        { level: 'info', line: `${PREFIX}out` },
        { level: 'error', line: `${PREFIX}err\n` },
      ]),
    );
    expect(logs.reports(2)).toEqual(['stdout errno=0 written=4', 'stderr errno=0 written=5', 'proc_exit returned']);
  });
});
