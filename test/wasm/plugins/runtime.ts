// A scriptable proxy-wasm ABI 0.2.1 test plugin for the Node host tests. It talks to the host
// only through raw `@external("env", "proxy_…")` imports (imports.ts: no SDK, no dependency on
// assembly/), and does what its configuration says, one rule per line:
//
//   <event>[@<request :path>] <action> <args…>
//
//   events   context_create vm_start configure request_headers request_body response_headers
//            response_body log done delete tick queue_ready, or `all` (only for `trace`)
//   args     space separated; `-` is an empty string; escapes \s (space) \n \t \0 \\ \xHH
//
// Rules for vm_start come from the VM configuration (read in on_vm_start), the others from the
// plugin configuration (read in on_configure). Every action reports what it saw on proxy_log at
// info level as `#<context id> <report>`, so the tests read the plugin's view from the log.
// Values are bytes: configuration and host data are read as latin1 (one char per byte).

// ------------------------------------------------------------------------------- imports (§2.3)

import {
  proxy_log, proxy_get_log_level, proxy_get_current_time_nanoseconds, proxy_set_tick_period_milliseconds,
  proxy_get_buffer_bytes, proxy_get_buffer_status, proxy_set_buffer_bytes, proxy_get_header_map_pairs,
  proxy_set_header_map_pairs, proxy_get_header_map_value, proxy_add_header_map_value,
  proxy_replace_header_map_value, proxy_remove_header_map_value, proxy_get_header_map_size,
  proxy_send_local_response, proxy_continue_stream, proxy_close_stream, proxy_set_effective_context,
  proxy_get_property, proxy_set_property, proxy_done, proxy_get_shared_data, proxy_set_shared_data,
  proxy_define_metric, proxy_increment_metric, proxy_record_metric, proxy_get_metric, fd_write, proc_exit
} from './imports';

// ------------------------------------------------------------------------------- plumbing

/** Return slots: four u32 the host writes into (§3.2). */
const RET = memory.data(32);

/** latin1: one byte per char, so any byte sequence survives. */
function rawBytes(s: string): ArrayBuffer {
  const out = new ArrayBuffer(s.length);
  for (let i = 0; i < s.length; i++) store<u8>(changetype<usize>(out) + <usize>i, <u8>s.charCodeAt(i));
  return out;
}

function rawString(ptr: usize, len: usize): string {
  let s = "";
  for (let i: usize = 0; i < len; i++) s += String.fromCharCode(<i32>load<u8>(ptr + i));
  return s;
}

/** Printable ASCII as is, anything else as \xHH (so a report stays on one line). */
function escape(s: string): string {
  let out = "";
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c == 0x5c) out += "\\x" + (c < 16 ? "0" : "") + c.toString(16);
    else out += String.fromCharCode(c);
  }
  return out;
}

function hex(ptr: usize, len: usize): string {
  let out = "";
  for (let i: usize = 0; i < len; i++) {
    const b = <i32>load<u8>(ptr + i);
    out += (b < 16 ? "0" : "") + b.toString(16);
  }
  return out;
}

function unhex(s: string): ArrayBuffer {
  const out = new ArrayBuffer(s.length / 2);
  for (let i = 0; i < s.length / 2; i++) {
    store<u8>(changetype<usize>(out) + <usize>i, <u8>parseInt(s.substr(i * 2, 2), 16));
  }
  return out;
}

function unescape(s: string): string {
  if (s == "-") return "";
  let out = "";
  for (let i = 0; i < s.length; i++) {
    const c = s.charAt(i);
    if (c != "\\" || i + 1 >= s.length) {
      out += c;
      continue;
    }
    const n = s.charAt(++i);
    if (n == "s") out += " ";
    else if (n == "n") out += "\n";
    else if (n == "t") out += "\t";
    else if (n == "0") out += String.fromCharCode(0);
    else if (n == "x") {
      out += String.fromCharCode(<i32>parseInt(s.substr(i + 1, 2), 16));
      i += 2;
    } else out += n;
  }
  return out;
}

