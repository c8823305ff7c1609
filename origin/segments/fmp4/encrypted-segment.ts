// Protected fMP4 media segments (ISO/IEC 23001-7 over ISO/IEC 23009-1 §6.3.4 DASH): the clear
// segment's boxes (media-segment.ts) with `saiz`/`saio`/`senc` in each traf, and the sample bytes
// read into memory and encrypted (drm/sample-cipher.ts) instead of streamed from the file. One
// segment is buffered per request; nothing is kept here but the key material (drm/ivs.ts) and the
// parsed avcC (drm/subsamples.ts). A build also gives the segment's layout, which
// encrypted-layout.ts keeps to make it again from one read; the optional cache of whole segments
// is the server's (server/handlers.ts, PlayoutContext.encrypted). The keyframes of HLS I-frame segments are
// encrypted here too, as in their media segments (encryptKeyframe).
// Which tracks are encrypted: video (H.264) and audio (AAC, AC-3, E-AC-3); text never is.
//
// The cost is the cipher's and one read (docs/design/drm.md "Cost and caching"): the segment's
// fragments are read in one go into a buffer of their own, each moof is parsed once, the sample
// data is encrypted where it lies in that buffer, and the reply is the new boxes and views of it
// (parts), not a joined copy.

import { originError } from '../../errors';
import { BufferLoan, BufferPool } from '../../io/buffers';
import { ByteSource, canReadInto, SourceOpener, SpanSource, withSource } from '../../io/source';
import { trackHeaderOf } from '../../media/moov';
import { ByteRange, trafSampleSizes } from '../../media/traf-layout';
import type { CencProtection } from '../../model/protection';
import { Presentation, PresentationTrack, ticksIn } from '../../model/presentation';
import type { Segment } from '../../model/timeline';
import { avcParameterSets, avcSubsamples } from '../../drm/subsamples';
import { isEncryptedTrack } from '../../drm/encrypted-tracks';
import type { Pattern } from '../../drm/sample-cipher';
import { CipherSetup, FragmentCipher, PlannedSample } from '../../drm/fragment-cipher';
import { continuousIvs, trackIvs, TrackIvs } from '../../drm/ivs';
import { CENC_IV_SIZE, SampleAuxInfo, TrackEncryption } from './encryption-boxes';
import { brandBox, serialize } from '../box-writer';
import {
  mdatHeader,
  parseTrackFragment,
  readFragmentMoof,
  SegmentPart,
  STYP_COMPATIBLE_BRANDS,
  STYP_MAJOR_BRAND,
  writeTrackFragment,
} from './media-segment';
import { fragmentSequenceNumber } from '../../model/live-window';

const VIDEO_PATTERN: Pattern = { crypt: 1, skip: 9 };
const WHOLE_BLOCKS: Pattern = { crypt: 0, skip: 0 };

/** The encryption an init segment of `track` declares, or undefined for a track left clear (text). */
export function trackEncryption(track: PresentationTrack, p: CencProtection): TrackEncryption | undefined {
  if (!isEncryptedTrack(track)) return undefined;
  const h = trackHeaderOf(track);
  return {
    scheme: p.scheme,
    kid: p.key.kid,
    constantIv: p.scheme === 'cbcs' ? trackIvs(track, p).constantIv : undefined,
    pattern: h.handler === 'vide' ? VIDEO_PATTERN : WHOLE_BLOCKS,
    clearEntry: p.clearLeadSeconds > 0,
    pssh: p.systems.flatMap((s) => (s.pssh === undefined ? [] : [s.pssh])),
  };
}

/** Whether `segment` of `track` lies in the clear lead (it starts before clearLeadSeconds). */
export function inClearLead(track: PresentationTrack, segment: Segment, p: CencProtection): boolean {
  return p.clearLeadSeconds > 0 && Number(segment.time) / track.properties.TimeScale < p.clearLeadSeconds;
}

/** How a segment is encrypted and boxed: DASH/HLS fMP4 or Smooth (PIFF). */
export interface EncryptedAs {
  protection: CencProtection;
  mode: 'smooth' | 'fmp4';
  /**
   * Where the read buffer comes from: lent from this pool (the segment's `loan`, to be given back
   * once its bytes are written), or, undefined, a buffer of its own (kept by a cache, or left to
   * the GC).
   */
  pool?: BufferPool;
}

