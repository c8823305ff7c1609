// The machine a benchmark ran on, as every suite records it in its results JSON and headline.

import * as os from 'node:os';

export interface Machine {
  cpuModel: string;
  cpuCount: number;
  node: string;
  platform: string;
  totalMemoryBytes: number;
}

export function machine(): Machine {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model ?? 'unknown',
    cpuCount: cpus.length,
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    totalMemoryBytes: os.totalmem(),
  };
}

/** `<cpu model> x<count>, node <version>` for a suite's first line. */
export function machineLine(): string {
  const m = machine();
  return `${m.cpuModel === 'unknown' ? '?' : m.cpuModel} x${m.cpuCount}, node ${m.node}`;
}