function num(s: string): i32 {
  return <i32><i64>parseFloat(s);
}

function logRaw(level: u32, s: string): u32 {
  const b = rawBytes(s);
  return proxy_log(level, changetype<usize>(b), b.byteLength);
}

function report(ctx: u32, s: string): void {
  logRaw(2, "#" + ctx.toString() + " " + s);
}

// Reached by any failed assertion or throw (asc --use abort=pluginAbort); the module traps after.
@global
function pluginAbort(message: string | null, file: string | null, line: u32, column: u32): void {
  logRaw(5, "abort: " + (message !== null ? message : "") + " at " + (file !== null ? file : "?") + ":" +
    line.toString() + ":" + column.toString());
}

// ------------------------------------------------------------------------------- allocator

let MALLOC_CALLS = 0;
let ON_MEMORY_ALLOCATE_CALLS = 0;
let ALLOC_GROW_PAGES = 0;
let ALLOC_HOSTCALL = false;

function allocate(size: usize, viaMalloc: bool): usize {
  if (viaMalloc) MALLOC_CALLS++;
  else ON_MEMORY_ALLOCATE_CALLS++;
  // Grows memory inside the host's call: the host must not write through a stale view (§6.17).
  if (ALLOC_GROW_PAGES > 0) memory.grow(ALLOC_GROW_PAGES);
  // Not on the allocator's allow-list (§1.1): the host must trap restricted_callback.
  if (ALLOC_HOSTCALL) proxy_set_tick_period_milliseconds(0);
  return heap.alloc(size);
}

export function proxy_on_memory_allocate(size: usize): usize {
  return allocate(size, false);
}

/** Exported only by the script-plugin-malloc entry (cpp-host prefers malloc, §1.1). */
export function malloc(size: usize): usize {
  return allocate(size, true);
}

// ------------------------------------------------------------------------------- the script

class Rule {
  constructor(public event: string, public path: string | null, public action: string, public args: string[]) {}
}

const RULES: Rule[] = [];
let TRACE = false;
/** Calls seen before the script was read (the root's on_context_create), reported once `trace` is on. */
const EARLY = new Array<string>(0);
let CONFIGURED = false;
let USES_PATHS = false;
const PATHS = new Map<u32, string>();
const PAUSED: u32[] = [];

function parseScript(text: string): void {
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line.length == 0 || line.startsWith("#")) continue;
    const words = line.split(" ");
    const head = words[0];
    const at = head.indexOf("@");
    const event = at < 0 ? head : head.substring(0, at);
    const path: string | null = at < 0 ? null : head.substring(at + 1);
    if (path !== null) USES_PATHS = true;
    const args: string[] = [];
    for (let w = 2; w < words.length; w++) if (words[w].length > 0) args.push(unescape(words[w]));
    const action = words.length > 1 ? words[1] : "";
    if (event == "all" && action == "trace") {
      TRACE = true;
      for (let e = 0; e < EARLY.length; e++) logRaw(2, EARLY[e]);
      EARLY.length = 0;
    } else RULES.push(new Rule(event, path, action, args));
  }
}

function readBuffer(type: u32): string | null {
  const status = proxy_get_buffer_bytes(type, 0, 0xffffffff, RET, RET + 4);
  if (status != 0) return null;
  const ptr = load<u32>(RET);
  const size = load<u32>(RET + 4);
  const s = rawString(ptr, size);
  if (ptr != 0) heap.free(ptr);
  return s;
}

/** Runs the rules of `event`; the last `return`/`pause` wins over `result`. */
function run(event: string, ctx: u32, result: u32, traceArgs: string): u32 {
  if (TRACE) report(ctx, "called " + event + traceArgs);
  else if (!CONFIGURED) EARLY.push("#" + ctx.toString() + " called " + event + traceArgs);
  for (let i = 0; i < RULES.length; i++) {
    const rule = RULES[i];
    if (rule.event != event) continue;
    if (rule.path !== null && (!PATHS.has(ctx) || PATHS.get(ctx) != rule.path)) continue;
    const r = exec(rule.action, rule.args, ctx);
    if (r >= 0) result = <u32>r;
  }
  return result;
}

