// host-glue/proxy-wasm/abi.ts against test/assembly/proxy/abi-tables.ts: two transcriptions of
// the same ABI (docs/specs.md ABI §0, §1.1, §1.2, §2.3, §2.7), made independently, so a typo in
// either shows up as a difference here. Where the host knows more than the tables (Emscripten
// helpers, network-filter callbacks, newer WASI functions), the extra names are listed, so a new
// row on either side has to be accounted for.

import {
  ABI_MARKERS,
  FuncSig,
  hostFunctionTable,
  MODULE_FUNCTIONS,
  WASI_FUNCTIONS,
  WASI_MODULES,
} from '../../../host-glue/proxy-wasm/abi';
import {
  ABI_0_1_ONLY_IMPORTS,
  ABI_MARKER,
  ENVOY_CALLBACK_EXPORTS,
  ENVOY_ENV_IMPORTS_0_2_1,
  ENVOY_WASI_IMPORTS,
  OTHER_ABI_MARKERS,
  WASI_MODULES as TABLE_WASI_MODULES,
} from '../../assembly/proxy/abi-tables';
import { FuncType, signature } from '../../assembly/proxy/wasm-binary';

/** A host signature written as the tables write theirs (wasm-binary.ts signature()). */
const printed = (s: FuncSig): string => signature({ params: [...s.params], results: [...s.results] } as FuncType);

/** name → printed signature, for the rows whose name passes `keep`. */
function printedRows(rows: Iterable<[string, FuncSig]>, keep: (name: string) => boolean): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, s] of rows) if (keep(name)) out[name] = printed(s);
  return out;
}

/** The rows of `host` that the tables also have, and the names only the host has. */
function split(host: Record<string, string>, tables: Readonly<Record<string, string>>) {
  const shared: Record<string, string> = {};
  const hostOnly: string[] = [];
  for (const [name, s] of Object.entries(host)) {
    if (name in tables) shared[name] = s;
    else hostOnly.push(name);
  }
  return { shared, hostOnly: hostOnly.sort() };
}

describe('abi.ts agrees with the independent transcription (abi-tables.ts)', () => {
  const table = hostFunctionTable('0.2.1');

  test('env.proxy_* host functions of ABI 0.2.1 (§2.3): the same names, the same types', () => {
    const host = printedRows(
      [...table].map(([key, s]): [string, FuncSig] => [key.slice('env.'.length), s]),
      (name) => name.startsWith('proxy_'),
    );
    expect(host).toEqual({ ...ENVOY_ENV_IMPORTS_0_2_1 });
    expect([...table.keys()].filter((k) => k.startsWith('env.') && !k.startsWith('env.proxy_')).sort()).toEqual([
      'env.emscripten_notify_memory_growth',
      'env.pthread_equal',
    ]);
  });

  test('the ABI-0.1-only names are not host functions (§0)', () => {
    for (const name of ABI_0_1_ONLY_IMPORTS) expect(table.has(`env.${name}`)).toBe(false);
    expect(hostFunctionTable('0.2.0').has('env.proxy_get_log_level')).toBe(false);
  });

  test('WASI (§2.7): both module names; every tabled function with its type, plus the Dec 2024 three', () => {
    expect([...WASI_MODULES]).toEqual(TABLE_WASI_MODULES);
    const { shared, hostOnly } = split(
      printedRows(Object.entries(WASI_FUNCTIONS), () => true),
      ENVOY_WASI_IMPORTS,
    );
    expect(shared).toEqual({ ...ENVOY_WASI_IMPORTS });
    expect(hostOnly).toEqual(['fd_fdstat_set_flags', 'poll_oneoff', 'sched_yield']);
    for (const module of WASI_MODULES) {
      for (const name of Object.keys(WASI_FUNCTIONS)) expect(table.has(`${module}.${name}`)).toBe(true);
    }
  });

  test('module functions Envoy binds (§1.1, §1.2): the same types; the host adds the network filter ones', () => {
    const { shared, hostOnly } = split(
      printedRows(Object.entries(MODULE_FUNCTIONS), () => true),
      ENVOY_CALLBACK_EXPORTS,
    );
    expect(shared).toEqual({ ...ENVOY_CALLBACK_EXPORTS });
    expect(hostOnly).toEqual([
      '__main_void',
      'proxy_on_downstream_connection_close',
      'proxy_on_downstream_data',
      'proxy_on_new_connection',
      'proxy_on_upstream_connection_close',
      'proxy_on_upstream_data',
    ]);
  });

  test('the ABI markers (§0)', () => {
    expect(Object.keys(ABI_MARKERS).sort()).toEqual([ABI_MARKER, ...OTHER_ABI_MARKERS].sort());
    expect(ABI_MARKERS[ABI_MARKER]).toBe('0.2.1');
  });
});
