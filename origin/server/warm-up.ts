// Start-up warm-up: V8 runs a function in its interpreter until the function has run long enough
// to be worth optimizing. A fresh worker's first request therefore ran the presentation load (the
// tfra parse, the fragment tables) and the manifest writers interpreted: a 2-hour presentation's
// first MPD cost 60–100 ms pinned to one CPU, of which about 15 ms is the work itself (the same
// request for a second, never-seen presentation in a warm process). Before it listens, the server
// answers a few manifests of synthetic 2-hour presentations through the real path (store, index,
// view, writers, ETag), so the first client gets compiled code. Figures: docs/design/performance.md#start-up-warm-up.
//
// The synthetic sources are real fragmented MP4 (ISO/IEC 14496-12 §8.8: moov with mvex, moof+mdat
// fragments with the Smooth tfxd box of MS-SSTR §2.2.4.4, mfra with tfra and mfro) shaped like
// ffmpeg's ismv files: 10 MHz timescale, 2-second fragments, AAC fragments alternating by one tick,
// sizes and offsets of real bitrates. Optimized code is specialised to the values it was trained on
// and discarded at the first value of another kind, so the shapes matter down to how V8 holds a
// number (asStatNumber below). They live in memory (a Storage, io/storage.ts): nothing is
// written to disk. The .ism is the one `origin package` would write for them.

import { performance } from 'node:perf_hooks';
import { originError } from '../errors';
import { box, field, fullBox, serialize, Writable } from '../segments/box-writer';
import { propertiesToIsmTrack } from '../ism/ism-tracks';
import { writeServerManifest } from '../ism/server-manifest';
import { readMediaFile } from '../media/media-file';
import { BufferSource, ByteSource } from '../io/source';
import { assignTrackNames, creatorLine } from '../package/packager';
import { DEFAULT_LIMITS, PresentationStore } from '../cache/presentation-store';
import { FILE_STORAGE, Storage } from '../io/storage';
import { TrackProperties } from '../model/media';
import { TrackSelector } from '../model/view';
import { handlePlayout, newPlayoutContext } from './handlers';
import { decodePath, matchPresentationRoute } from './routes';

export interface WarmUpResult {
  /** Wall time of the whole warm-up. */
  ms: number;
  /** Manifests answered. */
  requests: number;
}

/**
 * Rounds of fresh presentations: each round loads and renders a new one (the caches would answer a
 * repeat without running the code). Three rounds of three 2-hour tracks, measured: fewer left the
 * first real 2-hour MPD partly interpreted; more added start-up time without a gain.
 */
export const WARM_UP_ROUNDS = 3;

const TIMESCALE = 10_000_000;
const FRAGMENTS = 3600;
/** ffmpeg's 2-second AAC fragments at 48 kHz: 20 053 333⅓ ticks, written as 3, 3, 4 (a tick apart). */
const AUDIO_DURATIONS = [20_053_333, 20_053_333, 20_053_334];
const VIDEO_DURATION = 20_000_000;
/** A 640x360 Constrained Baseline level 3.0 SPS with VUI timing (24 fps), and its PPS (x264). */
const SPS = Buffer.from('6742C01EDA0280BFE5C044000003000400000300C03C58BA80', 'hex');
const PPS = Buffer.from('68CE3C80', 'hex');
/** AudioSpecificConfig: AAC-LC, 48 kHz, stereo (ISO/IEC 14496-3 §1.6.2.1). */
const ASC = Buffer.from('1190', 'hex');
const TFXD = Buffer.from('6d1d9b0542d544e680e2141daff757b2', 'hex');
/** Sample flags (§8.8.3.1): a sync sample, and a non-sync one that depends on others. */
const SYNC = 0x02000000;
const NON_SYNC = 0x01010000;

interface SyntheticTrack {
  kind: 'video' | 'audio';
  name: string;
  bitrate: number;
}

const TRACKS: SyntheticTrack[] = [
  { kind: 'video', name: 'warm-up-video-1', bitrate: 1_500_000 },
  { kind: 'video', name: 'warm-up-video-2', bitrate: 800_000 },
  { kind: 'audio', name: 'warm-up-audio', bitrate: 128_000 },
];

/**
 * Answers the manifests of WARM_UP_ROUNDS synthetic presentations through `handlePlayout`, the
 * path of every manifest request: Smooth, DASH, the HLS master and each of its media playlists,
 * HDS. Throws if any of them fails (the caller logs it and serves anyway: a warm-up is never a
 * reason not to start).
 */