// ------------------------------------------------------------------------------- actions

function takeRet(): string {
  const ptr = load<u32>(RET);
  const size = load<u32>(RET + 4);
  const s = rawString(ptr, size);
  if (ptr != 0) heap.free(ptr);
  return s;
}

function readPairs(): string {
  const ptr = load<u32>(RET);
  const size = load<u32>(RET + 4);
  if (size == 0) return "(none)";
  const n = load<u32>(ptr);
  let p = ptr + 4 + n * 8;
  let out = "";
  for (let i: u32 = 0; i < n; i++) {
    const kl = load<u32>(ptr + 4 + i * 8);
    const vl = load<u32>(ptr + 8 + i * 8);
    const k = rawString(p, kl);
    p += kl + 1;
    const v = rawString(p, vl);
    p += vl + 1;
    out += (i > 0 ? "|" : "") + escape(k) + "=" + escape(v);
  }
  heap.free(ptr);
  return out;
}

/** "k=v,k=v" -> serialized pairs (§3.1). */
function pairsOf(spec: string): ArrayBuffer {
  const items = spec.length == 0 ? new Array<string>(0) : spec.split(",");
  let size = 4;
  for (let i = 0; i < items.length; i++) size += 8 + items[i].length + 2 - 1;
  const out = new ArrayBuffer(size);
  const base = changetype<usize>(out);
  store<u32>(base, items.length);
  let p = base + 4 + items.length * 8;
  for (let i = 0; i < items.length; i++) {
    const eq = items[i].indexOf("=");
    const k = items[i].substring(0, eq);
    const v = items[i].substring(eq + 1);
    store<u32>(base + 4 + i * 8, k.length);
    store<u32>(base + 8 + i * 8, v.length);
    for (let j = 0; j < k.length; j++) store<u8>(p++, <u8>k.charCodeAt(j));
    store<u8>(p++, 0);
    for (let j = 0; j < v.length; j++) store<u8>(p++, <u8>v.charCodeAt(j));
    store<u8>(p++, 0);
  }
  return out;
}

function checksum(ptr: usize, len: usize): u32 {
  let sum: u32 = 0;
  for (let i: usize = 0; i < len; i++) sum = sum * 31 + <u32>load<u8>(ptr + i);
  return sum;
}

function bodyReport(type: u32): string {
  const st = proxy_get_buffer_status(type, RET + 8, RET + 12);
  const status = proxy_get_buffer_bytes(type, 0, 0xffffffff, RET, RET + 4);
  if (status != 0) return "status=" + status.toString() + " buffer_status=" + st.toString();
  const ptr = load<u32>(RET);
  const size = load<u32>(RET + 4);
  const shown = size > 64 ? 64 : size;
  const out = "status=0 size=" + size.toString() + " buffer_size=" + load<u32>(RET + 8).toString() +
    " sum=" + checksum(ptr, size).toString() + " text=" + escape(rawString(ptr, shown));
  if (ptr != 0) heap.free(ptr);
  return out;
}

function send(status: u32, body: string, details: string, headers: ArrayBuffer, grpc: i32): u32 {
  const b = rawBytes(body);
  const d = rawBytes(details);
  return proxy_send_local_response(status, changetype<usize>(d), d.byteLength, changetype<usize>(b), b.byteLength,
    changetype<usize>(headers), headers.byteLength, grpc);
}

