// Legacy Smooth passthrough (`iss_pass_through: true` in a location; the reference product's
// IssPassThrough for pre-packaged Smooth content that is encoded badly enough that the normal
// path refuses it). Nothing of the media is parsed but the file's random-access index:
//
// - `<x>.ism/Manifest` is the client manifest on storage as it is: the file the server manifest
//   names in its `clientManifestRelativePath` meta, else `<x>.ismc` beside it.
// - `QualityLevels(b)/Fragments(name=t)` is the track of the server manifest with systemBitrate b
//   and trackName `name` (else the element's name, `video`/`audio`/`textstream`); its fragment at
//   time t is found in the source's `tfra` (ISO/IEC 14496-12 §8.8.10, read through the `mfro` of
//   §8.8.11 at the end of the file), and the bytes from that `moof` to the end of the `mdat` after
//   it are sent unparsed (MS-SSTR §2.2.4: a fragment is a moof and its mdat). A time that no tfra
//   entry has (the .ismc's times in another timescale, or shifted by a composition offset) is
//   taken as the k-th chunk of the stream in the .ismc (MS-SSTR §2.2.2.6: `t`, `d`, `r`), and
//   the k-th tfra entry is its fragment: the client only ever asks for times the .ismc lists.
// - DASH, HLS and HDS need the media parsed: 415 `passthrough-smooth-only`.
//
// A source without `mfra` is indexed by one scan of its top-level box headers instead
// (passthrough-scan.ts); one where that scan finds no fragment answers `passthrough-no-index`.
// Either index is kept per file version (a small bounded map), so a file is read for it once.

import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { originError } from '../errors';
import type { RootConfinement } from '../io/confine';
import type { Storage } from '../io/storage';
import { parseServerManifest } from '../ism/server-manifest';
import { parseMfra, parseMfro, readBoxHeader } from '../media/boxes';
import { scanFragments } from './passthrough-scan';
import type { IsmTrack, MetaEntry } from '../model/server-manifest';
import type { Reply } from './route-handler';
import type { PresentationRequest } from './routes';

/** Random-access tables kept (per source file version); past it the oldest is forgotten. */
const MAX_INDEXES = 256;
/** A fragment larger than this is refused: a Smooth fragment is a few seconds of one track. */
const MAX_FRAGMENT = 64 << 20;

/** Where each fragment of a track is: its time and moof offset, in file order (tfra or scan). */
interface TrackIndex {
  count: number;
  times: { indexOf(t: bigint): number };
  moofOffsets: ArrayLike<number>;
}

export class Passthrough {
  private readonly indexes = new Map<string, Promise<Map<number, TrackIndex>>>();
  private readonly ismcs = new Map<string, Promise<Map<string, bigint[]>>>();

  constructor(
    private readonly storage: Storage,
    private readonly confinement: RootConfinement | undefined,
  ) {}

  /** The reply to a presentation request of a passthrough location; `ism` is its absolute path. */
  async reply(request: PresentationRequest, ism: string): Promise<Reply> {
    const { route } = request;
    if (route.format !== 'smooth')
      throw originError(
        'passthrough-smooth-only',
        `${route.format.toUpperCase()} needs the media parsed; this location serves legacy Smooth content as stored (iss_pass_through)`,
      );
    const ismStat = await this.stat(ism);
    const manifest = parseServerManifest(await this.storage.readText(ism, ismStat.version), path.basename(ism));
    if (route.kind === 'smooth-manifest') return this.clientManifest(ism, manifest.meta, new Date(ismStat.mtimeMs));
    const g = request.groups;
    const track = findTrack(manifest.tracks, Number(g.bitrate), g.track ?? '');
    if (track === undefined)
      throw originError('unknown-track', `no track with systemBitrate ${g.bitrate} and name "${g.track}"`);
    const at = { name: g.track ?? '', time: BigInt(g.time ?? '0') };
    const chunks = (): Promise<Map<string, bigint[]>> => this.chunks(ism, manifest.meta);
    return this.fragment(path.join(path.dirname(ism), ...track.src.split('/')), track, at, chunks);
  }