/** A protected media segment: its bytes as parts in memory (no file ranges), and the source's size when read. */
export interface EncryptedSegment {
  parts: SegmentPart[];
  length: number;
  fileSize: number;
  /** The pooled buffer the parts are views of (EncryptedAs.pool), if any. */
  loan?: BufferLoan;
}

/** The protected fMP4 media segment `segment` of `track`. */
export async function readEncryptedSegment(
  open: SourceOpener,
  track: PresentationTrack,
  segment: Segment,
  presentation: Presentation,
  as: EncryptedAs,
): Promise<EncryptedSegment> {
  return (await buildEncryptedSegment(open, track, segment, presentation, as)).segment;
}

/**
 * What an encrypted segment is made of besides its clear sample bytes, kept to make it again
 * from one read (segments/fmp4/encrypted-layout.ts): the span of the source read, and per source
 * fragment its new boxes (styp, moof with the aux info, mdat header), where its sample data lies
 * in the span and how it is encrypted. Depends only on the presentation object (sources, keys),
 * the track, the segment and how it is encrypted (EncryptedAs); holds no key bytes of its own.
 */
export interface SegmentLayout {
  /** The span read: [start, start + length) of the source, bytes. */
  start: number;
  length: number;
  /** The source's size when the layout was made. */
  fileSize: number;
  fragments: LayoutFragment[];
  /** The segment's length, bytes. */
  total: number;
}

/** One source fragment of a SegmentLayout. */
export interface LayoutFragment {
  /** The boxes before its sample data: styp (the first, fMP4), moof, mdat header. */
  head: Uint8Array;
  /** Where its sample data lies in the span, bytes. */
  at: number;
  length: number;
  /** undefined: left clear (a clear lead). */
  cipher: FragmentCipher | undefined;
}

/**
 * readEncryptedSegment, with the segment's layout when it can be made again from one read of its
 * span (undefined: read range by range, or sample data outside its fragment).
 */
export function buildEncryptedSegment(
  open: SourceOpener,
  track: PresentationTrack,
  segment: Segment,
  presentation: Presentation,
  as: EncryptedAs,
): Promise<{ segment: EncryptedSegment; layout: SegmentLayout | undefined }> {
  return withSource(open, track.src, async (source) => {
    const { layout, ...built } = await encryptedSegment(source, track, segment, presentation, as);
    const fileSize = source.size;
    return {
      segment: { ...built, fileSize },
      layout: layout === undefined ? undefined : { ...layout, fileSize },
    };
  });
}

/**
 * Bytes an encrypted segment keeps alive (the encrypted-segment cache's cost): every buffer its
 * parts are views of, whole (the read buffer also holds the source's moofs), once each.
 */
export function encryptedSegmentCost(s: EncryptedSegment): number {
  const buffers = new Set<ArrayBufferLike>();
  let n = 256;
  for (const p of s.parts) {
    n += 64;
    if (p.kind === 'bytes' && !buffers.has(p.bytes.buffer)) {
      buffers.add(p.bytes.buffer);
      n += p.bytes.buffer.byteLength;
    }
  }
  return n;
}

/** The parts of an encrypted segment joined into one buffer (tests, tools). */
export function joinedParts(parts: readonly SegmentPart[]): Uint8Array {
  return Buffer.concat(
    parts.map((x) => {
      if (x.kind !== 'bytes') throw originError('internal', 'an encrypted segment has no file parts');
      return x.bytes;
    }),
  );
}

/** Above this a segment's fragments are not read in one go (reads then go range by range). */
const MAX_SPAN_BYTES = 64 << 20;

let stypBytes: Uint8Array | undefined;

async function encryptedSegment(
  source: ByteSource,
  track: PresentationTrack,
  s: Segment,
  p: Presentation,
  as: EncryptedAs,
): Promise<{ parts: SegmentPart[]; length: number; loan?: BufferLoan; layout?: Omit<SegmentLayout, 'fileSize'> }> {
  const span = await readSpan(source, track, s, as.pool);
  try {
    return {
      ...(await encryptedParts(source, track, s, p, { ...as, span })),
      ...(span?.loan ? { loan: span.loan } : {}),
    };
  } catch (e) {
    // Every read into the buffer has settled (readInto settles only then): it can go back.
    span?.loan?.share(0);
    throw e;
  }
}

