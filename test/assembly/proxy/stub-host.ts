// A minimal, test-only stand-in for Envoy's side of proxy-wasm ABI 0.2.1: just enough of the
// host functions (docs/specs.md ABI §2.3, §3.2) to unit-test a module
// without the real Node host (host-glue/). Every import of Envoy's 0.2.1 table is provided so
// that any module passing the import test instantiates; the ones these tests do not need
// answer UNIMPLEMENTED (12). Hostcalls are recorded in order.

import { ENVOY_ENV_IMPORTS_0_2_1 } from './abi-tables';

export const OK = 0;
export const NOT_FOUND = 1;
export const BAD_ARGUMENT = 2;
export const INVALID_MEMORY_ACCESS = 6;
export const INTERNAL_FAILURE = 10;
export const UNIMPLEMENTED = 12;

export type Pairs = Array<[string, string]>;

export interface LogLine {
  level: number;
  message: string;
}

export interface LocalResponse {
  status: number;
  details: string;
  body: string;
  headers: Pairs | 'malformed';
  grpcStatus: number;
}

/** Pairs serialisation (§3.1), test-side; checked against the shared fixture too. */
export function encodePairs(pairs: Pairs): Uint8Array {
  const encoded = pairs.map(([k, v]) => [Buffer.from(k, 'utf8'), Buffer.from(v, 'utf8')] as const);
  const size = encoded.reduce((n, [k, v]) => n + 8 + k.length + 1 + v.length + 1, 4);
  const out = Buffer.alloc(size);
  out.writeUInt32LE(pairs.length, 0);
  let sizes = 4;
  let data = 4 + 8 * pairs.length;
  for (const [k, v] of encoded) {
    out.writeUInt32LE(k.length, sizes);
    out.writeUInt32LE(v.length, sizes + 4);
    sizes += 8;
    k.copy(out, data);
    data += k.length + 1;
    v.copy(out, data);
    data += v.length + 1;
  }
  return out;
}

/** Strict pairs parsing like cpp-host PairsUtil::toPairs (§3.1), test-side. */
export function decodePairs(bytes: Uint8Array): Pairs | 'malformed' {
  if (bytes.length === 0 || (bytes.length === 1 && bytes[0] === 0)) return [];
  if (bytes.length < 4 || bytes.length > 1 << 20) return 'malformed';
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const count = view.getUint32(0, true);
  if (count > 1024 || 4 + 8 * count > bytes.length) return 'malformed';
  let data = 4 + 8 * count;
  const pairs: Pairs = [];
  for (let i = 0; i < count; i++) {
    const parts: string[] = [];
    for (const length of [view.getUint32(4 + 8 * i, true), view.getUint32(8 + 8 * i, true)]) {
      if (data + length + 1 > bytes.length || bytes[data + length] !== 0) return 'malformed';
      parts.push(Buffer.from(bytes.subarray(data, data + length)).toString('utf8'));
      data += length + 1;
    }
    pairs.push([parts[0]!, parts[1]!]);
  }
  return data === bytes.length ? pairs : 'malformed';
}

export class StubHost {
  logs: LogLine[] = [];
  calls: string[] = [];
  logLevel = 0;
  now = 1_700_000_000_123_456_789n;
  pluginConfiguration: Uint8Array = new Uint8Array(0);
  vmConfiguration: Uint8Array = new Uint8Array(0);
  requestHeaders: Pairs = [];
  responseHeaders: Pairs = [];
  requestBody: Uint8Array = new Uint8Array(0);
  /** Properties by path segments joined with "\0". */
  properties = new Map<string, Uint8Array>();
  localResponses: LocalResponse[] = [];
  continued: number[] = [];
  /** Last set_buffer_bytes call. */
  bufferWrites: Array<{ type: number; start: number; size: number; data: string }> = [];
  /** Counters by id (ids as Envoy hands them out: 4, 8, …); `refuseMetrics` answers every
   * definition INTERNAL_FAILURE, as Envoy does for a capability the configuration withholds. */
  metrics = new Map<number, { name: string; value: bigint }>();
  refuseMetrics = false;
  private instance: WebAssembly.Instance | null = null;