/** One action; returns the callback's new return value, or -1 to leave it. */
function exec(action: string, a: string[], ctx: u32): i64 {
  if (action == "return") return <i64>num(a[0]);
  if (action == "pause") {
    PAUSED.push(ctx);
    return 1;
  }
  if (action == "trap") unreachable();
  if (action == "abort") assert(false, a[0]);
  if (action == "echo") report(ctx, a[0]);
  else if (action == "log") {
    const st = logRaw(<u32>num(a[0]), a[1]);
    if (st != 0) report(ctx, "log status=" + st.toString());
  } else if (action == "get") {
    const k = rawBytes(a[1]);
    const st = proxy_get_header_map_value(<u32>num(a[0]), changetype<usize>(k), k.byteLength, RET, RET + 4);
    report(ctx, "get " + a[0] + " " + a[1] + " status=" + st.toString() + (st == 0 ? " value=" + escape(takeRet()) : ""));
  } else if (action == "pairs") {
    store<u64>(RET, 0xdeadbeefdeadbeef); // must be overwritten, even for an empty map
    const st = proxy_get_header_map_pairs(<u32>num(a[0]), RET, RET + 4);
    report(ctx, "pairs " + a[0] + " status=" + st.toString() + (st == 0 ? " " + readPairs() : ""));
  } else if (action == "add" || action == "replace") {
    const k = rawBytes(a[1]);
    const v = rawBytes(a[2]);
    const st = action == "add"
      ? proxy_add_header_map_value(<u32>num(a[0]), changetype<usize>(k), k.byteLength, changetype<usize>(v), v.byteLength)
      : proxy_replace_header_map_value(<u32>num(a[0]), changetype<usize>(k), k.byteLength, changetype<usize>(v), v.byteLength);
    report(ctx, action + " " + a[0] + " " + a[1] + " status=" + st.toString());
  } else if (action == "remove") {
    const k = rawBytes(a[1]);
    const st = proxy_remove_header_map_value(<u32>num(a[0]), changetype<usize>(k), k.byteLength);
    report(ctx, "remove " + a[0] + " " + a[1] + " status=" + st.toString());
  } else if (action == "set_pairs" || action == "set_pairs_hex") {
    const bytes = action == "set_pairs" ? pairsOf(a[1]) : unhex(a[1]);
    const st = proxy_set_header_map_pairs(<u32>num(a[0]), changetype<usize>(bytes), bytes.byteLength);
    report(ctx, action + " " + a[0] + " status=" + st.toString());
  } else if (action == "size") {
    const st = proxy_get_header_map_size(<u32>num(a[0]), RET);
    report(ctx, "size " + a[0] + " status=" + st.toString() + (st == 0 ? " value=" + load<u32>(RET).toString() : ""));
  } else if (action == "body") {
    report(ctx, "body " + a[0] + " " + bodyReport(<u32>num(a[0])));
  } else if (action == "set_body") {
    const d = rawBytes(a[3]);
    const st = proxy_set_buffer_bytes(<u32>num(a[0]), <u32>num(a[1]), <u32>num(a[2]), changetype<usize>(d), d.byteLength);
    report(ctx, "set_body " + a[0] + " status=" + st.toString());
  } else if (action == "prop" || action == "propraw") {
    const path = action == "prop" ? a[0].replaceAll(".", String.fromCharCode(0)) : a[0];
    const p = rawBytes(path);
    const st = proxy_get_property(changetype<usize>(p), p.byteLength, RET, RET + 4);
    let value = "";
    if (st == 0) {
      const ptr = load<u32>(RET);
      const size = load<u32>(RET + 4);
      value = " hex=" + hex(ptr, size) + " text=" + escape(rawString(ptr, size));
      if (ptr != 0) heap.free(ptr);
    }
    report(ctx, "prop " + escape(a[0]) + " status=" + st.toString() + value);
  } else if (action == "setprop") {
    const k = rawBytes(a[0]);
    const v = rawBytes(a[1]);
    const st = proxy_set_property(changetype<usize>(k), k.byteLength, changetype<usize>(v), v.byteLength);
    report(ctx, "setprop " + a[0] + " status=" + st.toString());
  } else if (action == "reply" || action == "reply_hex") {
    const spec = a.length > 3 ? a[3] : "";
    const headers = action == "reply" ? (spec.length == 0 ? new ArrayBuffer(0) : pairsOf(spec)) : unhex(spec);
    const st = send(<u32>num(a[0]), a[1], a[2], headers, a.length > 4 ? num(a[4]) : -1);
    report(ctx, "reply " + a[0] + " status=" + st.toString());
  } else if (action == "continue") {
    report(ctx, "continue " + a[0] + " status=" + proxy_continue_stream(<u32>num(a[0])).toString());
  } else if (action == "close") {
    report(ctx, "close " + a[0] + " status=" + proxy_close_stream(<u32>num(a[0])).toString());
  } else if (action == "tick") {
    report(ctx, "tick " + a[0] + " status=" + proxy_set_tick_period_milliseconds(<u32>num(a[0])).toString());
  } else if (action == "resume") {
    // From on_tick: continue every paused stream through proxy_set_effective_context (§2.3).
    while (PAUSED.length > 0) {
      const id = PAUSED.shift();
      const e = proxy_set_effective_context(id);
      const st = proxy_continue_stream(<u32>num(a[0]));
      report(ctx, "resume " + id.toString() + " effective=" + e.toString() + " status=" + st.toString());
    }
  } else if (action == "effective") {
    report(ctx, "effective " + a[0] + " status=" + proxy_set_effective_context(<u32>num(a[0])).toString());
  } else if (action == "level") {
    const st = proxy_get_log_level(RET);
    report(ctx, "level status=" + st.toString() + " value=" + load<u32>(RET).toString());
  } else if (action == "now") {
    const st = proxy_get_current_time_nanoseconds(RET);
    report(ctx, "now status=" + st.toString() + " value=" + load<u64>(RET).toString());
  } else if (action == "grow") {
    const before = memory.size();
    memory.grow(num(a[0]));
    report(ctx, "grow from=" + before.toString() + " to=" + memory.size().toString());
  } else if (action == "malloc_grow") {
    ALLOC_GROW_PAGES = num(a[0]);
  } else if (action == "malloc_hostcall") {
    ALLOC_HOSTCALL = true;
  } else if (action == "alloc_stats") {
    report(ctx, "alloc malloc=" + MALLOC_CALLS.toString() + " on_memory_allocate=" + ON_MEMORY_ALLOCATE_CALLS.toString());
  } else if (action == "memory_pages") {
    report(ctx, "memory pages=" + memory.size().toString());
  } else if (action == "done") {
    report(ctx, "done status=" + proxy_done().toString());
  } else if (action == "shared_set") {
    const k = rawBytes(a[0]);
    const v = rawBytes(a[1]);
    const st = proxy_set_shared_data(changetype<usize>(k), k.byteLength, changetype<usize>(v), v.byteLength, 0);
    report(ctx, "shared_set " + a[0] + " status=" + st.toString());
  } else if (action == "shared_get") {
    const k = rawBytes(a[0]);
    const st = proxy_get_shared_data(changetype<usize>(k), k.byteLength, RET, RET + 4, RET + 8);
    report(ctx, "shared_get " + a[0] + " status=" + st.toString() + (st == 0 ? " value=" + escape(takeRet()) : ""));
  } else if (action == "counter") {
    const n = rawBytes(a[0]);
    const st = proxy_define_metric(0, changetype<usize>(n), n.byteLength, RET + 8);
    const inc = proxy_increment_metric(load<u32>(RET + 8), 1);
    report(ctx, "counter " + a[0] + " define=" + st.toString() + " increment=" + inc.toString());
  } else if (action == "metric_define") {
    // metric_define <type> <name>: the id the host hands out
    const n = rawBytes(a[1]);
    store<u32>(RET + 8, 0xffffffff);
    const st = proxy_define_metric(<u32>num(a[0]), changetype<usize>(n), n.byteLength, RET + 8);
    report(ctx, "metric_define " + a[1] + " status=" + st.toString() + " id=" + load<u32>(RET + 8).toString());
  } else if (action == "metric_increment") {
    // metric_increment <id> <delta> (delta may be negative)
    const st = proxy_increment_metric(<u32>num(a[0]), <i64>parseFloat(a[1]));
    report(ctx, "metric_increment " + a[0] + " " + a[1] + " status=" + st.toString());
  } else if (action == "metric_record") {
    const st = proxy_record_metric(<u32>num(a[0]), <u64>parseFloat(a[1]));
    report(ctx, "metric_record " + a[0] + " " + a[1] + " status=" + st.toString());
  } else if (action == "metric_get") {
    store<u64>(RET, 0);
    const st = proxy_get_metric(<u32>num(a[0]), RET);
    report(ctx, "metric_get " + a[0] + " status=" + st.toString() + (st == 0 ? " value=" + load<u64>(RET).toString() : ""));
  } else if (action == "stdout" || action == "stderr") {
    const d = rawBytes(a[0]);
    store<u32>(RET + 16, changetype<usize>(d));
    store<u32>(RET + 20, d.byteLength);
    const errno = fd_write(action == "stdout" ? 1 : 2, RET + 16, 1, RET + 24);
    report(ctx, action + " errno=" + errno.toString() + " written=" + load<u32>(RET + 24).toString());
  } else if (action == "proc_exit") {
    proc_exit(<u32>num(a[0]));
    report(ctx, "proc_exit returned");
  } else {
    report(ctx, "unknown action " + action);
  }
  return -1;
}

