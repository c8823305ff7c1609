// The corrupt-media corpus (issue 24): hundreds of damaged copies of the fixture sources and of a
// server manifest (corpus/), each served as a presentation by a real `origin serve` process and
// asked for every kind of URL it has (harness/presentation-urls.ts). Every answer must be a clear
// error (a 4xx/5xx with a known `X-Origin-Error` code other than `internal`, each 5xx with its
// cause in the log) or a 200 whose body is well-formed; the process must not crash, hang or grow.
// CI runs a seeded sample of the corpus (HARDENING_SAMPLE variants, default 520); HARDENING_FULL=1
// or HARDENING_SOAK=1 runs all of it. test/hardening/README.md has the figures.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ERROR_CODES } from '../../origin/error-codes';
import { boxes } from '../helpers/box-walk';
import { media, runOrigin, tempDir } from '../helpers/fixtures';
import { Variant, mediaVariants } from './corpus/media-variants';
import { ismVariants } from './corpus/ism-variants';
import { Answer, eachLimited, request } from './harness/http';
import { keepAlive, memoryFigures, OriginProcess, startOriginProcess } from './harness/origin-process';
import { presentationTails } from './harness/presentation-urls';
import { mib } from './harness/proc';
import { Prng, suiteSeed } from './harness/prng';

const linux = process.platform === 'linux';
const maybe = linux ? test : test.skip;
const SEED = suiteSeed(24);
const FULL = process.env['HARDENING_FULL'] === '1' || process.env['HARDENING_SOAK'] === '1';
const SAMPLE = Number(process.env['HARDENING_SAMPLE'] ?? 520);
/**
 * Passes over the same variants under the same names (HARDENING_CORPUS_PASSES; 2 with
 * HARDENING_SOAK): what the first pass leaves in memory is the bounded caches' filling; a leak
 * would grow again in the second.
 */
const PASSES = Number(process.env['HARDENING_CORPUS_PASSES'] ?? (process.env['HARDENING_SOAK'] === '1' ? 2 : 1));

const SOURCES = {
  video: { fixture: 'video_baseline_400k.ismv', file: 'video.ismv' },
  audio: { fixture: 'audio_eng_64k.isma', file: 'audio.isma' },
  text: { fixture: 'text_eng.ismt', file: 'text.ismt' },
} as const;
type Role = keyof typeof SOURCES;

interface Target extends Variant {
  /** The source it replaces, or undefined for a server-manifest variant. */
  role: Role | undefined;
}

let root: string;
let ism: string;
let origin: OriginProcess;
let tails: string[];
const clean = new Map<string, Answer>();

beforeAll(async () => {
  if (!linux) return;
  root = tempDir('hardening-corpus-');
  for (const s of Object.values(SOURCES)) await fs.copyFile(media(s.fixture), path.join(root, s.file));
  const r = await runOrigin([
    'package',
    '-q',
    '-o',
    path.join(root, 'p.ism'),
    ...Object.values(SOURCES).map((s) => path.join(root, s.file)),
  ]);
  if (r.code !== 0) throw new Error(r.stderr);
  ism = await fs.readFile(path.join(root, 'p.ism'), 'utf8');
  await fs.writeFile(path.join(root, 'empty.ismv'), '');
  await fs.writeFile(path.join(root, 'notes.txt'), 'not media\n');
  origin = await startOriginProcess(root);
  tails = await presentationTails(origin.url, 'p');
  for (const t of tails) clean.set(t, await request(origin.url, `/p.ism/${t}`));
}, 120_000);
afterAll(async () => {
  if (origin?.alive()) await origin.stop();
});

/** The whole corpus, in a fixed order. */
async function corpus(prng: Prng): Promise<Target[]> {
  const out: Target[] = [];
  for (const role of Object.keys(SOURCES) as Role[]) {
    const bytes = await fs.readFile(path.join(root, SOURCES[role].file));
    for (const v of mediaVariants(role, bytes, prng)) out.push({ ...v, role });
  }
  const names = { video: SOURCES.video.file, audio: SOURCES.audio.file, text: SOURCES.text.file };
  for (const v of ismVariants(ism, names)) out.push({ ...v, role: undefined });
  return out;
}

