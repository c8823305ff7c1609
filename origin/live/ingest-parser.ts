// What an ingest body says, box by box (pure: boxes in, events out). Both ingest protocols send
// the same shape (docs/guide/live.md#ingest):
//
// - Smooth (Azure fMP4 live ingest §3–4, MS-SSTR §2.2.7): `ftyp`, the Live Server Manifest Box
//   (uuid A5D40B30-E814-11DD-BA2F-0800200C9A66, a SMIL document), `moov`, then `moof`+`mdat`
//   per fragment with a `tfxd` (MS-SSTR §2.2.4.4) for its absolute time; an empty `mfra` ends
//   the stream.
// - CMAF (DASH-IF live media ingest, interface 1): the CMAF header (`ftyp`+`moov`), then CMAF
//   fragments (`styp`? `prft`? `emsg`* `moof` `mdat`) with a `tfdt`; a `styp` with the brand
//   `lmsg` marks the last one. One segment per request is the same with the header sent once.
//
// A fragment is one `moof` of one `traf` and the `mdat` that follows it. The events keep the
// header's bytes (ftyp + moov, what every archive file starts with) and each fragment's bytes:
// its moof+mdat, behind the top-level `emsg` boxes sent before the moof (ISO/IEC 23009-1
// §5.10.3.3), which are timed metadata of that fragment (docs/design/live.md#timed-metadata).
// A `prft` before the moof (ISO/IEC 14496-12 §8.16.5, media/prft.ts) is not kept in the bytes:
// its mapping (media time on the fragment's track timescale ↔ NTP time, flags) rides on the
// fragment into its index record (archive-index.ts), for the LL-DASH ProducerReferenceTime. One
// that does not parse, or names a track the header does not declare, is 400 `ingest-bad-box`;
// one of an unknown version is ignored (§4.2), as is one that no fragment follows.
// Every event is parsed here (origin/media/event-boxes.ts, scte35.ts): the `emsg` boxes, and the
// samples of a metadata track (`urim`: emsg v1, `evte`: emib), so the archive never holds an
// event the output writers would refuse.

import { OriginError, originError } from '../errors';
import { parseMoof } from '../media/boxes';
import { isEventSampleEntry } from '../media/event-index';
import { parseEmsg, parseEventSample } from '../media/event-boxes';
import { MoovTrack, readMoov } from '../media/moov';
import { samplesOfMoof } from '../media/samples';
import { parseSpliceInfoSection } from '../media/scte35';
import { parsePrft, ProducerReference, unwrapMediaTime } from '../media/prft';
import { isScte35, TimedEvent } from '../model/timed-metadata';
import { Box } from './box-stream';
import { ProducerTime } from './archive-index';

/** The `emsg` bytes one fragment may carry (event-index.ts holds a source's to 1 MiB per box). */
export const MAX_FRAGMENT_EMSG_BYTES = 1 << 20;

/** The `prft` boxes one fragment may carry (one per flags value §8.16.5.3 defines, and more). */
const MAX_FRAGMENT_PRFT = 8;

/** MS-SSTR §2.2.7.3 LiveServerManifestBox. */
const LIVE_SERVER_MANIFEST_UUID = 'a5d40b30e81411ddba2f0800200c9a66';

export interface IngestHeader {
  /** ftyp + moov, as sent. */
  init: Uint8Array;
  tracks: MoovTrack[];
  /** The Live Server Manifest's SMIL text (Smooth ingest), when sent. */
  serverManifest: string | undefined;
}

export interface IngestFragment {
  trackId: number;
  /** Decode time of the first sample (tfxd, else tfdt), track timescale. */
  time: bigint;
  /** Track timescale units. */
  duration: number;
  keyframe: boolean;
  /** The emsg boxes sent before the moof, then moof + mdat. */
  bytes: Uint8Array;
  /** The fragment carried `lmsg` (DASH-IF ingest: the last segment of its track). */
  last: boolean;
  /** How many `emsg` boxes lead `bytes`. */
  inband: number;
  /** Its timed metadata: the leading emsg boxes, or the events of a metadata track's samples. */
  events: TimedEvent[];
  /** The `prft` sent before its moof, on its track's timescale. */
  producer?: ProducerTime;
}

export type IngestEvent =
  { kind: 'header'; header: IngestHeader } | { kind: 'fragment'; fragment: IngestFragment } | { kind: 'end' };

export class IngestParser {
  private ftyp: Uint8Array | undefined;
  private manifest: string | undefined;
  private header: IngestHeader | undefined;
  private moof: Box | undefined;
  private lmsg = false;
  /** emsg boxes waiting for the moof they precede. */
  private emsg: Box[] = [];
  private emsgBytes = 0;
  /** prft boxes waiting for the moof they precede, with their offsets. */
  private prft: Array<{ p: ProducerReference; offset: number }> = [];

  /**
   * `known`: the header the channel already has for this stream (one segment per request sends
   * it once), used to read fragments that come without one.
   */
  constructor(private known: IngestHeader | undefined) {}