  /** Instantiates `module` against this host (does not call _initialize). */
  instantiate(module: WebAssembly.Module): WebAssembly.Instance {
    this.instance = new WebAssembly.Instance(module, { env: this.env() });
    return this.instance;
  }

  exports(): WebAssembly.Exports {
    if (this.instance === null) throw new Error('not instantiated');
    return this.instance.exports;
  }

  call<T = number>(name: string, ...args: number[]): T {
    const fn = this.exports()[name];
    if (typeof fn !== 'function') throw new Error(`module does not export ${name}`);
    return (fn as (...a: number[]) => T)(...args);
  }

  /** Fresh view on every use: memory may have grown (§6 item 17). */
  bytes(): Uint8Array {
    return new Uint8Array((this.exports()['memory'] as WebAssembly.Memory).buffer);
  }

  private view(): DataView {
    return new DataView((this.exports()['memory'] as WebAssembly.Memory).buffer);
  }

  read(ptr: number, size: number): Uint8Array {
    return this.bytes().slice(ptr, ptr + size);
  }

  text(ptr: number, size: number): string {
    return Buffer.from(this.read(ptr, size)).toString('utf8');
  }

  /** Copies `data` into module memory through its allocator (§3.2); returns the pointer. */
  place(data: Uint8Array): number {
    const ptr = this.call('proxy_on_memory_allocate', data.length);
    if (ptr === 0) throw new Error('allocator refused');
    this.bytes().set(data, ptr);
    return ptr;
  }

  /** §3.2: empty -> 0/0 without allocating; else allocate, copy, write pointer and size. */
  private returnBytes(data: Uint8Array, retPtrPtr: number, retSizePtr: number): number {
    if (data.length === 0) {
      this.view().setUint32(retPtrPtr, 0, true);
      this.view().setUint32(retSizePtr, 0, true);
      return OK;
    }
    const ptr = this.call('proxy_on_memory_allocate', data.length);
    if (ptr === 0) return INVALID_MEMORY_ACCESS;
    this.bytes().set(data, ptr);
    this.view().setUint32(retPtrPtr, ptr, true);
    this.view().setUint32(retSizePtr, data.length, true);
    return OK;
  }

  private map(type: number): Pairs | null {
    if (type === 0) return this.requestHeaders;
    if (type === 2) return this.responseHeaders;
    return null;
  }