/** A seeded sample that keeps every family and every server-manifest variant. */
function sample(all: Target[], n: number, prng: Prng): Target[] {
  if (all.length <= n) return all;
  const keep = all.filter((v) => v.family === 'server-manifest' || v.family === 'codec' || v.family === 'loop');
  const rest = all.filter((v) => !keep.includes(v));
  for (let i = rest.length - 1; i > 0; i--) {
    const j = prng.int(i + 1);
    [rest[i], rest[j]] = [rest[j]!, rest[i]!];
  }
  return [...keep, ...rest.slice(0, Math.max(0, n - keep.length))];
}

type Outcome = 'error' | 'same' | 'changed';

/** What an answer of a damaged presentation is, or why it is not acceptable. */
function judge(a: Answer, t: string, name: string): { outcome: Outcome; code?: string } | { bad: string } {
  if (a.status >= 400) {
    const code = a.headers['x-origin-error'];
    if (typeof code !== 'string' || !(code in ERROR_CODES))
      return { bad: `${a.status} without a known X-Origin-Error (${String(code)})` };
    if (ERROR_CODES[code as keyof typeof ERROR_CODES].kind === 'internal')
      return { bad: `${a.status} ${code}: ${a.body.toString().trim()}` };
    return { outcome: 'error', code };
  }
  if (a.status !== 200) return { bad: `status ${a.status}` };
  const type = String(a.headers['content-type']);
  const body = /xml|mpegurl|text\/vtt/.test(type) ? Buffer.from(a.body.toString('utf8').split(name).join('p')) : a.body;
  if (body.equals(clean.get(t)!.body)) return { outcome: 'same' };
  // A changed body must still be well-formed for its type.
  if (type === 'video/mp4' || type === 'video/f4f') {
    try {
      if (boxes(a.body).length === 0) return { bad: 'empty segment' };
    } catch (e) {
      return { bad: `malformed segment: ${(e as Error).message}` };
    }
  } else if (type === 'video/mp2t') {
    if (a.body.length === 0 || a.body.length % 188 !== 0) return { bad: `MPEG-TS of ${a.body.length} bytes` };
    for (let i = 0; i < a.body.length; i += 188) if (a.body[i] !== 0x47) return { bad: `no sync byte at ${i}` };
  } else if (a.body.length === 0) return { bad: 'empty body' };
  return { outcome: 'changed' };
}

