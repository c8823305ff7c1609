// Node-side glue of the track-selection filter language: loads build/filter.wasm (compiled from
// assembly/filter/) through @assemblyscript/loader and gives the origin and the CLI three things:
// the canonical form of an expression, its per-track result, and applyTrackFilters() (the
// server manifest's track_filter AND the request's filter; track-filters.ts).
//
// The module never throws (results are returned); a trap would still leave the instance in an
// unknown state, so every call into it is guarded: on any exception the instance is thrown away,
// a fresh one made from the same compiled module, and the caller gets OriginError('internal').
//
// Two caches with bounds, because the origin is long-lived and expressions come from URLs:
// - compiled expressions, LRU keyed by the exact text (a handle in the module each; released on
//   eviction). Syntax errors are cached too, so a repeated bad request costs a map lookup.
// - the module interns every distinct string it sees (track values, string literals) for the
//   life of the instance (assembly/filter/program.ts). The host counts what it has sent and
//   recycles the instance past INTERN_BUDGET characters, so that table cannot grow without end.

import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { OriginError, originError } from '../../origin/errors';
import { TrackProperties } from '../../origin/model/media';
import {
  MAX_FILTER_TRACKS,
  MAX_TEXT_UNITS,
  RawFilterExports,
  filterWasmPath,
  instantiateFilterModule,
  projectRoot,
} from './filter-module';
import { PROPERTY_KINDS, Snapshot, Variable, sameAsSnapshot, setValue, snapshotOf } from './track-values';

/** Compiled expressions kept per process. */
export const EXPRESSION_CACHE_SIZE = 256;
/** Characters of distinct strings sent to one instance before it is recycled (see header). */
export const INTERN_BUDGET = 4_000_000;

/** A syntax (or type) error of an expression: message, UTF-16 offset into the text, hint. */
export class FilterSyntaxError extends OriginError {
  constructor(
    readonly expression: string,
    readonly reason: string,
    readonly offset: number,
    readonly hint: string,
    subject = 'filter',
  ) {
    super('bad-request', formatFilterError(reason, offset, hint), subject);
    this.name = 'FilterSyntaxError';
  }

  /** The error without the subject prefix: `unexpected "=" at 4: did you mean "=="?`. */
  get detail(): string {
    return formatFilterError(this.reason, this.offset, this.hint);
  }

  /** The same error attributed to the parameter it came from (`track_filter`, `--variant_set`). */
  forParameter(subject: string): FilterSyntaxError {
    return new FilterSyntaxError(this.expression, this.reason, this.offset, this.hint, subject);
  }
}

function formatFilterError(reason: string, offset: number, hint: string): string {
  return `${reason} at ${offset}${hint !== '' ? `: ${hint}` : ''}`;
}

export interface FilterEngine {
  /** Canonical form; throws OriginError('bad-request', '<message> at <offset>: <hint>') with subject 'filter' on a syntax error. */
  canonical(expression: string): string;
  /** One boolean per track, in order (count() sees all given tracks). Throws like canonical(). */
  select(expression: string, tracks: readonly TrackProperties[]): boolean[];
}

type CacheEntry =
  | { ok: true; handle: number; canonical: string | undefined }
  | { ok: false; reason: string; offset: number; hint: string };

export class WasmFilterEngine implements FilterEngine {
  private raw!: RawFilterExports;
  private variables: Variable[] = [];
  private readonly cache = new Map<string, CacheEntry>();
  private readonly cacheSize: number;
  /** Strings sent to the current instance (they stay interned there) and their total length. */
  private sentStrings = new Set<string>();
  private sentChars = 0;
  /** Tracks in the module's table, and their filter variables as they were when loaded. */
  private loadedCount = 0;
  private loaded: Snapshot[] = [];
  /** A view of the module's per-track results (evaluateHandle()), remade when memory grows. */
  private resultsBuffer: ArrayBuffer | undefined;
  private results = new Uint8Array(0);
  /** Number of instances made so far (1 after construction); for tests and logs. */
  generation = 0;

  constructor(
    private readonly module: WebAssembly.Module,
    cacheSize = EXPRESSION_CACHE_SIZE,
    private readonly internBudget = INTERN_BUDGET,
  ) {
    this.cacheSize = Math.max(1, cacheSize); // a cache of 0 would release what it just compiled
    this.instantiate();
  }

  canonical(expression: string): string {
    this.recycleIfSpent();
    const entry = this.lookup(expression);
    if (entry.canonical === undefined) {
      const handle = entry.handle;
      entry.canonical = this.guard(() => this.raw.__getString(this.raw.canonical(handle)));
    }
    return entry.canonical;
  }

