// The WASI functions Envoy registers (§2.7), the same implementation under
// `wasi_snapshot_preview1` and `wasi_unstable`. Nothing touches the real process: stdout/stderr
// become wasm log lines (fd 1 -> info, fd 2 -> error, one trailing newline stripped, §6.23),
// proc_exit only logs (§6.16), files do not exist, the environment and argv are empty.

import { randomFillSync } from 'node:crypto';
import { Errno, LIMITS } from './abi';
import type { Hostcall } from './hostcalls';
import { nowNanoseconds } from './hostcalls';
import type { WasmVm } from './vm';

const utf8 = new TextDecoder('utf-8');

/** cpp-host writevImpl: gather the iovecs into one log line. */
function fd_write(vm: WasmVm, fd: number, iovs: number, iovsLen: number, nwrittenPtr: number): number {
  const level = fd === 1 ? 2 : fd === 2 ? 4 : -1;
  if (level < 0) return Errno.Badf;
  const parts: Uint8Array[] = [];
  for (let i = 0; i < iovsLen >>> 0; i++) {
    const base = vm.memory.getU32(iovs + i * 8);
    const len = vm.memory.getU32(iovs + i * 8 + 4);
    if (base === null || len === null) return Errno.Fault;
    if (len === 0) continue;
    const bytes = vm.memory.read(base, len);
    if (bytes === null) return Errno.Fault;
    parts.push(bytes);
  }
  const all = Buffer.concat(parts);
  if (all.length > 0) {
    const text = utf8.decode(all);
    vm.plugin.log.wasmLog(level, vm.context.logPrefix, text.endsWith('\n') ? text.slice(0, -1) : text);
  }
  return vm.memory.setU32(nwrittenPtr, all.length) ? Errno.Success : Errno.Fault;
}

/** Envoy's Context::error() for the calls it merely notes: a trace line. */
const noted =
  (what: string) =>
  (vm: WasmVm): number => {
    vm.plugin.log.trace(`wasi_unstable ${what}`);
    return Errno.Success;
  };

function fd_fdstat_get(vm: WasmVm, fd: number, statPtr: number): number {
  if (fd !== 1 && fd !== 2) return Errno.Badf;
  // 24-byte fdstat, zeroed but for fs_rights_base = FD_WRITE (64); the write's result is ignored.
  vm.memory.setU64(statPtr, 0n);
  vm.memory.setU64(statPtr + 8, 64n);
  vm.memory.setU64(statPtr + 16, 0n);
  return Errno.Success;
}

/** Zero entries (VmConfig.environment_variables / argv are empty here). */
function zeroSizes(vm: WasmVm, countPtr: number, sizePtr: number): number {
  return vm.memory.setU32(countPtr, 0) && vm.memory.setU32(sizePtr, 0) ? Errno.Success : Errno.Fault;
}

function clock_time_get(vm: WasmVm, clockId: number, _precision: bigint, resultPtr: number): number {
  let now: bigint;
  if (clockId === 0) now = nowNanoseconds();
  else if (clockId === 1) now = process.hrtime.bigint();
  else return Errno.Notsup;
  return vm.memory.setU64(resultPtr, now) ? Errno.Success : Errno.Fault;
}

function random_get(vm: WasmVm, ptr: number, len: number): number {
  if (len >>> 0 > LIMITS.randomGetMaxBytes) return Errno.Inval;
  if (len === 0) return Errno.Success;
  return vm.memory.write(ptr, randomFillSync(new Uint8Array(len >>> 0))) ? Errno.Success : Errno.Fault;
}

/** §2.7: Envoy only notes proc_exit and returns; the module traps on its own right after. */
function proc_exit(vm: WasmVm): void {
  vm.plugin.log.trace('wasi_unstable proc_exit');
}

function poll_oneoff(vm: WasmVm, _in: number, _out: number, _n: number, neventsPtr: number): number {
  return vm.memory.setU32(neventsPtr, 0) ? Errno.Success : Errno.Fault;
}

export const WASI_HOSTCALLS: Record<string, Hostcall> = {
  fd_write,
  fd_read: () => Errno.Nosys,
  fd_seek: noted('fd_seek'),
  fd_close: noted('fd_close'),
  fd_fdstat_get,
  environ_get: () => Errno.Success,
  environ_sizes_get: zeroSizes,
  args_get: () => Errno.Success,
  args_sizes_get: zeroSizes,
  clock_time_get,
  random_get,
  proc_exit,
  path_open: () => Errno.Noent,
  fd_prestat_get: () => Errno.Badf,
  fd_prestat_dir_name: () => Errno.Nosys,
  fd_fdstat_set_flags: () => Errno.Nosys,
  sched_yield: () => Errno.Success,
  poll_oneoff,
};
