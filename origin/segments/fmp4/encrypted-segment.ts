// Protected fMP4 media segments (ISO/IEC 23001-7 over ISO/IEC 23009-1 §6.3.4 DASH): the clear
// segment's boxes (media-segment.ts) with `saiz`/`saio`/`senc` in each traf, and the sample bytes
// read into memory and encrypted (drm/sample-cipher.ts) instead of streamed from the file. One
// segment is buffered per request; nothing is cached but the key material (drm/ivs.ts).
// Which tracks are encrypted: video (H.264) and audio (AAC, AC-3, E-AC-3); text never is.

import { originError } from '../../errors';
import { ByteSource, canReadInto, SourceOpener, withSource } from '../../io/source';
import { ParameterSets } from '../../media/h264-slice';
import { parseSourceMoof } from '../../media/traf-layout';
import { samplesOfMoof } from '../../media/samples';
import { trackHeaderOf } from '../../media/moov';
import type { CencProtection } from '../../model/protection';
import { Presentation, PresentationTrack, ticksIn } from '../../model/presentation';
import type { Segment } from '../../model/timeline';
import { avcSubsamples } from '../../drm/subsamples';
import { isEncryptedTrack } from '../../drm/encrypted-tracks';
import { cbcsEncrypt, cencEncryptSamples, CencSample, Pattern } from '../../drm/sample-cipher';
import { trackIvs, TrackIvs } from '../../drm/ivs';
import { SampleAuxInfo, TrackEncryption } from './encryption-boxes';
import { brandBox, serialize } from '../box-writer';
import { mdatHeader, readFragmentMoof, reboxFragment, STYP_COMPATIBLE_BRANDS, STYP_MAJOR_BRAND } from './media-segment';

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

/** The protected fMP4 media segment `segment` of `track`, whole, and the source's size when read. */
/** How a segment is encrypted and boxed: DASH/HLS fMP4 or Smooth (PIFF). */
export interface EncryptedAs {
  protection: CencProtection;
  mode: 'smooth' | 'fmp4';
}

export function readEncryptedSegment(
  open: SourceOpener,
  track: PresentationTrack,
  segment: Segment,
  presentation: Presentation,
  as: EncryptedAs,
): Promise<{ bytes: Uint8Array; fileSize: number }> {
  return withSource(open, track.src, async (source) => ({
    bytes: await encryptedSegment(source, track, segment, presentation, as),
    fileSize: source.size,
  }));
}

async function encryptedSegment(
  source: ByteSource,
  track: PresentationTrack,
  s: Segment,
  p: Presentation,
  { protection, mode }: EncryptedAs,
): Promise<Uint8Array> {
  const f = track.fragments;
  // Smooth keeps the source's tfxd, on its own timeline (segment-parts.ts does the same in clear).
  const smoothShift = s.sourceTime - s.smoothTime;
  const trackId = track.properties.trackID;
  const shift = ticksIn(p.origin, track.properties.TimeScale);
  const encryption = trackEncryption(track, protection);
  const clear = encryption === undefined || inClearLead(track, s, protection);
  const cipher = encryption === undefined ? undefined : new SampleEncryptor(track, protection);
  const fragments = [];
  const payloads: Uint8Array[] = [];
  for (let i = s.first; i < s.first + s.count; i++) {
    const offset = f.offsets[i]!;
    const moof = await readFragmentMoof(source, offset);
    const time = mode === 'smooth' ? f.times[i]! - smoothShift : f.times[i]! - shift;
    const common = {
      sequenceNumber: i + 1,
      baseMediaDecodeTime: time,
      keepTfxd: mode === 'smooth',
      ...(mode === 'smooth' ? { tfxdTime: time } : {}),
      headers: track.headers,
      fileSize: source.size,
      fileName: track.src,
    };
    const plain = reboxFragment(moof, offset, trackId, common);
    const payload = await readRanges(source, plain.data);
    payloads.push(payload);
    if (cipher === undefined) {
      fragments.push(plain);
      continue;
    }
    const samples = samplesOfMoof(moof, offset, {
      trackId,
      trex: trackHeaderOf(track).trexDefaults,
      baseTime: f.times[i]!,
      fragment: i,
      shift,
      fileSize: source.size,
    });
    const perTraf = parseSourceMoof(moof, offset)
      .filter((t) => t.tfhd.trackId === trackId)
      .map((t) => t.truns.reduce((n, r) => n + r.sampleCount, 0));
    const aux = clear ? undefined : cipher.encrypt(payload, samples, i);
    const trafs = perTraf.map((count, t) => {
      if (aux === undefined) return undefined;
      const before = perTraf.slice(0, t).reduce((a, b) => a + b, 0);
      return aux.slice(before, before + count);
    });
    const description = clear ? 2 : 1;
    const piff = mode === 'smooth';
    fragments.push(
      reboxFragment(moof, offset, trackId, {
        ...common,
        encryption: { sampleDescriptionIndex: description, trafs, piff },
      }),
    );
  }
  // Smooth fragments have no styp (MS-SSTR §2.2.4: moof + mdat).
  const pieces = mode === 'smooth' ? [] : [serialize(brandBox('styp', STYP_MAJOR_BRAND, 0, STYP_COMPATIBLE_BRANDS))];
  fragments.forEach((x, j) => pieces.push(x.moof, mdatHeader(payloads[j]!.byteLength), payloads[j]!));
  return Buffer.concat(pieces);
}

