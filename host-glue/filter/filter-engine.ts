// Node-side glue of the track-selection filter language: loads build/filter.wasm (compiled from
// assembly/filter/) through @assemblyscript/loader and gives the origin and the CLI three things:
// the canonical form of an expression, its per-track result, and applyTrackFilters() (the
// server manifest's track_filter AND the request's filter).
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
import * as loader from '@assemblyscript/loader';
import { OriginError } from '../../origin/errors';
import { TrackProperties } from '../../origin/model/media';

/** The module's exports (assembly/filter/index.ts). Strings are managed pointers; i64 is bigint. */
export interface RawFilterExports {
  memory: WebAssembly.Memory;
  compile(text: number): number;
  lastError(): number;
  lastErrorMessage(): number;
  lastErrorHint(): number;
  lastErrorOffset(): number;
  lastAbort(): number;
  canonical(handle: number): number;
  release(handle: number): void;
  clearTracks(): void;
  addTrack(): number;
  trackCount(): number;
  setString(track: number, variable: number, value: number): number;
  setNumber(track: number, variable: number, value: bigint): number;
  setRational(track: number, variable: number, num: bigint, den: bigint): number;
  unset(track: number, variable: number): number;
  evaluate(handle: number): number;
  evaluateMask(handle: number): number;
  resultsPointer(): number;
  variableNames(): number;
  variableType(variable: number): number;
  variableIndex(name: number): number;
  __newString(s: string): number;
  __getString(p: number): string;
}

/** Compiled expressions kept per process. */
export const EXPRESSION_CACHE_SIZE = 256;
/** Characters of distinct strings sent to one instance before it is recycled (see header). */
export const INTERN_BUDGET = 4_000_000;
/** Code units that always exceed the module's 4096-byte text limit (every unit is >= 1 byte). */
const MAX_TEXT_UNITS = 4097;
/** The module's track table size (assembly/filter/evaluate.ts MAX_TRACKS). */
export const MAX_FILTER_TRACKS = 1024;

/**
 * The repository root, found from this file whether it runs from source (host-glue/, under
 * ts-jest) or compiled (dist/host-glue/): the nearest directory up with our package.json. Without
 * one (an unpacked copy without it), the layout decides: one level up, two from dist/.
 */
export function projectRoot(from: string = __dirname): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: unknown };
      if (pkg.name === 'streaming-origin') return dir;
    } catch {
      // no (readable) package.json here: keep walking
    }
    if (path.dirname(dir) === dir) break;
  }
  const up = path.dirname(from);
  return path.basename(up) === 'dist' ? path.dirname(up) : up;
}

export function filterWasmPath(): string {
  return path.join(projectRoot(), 'build', 'filter.wasm');
}

/** One instance of the module: its raw exports (no guard, no cache; tests use it directly). */
export function instantiateFilterModule(source: WebAssembly.Module | Uint8Array<ArrayBuffer>): RawFilterExports {
  return loader.instantiateSync<Record<string, unknown>>(source, {}).exports as unknown as RawFilterExports;
}

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

type Kind = 'string' | 'number' | 'rational';

/**
 * How each filter variable is read from TrackProperties (the names are the same: model/media.ts). A
 * variable added to the module must be added here and to Snapshot below.
 */
const PROPERTY_KINDS: Readonly<Record<string, Kind>> = {
  type: 'string',
  FourCC: 'string',
  trackID: 'number',
  trackName: 'string',
  AudioTag: 'number',
  Channels: 'number',
  SamplingRate: 'number',
  BitsPerSample: 'number',
  MaxWidth: 'number',
  MaxHeight: 'number',
  DisplayWidth: 'number',
  DisplayHeight: 'number',
  TimeScale: 'number',
  avc_level: 'number',
  avc_profile: 'number',
  systemBitrate: 'number',
  systemLanguage: 'string',
  FrameRate: 'rational',
  ScanType: 'string',
  Roles: 'string',
};

interface Variable {
  index: number;
  key: keyof TrackProperties;
  kind: Kind;
}

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
      throw new OriginError(
        'unsupported-media',
        `a filter evaluates at most ${MAX_FILTER_TRACKS} tracks; this presentation has ${tracks.length}`,
        'filter',
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
      if (kept < 0) throw new OriginError('internal', `filter handle ${handle} is not compiled`, 'filter');
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
        throw new OriginError(
          'internal',
          `build/filter.wasm has a variable "${name}" this host does not know: rebuild (npm run build)`,
          'filter',
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
    return new OriginError('internal', `the filter module failed (${why}); it was reloaded`, 'filter');
  }
}

/**
 * The values of a track the module holds, copied in one object shape (so comparing is a run of
 * monomorphic loads). Every key of PROPERTY_KINDS, FrameRate as its two integers.
 */
interface Snapshot {
  type: unknown;
  FourCC: unknown;
  trackID: unknown;
  trackName: unknown;
  AudioTag: unknown;
  Channels: unknown;
  SamplingRate: unknown;
  BitsPerSample: unknown;
  MaxWidth: unknown;
  MaxHeight: unknown;
  DisplayWidth: unknown;
  DisplayHeight: unknown;
  TimeScale: unknown;
  avc_level: unknown;
  avc_profile: unknown;
  systemBitrate: unknown;
  systemLanguage: unknown;
  frameRateNum: unknown;
  frameRateDen: unknown;
  ScanType: unknown;
  Roles: unknown;
}

