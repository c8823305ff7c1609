// `origin package`: reads fragmented MP4 inputs and writes a server manifest, with the
// reference's semantics (docs/guide/packaging.md#device-classes-the-reference-products-recipe): an input
// followed by --track_type contributes only its tracks of that type; an input without it
// contributes all its tracks; stream options become head metas.

import { promises as fs, realpathSync } from 'node:fs';
import * as path from 'node:path';
import { applyTrackFilters } from '../../host-glue/filter/track-filters';
import { OriginError, originError } from '../errors';
import { propertiesToIsmTrack } from '../ism/ism-tracks';
import { ServerManifest, writeServerManifest } from '../ism/server-manifest';
import { readMediaFile } from '../media/media-file';
import { FileSource } from '../io/source';
import { MediaFile, MediaTrack, TrackProperties, TrackType } from '../model/media';
import { readTrackEvents } from '../media/event-index';
import { optionsToMeta, StreamOptions } from '../options/registry';
import { checkCpixTracks } from './cpix-input';
import { VERSION } from '../version';

export type TrackTypeOption = 'video' | 'audio' | 'text';

export interface PackageInput {
  path: string;
  trackType: TrackTypeOption | undefined;
}

export interface PackageRequest {
  /** Output path, or `stdout:`. */
  output: string;
  inputs: PackageInput[];
  options: StreamOptions;
}

export type Progress = (line: string) => void;

const TYPE_OF_OPTION: Record<TrackTypeOption, TrackType> = { video: 'video', audio: 'audio', text: 'textstream' };

export const STDOUT = 'stdout:';

export function creatorLine(): string {
  return `Streaming Origin (version=${VERSION})`;
}

/** Builds the server manifest (no output written). */
export async function buildServerManifest(req: PackageRequest, progress: Progress = () => {}): Promise<ServerManifest> {
  checkOutput(req);
  checkInputs(req);
  const outDir = req.output === STDOUT ? process.cwd() : path.dirname(path.resolve(req.output));
  const chosen: Chosen[] = [];
  const seen = new Set<string>();
  for (const input of req.inputs) {
    const started = Date.now();
    const source = await FileSource.open(input.path);
    let file;
    let wanted: MediaTrack[];
    let events: string[];
    try {
      file = await readMediaFile(source, 'exact');
      wanted =
        input.trackType === undefined
          ? file.tracks
          : file.tracks.filter((t) => t.properties.type === TYPE_OF_OPTION[input.trackType!]);
      events = await noteTimedMetadata(source, file, wanted);
    } finally {
      await source.close();
    }
    if (wanted.length === 0) {
      throw originError(
        'bad-request',
        `has no ${input.trackType} track (it has: ${file.tracks.map((t) => t.properties.type).join(', ')})`,
        { subject: input.path },
      );
    }
    const src = path.relative(outDir, path.resolve(input.path)).split(path.sep).join('/');
    for (const track of wanted) {
      const key = `${src}#${track.properties.trackID}`;
      if (seen.has(key))
        throw originError('bad-request', `track ${track.properties.trackID} is given twice`, { subject: input.path });
      seen.add(key);
      chosen.push({ input: input.path, src, track });
    }
    const ms = Date.now() - started;
    progress(
      `${input.path}: ${wanted.map((t, i) => `${t.properties.type} ${t.properties.FourCC} ${t.properties.systemBitrate} bit/s, ${t.fragments.count} fragments${events[i]}`).join('; ')} (${file.indexedBy}, ${ms} ms)`,
    );
  }
  assignTrackNames(chosen.map((c) => c.track.properties));
  const written = applyTrackFilterOption(chosen, req.options, progress);
  if (req.options.isSet('cpix')) checkCpixTracks(written, req.options, progress);
  return {
    meta: optionsToMeta(req.options),
    paramGroups: [],
    tracks: written.map((c) => propertiesToIsmTrack(c.track.properties, c.src)),
  };
}