  select(expression: string, tracks: readonly TrackProperties[]): boolean[] {
    return this.selectAll([expression], tracks)[0]!;
  }

  /** Several expressions over the same tracks, the tracks loaded once. Syntax errors come first, in order. */
  selectAll(expressions: readonly string[], tracks: readonly TrackProperties[]): boolean[][] {
    this.recycleIfSpent();
    for (const e of expressions) this.lookup(e);
    this.load(tracks);
    const out = new Uint8Array(tracks.length);
    return expressions.map((e) => {
      // Looked up again right before use: a cache smaller than `expressions` may have evicted it.
      this.evaluateHandle(this.lookup(e).handle, out);
      return Array.from(out, (b) => b === 1);
    });
  }

  /**
   * The module handle of a compiled expression (compiled and cached on first use), valid until
   * the next compile (eviction) or loadTracks() (recycling). The bench's fast path.
   */
  handleOf(expression: string): number {
    return this.lookup(expression).handle;
  }

  /** Puts `tracks` into the module's track table (what count() and evaluation see). */
  loadTracks(tracks: readonly TrackProperties[]): void {
    this.recycleIfSpent();
    this.load(tracks);
  }

  private load(tracks: readonly TrackProperties[]): void {
    if (tracks.length > MAX_FILTER_TRACKS) {
      throw originError(
        'unsupported-media',
        `a filter evaluates at most ${MAX_FILTER_TRACKS} tracks; this presentation has ${tracks.length}`,
        { subject: 'filter' },
      );
    }
    if (this.holds(tracks)) return;
    this.countStrings(tracks);
    this.guard(() => {
      const r = this.raw;
      this.loadedCount = 0;
      r.clearTracks();
      for (const track of tracks) {
        const t = r.addTrack();
        for (const v of this.variables) setValue(r, t, v, track[v.key]);
      }
      this.loaded = tracks.map(snapshotOf);
      this.loadedCount = tracks.length;
    });
  }

  /**
   * Whether the module's table already holds exactly these values. Loading costs ~2 us a track
   * (a string crosses the boundary and is interned for every string property), comparing them
   * well under 100 ns: a presentation requested again and again is loaded once.
   */
  private holds(tracks: readonly TrackProperties[]): boolean {
    if (tracks.length !== this.loadedCount) return false;
    const loaded = this.loaded;
    for (let i = 0; i < tracks.length; i++) if (!sameAsSnapshot(tracks[i]!, loaded[i]!)) return false;
    return true;
  }

  /** Evaluates a handle over the loaded tracks; 1/0 per track into `out`; returns how many are kept. */
  evaluateHandle(handle: number, out: Uint8Array): number {
    const r = this.raw;
    try {
      const kept = r.evaluate(handle);
      if (kept < 0) throw originError('internal', `filter handle ${handle} is not compiled`, { subject: 'filter' });
      // memory.buffer is re-read after every call (the module may have grown its memory, which
      // detaches the old buffer); the view over the results is remade only when it changed.
      const buffer = r.memory.buffer;
      if (buffer !== this.resultsBuffer) {
        this.resultsBuffer = buffer;
        this.results = new Uint8Array(buffer, r.resultsPointer(), MAX_FILTER_TRACKS);
      }
      const results = this.results;
      const n = Math.min(out.length, this.loadedCount);
      for (let i = 0; i < n; i++) out[i] = results[i]!;
      return kept;
    } catch (e) {
      throw this.recover(e);
    }
  }

  private lookup(expression: string): CacheEntry & { ok: true } {
    if (expression.length > MAX_TEXT_UNITS) {
      // Past the limit the module only reports where the limit falls, which the first
      // MAX_TEXT_UNITS code units decide: neither copy megabytes into it nor keep them as keys.
      const cut = this.compile(expression.slice(0, MAX_TEXT_UNITS));
      if (!cut.ok) throw new FilterSyntaxError(expression, cut.reason, cut.offset, cut.hint);
      this.guard(() => this.raw.release(cut.handle)); // unreachable: 4097 code units are > 4096 bytes
    }
    let entry = this.cache.get(expression);
    if (entry !== undefined) {
      this.cache.delete(expression); // re-inserted as the most recent
      this.cache.set(expression, entry);
    } else {
      entry = this.compile(expression);
      this.cache.set(expression, entry);
      if (this.cache.size > this.cacheSize) this.evictOldest();
    }
    if (!entry.ok) throw new FilterSyntaxError(expression, entry.reason, entry.offset, entry.hint);
    return entry;
  }