function snapshotOf(t: TrackProperties): Snapshot {
  return {
    type: t.type,
    FourCC: t.FourCC,
    trackID: t.trackID,
    trackName: t.trackName,
    AudioTag: t.AudioTag,
    Channels: t.Channels,
    SamplingRate: t.SamplingRate,
    BitsPerSample: t.BitsPerSample,
    MaxWidth: t.MaxWidth,
    MaxHeight: t.MaxHeight,
    DisplayWidth: t.DisplayWidth,
    DisplayHeight: t.DisplayHeight,
    TimeScale: t.TimeScale,
    avc_level: t.avc_level,
    avc_profile: t.avc_profile,
    systemBitrate: t.systemBitrate,
    systemLanguage: t.systemLanguage,
    frameRateNum: t.FrameRate?.num,
    frameRateDen: t.FrameRate?.den,
    ScanType: t.ScanType,
    Roles: t.Roles,
  };
}

function sameAsSnapshot(t: TrackProperties, s: Snapshot): boolean {
  return (
    t.type === s.type &&
    t.FourCC === s.FourCC &&
    t.trackID === s.trackID &&
    t.trackName === s.trackName &&
    t.AudioTag === s.AudioTag &&
    t.Channels === s.Channels &&
    t.SamplingRate === s.SamplingRate &&
    t.BitsPerSample === s.BitsPerSample &&
    t.MaxWidth === s.MaxWidth &&
    t.MaxHeight === s.MaxHeight &&
    t.DisplayWidth === s.DisplayWidth &&
    t.DisplayHeight === s.DisplayHeight &&
    t.TimeScale === s.TimeScale &&
    t.avc_level === s.avc_level &&
    t.avc_profile === s.avc_profile &&
    t.systemBitrate === s.systemBitrate &&
    t.systemLanguage === s.systemLanguage &&
    t.FrameRate?.num === s.frameRateNum &&
    t.FrameRate?.den === s.frameRateDen &&
    t.ScanType === s.ScanType &&
    t.Roles === s.Roles
  );
}

function setValue(r: RawFilterExports, track: number, v: Variable, value: unknown): void {
  // A property the track lacks stays unset: every comparison with it is false.
  if (value === undefined || value === null) return;
  if (v.kind === 'string') {
    if (typeof value === 'string') r.setString(track, v.index, r.__newString(value));
  } else if (v.kind === 'rational' && typeof value === 'object') {
    const q = value as { num: unknown; den: unknown };
    if (Number.isSafeInteger(q.num) && Number.isSafeInteger(q.den) && q.den !== 0) {
      r.setRational(track, v.index, BigInt(q.num as number), BigInt(q.den as number));
    }
  } else if (typeof value === 'number' && Number.isSafeInteger(value)) {
    // Every numeric property is an integer (bit/s, Hz, pixels, ticks); anything else stays unset.
    r.setNumber(track, v.index, BigInt(value));
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
    throw new OriginError('internal', `${shown} missing: run npm run build`);
  }
  let module: WebAssembly.Module;
  try {
    module = new WebAssembly.Module(bytes);
  } catch (e) {
    throw new OriginError(
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

/**
 * Indices of tracks kept by track_filter AND filter (either may be undefined/empty = keep all).
 * Both see every given track (count() counts the presentation before filtering). Tracks of type
 * 'data' are always kept when keepTimedMetadata. Throws OriginError('bad-request', ...) naming the
 * expression when the expressions keep no track (the timed-metadata passthrough does not count),
 * and for syntax errors prefixes which parameter ("filter: ..." / "track_filter: ...").
 */
export function applyTrackFilters(
  tracks: readonly TrackProperties[],
  trackFilter: string | undefined,
  filter: string | undefined,
  opts: { keepTimedMetadata?: boolean } = {},
): number[] {
  const given: Array<[string, string]> = [];
  if (trackFilter !== undefined && trackFilter !== '') given.push(['track_filter', trackFilter]);
  if (filter !== undefined && filter !== '') given.push(['filter', filter]);
  const passthrough = (t: TrackProperties): boolean => opts.keepTimedMetadata === true && t.type === 'data';
  if (given.length === 0) return tracks.map((_, i) => i);

  const engine = filterEngine();
  for (const [name, text] of given) {
    try {
      engine.canonical(text);
    } catch (e) {
      throw e instanceof FilterSyntaxError ? e.forParameter(name) : e;
    }
  }
  const results = engine.selectAll(
    given.map(([, text]) => text),
    tracks,
  );
  const candidates = tracks.filter((t) => !passthrough(t)).length;
  const keep = tracks.map(() => true);
  results.forEach((selected, g) => {
    selected.forEach((k, i) => {
      if (!k) keep[i] = false;
    });
    const [name, text] = given[g]!;
    const alive = tracks.filter((t, i) => keep[i] && !passthrough(t)).length;
    if (candidates > 0 && alive === 0) {
      const scope =
        g === 0
          ? `the ${candidates} tracks`
          : `the ${tracks.filter((t, i) => results[0]![i] && !passthrough(t)).length} tracks that track_filter ${given[0]![1]} keeps`;
      throw new OriginError('bad-request', `${text} keeps none of ${scope}`, name);
    }
  });
  return tracks.flatMap((t, i) => (keep[i] || passthrough(t) ? [i] : []));
}