  private env(): Record<string, (...args: never[]) => number> {
    const env: Record<string, (...args: never[]) => number> = {};
    for (const name of Object.keys(ENVOY_ENV_IMPORTS_0_2_1)) {
      env[name] = (): number => {
        this.calls.push(name);
        return UNIMPLEMENTED;
      };
    }
    const record =
      <A extends unknown[]>(name: string, fn: (...args: A) => number) =>
      (...args: A): number => {
        this.calls.push(name);
        return fn(...args);
      };
    Object.assign(env, {
      proxy_log: record('proxy_log', (level: number, ptr: number, size: number) => {
        if (level > 5) return BAD_ARGUMENT;
        this.logs.push({ level, message: this.text(ptr, size) });
        return OK;
      }),
      proxy_get_log_level: record('proxy_get_log_level', (ret: number) => {
        this.view().setUint32(ret, this.logLevel, true);
        return OK;
      }),
      proxy_get_current_time_nanoseconds: record('proxy_get_current_time_nanoseconds', (ret: number) => {
        this.view().setBigUint64(ret, this.now, true);
        return OK;
      }),
      proxy_get_buffer_bytes: record(
        'proxy_get_buffer_bytes',
        (type: number, start: number, max: number, retPtr: number, retSize: number) => {
          const buffer =
            type === 7
              ? this.pluginConfiguration
              : type === 6
                ? this.vmConfiguration
                : type === 0
                  ? this.requestBody
                  : null;
          if (buffer === null) return NOT_FOUND;
          if (start > buffer.length) return this.returnBytes(new Uint8Array(0), retPtr, retSize);
          return this.returnBytes(
            buffer.subarray(start, start + Math.min(max >>> 0, buffer.length - start)),
            retPtr,
            retSize,
          );
        },
      ),
      proxy_get_buffer_status: record('proxy_get_buffer_status', (type: number, retSize: number, retFlags: number) => {
        if (type !== 0) return NOT_FOUND;
        this.view().setUint32(retSize, this.requestBody.length, true);
        this.view().setUint32(retFlags, 0, true);
        return OK;
      }),
      proxy_set_buffer_bytes: record(
        'proxy_set_buffer_bytes',
        (type: number, start: number, size: number, ptr: number, len: number) => {
          this.bufferWrites.push({ type, start, size, data: this.text(ptr, len) });
          return OK;
        },
      ),
      proxy_get_header_map_value: record(
        'proxy_get_header_map_value',
        (type: number, keyPtr: number, keySize: number, retPtr: number, retSize: number) => {
          const map = this.map(type);
          if (map === null) return BAD_ARGUMENT;
          const key = this.text(keyPtr, keySize).toLowerCase();
          const entry = map.find(([k]) => k === key);
          if (entry === undefined) return NOT_FOUND;
          return this.returnBytes(Buffer.from(entry[1], 'utf8'), retPtr, retSize);
        },
      ),
      proxy_get_header_map_pairs: record(
        'proxy_get_header_map_pairs',
        (type: number, retPtr: number, retSize: number) => {
          const map = this.map(type);
          return this.returnBytes(
            map === null || map.length === 0 ? new Uint8Array(0) : encodePairs(map),
            retPtr,
            retSize,
          );
        },
      ),
      proxy_replace_header_map_value: record(
        'proxy_replace_header_map_value',
        (type: number, kp: number, ks: number, vp: number, vs: number) => {
          const map = this.map(type);
          if (map === null) return BAD_ARGUMENT;
          const key = this.text(kp, ks).toLowerCase();
          const kept = map.filter(([k]) => k !== key);
          map.length = 0;
          map.push(...kept, [key, this.text(vp, vs)]);
          return OK;
        },
      ),
      proxy_add_header_map_value: record(
        'proxy_add_header_map_value',
        (type: number, kp: number, ks: number, vp: number, vs: number) => {
          const map = this.map(type);
          if (map === null) return BAD_ARGUMENT;
          map.push([this.text(kp, ks).toLowerCase(), this.text(vp, vs)]);
          return OK;
        },
      ),
      proxy_remove_header_map_value: record('proxy_remove_header_map_value', (type: number, kp: number, ks: number) => {
        const map = this.map(type);
        if (map === null) return BAD_ARGUMENT;
        const key = this.text(kp, ks).toLowerCase();
        const kept = map.filter(([k]) => k !== key);
        map.length = 0;
        map.push(...kept);
        return OK;
      }),
      proxy_get_property: record(
        'proxy_get_property',
        (pathPtr: number, pathSize: number, retPtr: number, retSize: number) => {
          const value = this.properties.get(this.text(pathPtr, pathSize));
          if (value === undefined) return NOT_FOUND;
          return this.returnBytes(value, retPtr, retSize);
        },
      ),
      proxy_send_local_response: record(
        'proxy_send_local_response',
        (status: number, dp: number, ds: number, bp: number, bs: number, hp: number, hs: number, grpc: number) => {
          this.localResponses.push({
            status,
            details: this.text(dp, ds),
            body: this.text(bp, bs),
            headers: decodePairs(this.read(hp, hs)),
            grpcStatus: grpc,
          });
          return OK;
        },
      ),
      proxy_define_metric: record('proxy_define_metric', (type: number, ptr: number, size: number, ret: number) => {
        if (this.refuseMetrics) return INTERNAL_FAILURE;
        if (type !== 0) return UNIMPLEMENTED;
        const id = 4 * (this.metrics.size + 1);
        this.metrics.set(id, { name: this.text(ptr, size), value: 0n });
        this.view().setUint32(ret, id, true);
        return OK;
      }),
      proxy_increment_metric: record('proxy_increment_metric', (id: number, delta: bigint) => {
        const m = this.metrics.get(id);
        if (m === undefined) return NOT_FOUND;
        if (delta <= 0n) return BAD_ARGUMENT;
        m.value += delta;
        return OK;
      }),
      proxy_continue_stream: record('proxy_continue_stream', (type: number) => {
        if (type > 3) return BAD_ARGUMENT;
        this.continued.push(type);
        return OK;
      }),
    });
    return env;
  }
}