  /** Whether this body has sent a header of its own. */
  get sentHeader(): boolean {
    return this.header !== undefined;
  }

  /** The events one box makes (none, or one). Errors are OriginErrors with ingest codes. */
  push(box: Box): IngestEvent | undefined {
    try {
      return this.take(box);
    } catch (e) {
      throw asIngestError(e);
    }
  }

  /** At the end of the body: a moof without its mdat is a truncated fragment. */
  end(): void {
    if (this.moof !== undefined)
      throw originError('ingest-bad-box', `the body ends after a moof (at byte ${this.moof.offset}) without its mdat`);
    this.noPendingEmsg('the end of the body');
  }

  /** emsg boxes belong to the fragment after them: one that never comes is metadata lost. */
  private noPendingEmsg(what: string): void {
    const first = this.emsg[0];
    if (first !== undefined)
      throw originError('ingest-bad-box', `an emsg (at byte ${first.offset}) is followed by ${what}, not a fragment`);
  }

  private take(box: Box): IngestEvent | undefined {
    if (this.moof !== undefined && box.type !== 'mdat')
      throw originError(
        'ingest-bad-box',
        `a moof (at byte ${this.moof.offset}) is followed by '${box.type}', not mdat`,
      );
    switch (box.type) {
      case 'ftyp':
        this.ftyp = box.bytes;
        this.manifest = undefined;
        return undefined;
      case 'uuid':
        if (hex(box.bytes.subarray(8, 24)) === LIVE_SERVER_MANIFEST_UUID)
          // uuid (16), version and flags (4), then the SMIL document.
          this.manifest = Buffer.from(box.bytes.subarray(28)).toString('utf8');
        return undefined;
      case 'moov':
        this.noPendingEmsg('a moov');
        this.prft = [];
        return { kind: 'header', header: this.readHeader(box) };
      case 'emsg':
        if ((this.emsgBytes += box.bytes.byteLength) > MAX_FRAGMENT_EMSG_BYTES)
          throw originError(
            'ingest-box-too-large',
            `emsg boxes of over ${MAX_FRAGMENT_EMSG_BYTES} bytes before one fragment (at byte ${box.offset})`,
          );
        this.emsg.push(box);
        return undefined;
      case 'prft': {
        const p = parsePrft(box.bytes.subarray(8), { path: `prft@${box.offset}`, offset: box.offset + 8 });
        if (p === undefined) return undefined;
        if (this.prft.length === MAX_FRAGMENT_PRFT)
          throw originError(
            'ingest-bad-box',
            `over ${MAX_FRAGMENT_PRFT} prft boxes before one fragment (at byte ${box.offset})`,
          );
        this.prft.push({ p, offset: box.offset });
        return undefined;
      }
      case 'styp':
        this.lmsg = hasBrand(box.bytes, 'lmsg');
        return undefined;
      case 'moof':
        if ((this.header ?? this.known) === undefined)
          throw originError(
            'ingest-no-header',
            `a fragment (moof at byte ${box.offset}) before any header (ftyp + moov)`,
          );
        this.moof = box;
        return undefined;
      case 'mdat':
        return this.fragment(box);
      case 'mfra':
        // An empty mfra ends the stream (MS-SSTR §3.3.6, IIS); ffmpeg's CMAF output writes a full
        // one as its trailer, equally the end of what it sends.
        this.noPendingEmsg('an mfra');
        return { kind: 'end' };
      default:
        // free, skip, sidx, and the deprecated StreamManifestBox: nothing to keep.
        return undefined;
    }
  }

  private readHeader(box: Box): IngestHeader {
    if (this.ftyp === undefined)
      throw originError('ingest-bad-box', `a moov (at byte ${box.offset}) without the ftyp that must precede it`);
    const moov = readMoov(box.bytes, 'ingest', 0);
    if (!moov.fragmented) throw originError('ingest-media-type', 'the moov has no mvex: not a fragmented MP4 header');
    if (moov.tracks.length === 0) throw originError('ingest-bad-box', 'the moov declares no tracks');
    const init = new Uint8Array(this.ftyp.byteLength + box.bytes.byteLength);
    init.set(this.ftyp, 0);
    init.set(box.bytes, this.ftyp.byteLength);
    this.header = { init, tracks: moov.tracks, serverManifest: this.manifest };
    return this.header;
  }