async function encryptedParts(
  source: ByteSource,
  track: PresentationTrack,
  s: Segment,
  p: Presentation,
  { protection, mode, span }: EncryptedAs & { span: Span | undefined },
): Promise<{ parts: SegmentPart[]; length: number; layout?: Omit<SegmentLayout, 'fileSize'> }> {
  const f = track.fragments;
  // Smooth keeps the source's tfxd, on its own timeline (segment-parts.ts does the same in clear).
  const smoothShift = s.sourceTime - s.smoothTime;
  const trackId = track.properties.trackID;
  const shift = ticksIn(p.origin, track.properties.TimeScale);
  const encryption = trackEncryption(track, protection);
  const clear = encryption === undefined || inClearLead(track, s, protection);
  const encryptor = clear ? undefined : new SampleEncryptor(track, protection, mode === 'smooth' ? 8 : CENC_IV_SIZE);
  const trexSize = trackHeaderOf(track).trexDefaults.defaultSampleSize;
  const reader = new FragmentReader(source, span);
  const parts: SegmentPart[] = [];
  // The layout, while every fragment's sample data is a view of the span.
  let fragments: LayoutFragment[] | undefined = span === undefined ? undefined : [];
  let length = 0;
  // Smooth fragments have no styp (MS-SSTR §2.2.4: moof + mdat).
  let head: Uint8Array[] =
    mode === 'smooth' ? [] : [(stypBytes ??= serialize(brandBox('styp', STYP_MAJOR_BRAND, 0, STYP_COMPATIBLE_BRANDS)))];
  for (let i = s.first; i < s.first + s.count; i++) {
    const offset = f.offsets[i]!;
    const moof = await reader.moof(offset);
    const time = mode === 'smooth' ? f.times[i]! - smoothShift : f.times[i]! - shift;
    const common = {
      sequenceNumber: fragmentSequenceNumber(track, i),
      baseMediaDecodeTime: time,
      keepTfxd: mode === 'smooth',
      ...(mode === 'smooth' ? { tfxdTime: time } : {}),
      headers: track.headers,
      fileSize: source.size,
      fileName: track.src,
    };
    const parsed = parseTrackFragment(moof, offset, trackId, common);
    const payload = await reader.payload(
      parsed.data,
      parsed.total,
      { offset, length: moof.byteLength },
      offset + f.sizes[i]!,
    );
    const sizes = encryptor === undefined ? [] : parsed.trafs.map(({ traf }) => trafSampleSizes(traf, trexSize));
    const planned = encryptor?.plan(payload, sizes, i);
    planned?.cipher.apply(payload);
    const trafs = planned?.trafs ?? parsed.trafs.map(() => undefined);
    const piff = mode === 'smooth';
    const opts =
      encryption === undefined
        ? common
        : { ...common, encryption: { sampleDescriptionIndex: clear ? 2 : 1, trafs, piff } };
    head.push(writeTrackFragment(parsed, opts), mdatHeader(payload.byteLength));
    const bytes = Buffer.concat(head);
    parts.push({ kind: 'bytes', bytes }, { kind: 'bytes', bytes: payload });
    length += bytes.byteLength + payload.byteLength;
    head = [];
    const at = span === undefined ? -1 : viewAt(span.bytes, payload);
    if (at < 0) fragments = undefined;
    // A copy of its own: `bytes` may be a slice of Node's shared 8 KiB pool, which a kept layout would pin.
    else fragments?.push({ head: new Uint8Array(bytes), at, length: payload.byteLength, cipher: planned?.cipher });
  }
  const layout =
    fragments === undefined
      ? undefined
      : { start: span!.start, length: span!.bytes.byteLength, fragments, total: length };
  return { parts, length, ...(layout === undefined ? {} : { layout }) };
}

/** Where `view` starts in `whole`, when it is a view of it (-1: a copy). */
function viewAt(whole: Uint8Array, view: Uint8Array): number {
  if (view.buffer !== whole.buffer) return -1;
  const at = view.byteOffset - whole.byteOffset;
  return at >= 0 && at + view.byteLength <= whole.byteLength ? at : -1;
}

/** A segment's fragments (moofs and media data, by the fragment table), read at once into a buffer of its own. */
export interface Span {
  start: number;
  bytes: Uint8Array;
  /** When `bytes` are lent from a pool. */
  loan?: BufferLoan;
}

/**
 * The span of segment `s`, or undefined (reads then go to the source range by range): when it
 * is over MAX_SPAN_BYTES, or when the table's fragments [offset, offset + size) are not in order
 * and apart, which FragmentReader's views rely on.
 */