// ------------------------------------------------------------------------------- callbacks (§1.2)

export function proxy_abi_version_0_2_1(): void {}

export function proxy_on_context_create(ctx: u32, parent: u32): void {
  run("context_create", ctx, 0, " " + parent.toString());
}

export function proxy_on_vm_start(root: u32, size: u32): u32 {
  const text = readBuffer(6);
  if (text !== null) parseScript(text);
  return run("vm_start", root, 1, " " + size.toString());
}

export function proxy_on_configure(root: u32, size: u32): u32 {
  const text = readBuffer(7);
  if (text !== null) parseScript(text);
  else report(root, "plugin configuration unreadable");
  const result = run("configure", root, 1, " " + size.toString());
  CONFIGURED = true;
  return result;
}

export function proxy_on_request_headers(ctx: u32, count: u32, eos: u32): u32 {
  if (USES_PATHS) {
    const k = rawBytes(":path");
    if (proxy_get_header_map_value(0, changetype<usize>(k), k.byteLength, RET, RET + 4) == 0) PATHS.set(ctx, takeRet());
  }
  return run("request_headers", ctx, 0, " " + count.toString() + " " + eos.toString());
}

export function proxy_on_request_body(ctx: u32, size: u32, eos: u32): u32 {
  return run("request_body", ctx, 0, " " + size.toString() + " " + eos.toString());
}

export function proxy_on_response_headers(ctx: u32, count: u32, eos: u32): u32 {
  return run("response_headers", ctx, 0, " " + count.toString() + " " + eos.toString());
}

export function proxy_on_response_body(ctx: u32, size: u32, eos: u32): u32 {
  return run("response_body", ctx, 0, " " + size.toString() + " " + eos.toString());
}

export function proxy_on_log(ctx: u32): void {
  run("log", ctx, 0, "");
}

export function proxy_on_done(ctx: u32): u32 {
  return run("done", ctx, 1, "");
}

export function proxy_on_delete(ctx: u32): void {
  run("delete", ctx, 0, "");
  if (PATHS.has(ctx)) PATHS.delete(ctx);
}

export function proxy_on_tick(root: u32): void {
  run("tick", root, 0, "");
}

export function proxy_on_queue_ready(root: u32, token: u32): void {
  run("queue_ready", root, 0, " " + token.toString());
}