  private async stat(p: string): Promise<{ mtimeMs: number; size: number; version?: string }> {
    if (this.storage.remote?.(p) === undefined) await this.confinement?.check(p);
    return this.storage.stat(p);
  }

  private async clientManifest(
    ism: string,
    meta: readonly { name: string; content: string }[],
    at: Date,
  ): Promise<Reply> {
    const file = ismcOf(ism, meta);
    const stat = await this.stat(file);
    const text = await this.storage.readText(file, stat.version);
    const mtime = Math.max(at.getTime(), stat.mtimeMs);
    return {
      contentType: 'text/xml; charset=utf-8',
      body: { type: 'text', text },
      lastModified: new Date(mtime),
      etag: etagOf(file, stat, 0, text.length),
      cacheClass: 'manifest',
    };
  }

  /** The chunk start times of each stream of the presentation's .ismc, kept per file version. */
  private async chunks(ism: string, meta: readonly MetaEntry[]): Promise<Map<string, bigint[]>> {
    const file = ismcOf(ism, meta);
    const stat = await this.stat(file);
    return keptOnce(this.ismcs, versionKey(file, stat), () =>
      this.storage.readText(file, stat.version).then(chunkTimes),
    );
  }

  private async fragment(
    file: string,
    track: IsmTrack,
    at: { name: string; time: bigint },
    chunks: () => Promise<Map<string, bigint[]>>,
  ): Promise<Reply> {
    const stat = await this.stat(file);
    const trackId = Number(track.params.find((p) => p.name === 'trackID')?.value ?? '1');
    const table = (await this.index(file, stat)).get(trackId);
    if (table === undefined)
      throw originError('unknown-track', `${path.basename(file)} has no fragments of track ${trackId}`);
    let e = table.times.indexOf(at.time);
    if (e < 0) e = (await chunks()).get(at.name)?.indexOf(at.time) ?? -1;
    if (e < 0 || e >= table.count)
      throw originError('unknown-time', `no fragment starts at ${at.time} in track ${trackId}`);
    const offset = table.moofOffsets[e]!;
    const source = await this.storage.open(file, stat.version);
    try {
      const moof = await boxAt(source, offset, stat.size, 'moof', file);
      const mdat = await boxAt(source, offset + moof, stat.size, 'mdat', file);
      const length = moof + mdat;
      if (length > MAX_FRAGMENT) throw originError('segment-too-large', `a fragment of ${length} bytes`);
      const bytes = await source.read(offset, length);
      return {
        contentType: 'video/mp4',
        body: { type: 'bytes', bytes },
        lastModified: new Date(stat.mtimeMs),
        etag: etagOf(file, stat, offset, length),
        cacheClass: 'segment',
      };
    } finally {
      await source.close();
    }
  }

  /** The tfra tables (else the box scan) of a file version, read once. */
  private index(
    file: string,
    stat: { mtimeMs: number; size: number; version?: string },
  ): Promise<Map<number, TrackIndex>> {
    return keptOnce(this.indexes, versionKey(file, stat), () => readIndex(this.storage, file, stat));
  }
}

/** One file version: its name, storage version, mtime and size. */
function versionKey(file: string, stat: { mtimeMs: number; size: number; version?: string }): string {
  return `${file}\n${stat.version ?? ''}\n${stat.mtimeMs}\n${stat.size}`;
}

/** `make()` once per key, kept in `cache` (the oldest dropped past MAX_INDEXES; a failure is not kept). */
function keptOnce<T>(cache: Map<string, Promise<T>>, key: string, make: () => Promise<T>): Promise<T> {
  let kept = cache.get(key);
  if (kept === undefined) {
    if (cache.size >= MAX_INDEXES) cache.delete(cache.keys().next().value!);
    kept = make();
    cache.set(key, kept);
    kept.catch(() => cache.delete(key));
  }
  return kept;
}

