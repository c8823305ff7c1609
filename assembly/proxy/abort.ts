// AssemblyScript's abort, routed to proxy_log at CRITICAL with file and line
// (docs/specs.md ABI §4.1, §4.2: the default `env.abort` import would make
// Envoy refuse the module). Selected with `use: ["abort=proxyAbort"]` in asconfig.json.
//
// The generated code traps (`unreachable`) right after this returns, and Envoy then marks the
// worker's VM failed (§5.1); the log line is all that is left to say where. So the handler must
// not fail itself: it allocates nothing (the abort may come from an exhausted heap) and writes
// the message byte by byte into a static buffer, truncated if long. proxy_log is allowed even
// inside the allocator and _initialize (§1.1).

import { proxy_log } from "./imports";

const LOG_CRITICAL: u32 = 5;
const CAPACITY: usize = 1024;
const BUFFER: usize = memory.data(<i32>CAPACITY);

/** Appends `text` as UTF-8 at `at`, stopping at capacity; returns the new end. */
function appendText(at: usize, text: string): usize {
  const chars = text.length;
  for (let i = 0; i < chars; i++) {
    const unit = <u32>text.charCodeAt(i);
    if (unit < 0x80) {
      if (at + 1 > BUFFER + CAPACITY) break;
      store<u8>(at++, <u8>unit);
    } else if (unit < 0x800) {
      if (at + 2 > BUFFER + CAPACITY) break;
      store<u8>(at++, <u8>(0xc0 | (unit >> 6)));
      store<u8>(at++, <u8>(0x80 | (unit & 0x3f)));
    } else {
      // BMP and (unpaired) surrogate halves alike as three bytes: good enough for a crash line.
      if (at + 3 > BUFFER + CAPACITY) break;
      store<u8>(at++, <u8>(0xe0 | (unit >> 12)));
      store<u8>(at++, <u8>(0x80 | ((unit >> 6) & 0x3f)));
      store<u8>(at++, <u8>(0x80 | (unit & 0x3f)));
    }
  }
  return at;
}

/** Appends `value` in decimal. */
function appendNumber(at: usize, value: u32): usize {
  let digits: u32 = 1;
  for (let rest = value / 10; rest > 0; rest /= 10) digits++;
  if (at + digits > BUFFER + CAPACITY) return at;
  let end = at + digits;
  let rest = value;
  for (let i: u32 = 1; i <= digits; i++) {
    store<u8>(end - i, <u8>(0x30 + rest % 10));
    rest /= 10;
  }
  return end;
}

// @ts-ignore: decorator
@global
export function proxyAbort(message: string | null, fileName: string | null, line: u32, column: u32): void {
  let at = appendText(BUFFER, "abort: ");
  at = appendText(at, message !== null ? message : "(no message)");
  at = appendText(at, " at ");
  at = appendText(at, fileName !== null ? fileName : "?");
  at = appendText(at, ":");
  at = appendNumber(at, line);
  at = appendText(at, ":");
  at = appendNumber(at, column);
  proxy_log(LOG_CRITICAL, BUFFER, at - BUFFER);
}