maybe(
  'every URL of every damaged presentation is a clear error or a well-formed 200; the origin survives',
  async () => {
    const prng = new Prng(SEED);
    const all = await corpus(prng);
    const run = FULL ? all : sample(all, SAMPLE, prng);
    const agent = keepAlive(16);
    const failures: string[] = [];
    const outcomes = new Map<string, number>();
    const count = (k: string): void => void outcomes.set(k, (outcomes.get(k) ?? 0) + 1);
    let requests = 0;
    let fiveHundreds = 0;
    const rssStart = origin.rss();
    const fdStart = origin.fds();
    let rssPeak = rssStart;
    const started = Date.now();
    const trace = process.env['HARDENING_TRACE'];
    const rssAfterPass: number[] = [];
    for (let pass = 0; pass < PASSES; pass++) {
      await eachLimited(run, trace === undefined ? 4 : 1, async (v, i) => {
        const name = `v${i}`;
        if (trace !== undefined) await fs.appendFile(trace, `${name} ${v.name}\n`);
        const files: string[] = [path.join(root, `${name}.ism`)];
        if (v.role === undefined) {
          const text = v.bytes.toString('latin1').split('VARIANT.ism').join(`${name}.ism`);
          await fs.writeFile(files[0]!, Buffer.from(text, 'latin1'));
        } else {
          const src = `${name}${path.extname(SOURCES[v.role].file)}`;
          files.push(path.join(root, src));
          await fs.writeFile(files[1]!, v.bytes);
          await fs.writeFile(files[0]!, ism.replace(`"${SOURCES[v.role].file}"`, `"${src}"`));
        }
        for (const t of tails) {
          requests++;
          let a: Answer;
          try {
            a = await request(origin.url, `/${name}.ism/${t}`, { agent, timeoutMs: 20_000 });
          } catch (e) {
            failures.push(`${v.name} ${t}: ${(e as Error).message}`);
            continue;
          }
          if (a.status >= 500) fiveHundreds++;
          const j = judge(a, t, name);
          if ('bad' in j) failures.push(`${v.name} ${t}: ${j.bad}`);
          else if (pass === 0) count(`${v.family}:${j.outcome}${j.code === undefined ? '' : `:${j.code}`}`);
        }
        rssPeak = Math.max(rssPeak, origin.rss());
        await Promise.all(files.map((f) => fs.rm(f, { force: true })));
      });
      rssAfterPass.push(origin.rss());
    }
    agent.destroy();
    // Kept source handles close once idle past the stat TTL, at the next segment read (io/file-handles.ts).
    await new Promise((r) => setTimeout(r, 2500));
    await request(origin.url, `/p.ism/${tails.find((t) => t.startsWith('QualityLevels'))!}`);
    const rssEnd = origin.rss();
    const fdEnd = origin.fds();
    let memory = await memoryFigures(origin.url);
    if (process.env['HARDENING_HEAP_SNAPSHOT'] !== undefined) {
      // With NODE_OPTIONS="--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=<dir>": a snapshot
      // collects the garbage first, so the heap figures after it are what the origin retains.
      process.kill(origin.pid, 'SIGUSR2');
      await new Promise((r) => setTimeout(r, 15_000));
      memory += `\nafter a heap snapshot (a full collection):\n${await memoryFigures(origin.url)}`;
    }
    const summary = [...outcomes]
      .sort()
      .map(([k, n]) => `  ${k}: ${n}`)
      .join('\n');
    console.log(
      `corrupt-media corpus, seed ${SEED}: ${run.length} of ${all.length} variants × ${PASSES} pass(es), ${requests} requests in ${((Date.now() - started) / 1000).toFixed(1)} s; ` +
        `failures ${failures.length}; RSS ${mib(rssStart)} → ${mib(rssEnd)} MiB (peak ${mib(rssPeak)}; after each pass ${rssAfterPass.map(mib).join(', ')}); fds ${fdStart} → ${fdEnd}\n${summary}\n${memory}`,
    );
    if (failures.length > 0) console.log(`failures (seed ${SEED}):\n${failures.slice(0, 200).join('\n')}`);
    expect(failures.slice(0, 30)).toEqual([]);
    expect(run.length).toBeGreaterThanOrEqual(Math.min(500, all.length));
    expect(origin.alive()).toBe(true);
    // Every 5xx has its cause in the log (http.ts sendError logs server-side failures).
    expect(origin.errorLines().filter((l) => typeof l['err'] === 'string').length).toBeGreaterThanOrEqual(fiveHundreds);
    // No warning of Node's (a descriptor closed on garbage collection, an unhandled rejection).
    expect(origin.strayLines()).toEqual([]);
    // Bounded: the caches are bounded (64 MiB of manifests, 256 MiB of indexes by default) and
    // every variant's files are gone; what stays is far below that.
    expect(rssEnd).toBeLessThan(rssStart + ((FULL ? 512 : 256) << 20));
    // No leak: a pass over the same variants again grows the process far less than the first,
    // which filled the caches (a leak would grow it as much each time).
    if (PASSES >= 2) {
      const first = rssAfterPass[0]! - rssStart;
      const last = rssAfterPass[PASSES - 1]! - rssAfterPass[PASSES - 2]!;
      expect(last).toBeLessThan(first / 2);
    }
    expect(fdEnd).toBeLessThanOrEqual(fdStart + 8);
  },
  30 * 60_000,
);