async function readIndex(
  storage: Storage,
  file: string,
  stat: { size: number; version?: string },
): Promise<Map<number, TrackIndex>> {
  const source = await storage.open(file, stat.version);
  try {
    const mfraSize = stat.size < 16 ? undefined : parseMfro(await source.read(stat.size - 16, 16), stat.size - 16);
    if (mfraSize === undefined || mfraSize < 16 || mfraSize > stat.size) {
      const scanned = await scanFragments(source, stat.size, file);
      if (scanned.size === 0)
        throw originError('passthrough-no-index', `${path.basename(file)} has neither mfra nor moof+mdat fragments`);
      return scanned;
    }
    const start = stat.size - mfraSize;
    return parseMfra(await source.read(start, mfraSize), start);
  } finally {
    await source.close();
  }
}

/** The size of the box of `type` at `offset`; anything else there is corrupt-media. */
async function boxAt(
  source: { read(o: number, l: number): Promise<Uint8Array> },
  offset: number,
  size: number,
  type: string,
  file: string,
): Promise<number> {
  const head = await source.read(offset, Math.min(16, size - offset));
  const box = readBoxHeader(head, 0, offset, size, path.basename(file));
  if (box === undefined || box.type !== type || box.size < 8 || offset + box.size > size)
    throw originError('corrupt-media', `expected a ${type} box at ${offset}`, { subject: path.basename(file) });
  return box.size;
}

/** The .ismc of a server manifest: its `clientManifestRelativePath`, else `<name>.ismc` beside it. */
function ismcOf(ism: string, meta: readonly MetaEntry[]): string {
  const named = meta.find((m) => m.name === 'clientManifestRelativePath')?.content;
  const name = named ?? path.basename(ism).replace(/\.ism$/i, '.ismc');
  if (name.split('/').some((s) => s === '..' || s === '' || s === '.'))
    throw originError(
      'forbidden',
      `clientManifestRelativePath "${name.slice(0, 64)}" leaves the presentation's directory`,
    );
  return path.join(path.dirname(ism), ...name.split('/'));
}

/** Most chunks read from one stream of an .ismc (a bound against a hostile file). */
const MAX_CHUNKS = 1 << 20;

/**
 * The start time of every chunk of every StreamIndex (by Name) of a client manifest (MS-SSTR
 * §2.2.2.6): `t` when given, else the previous start plus its `d`; `r` repeats a chunk (counting
 * it: `r="3"` is three chunks). Pure.
 */
export function chunkTimes(ismc: string): Map<string, bigint[]> {
  const out = new Map<string, bigint[]>();
  for (const m of ismc.matchAll(/<StreamIndex\b([^>]*)>([\s\S]*?)<\/StreamIndex>/g)) {
    const name = /\bName="([^"]*)"/.exec(m[1]!)?.[1] ?? /\bType="([^"]*)"/.exec(m[1]!)?.[1];
    if (name === undefined) continue;
    const times: bigint[] = [];
    let next = 0n;
    for (const c of m[2]!.matchAll(/<c\b([^>]*?)\/?>/g)) {
      const num = (a: string): bigint | undefined => {
        const v = new RegExp(`\\b${a}="(\\d{1,20})"`).exec(c[1]!)?.[1];
        return v === undefined ? undefined : BigInt(v);
      };
      const d = num('d') ?? 0n;
      let t = num('t') ?? next;
      for (let r = Number(num('r') ?? 1n); r > 0 && times.length < MAX_CHUNKS; r--, t += d) times.push(t);
      next = t;
    }
    out.set(name, times);
  }
  return out;
}

/** The track a Smooth URL names: its bitrate, and its trackName (else its element's name). */
function findTrack(tracks: readonly IsmTrack[], bitrate: number, name: string): IsmTrack | undefined {
  return tracks.find(
    (t) => t.systemBitrate === bitrate && (t.params.find((p) => p.name === 'trackName')?.value ?? t.element) === name,
  );
}

function etagOf(
  file: string,
  stat: { mtimeMs: number; size: number; version?: string },
  at: number,
  n: number,
): string {
  const h = createHash('sha1').update(`${file}\n${stat.version ?? stat.mtimeMs}\n${stat.size}\n${at}\n${n}`);
  return `"p${h.digest('base64url').slice(0, 22)}"`;
}