export async function readSpan(
  source: ByteSource,
  track: PresentationTrack,
  s: Segment,
  pool: BufferPool | undefined,
): Promise<Span | undefined> {
  const f = track.fragments;
  const last = s.first + s.count - 1;
  if (!(s.count > 0 && s.first >= 0 && last < f.count)) return undefined;
  for (let i = s.first; i <= last; i++) {
    const [offset, size] = [f.offsets[i]!, f.sizes[i]!];
    if (!(Number.isSafeInteger(offset) && Number.isSafeInteger(size) && offset >= 0 && size > 0)) return undefined;
    if (i > s.first && offset < f.offsets[i - 1]! + f.sizes[i - 1]!) return undefined;
  }
  const start = f.offsets[s.first]!;
  const end = f.offsets[last]! + f.sizes[last]!;
  if (end > source.size || end - start > MAX_SPAN_BYTES) return undefined;
  const length = end - start;
  // A pooled buffer spares a fresh one's page faults and GC work per request (profiled: the read
  // of a 720p cenc segment into a new buffer cost about a tenth of its CPU; io/buffers.ts).
  const loan = pool === undefined ? undefined : BufferLoan.take(pool, length);
  // A plain view: Buffer#subarray costs more, and the ciphers take a view per sample.
  const bytes = loan?.bytes ?? plainBytes(Buffer.allocUnsafe(length));
  try {
    // Never a view of the source's own buffer (an in-memory source): the samples are encrypted in place.
    if (canReadInto(source)) await source.readInto(bytes, start, length);
    else bytes.set(await source.read(start, length));
  } catch (e) {
    loan?.share(0);
    throw e;
  }
  return { start, bytes, ...(loan === undefined ? {} : { loan }) };
}