/**
 * Timed metadata (docs/guide/packaging.md#timed-metadata): a metadata track's events are read
 * and checked now, so that a track the origin cannot read is refused here, not on a request; a
 * media track whose source has top-level emsg boxes gets InbandEvents=emsg, which tells the
 * origin to read them (media/event-index.ts). Returns a note per track for the progress line.
 */
async function noteTimedMetadata(source: FileSource, file: MediaFile, tracks: MediaTrack[]): Promise<string[]> {
  const notes: string[] = [];
  for (const t of tracks) {
    const p = t.properties;
    if (p.type === 'data') {
      const events = await readTrackEvents(source, file, p.trackID);
      notes.push(`, ${events.length} events`);
    } else if (p.type === 'video' || p.type === 'audio') {
      const inband = (await readTrackEvents(source, file, p.trackID)).length;
      if (inband > 0) p.InbandEvents = 'emsg';
      notes.push(inband > 0 ? `, ${inband} inband emsg events` : '');
    } else notes.push('');
  }
  return notes;
}

interface Chosen {
  /** The input as given on the command line (for messages). */
  input: string;
  /** Relative to the output's directory (what the server manifest stores). */
  src: string;
  track: MediaTrack;
}

/**
 * `--track_filter` applied when writing: the server manifest holds only the kept tracks, and the
 * expression is still stored in the head, because the origin applies it again on every request.
 * So the written tracks must be a fixed point of the expression: one that keeps fewer of what it
 * kept (count() then counts only the written tracks) would make every request see fewer tracks
 * than the manifest lists, and is refused.
 *
 * Names: the expression sees the names given over all inputs (the only ones that exist before it
 * runs). The kept tracks are then named again on their own, so the manifest is the one listing
 * only the kept inputs would write (no `audio_eng_aacl` because a dropped AC-3 came first),
 * unless that changes what the expression keeps (it selects by trackName): then the names over
 * all inputs stay, and `trackName` in the expression means the name written.
 */
function applyTrackFilterOption(chosen: Chosen[], options: StreamOptions, progress: Progress): Chosen[] {
  const expression = options.str('track_filter');
  if (expression === undefined || expression === '' || chosen.length === 0) return chosen;
  const keepTimedMetadata = options.bool('timed_metadata');
  const kept = new Set(
    applyTrackFilters(
      chosen.map((c) => c.track.properties),
      expression,
      undefined,
      { keepTimedMetadata },
    ),
  );
  const written = chosen.filter((_, i) => kept.has(i));
  const dropped = chosen.filter((_, i) => !kept.has(i));
  progress(
    `track_filter ${expression}: keeps ${written.length} of ${chosen.length} tracks${dropped.length > 0 ? ', drops:' : ''}`,
  );
  for (const c of dropped) {
    const p = c.track.properties;
    progress(`  ${c.input} track ${p.trackID}: ${p.trackName} ${p.type} ${p.FourCC} ${p.systemBitrate} bit/s`);
  }
  const props = written.map((c) => c.track.properties);
  const namesOverAllInputs = props.map((p) => p.trackName);
  assignTrackNames(props);
  if (keepsAll(props, expression, keepTimedMetadata)) return written;
  props.forEach((p, i) => {
    p.trackName = namesOverAllInputs[i]!;
  });
  if (keepsAll(props, expression, keepTimedMetadata)) {
    progress('  track names kept as over all inputs: the expression selects by them');
    return written;
  }
  const again = countKept(props, expression, keepTimedMetadata);
  throw originError(
    'bad-request',
    `${expression} keeps ${written.length} of the ${chosen.length} input tracks, but only ${again} of those ${written.length} when applied to the written server manifest ` +
      '(count() then counts the written tracks only); the origin applies track_filter again on every request, so it must keep what it selected',
    { subject: 'track_filter' },
  );
}

