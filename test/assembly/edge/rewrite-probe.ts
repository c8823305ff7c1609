// The rewrite engine (assembly/edge/rewrite*.ts) on its own: compiles the test-only entry
// test/wasm/rewrite-probe.ts with the edge target's optimisation and runtime, cached in the
// OS temp directory by a hash of the sources (parallel jest workers compile it once), and
// drives it through @assemblyscript/loader. The shipped plugin runs the same engine from its
// locations (test/assembly/edge/rewrite-plugin.test.ts goes through build/edge.wasm).

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const ENTRY = 'test/wasm/rewrite-probe.ts';

function sources(): string[] {
  const edge = readdirSync(path.join(ROOT, 'assembly/edge'))
    .filter((f) => /^rewrite.*\.ts$/.test(f))
    .map((f) => `assembly/edge/${f}`);
  const json = readdirSync(path.join(ROOT, 'assembly/json'))
    .filter((f) => f.endsWith('.ts'))
    .map((f) => `assembly/json/${f}`);
  return [...edge, ...json, ENTRY, 'asconfig.json'].sort();
}

export function rewriteProbePath(): string {
  const hash = createHash('sha256');
  for (const file of sources()) hash.update(file).update(readFileSync(path.join(ROOT, file)));
  const target = path.join(tmpdir(), `edge-rewrite-probe-${hash.digest('hex').slice(0, 16)}.wasm`);
  if (existsSync(target)) return target;
  const work = mkdtempSync(path.join(tmpdir(), 'edge-rewrite-probe-'));
  try {
    const config = path.join(work, 'asconfig.json'); // not the project's: its textFile would overwrite build/edge.wat
    writeFileSync(config, '{"targets":{},"options":{}}');
    const t = (
      JSON.parse(readFileSync(path.join(ROOT, 'asconfig.json'), 'utf8')) as {
        targets: { release: { optimizeLevel: number; runtime: string } };
      }
    ).targets.release;
    const out = path.join(work, 'probe.wasm');
    execFileSync(
      process.execPath,
      [
        path.join(ROOT, 'node_modules/assemblyscript/bin/asc.js'),
        ENTRY,
        '--config',
        config,
        '--outFile',
        out,
        `-O${t.optimizeLevel}`,
        '--runtime',
        t.runtime,
        '--exportRuntime',
      ],
      {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    renameSync(out, target);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return target;
}

interface ProbeExports {
  configure(json: number): number;
  error(): number;
  ruleCount(): number;
  rewrite(path: number, query: number): number;
  rewriteMany(path: number, query: number, count: number): number;
  __newString(s: string): number;
  __getString(p: number): string;
  __pin(p: number): number;
  __unpin(p: number): void;
  __collect(): void;
}

export interface Rewritten {
  path: string;
  query: string;
}

/** One engine instance: configure it, then rewrite. Aborts surface as exceptions (a trap in the plugin). */
export class RewriteEngine {
  private readonly e: ProbeExports;
  aborts: string[] = [];

  constructor() {
    const loader = require('@assemblyscript/loader') as {
      instantiateSync(b: Buffer, imports: object): { exports: unknown };
    };
    const aborts = this.aborts;
    const instance = loader.instantiateSync(readFileSync(rewriteProbePath()), {
      env: {
        abort(_msg: number, _file: number, line: number, column: number) {
          aborts.push(`${line}:${column}`);
          throw new Error(`abort at ${line}:${column}`);
        },
      },
    });
    this.e = instance.exports as ProbeExports;
  }

  private str(s: string): number {
    return this.e.__pin(this.e.__newString(s));
  }

  /** "" when accepted, else the error ("rewrite.maps.filter.hd: …"). */
  configure(rewrite: unknown): string {
    const text = typeof rewrite === 'string' ? rewrite : JSON.stringify(rewrite);
    const p = this.str(text);
    try {
      return this.e.configure(p) === 1 ? '' : this.e.__getString(this.e.error());
    } finally {
      this.e.__unpin(p);
    }
  }

  get ruleCount(): number {
    return this.e.ruleCount();
  }

  rewrite(pathText: string, query = ''): Rewritten | null {
    const p = this.str(pathText);
    const q = this.str(query);
    try {
      const r = this.e.__getString(this.e.rewrite(p, q));
      if (r === '') return null;
      const nl = r.indexOf('\n');
      return { path: r.slice(0, nl), query: r.slice(nl + 1) };
    } finally {
      this.e.__unpin(p);
      this.e.__unpin(q);
    }
  }

  /** `count` rewrites of one request inside the module; returns how many matched. */
  rewriteMany(pathText: string, query: string, count: number): number {
    const p = this.str(pathText);
    const q = this.str(query);
    try {
      return this.e.rewriteMany(p, q, count);
    } finally {
      this.e.__unpin(p);
      this.e.__unpin(q);
    }
  }
}
