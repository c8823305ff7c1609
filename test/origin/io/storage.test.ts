// The storage seam (origin/io/storage.ts): every reader of a presentation goes through the store's
// Storage, so an in-memory one (as the start-up warm-up's, server/warm-up.ts) is a drop-in for the
// segment paths as well as for the manifests. Every kind of segment — Smooth fragments, DASH init
// and media segments, MPEG-TS, packed audio, WebVTT, I-frame TS and fMP4, HDS fragments — is served
// from files that exist only in memory (their paths are nowhere on disk), and equals, byte for
// byte, what the file system storage serves of the same files.

import { copyFileSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { PresentationStore } from '../../../origin/cache/presentation-store';
import { BufferSource, ByteSource } from '../../../origin/io/source';
import { FileStat, Storage } from '../../../origin/io/storage';
import { trackKey } from '../../../origin/model/view';
import { handlePlayout, newPlayoutContext, PlayoutContext, Reply } from '../../../origin/server/handlers';
import { decodePath, matchPresentationRoute } from '../../../origin/server/routes';
import { media, runOrigin, tempDir } from '../../helpers/fixtures';
import { selectAll, viewOf } from '../../helpers/presentations';

const FILES = ['video_baseline_400k.ismv', 'audio_eng_64k.isma', 'text_eng.ismt'];
const MEMORY_ROOT = '/in-memory-storage-test';

/** Files by path, in memory only; counts the sources opened. */
class MemoryStorage implements Storage {
  opened = 0;
  constructor(private readonly files: Map<string, Uint8Array>) {}
  private bytes(p: string): Uint8Array {
    const b = this.files.get(p);
    if (b === undefined) throw new Error(`no such file in memory: ${p}`);
    return b;
  }
  async stat(p: string): Promise<FileStat> {
    return { mtimeMs: 1_700_000_000_000, size: this.bytes(p).byteLength };
  }
  async readText(p: string): Promise<string> {
    return Buffer.from(this.bytes(p)).toString('utf8');
  }
  async open(p: string): Promise<ByteSource> {
    this.opened++;
    return new BufferSource(p, this.bytes(p));
  }
}

let dir: string;
let memory: MemoryStorage;
let onDisk: PlayoutContext;
let inMemory: PlayoutContext;

beforeAll(async () => {
  dir = tempDir('origin-storage-');
  for (const f of FILES) copyFileSync(media(f), path.join(dir, f));
  const r = await runOrigin(['package', '-o', path.join(dir, 'p.ism'), ...FILES.map((f) => path.join(dir, f))]);
  if (r.code !== 0) throw new Error(`packaging failed: ${r.stderr}`);
  const files = new Map<string, Uint8Array>();
  for (const f of readdirSync(dir)) files.set(`${MEMORY_ROOT}/${f}`, readFileSync(path.join(dir, f)));
  memory = new MemoryStorage(files);
  const limits = { mediaBytes: 64 << 20, presentations: 16, statTtlMs: 60_000 };
  onDisk = newPlayoutContext(new PresentationStore(limits), selectAll);
  inMemory = newPlayoutContext(new PresentationStore(limits, memory), selectAll);
});

afterAll(() => {
  onDisk.files.close();
  inMemory.files.close();
});

/** A reply's body bytes; a parts body's file ranges taken from `file`'s bytes. */
function bodyOf(reply: Reply, file: (p: string) => Uint8Array): Buffer {
  const b = reply.body;
  if (b.type === 'text') return Buffer.from(b.text);
  if (b.type === 'bytes') return Buffer.from(b.bytes);
  const source = file(b.file);
  const out = Buffer.concat(
    b.parts.map((x) => (x.kind === 'bytes' ? x.bytes : source.subarray(x.offset, x.offset + x.length))),
  );
  expect(out.byteLength).toBe(b.length);
  return out;
}

async function answer(ctx: PlayoutContext, ism: string, url: string): Promise<Reply> {
  const req = matchPresentationRoute(decodePath(url));
  if (req === undefined) throw new Error(`no route for ${url}`);
  return handlePlayout(ctx, req, ism, '');
}

async function both(url: string): Promise<{ disk: Buffer; mem: Buffer; type: string }> {
  const d = await answer(onDisk, path.join(dir, 'p.ism'), url);
  const m = await answer(inMemory, `${MEMORY_ROOT}/p.ism`, url);
  expect(m.contentType).toBe(d.contentType);
  return {
    disk: bodyOf(d, (p) => readFileSync(p)),
    mem: bodyOf(m, (p) => memory['bytes'](p)),
    type: m.body.type,
  };
}

/** Segment URLs of every kind, from the presentation's views and its HLS playlists. */
async function segmentUrls(): Promise<string[]> {
  const p = await inMemory.store.presentation(`${MEMORY_ROOT}/p.ism`);
  const urls: string[] = [];
  const lists: string[] = [];
  for (const { track: t, segments } of viewOf(p, 'smooth').tracks) {
    const name = t.properties.trackName;
    const key = trackKey(t);
    urls.push(`/p.ism/QualityLevels(${t.properties.systemBitrate})/Fragments(${name}=${segments.smoothTime(1)})`);
    urls.push(`/p.ism/dash/p-${key}.dash`);
    if (t.properties.type === 'video') {
      urls.push(`/p.ism/keyframes/p-${key}-2.ts`);
      urls.push(`/p.ism/keyframes/p-${key}-2.m4s`);
    }
  }
  for (const { track, segments } of viewOf(p, 'dash').tracks)
    urls.push(`/p.ism/dash/p-${trackKey(track)}-${segments.time(1)}.dash`);
  const master = (await both('/p.ism/p.m3u8')).mem.toString();
  for (const m of [...master.matchAll(/^(p-[^\s]+\.m3u8)$/gm), ...master.matchAll(/URI="([^"]+\.m3u8)"/g)])
    lists.push(m[1]!);
  for (const list of lists) {
    const text = (await both(`/p.ism/${list}`)).mem.toString();
    const dirOf = list.includes('/') ? list.slice(0, list.lastIndexOf('/') + 1) : '';
    const segments = text.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
    for (const s of segments.slice(0, 2)) urls.push(`/p.ism/${dirOf}${s}`);
  }
  const f4m = (await both('/p.ism/p.f4m')).mem.toString();
  for (const m of f4m.matchAll(/<media url="([^"]+)"/g)) urls.push(`/p.ism/${m[1]}Seg1-Frag1`);
  return urls;
}

test('every kind of segment is served from an in-memory storage, as from the file system', async () => {
  const urls = await segmentUrls();
  const kinds = new Set(urls.map((u) => matchPresentationRoute(decodePath(u))!.route.kind));
  expect([...kinds].sort()).toEqual(
    [
      'dash-init-or-media',
      'hds-fragment',
      'hls-aac',
      'hls-iframe-m4s',
      'hls-iframe-ts',
      'hls-ts',
      'hls-webvtt',
      'smooth-fragment',
    ].sort(),
  );
  const openedBefore = memory.opened;
  for (const url of urls) {
    const { disk, mem, type } = await both(url);
    expect([url, type, mem.byteLength > 0, mem.equals(disk)]).toEqual([url, type, true, true]);
  }
  // The segment readers opened their sources through the storage, never a file of their own.
  expect(memory.opened).toBeGreaterThan(openedBefore);
  expect(inMemory.files.size).toBe(0);
});
