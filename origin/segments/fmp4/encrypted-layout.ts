// Encrypted segments made again from their layout (docs/design/drm.md "Cost and caching"). The
// first request for a segment builds it the plain way (encrypted-segment.ts: moofs parsed, slice
// headers read, aux info boxed, samples encrypted) and keeps its layout: the span of the source
// it read, the new boxes of each fragment and each fragment's FragmentCipher (drm/fragment-cipher.ts:
// sample offsets, IVs, subsamples). A later request for it reads the span, applies the ciphers in
// place and answers the kept boxes and views of the span: the read and the AES, nothing else. The
// bytes are the plain build's (test/origin/drm/encrypted-layout.test.ts).
//
// Layouts are kept per presentation object (PresentationMemo: a changed .ism or source is a new
// object, whose requests never see the old layouts), least recently used out, within a byte
// bound; they hold the IVs (public, in every senc) and no key bytes: the ciphers refer to the
// presentation's own CencProtection, as the key cache (drm/ivs.ts) does.

import { PresentationIds, PresentationMemo } from '../../cache/request-caches';
import type { CacheCounts } from '../../cache/presentation-store';
import { SourceOpener, withSource } from '../../io/source';
import type { CencProtection } from '../../model/protection';
import type { Presentation, PresentationTrack } from '../../model/presentation';
import type { Segment } from '../../model/timeline';
import { buildEncryptedSegment, EncryptedAs, EncryptedSegment, readSpan, SegmentLayout } from './encrypted-segment';
import type { SegmentPart } from './media-segment';

/** A layout, or none (a segment this path cannot make again from one read: always built the plain way). */
type Kept = SegmentLayout | null;

/** readEncryptedSegment with the layouts of segments already built kept, within `maxBytes` (0: none). */
export class EncryptedSegments {
  private readonly layouts: PresentationMemo<Kept>;
  private readonly protections = new WeakMap<CencProtection, number>();
  private nextProtection = 1;

  constructor(ids: PresentationIds, maxBytes: number) {
    this.layouts = new PresentationMemo(ids, maxBytes);
  }

  /** The protected fMP4 media segment `segment` of `track`: the bytes readEncryptedSegment gives. */
  async read(
    open: SourceOpener,
    track: PresentationTrack,
    segment: Segment,
    presentation: Presentation,
    as: EncryptedAs,
  ): Promise<EncryptedSegment> {
    let built: EncryptedSegment | undefined;
    const layout = await this.layouts.getAsync(
      presentation,
      this.keyOf(track, segment, as),
      async () => {
        const b = await buildEncryptedSegment(open, track, segment, presentation, as);
        built = b.segment;
        return b.layout ?? null;
      },
      layoutCost,
    );
    if (built !== undefined) return built;
    if (layout === null) return (await buildEncryptedSegment(open, track, segment, presentation, as)).segment;
    return (
      (await fromLayout(open, track, segment, layout, as)) ??
      (await buildEncryptedSegment(open, track, segment, presentation, as)).segment
    );
  }

  counts(): CacheCounts {
    return this.layouts.counts();
  }

  /** Everything a layout depends on besides the presentation object. */
  private keyOf(track: PresentationTrack, s: Segment, { protection, mode }: EncryptedAs): string {
    let id = this.protections.get(protection);
    if (id === undefined) this.protections.set(protection, (id = this.nextProtection++));
    return `${id}\n${mode}\n${track.index}\n${s.first}\n${s.count}\n${s.time}\n${s.sourceTime - s.smoothTime}`;
  }
}

/**
 * The segment made from `layout`: its span read (lent from `as.pool` when given), every
 * fragment's samples encrypted in place, the kept boxes before each. Undefined when the source
 * no longer matches the layout (its size, or the span the fragment table gives).
 */
async function fromLayout(
  open: SourceOpener,
  track: PresentationTrack,
  segment: Segment,
  layout: SegmentLayout,
  as: EncryptedAs,
): Promise<EncryptedSegment | undefined> {
  return withSource(open, track.src, async (source) => {
    if (source.size !== layout.fileSize) return undefined;
    const span = await readSpan(source, track, segment, as.pool);
    if (span === undefined) return undefined;
    try {
      if (span.start !== layout.start || span.bytes.byteLength !== layout.length) {
        span.loan?.share(0);
        return undefined;
      }
      const parts: SegmentPart[] = [];
      for (const f of layout.fragments) {
        const payload = span.bytes.subarray(f.at, f.at + f.length);
        f.cipher?.apply(payload);
        parts.push({ kind: 'bytes', bytes: f.head }, { kind: 'bytes', bytes: payload });
      }
      return {
        parts,
        length: layout.total,
        fileSize: source.size,
        ...(span.loan === undefined ? {} : { loan: span.loan }),
      };
    } catch (e) {
      span.loan?.share(0);
      throw e;
    }
  });
}

/** Bytes a kept layout holds: its boxes and its ciphers' sample lists. */
function layoutCost(kept: Kept): number {
  if (kept === null) return 64;
  let n = 256;
  for (const f of kept.fragments) n += 96 + f.head.byteLength + (f.cipher?.cost ?? 0);
  return n;
}