  private fragment(mdat: Box): IngestEvent | undefined {
    const moof = this.moof;
    if (moof === undefined) return undefined; // an mdat of its own (no moof): nothing to index
    this.moof = undefined;
    const header = (this.header ?? this.known)!;
    const trexOf = new Map(header.tracks.map((t) => [t.header.trackID, t.header.trexDefaults]));
    const trafs = parseMoof(moof.bytes, 0, (id) => trexOf.get(id));
    if (trafs.length !== 1)
      throw originError('ingest-media-type', `a moof with ${trafs.length} trafs: one track per fragment is archived`);
    const traf = trafs[0]!;
    if (!trexOf.has(traf.trackId))
      throw originError('ingest-no-header', `a fragment of track ${traf.trackId}, which the header does not declare`);
    if (traf.baseTime === undefined)
      throw originError(
        'ingest-bad-box',
        `the fragment at byte ${moof.offset} has neither tfxd nor tfdt: its time is unknown`,
      );
    const emsg = this.emsg;
    this.emsg = [];
    this.emsgBytes = 0;
    const parts = [...emsg.map((b) => b.bytes), moof.bytes, mdat.bytes];
    const bytes = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
    let at = 0;
    for (const p of parts) {
      bytes.set(p, at);
      at += p.byteLength;
    }
    const track = header.tracks.find((t) => t.header.trackID === traf.trackId)!;
    const placed = { time: traf.baseTime, timescale: track.header.timescale };
    const events = emsg.map((b) =>
      parseEmsg(b.bytes.subarray(8), { path: `emsg@${b.offset}`, offset: b.offset + 8 }, placed),
    );
    const entry = track.header.sampleEntry;
    if (isEventSampleEntry(entry))
      events.push(
        ...sampleEvents(
          bytes.subarray(at - moof.bytes.byteLength - mdat.bytes.byteLength),
          track,
          traf.baseTime,
          entry,
        ),
      );
    for (const e of events)
      if (isScte35(e))
        e.splice = parseSpliceInfoSection(e.data, { path: `event ${e.id} (${e.schemeIdUri})`, offset: 0 });
    const last = this.lmsg;
    this.lmsg = false;
    const producer = this.producerOf(header, traf.trackId, traf.baseTime);
    return {
      kind: 'fragment',
      fragment: {
        trackId: traf.trackId,
        time: traf.baseTime,
        duration: traf.duration,
        keyframe: traf.startsWithSync,
        bytes,
        last,
        inband: emsg.length,
        events,
        ...(producer === undefined ? {} : { producer }),
      },
    };
  }

  /**
   * The prft sent before a fragment of `trackId` (at `time`), on that track's timescale: the one
   * naming the fragment's own track, else the last. One naming another track of the header is
   * rescaled from that track's timescale (floored); one naming no track of it is refused.
   */
  private producerOf(header: IngestHeader, trackId: number, time: bigint): ProducerTime | undefined {
    const sent = this.prft;
    this.prft = [];
    const chosen = sent.find((x) => x.p.trackId === trackId) ?? sent[sent.length - 1];
    if (chosen === undefined) return undefined;
    const timescaleOf = (id: number): number | undefined =>
      header.tracks.find((t) => t.header.trackID === id)?.header.timescale;
    const own = timescaleOf(trackId)!;
    const ref = timescaleOf(chosen.p.trackId);
    if (ref === undefined)
      throw originError(
        'ingest-bad-box',
        `the prft at byte ${chosen.offset} names track ${chosen.p.trackId}, which the header does not declare`,
      );
    const near = (time * BigInt(ref)) / BigInt(own);
    const mediaTime = (unwrapMediaTime(chosen.p, near) * BigInt(own)) / BigInt(ref);
    return { ntp: chosen.p.ntp, mediaTime, flags: chosen.p.flags };
  }
}

/** The events of a metadata track's fragment (moof + mdat): every sample parsed as its entry says. */
export function sampleEvents(
  fragment: Uint8Array,
  track: MoovTrack,
  baseTime: bigint,
  kind: 'urim' | 'evte',
): TimedEvent[] {
  const moofSize = new DataView(fragment.buffer, fragment.byteOffset, 4).getUint32(0);
  const samples = samplesOfMoof(fragment.subarray(0, moofSize), 0, {
    trackId: track.header.trackID,
    trex: track.header.trexDefaults,
    baseTime,
    fragment: 0,
    shift: 0n,
    fileSize: fragment.byteLength,
  });
  const out: TimedEvent[] = [];
  for (const s of samples) {
    const at = {
      path: `${kind} sample@${s.offset}`,
      offset: s.offset,
      time: s.sourceTime,
      timescale: track.header.timescale,
    };
    out.push(...parseEventSample(fragment.subarray(s.offset, s.offset + s.size), kind, at));
  }
  return out;
}

/** Whether a styp/ftyp lists `brand` as its major or a compatible brand (§4.3). */
function hasBrand(box: Uint8Array, brand: string): boolean {
  for (let at = 8; at + 4 <= box.byteLength; at += 4) {
    if (at === 12) continue; // minor_version
    if (String.fromCharCode(box[at]!, box[at + 1]!, box[at + 2]!, box[at + 3]!) === brand) return true;
  }
  return false;
}

function hex(b: Uint8Array): string {
  return Buffer.from(b).toString('hex');
}

/** Errors of the box readers (corrupt-media, unsupported-media) in the ingest's codes. */
function asIngestError(e: unknown): unknown {
  if (!(e instanceof OriginError) || e.code.startsWith('ingest-')) return e;
  if (e.kind === 'unsupported-media') return originError('ingest-media-type', e.message);
  if (e.kind === 'corrupt-media') return originError('ingest-bad-box', e.message);
  return e;
}