function plainBytes(b: Buffer): Uint8Array {
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

/**
 * The reads of one segment's fragments. The sample data of a fragment is handed out as a view of
 * the span, to be encrypted in place, only when it is one range inside that fragment's own
 * [moof end, offset + size): nothing read later (the next moofs, the next fragments' data) lies
 * there. Anything else (data in several ranges, or outside its fragment) is copied from the source,
 * as range-by-range reads would give it.
 */
class FragmentReader {
  constructor(
    private readonly source: ByteSource,
    private readonly span: Span | undefined,
  ) {}

  /** The moof at `offset` (readFragmentMoof's checks and errors). */
  moof(offset: number): Promise<Uint8Array> {
    const span = this.span;
    return readFragmentMoof(
      span === undefined ? this.source : new SpanSource(this.source, span.start, span.bytes),
      offset,
    );
  }

  /**
   * The sample data `data` (`total` bytes) of the fragment whose moof is `moof` and whose bytes
   * are [moof.offset, end) by the fragment table: bytes the caller may change.
   */
  async payload(data: readonly ByteRange[], total: number, moof: ByteRange, end: number): Promise<Uint8Array> {
    const span = this.span;
    const one = data.length === 1 ? data[0]! : undefined;
    if (
      span !== undefined &&
      one !== undefined &&
      one.offset >= moof.offset + moof.length &&
      one.offset + one.length <= end
    ) {
      const at = one.offset - span.start;
      return span.bytes.subarray(at, at + one.length);
    }
    const out = new Uint8Array(total);
    let at = 0;
    for (const r of data) {
      const into = out.subarray(at, at + r.length);
      if (canReadInto(this.source)) await this.source.readInto(into, r.offset, r.length);
      else into.set(await this.source.read(r.offset, r.length));
      at += r.length;
    }
    return out;
  }
}

/** Works out how a track's fragments are encrypted, keeping what every sample needs once. */
class SampleEncryptor {
  private readonly ivs: TrackIvs;
  private readonly video: { lengthSize: number; parameterSets: Uint8Array[] } | undefined;
  private readonly setup: CipherSetup;

  constructor(
    private readonly track: PresentationTrack,
    private readonly p: CencProtection,
    /** cenc: 8 (Smooth: a keystream per sample) or 16 (a keystream per fragment): drm/ivs.ts. */
    private readonly ivSize: 8 | 16,
  ) {
    this.ivs = trackIvs(track, p);
    const h = trackHeaderOf(track);
    this.video = h.codec?.kind === 'avc' ? h.codec : undefined;
    this.setup = {
      key: p.key.key,
      scheme: p.scheme,
      constantIv: this.ivs.constantIv,
      pattern: this.video === undefined ? WHOLE_BLOCKS : VIDEO_PATTERN,
    };
  }

  /**
   * How `payload` (the clear samples of source fragment `index` back to back, `sizes` per traf, or
   * its first ones) is encrypted: the cipher to apply to it, and the aux info of each sample, per
   * traf. Sample k of the fragment (counted across its trafs) gets IV k (drm/ivs.ts). Reads the
   * payload (slice headers), changes nothing.
   */
  plan(
    payload: Uint8Array,
    sizes: ReadonlyArray<readonly number[]>,
    index: number,
  ): { trafs: SampleAuxInfo[][]; cipher: FragmentCipher } {
    const total = sizes.reduce((n, list) => list.reduce((a, b) => a + b, n), 0);
    if (total !== payload.byteLength) {
      throw originError('corrupt-media', `samples of ${total} bytes in a ${payload.byteLength}-byte fragment payload`, {
        subject: this.track.src,
      });
    }
    // The avcC's sets, parsed once per track; in-band SPS/PPS count from here to the fragment's end.
    const sets = this.video === undefined ? undefined : avcParameterSets(this.video.parameterSets);
    const cenc = this.p.scheme === 'cenc';
    const count = sizes.reduce((n, l) => n + l.length, 0);
    const samples: PlannedSample[] = [];
    let at = 0;
    const trafs = sizes.map((list) =>
      list.map((size): SampleAuxInfo => {
        const sample = payload.subarray(at, at + size);
        const subsamples =
          this.video === undefined ? undefined : avcSubsamples(sample, this.video.lengthSize, sets!, this.p.scheme);
        samples.push({ at, size, iv: NO_IV, subsamples });
        at += size;
        return { iv: NO_IV, subsamples };
      }),
    );
    if (cenc) {
      // 16-byte IVs follow from each sample's protected bytes (continuousIvs), 8-byte ones from its index.
      const ivs =
        this.ivSize === 16
          ? continuousIvs(
              this.ivs.sampleIv(index, 0),
              samples.map((s) => protectedBytes(s)),
            )
          : this.ivs.fragmentIvs(index, count);
      const n = this.ivSize;
      samples.forEach((s, k) => (s.iv = ivs.subarray(n * k, n * (k + 1))));
      let k = 0;
      for (const list of trafs) for (const aux of list) aux.iv = samples[k++]!.iv;
    }
    return { trafs, cipher: new FragmentCipher(this.setup, samples, payload.byteLength) };
  }
}

const NO_IV = new Uint8Array(0);

/** The bytes a sample protects: its subsamples' protected parts, or all of it. */
function protectedBytes({ size, subsamples }: PlannedSample): number {
  return subsamples === undefined ? size : subsamples.reduce((n, s) => n + s.protected, 0);
}

/** How an I-frame segment's keyframe is encrypted (encryptKeyframe). */
export interface KeyframeEncryption {
  /** tfhd sample_description_index: 1, or 2 for the clear entry of a clear lead. */
  sampleDescriptionIndex: number;
  /** Its `senc` entry; undefined: left clear (the clear lead). */
  aux: SampleAuxInfo | undefined;
}

/**
 * The keyframe of an I-frame segment, the first sample of source fragment `fragment`, encrypted
 * in place exactly as in the media segment `segment` that holds that fragment: the same IV (sample
 * 0 of the fragment: drm/ivs.ts), the same subsamples (the avcC's parameter sets and the sample's
 * own in-band ones, as it opens its fragment), clear when that segment is in the clear lead. So a
 * player's I-frame and media segments are one encryption of the same bytes. Undefined: the track
 * is not encrypted.
 */
export function encryptKeyframe(
  track: PresentationTrack,
  segment: Segment,
  protection: CencProtection,
  fragment: number,
  sample: Uint8Array,
): KeyframeEncryption | undefined {
  if (trackEncryption(track, protection) === undefined) return undefined;
  if (inClearLead(track, segment, protection)) return { sampleDescriptionIndex: 2, aux: undefined };
  const { trafs, cipher } = new SampleEncryptor(track, protection, CENC_IV_SIZE).plan(
    sample,
    [[sample.byteLength]],
    fragment,
  );
  cipher.apply(sample);
  return { sampleDescriptionIndex: 1, aux: trafs[0]![0]! };
}
