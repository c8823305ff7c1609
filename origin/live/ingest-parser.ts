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
// header's bytes (ftyp + moov, what every archive file starts with) and each fragment's moof+mdat.

import { OriginError, originError } from '../errors';
import { parseMoof } from '../media/boxes';
import { MoovTrack, readMoov } from '../media/moov';
import { Box } from './box-stream';

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
  /** moof + mdat. */
  bytes: Uint8Array;
  /** The fragment carried `lmsg` (DASH-IF ingest: the last segment of its track). */
  last: boolean;
}

export type IngestEvent =
  { kind: 'header'; header: IngestHeader } | { kind: 'fragment'; fragment: IngestFragment } | { kind: 'end' };

export class IngestParser {
  private ftyp: Uint8Array | undefined;
  private manifest: string | undefined;
  private header: IngestHeader | undefined;
  private moof: Box | undefined;
  private lmsg = false;

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
        return { kind: 'header', header: this.readHeader(box) };
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
        return { kind: 'end' };
      default:
        // prft, emsg, free, skip, sidx, and the deprecated StreamManifestBox: nothing to keep.
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
    const bytes = new Uint8Array(moof.bytes.byteLength + mdat.bytes.byteLength);
    bytes.set(moof.bytes, 0);
    bytes.set(mdat.bytes, moof.bytes.byteLength);
    const last = this.lmsg;
    this.lmsg = false;
    return {
      kind: 'fragment',
      fragment: {
        trackId: traf.trackId,
        time: traf.baseTime,
        duration: traf.duration,
        keyframe: traf.startsWithSync,
        bytes,
        last,
      },
    };
  }
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