export async function warmUp(select: TrackSelector, rounds = WARM_UP_ROUNDS): Promise<WarmUpResult> {
  const started = performance.now();
  await touchFileSystem();
  const files = await syntheticFiles();
  let requests = 0;
  for (let round = 0; round < rounds; round++) {
    // A new store per round: a new presentation to index, as a client's first request finds it.
    const ctx = newPlayoutContext(
      new PresentationStore({ ...DEFAULT_LIMITS, statTtlMs: 60_000 }, new MemoryStorage(files)),
      select,
      1 << 20,
    );
    const ism = `/warm-up/${round}/warm-up.ism`;
    const answer = async (url: string): Promise<string> => {
      const q = url.indexOf('?');
      const route = matchPresentationRoute(decodePath(q < 0 ? url : url.slice(0, q)));
      if (route === undefined) throw originError('internal', `warm-up URL ${url} matches no route`);
      const reply = await handlePlayout(ctx, route, ism, q < 0 ? '' : url.slice(q + 1));
      requests++;
      if (reply.body.type !== 'text')
        throw originError('internal', `warm-up URL ${url} answered bytes, not a manifest`);
      return reply.body.text;
    };
    await answer('/warm-up.ism/Manifest');
    await answer('/warm-up.ism/.mpd');
    const master = await answer('/warm-up.ism/.m3u8');
    for (const uri of playlistUris(master)) await answer(`/warm-up.ism/${uri}`);
    await answer('/warm-up.ism/.f4m');
    ctx.files.close();
  }
  return { ms: performance.now() - started, requests };
}

/**
 * The store's file-system calls once on a real file (this module's own): Node loads parts of
 * fs/promises and starts libuv's thread pool on first use, which was the first request's cost.
 */
async function touchFileSystem(): Promise<void> {
  await FILE_STORAGE.stat(__filename);
  await FILE_STORAGE.readText(__filename);
  const source = await FILE_STORAGE.open(__filename);
  try {
    await source.read(0, Math.min(16, source.size));
  } finally {
    await source.close();
  }
}

/** The media playlist URIs of a master playlist: URI="…" attributes and plain URI lines (RFC 8216 §4.3.4). */
function playlistUris(master: string): string[] {
  const out = new Set<string>();
  for (const line of master.split('\n')) {
    if (line === '') continue;
    if (!line.startsWith('#')) out.add(line.trim());
    else for (const m of line.matchAll(/URI="([^"]+)"/g)) out.add(m[1]!);
  }
  return [...out].filter((u) => u.endsWith('.m3u8'));
}

/**
 * The synthetic presentation: one source per track and the .ism that `origin package` would write
 * for them (the same params, so the track objects the code sees have the shapes of real ones).
 */
export async function syntheticFiles(): Promise<Map<string, ByteSource>> {
  const files = new Map<string, ByteSource>();
  const properties: TrackProperties[] = [];
  const srcs: string[] = [];
  for (const t of TRACKS) {
    const src = `${t.name}.${t.kind === 'video' ? 'ismv' : 'isma'}`;
    const file = new SyntheticSource(src, t);
    files.set(src, file);
    const media = await readMediaFile(file, 'fast');
    properties.push(media.tracks[0]!.properties);
    srcs.push(src);
  }
  assignTrackNames(properties);
  const ism = writeServerManifest(
    { meta: [], paramGroups: [], tracks: properties.map((p, i) => propertiesToIsmTrack(p, srcs[i]!)) },
    creatorLine(),
  );
  files.set('warm-up.ism', new BufferSource('warm-up.ism', Buffer.from(ism, 'utf8')));
  return files;
}

/**
 * One track's fragmented MP4, laid out as a real one of its bitrate (ftyp, moov, FRAGMENTS ×
 * moof+mdat, mfra) but materialized only where read: the boxes are made on demand and the media
 * data reads as zeros. A 1.5 Mbit/s track spans 1.35 GB, so its offsets pass 2^30 as real ones do
 * (V8 keeps smaller integers untagged; code trained only on those is discarded at the first larger one).
 */
class SyntheticSource implements ByteSource {
  readonly size: number;
  private readonly head: Uint8Array;
  private readonly spacing: number;
  private readonly times: Float64Array;
  private readonly templates: Array<{ bytes: Buffer; sequenceAt: number; timeAt: number }>;
  private readonly mfra: Uint8Array;
  private readonly mfraStart: number;