  private compile(expression: string): CacheEntry {
    // String literals of the expression are interned by the module: counted like track strings.
    this.sentChars += expression.length;
    return this.guard(() => {
      const r = this.raw;
      const handle = r.compile(r.__newString(expression));
      if (handle > 0) return { ok: true, handle, canonical: undefined };
      const reason = r.__getString(r.lastErrorMessage());
      let hint = r.__getString(r.lastErrorHint());
      // Query strings are decoded without turning "+" into a space (options/registry.ts
      // parseQuery), so a form-encoded space arrives as "+": say so.
      if (reason === 'unexpected "+"' && hint === '')
        hint = '"+" is not decoded to a space: write a space as %20 in a URL, or leave it out';
      return { ok: false, reason, offset: r.lastErrorOffset(), hint };
    });
  }

  private evictOldest(): void {
    const oldest = this.cache.keys().next();
    if (oldest.done === true) return;
    const entry = this.cache.get(oldest.value)!;
    this.cache.delete(oldest.value);
    if (entry.ok) this.guard(() => this.raw.release(entry.handle));
  }

  private countStrings(tracks: readonly TrackProperties[]): void {
    for (const track of tracks) {
      for (const v of this.variables) {
        const value = track[v.key];
        if (typeof value === 'string' && !this.sentStrings.has(value)) {
          this.sentStrings.add(value);
          this.sentChars += value.length + 1;
        }
      }
    }
  }

  /**
   * Recycles the instance once it has interned INTERN_BUDGET characters. Checked only at the
   * start of a public call, so handles and loaded tracks never vanish in the middle of one (the
   * budget is soft by one call's worth).
   */
  private recycleIfSpent(): void {
    if (this.sentChars > this.internBudget) this.instantiate();
  }

  /** A fresh instance: a new intern table, no compiled expressions, no tracks. */
  private instantiate(): void {
    const raw = instantiateFilterModule(this.module);
    const names = raw.__getString(raw.variableNames()).split(',');
    const variables: Variable[] = names.map((name, index) => {
      const kind = PROPERTY_KINDS[name];
      if (kind === undefined)
        throw originError(
          'internal',
          `build/filter.wasm has a variable "${name}" this host does not know: rebuild (npm run build)`,
          { subject: 'filter' },
        );
      return { index, key: name as keyof TrackProperties, kind };
    });
    this.raw = raw;
    this.variables = variables;
    this.loadedCount = 0;
    this.resultsBuffer = undefined;
    this.cache.clear(); // the handles belonged to the old instance
    this.sentStrings = new Set();
    this.sentChars = 0;
    this.generation++;
  }

  private guard<T>(call: () => T): T {
    try {
      return call();
    } catch (e) {
      throw this.recover(e);
    }
  }

  /** Turns an exception out of the module into OriginError('internal') and replaces the instance. */
  private recover(e: unknown): Error {
    if (e instanceof OriginError) return e;
    let where = '';
    try {
      where = this.raw.__getString(this.raw.lastAbort());
    } catch {
      // the broken instance cannot even say where it stopped
    }
    const why = where !== '' ? where : e instanceof Error ? e.message : String(e);
    this.instantiate();
    return originError('internal', `the filter module failed (${why}); it was reloaded`, { subject: 'filter' });
  }
}

/** An engine over a given .wasm file; OriginError('internal') naming the file when it is missing. */
export function createFilterEngine(
  wasmPath: string = filterWasmPath(),
  cacheSize = EXPRESSION_CACHE_SIZE,
): WasmFilterEngine {
  const relative = path.relative(projectRoot(), wasmPath).split(path.sep).join('/');
  const shown = relative.startsWith('..') || path.isAbsolute(relative) ? wasmPath : relative;
  let bytes: Uint8Array<ArrayBuffer>;
  try {
    bytes = new Uint8Array(readFileSync(wasmPath));
  } catch {
    throw originError('internal', `${shown} missing: run npm run build`);
  }
  let module: WebAssembly.Module;
  try {
    module = new WebAssembly.Module(bytes);
  } catch (e) {
    throw originError(
      'internal',
      `${shown} is not a valid WebAssembly module (${(e as Error).message}): run npm run build`,
    );
  }
  return new WasmFilterEngine(module, cacheSize);
}

let shared: WasmFilterEngine | undefined;

/** The process-wide engine (loaded on first use; a missing module is reported on every call). */
export function filterEngine(): WasmFilterEngine {
  shared ??= createFilterEngine();
  return shared;
}
