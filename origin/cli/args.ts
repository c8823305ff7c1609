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

/** The switches every subcommand with options has; `quiet` only where the command takes -q. */
export interface CommonSwitches {
  help: boolean;
  quiet?: boolean;
}

/**
 * As eachArg, with `-h`/`--help` (and `-q`/`--quiet` where `a` has `quiet`) set on `a`; `visit`
 * sees the other arguments. A command without `quiet` leaves -q to `visit` (its unknown option).
 */
export function eachOption(argv: readonly string[], a: CommonSwitches, visit: (x: Arg) => void): void {
  eachArg(argv, (x) => {
    if (x.flag === '-h' || x.flag === '--help') a.help = true;
    else if ((x.flag === '-q' || x.flag === '--quiet') && a.quiet !== undefined) a.quiet = true;
    else visit(x);
  });
}

/** A TCP port (0 = any free port): `flag` names the option in the error. */
export function portArg(flag: string, v: string): number {
  if (!/^\d{1,5}$/.test(v) || Number(v) > 65535) throw new UsageError(`${flag} must be 0..65535, not "${v}"`);
  return Number(v);
}