/** Concatenates reads of `ranges` into one new buffer (never a view of a shared read buffer). */
async function readRanges(
  source: ByteSource,
  ranges: ReadonlyArray<{ offset: number; length: number }>,
): Promise<Uint8Array> {
  const out = new Uint8Array(ranges.reduce((n, r) => n + r.length, 0));
  let at = 0;
  for (const r of ranges) {
    // Straight into the buffer when the source can (the server's kept handles): one copy less.
    if (canReadInto(source)) await source.readInto(out.subarray(at, at + r.length), r.offset, r.length);
    else out.set(await source.read(r.offset, r.length), at);
    at += r.length;
  }
  return out;
}

/** Encrypts the samples of a track's fragments, keeping what every sample needs once. */
class SampleEncryptor {
  private readonly ivs: TrackIvs;
  private readonly video: { lengthSize: number; parameterSets: Uint8Array[] } | undefined;

  constructor(
    private readonly track: PresentationTrack,
    private readonly p: CencProtection,
  ) {
    this.ivs = trackIvs(track, p);
    const codec = trackHeaderOf(track).codec;
    this.video = codec?.kind === 'avc' ? codec : undefined;
  }

  /** Encrypts `payload` (the fragment's samples back to back) in place; the aux info of each sample. */
  encrypt(payload: Uint8Array, samples: ReadonlyArray<{ size: number }>, fragment: number): SampleAuxInfo[] {
    const { key } = this.p.key;
    const sets = this.video === undefined ? undefined : new ParameterSets(this.video.parameterSets);
    const out: SampleAuxInfo[] = [];
    const batch: CencSample[] = [];
    let at = 0;
    samples.forEach((s, k) => {
      const sample = payload.subarray(at, at + s.size);
      at += s.size;
      const subsamples =
        this.video === undefined ? undefined : avcSubsamples(sample, this.video.lengthSize, sets!, this.p.scheme);
      if (this.p.scheme === 'cenc') {
        const iv8 = this.ivs.sampleIv(fragment, k);
        batch.push({ sample, iv8, subsamples });
        out.push({ iv: iv8, subsamples });
      } else {
        const pattern = this.video === undefined ? WHOLE_BLOCKS : VIDEO_PATTERN;
        cbcsEncrypt(key, this.ivs.constantIv, sample, pattern, subsamples);
        out.push({ iv: new Uint8Array(0), subsamples });
      }
    });
    if (batch.length > 0) cencEncryptSamples(key, batch);
    if (at !== payload.byteLength) {
      throw originError('corrupt-media', `samples of ${at} bytes in a ${payload.byteLength}-byte fragment payload`, {
        subject: this.track.src,
      });
    }
    return out;
  }
}