function keepsAll(tracks: TrackProperties[], expression: string, keepTimedMetadata: boolean): boolean {
  return countKept(tracks, expression, keepTimedMetadata) === tracks.length;
}

function countKept(tracks: TrackProperties[], expression: string, keepTimedMetadata: boolean): number {
  try {
    return applyTrackFilters(tracks, expression, undefined, { keepTimedMetadata }).length;
  } catch (e) {
    if (e instanceof OriginError && e.kind === 'bad-request') return 0; // it keeps none of them
    throw e;
  }
}

/**
 * Track names follow the reference's `<type>_<lang>` (docs/specs.md, reference §1.3). Tracks a player
 * switches between (same type, language and codec: the bitrate ladder) share a name, because
 * Smooth's StreamIndex and every URL pair the name with the bitrate (`video_eng=401000`). A
 * second codec of the same type and language gets the codec appended (`audio_eng_ac3`), and the
 * pair (trackName, systemBitrate) is made unique with a numeric suffix. Names a URL can carry
 * unescaped: letters, digits, `_`; never `-` or `=`, which separate the parts of segment names.
 */
export function assignTrackNames(tracks: TrackProperties[]): void {
  const firstCodec = new Map<string, string>();
  const taken = new Set<string>();
  for (const p of tracks) {
    const lang = p.systemLanguage.replace(/[^A-Za-z0-9]/g, '') || 'und';
    const group = `${p.type}_${lang}`;
    const codec = p.FourCC.toLowerCase().replace(/[^a-z0-9]/g, '');
    if (!firstCodec.has(group)) firstCodec.set(group, codec);
    let name = firstCodec.get(group) === codec ? group : `${group}_${codec}`;
    const base = name;
    for (let n = 1; taken.has(`${name}=${p.systemBitrate}`); n++) name = `${base}_${n}`;
    taken.add(`${name}=${p.systemBitrate}`);
    p.trackName = name;
  }
}

export function checkOutput(req: PackageRequest): void {
  if (req.output === STDOUT) return;
  const out = canonical(req.output);
  for (const input of req.inputs) {
    if (canonical(input.path) === out)
      throw originError('bad-request', 'the output would overwrite this input', { subject: input.path });
  }
  if (!/\.isml?$/i.test(req.output)) {
    throw originError('bad-request', 'the output must end in .ism (or .isml for live), or be stdout:', {
      subject: req.output,
    });
  }
}

function checkInputs(req: PackageRequest): void {
  if (req.inputs.length === 0 && !/\.isml$/i.test(req.output)) {
    throw originError('bad-request', 'no input files (only a live .isml may be created without inputs)');
  }
}

function canonical(p: string): string {
  const abs = path.resolve(p);
  try {
    return realpathSync(abs);
  } catch {
    // Not existing yet: resolve the directory, keep the name.
    try {
      return path.join(realpathSync(path.dirname(abs)), path.basename(abs));
    } catch {
      return abs;
    }
  }
}

/**
 * Writes the server manifest atomically: a temporary file in the same directory, flushed, then
 * renamed over the target, so a failure never leaves a partial .ism behind.
 */
export async function writeServerManifestFile(target: string, manifest: ServerManifest): Promise<void> {
  const text = writeServerManifest(manifest, creatorLine());
  const dir = path.dirname(path.resolve(target));
  const tmp = path.join(dir, `.${path.basename(target)}.${process.pid}.${Date.now()}.tmp`);
  let handle: fs.FileHandle | undefined;
  try {
    handle = await fs.open(tmp, 'wx', 0o644);
    await handle.writeFile(text, 'utf8');
    await handle.sync();
    await handle.close();
    handle = undefined;
    await fs.rename(tmp, target);
  } catch (e) {
    await handle?.close().catch(() => {});
    await fs.rm(tmp, { force: true });
    const err = e as NodeJS.ErrnoException;
    throw originError('io', `cannot write the server manifest: ${err.code ?? ''} ${err.message}`.trim(), {
      subject: target,
    });
  }
}
