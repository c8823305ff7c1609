// Builds and loads test/wasm/crypto-probe.ts: the edge plugin's MD5, SHA-1, $apr1$,
// base64 and UTF-8 code as plain exports (strings in and out through @assemblyscript/loader).
// Compiled with the edge build's optimisation level, cached in the OS temp directory by a hash
// of the sources so that parallel jest workers compile it once.

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import * as loader from '@assemblyscript/loader';
import { ROOT } from './plugin-helpers';

const SOURCES = [
  ...['bytes.ts', 'md5.ts', 'sha1.ts', 'apr1.ts', 'base64.ts'].map((f) => path.join('assembly', 'edge', f)),
  path.join('test', 'wasm', 'crypto-probe.ts'),
];

/**
 * Compiles a test-only module (the last of `sources`, which imports the rest) once per content:
 * the wasm lands in the OS temp directory under `name` and a hash of the sources.
 */
export function probePath(sources: string[] = SOURCES, name = 'edge-crypto-probe'): string {
  const hash = createHash('sha256');
  for (const file of sources) hash.update(file).update(readFileSync(path.join(ROOT, file)));
  const target = path.join(tmpdir(), `${name}-${hash.digest('hex').slice(0, 16)}.wasm`);
  if (existsSync(target)) return target;
  const work = mkdtempSync(path.join(tmpdir(), `${name}-`));
  try {
    // An empty config: otherwise asc applies the project's asconfig.json target (build/edge.*).
    const config = path.join(work, 'asconfig.json');
    writeFileSync(config, '{"targets":{},"options":{}}');
    const out = path.join(work, 'probe.wasm');
    execFileSync(
      process.execPath,
      [
        path.join(ROOT, 'node_modules', 'assemblyscript', 'bin', 'asc.js'),
        sources[sources.length - 1]!,
        '--config',
        config,
        '--outFile',
        out,
        '-O3',
        '--runtime',
        'incremental',
        '--exportRuntime',
      ],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    renameSync(out, target); // atomic: a concurrent worker sees the whole file or none
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return target;
}

interface RawProbe {
  __newString(s: string): number;
  __getString(p: number): string;
  __pin(p: number): number;
  __unpin(p: number): void;
  md5Hex(p: number): number;
  sha1Hex(p: number): number;
  apr1(pw: number, salt: number): number;
  base64DecodeHex(p: number): number;
  base64EncodeHex(p: number): number;
  utf8Valid(p: number): number;
  md5AsciiHex(p: number, start: number, end: number): number;
  hexDigestEqual(text: number, at: number, digestHex: number): number;
}

export class CryptoProbe {
  private readonly raw: RawProbe;

  constructor() {
    this.raw = loader.instantiateSync<Record<string, unknown>>(readFileSync(probePath()), {})
      .exports as unknown as RawProbe;
  }

  /** Arguments are pinned while the next ones are allocated (an allocation may collect). */
  private str(f: (...a: number[]) => number, ...args: string[]): string {
    const pointers = args.map((s) => this.raw.__pin(this.raw.__newString(s)));
    try {
      return this.raw.__getString(f(...pointers));
    } finally {
      for (const p of pointers) this.raw.__unpin(p);
    }
  }

  md5(bytes: Uint8Array): string {
    return this.str(this.raw.md5Hex, Buffer.from(bytes).toString('hex'));
  }

  sha1(bytes: Uint8Array): string {
    return this.str(this.raw.sha1Hex, Buffer.from(bytes).toString('hex'));
  }

  apr1(password: Uint8Array, salt: string): string {
    return this.str(this.raw.apr1, Buffer.from(password).toString('hex'), Buffer.from(salt, 'latin1').toString('hex'));
  }

  /** Decoded bytes as hex, or null when the plugin refuses the text. */
  base64Decode(text: string): string | null {
    const r = this.str(this.raw.base64DecodeHex, text);
    return r === '!' ? null : r;
  }

  base64Encode(bytes: Uint8Array): string {
    return this.str(this.raw.base64EncodeHex, Buffer.from(bytes).toString('hex'));
  }

  /** MD5 of text[start, end) fed with Md5.updateAscii (the token check's path). */
  md5Ascii(text: string, start: number, end: number): string {
    const p = this.raw.__pin(this.raw.__newString(text));
    try {
      return this.raw.__getString(this.raw.md5AsciiHex(p, start, end));
    } finally {
      this.raw.__unpin(p);
    }
  }

  /** constantTimeEqualHexIgnoreCase(text, at, digest). */
  hexDigestEqual(text: string, at: number, digestHex: string): boolean {
    const t = this.raw.__pin(this.raw.__newString(text));
    try {
      return this.raw.hexDigestEqual(t, at, this.raw.__newString(digestHex)) !== 0;
    } finally {
      this.raw.__unpin(t);
    }
  }

  utf8Valid(bytes: Uint8Array): boolean {
    return this.raw.utf8Valid(this.raw.__newString(Buffer.from(bytes).toString('hex'))) !== 0; // one argument: nothing to pin
  }
}