  constructor(
    readonly name: string,
    t: SyntheticTrack,
  ) {
    this.head = serialize(
      box('ftyp', field.fourcc('isml'), field.u32(1), field.fourcc('piff'), field.fourcc('iso2')),
      moov(t),
    );
    const durations = t.kind === 'video' ? [VIDEO_DURATION] : AUDIO_DURATIONS;
    this.spacing = Math.round((t.bitrate * 2) / 8);
    this.templates = durations.map((d) => fragmentTemplate(t.kind, d, this.spacing));
    this.times = new Float64Array(FRAGMENTS);
    for (let i = 1; i < FRAGMENTS; i++) this.times[i] = this.times[i - 1]! + durations[(i - 1) % durations.length]!;
    this.mfraStart = this.head.byteLength + FRAGMENTS * this.spacing;
    // §8.8.9–8.8.11: mfra { tfra version 1 (64-bit time and offset, 1-byte numbers), mfro }. The
    // entries are packed here; the boxes around them come from the box writer.
    const entry = 19;
    const entries = Buffer.alloc(FRAGMENTS * entry, 1);
    for (let i = 0, at = 0; i < FRAGMENTS; i++, at += entry) {
      entries.writeBigUInt64BE(BigInt(this.times[i]!), at);
      entries.writeBigUInt64BE(BigInt(this.offsetOf(i)), at + 8);
    }
    const tfra = fullBox('tfra', 1, 0, field.u32(1), field.u32(0), field.u32(FRAGMENTS), field.bytes(entries));
    const m = serialize(box('mfra', tfra, fullBox('mfro', 0, 0, field.u32(8 + tfra.size + 16))));
    this.mfra = m;
    this.size = asStatNumber(this.mfraStart + m.byteLength);
  }

  private offsetOf(i: number): number {
    return this.head.byteLength + i * this.spacing;
  }

  async read(offset: number, length: number): Promise<Uint8Array> {
    if (offset < 0 || length < 0 || offset + length > this.size)
      throw originError('corrupt-media', `read of ${length} bytes at ${offset} is past the end`, {
        subject: this.name,
      });
    // A new Buffer per read, as a file read gives: the parsers see the objects they see in service.
    const out = Buffer.alloc(length);
    const end = offset + length;
    const put = (bytes: Uint8Array, at: number): void => {
      const from = Math.max(offset, at);
      const to = Math.min(end, at + bytes.byteLength);
      if (from < to) out.set(bytes.subarray(from - at, to - at), from - offset);
    };
    put(this.head, 0);
    const first = Math.max(0, Math.floor((offset - this.head.byteLength) / this.spacing));
    const last = Math.min(FRAGMENTS - 1, Math.floor((end - this.head.byteLength) / this.spacing));
    for (let i = first; i <= last; i++) {
      const tpl = this.templates[i % this.templates.length]!;
      tpl.bytes.writeUInt32BE(i + 1, tpl.sequenceAt);
      tpl.bytes.writeBigUInt64BE(BigInt(this.times[i]!), tpl.timeAt);
      put(tpl.bytes, this.offsetOf(i));
    }
    put(this.mfra, this.mfraStart);
    return out;
  }

  async close(): Promise<void> {}
}

function moov(t: SyntheticTrack): Writable {
  const video = t.kind === 'video';
  const u32s = (...v: number[]): Writable[] => v.map((x) => field.u32(x));
  const matrix = u32s(0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000);
  const entry = video
    ? box(
        'avc1',
        field.zeros(6),
        field.u16(1),
        field.zeros(16),
        field.u16(640),
        field.u16(360),
        ...u32s(0x480000, 0x480000, 0),
        field.u16(1),
        field.zeros(32),
        field.u16(0x18),
        field.i16(-1),
        box(
          'avcC',
          field.u8(1),
          field.u8(SPS[1]!),
          field.u8(SPS[2]!),
          field.u8(SPS[3]!),
          field.u8(0xff),
          field.u8(0xe1),
          field.u16(SPS.byteLength),
          field.bytes(SPS),
          field.u8(1),
          field.u16(PPS.byteLength),
          field.bytes(PPS),
        ),
      )
    : box(
        'mp4a',
        field.zeros(6),
        field.u16(1),
        field.zeros(8),
        field.u16(2),
        field.u16(16),
        field.zeros(4),
        field.u32(48000 * 0x10000),
        // ISO/IEC 14496-1 §7.2.6.5 ES_Descriptor { §7.2.6.6 DecoderConfigDescriptor { §7.2.6.7 DecoderSpecificInfo }, SLConfigDescriptor }.
        fullBox(
          'esds',
          0,
          0,
          field.bytes(
            Buffer.concat([
              Buffer.from('0319000100041140150000000001f4000001f4000502', 'hex'),
              ASC,
              Buffer.from('060102', 'hex'),
            ]),
          ),
        ),
      );
  return box(
    'moov',
    fullBox(
      'mvhd',
      0,
      0,
      ...u32s(0, 0, 1000, 0, 0x10000),
      field.u16(0x100),
      field.zeros(10),
      ...matrix,
      field.zeros(24),
      field.u32(2),
    ),
    box(
      'trak',
      fullBox(
        'tkhd',
        0,
        3,
        ...u32s(0, 0, 1, 0, 0),
        field.zeros(8),
        field.u16(0),
        field.u16(0),
        field.u16(video ? 0 : 0x100),
        field.u16(0),
        ...matrix,
        field.u32(video ? 640 << 16 : 0),
        field.u32(video ? 360 << 16 : 0),
      ),
      box(
        'mdia',
        // §8.4.2.3: 'und' packed as three 5-bit letters.
        fullBox('mdhd', 0, 0, ...u32s(0, 0, TIMESCALE, 0), field.u16(0x55c4), field.u16(0)),
        fullBox(
          'hdlr',
          0,
          0,
          field.u32(0),
          field.fourcc(video ? 'vide' : 'soun'),
          field.zeros(12),
          field.cstring('warm-up'),
        ),
        box(
          'minf',
          video ? fullBox('vmhd', 0, 1, field.zeros(8)) : fullBox('smhd', 0, 0, field.zeros(4)),
          box('dinf', fullBox('dref', 0, 0, field.u32(1), fullBox('url ', 0, 1))),
          box(
            'stbl',
            fullBox('stsd', 0, 0, field.u32(1), entry),
            fullBox('stts', 0, 0, field.u32(0)),
            fullBox('stsc', 0, 0, field.u32(0)),
            fullBox('stsz', 0, 0, field.u32(0), field.u32(0)),
            fullBox('stco', 0, 0, field.u32(0)),
          ),
        ),
      ),
    ),
    box('mvex', fullBox('trex', 0, 0, ...u32s(1, 1, 0, 0, 0))),
  );
}

