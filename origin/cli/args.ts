// Argument helpers shared by the subcommands.

import type { LogLevel } from '../../host-glue/proxy-wasm/http-filter';

/** Levenshtein distance, for "did you mean" on unknown options. */
export function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length]!;
}

export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = editDistance(word, c);
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return bestDistance <= Math.max(2, Math.floor(word.length / 4)) ? best : undefined;
}

/** A usage error: the command line itself is wrong (exit code 2). */
export class UsageError extends Error {}

const LOG_LEVELS: readonly LogLevel[] = ['trace', 'debug', 'info', 'warn', 'error', 'critical'];

/** A plugin log threshold (proxy_get_log_level), as `origin edge --log-level` and `origin serve --edge-log-level` take it. */
export function logLevelArg(flag: string, v: string): LogLevel {
  if (!LOG_LEVELS.includes(v as LogLevel))
    throw new UsageError(`${flag} must be one of ${LOG_LEVELS.join(', ')}, not "${v}"`);
  return v as LogLevel;
}

/** One command-line argument: its flag (`--name` of `--name=value`, else the whole argument). */
export interface Arg {
  arg: string;
  flag: string;
  /** The option's value: after `=`, or the next argument (consumed); a UsageError when absent. */
  value(): string;
}

/** Visits the arguments in order; `value()` consumes the next argument for `--name value`. */
export function eachArg(argv: readonly string[], visit: (a: Arg) => void): void {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.indexOf('=');
    const inline = arg.startsWith('--') && eq > 0;
    const flag = inline ? arg.slice(0, eq) : arg;
    visit({
      arg,
      flag,
      value: () => {
        const v = inline ? arg.slice(eq + 1) : argv[++i];
        if (v === undefined) throw new UsageError(`${flag} needs a value`);
        return v;
      },
    });
  }
}