/**
 * The moof of a fragment of two samples lasting `duration`, as ffmpeg's ismv muxer lays it out, and
 * the header of its mdat, which runs `spacing` bytes from the moof's start; where to set the
 * fragment's sequence number and tfxd time.
 */
function fragmentTemplate(
  kind: 'video' | 'audio',
  duration: number,
  spacing: number,
): { bytes: Buffer; sequenceAt: number; timeAt: number } {
  const first = Math.floor(duration / 2);
  // §8.8.8 trun version 1: data offset, first-sample flags (video), durations and sizes.
  const video = kind === 'video';
  const trunSize = 12 + 4 + 4 + (video ? 4 : 0) + 2 * 8;
  const moofSize = 8 + 16 + 8 + 20 + trunSize + 44;
  const dataBytes = spacing - moofSize - 8;
  const half = Math.floor(dataBytes / 2);
  const moof = box(
    'moof',
    fullBox('mfhd', 0, 0, field.u32(0)),
    box(
      'traf',
      // §8.8.7 tfhd: default-sample-flags present (the flags of the samples after the first).
      fullBox('tfhd', 0, 0x20, field.u32(1), field.u32(video ? NON_SYNC : SYNC)),
      fullBox(
        'trun',
        1,
        video ? 0x000305 : 0x000301,
        field.u32(2),
        field.u32(moofSize + 8),
        ...(video ? [field.u32(SYNC)] : []),
        field.u32(first),
        field.u32(half),
        field.u32(duration - first),
        field.u32(dataBytes - half),
      ),
      box('uuid', field.bytes(TFXD), field.u32(0x01000000), field.u64(0n), field.u64(BigInt(duration))),
    ),
  );
  const bytes = Buffer.from(serialize(moof, field.u32(dataBytes + 8), field.fourcc('mdat')));
  if (moof.size !== moofSize) throw originError('internal', 'warm-up fragment template has an unexpected size');
  return { bytes, sequenceAt: 20, timeAt: moofSize - 16 };
}

const statNumber = new Float64Array(1);

/**
 * `n` as fs.stat gives numbers: read from a Float64Array, which V8 holds as a heap number even when
 * it is a small integer. Sizes and every offset computed from them then have the representation of
 * real ones; code trained on small-integer sizes was discarded at the first real file (measured:
 * parseMfra, "not a Smi").
 */
function asStatNumber(n: number): number {
  statNumber[0] = n;
  return statNumber[0];
}

/** The synthetic files by base name; any directory finds them (each round's own presentation). */
class MemoryStorage implements Storage {
  constructor(private readonly files: Map<string, ByteSource>) {}

  private file(path: string): ByteSource {
    const f = this.files.get(path.slice(path.lastIndexOf('/') + 1));
    if (f === undefined) throw originError('not-found', 'no such file', { subject: path });
    return f;
  }

  async stat(path: string): Promise<{ mtimeMs: number; size: number }> {
    return { mtimeMs: asStatNumber(1_700_000_000_000.5), size: asStatNumber(this.file(path).size) };
  }

  async readText(path: string): Promise<string> {
    const f = this.file(path);
    return Buffer.from(await f.read(0, f.size)).toString('utf8');
  }

  async open(path: string): Promise<ByteSource> {
    return this.file(path);
  }
}
