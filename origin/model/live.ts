// What a live channel adds to the one presentation model (docs/design/live.md, "A channel as a
// presentation"): a small description on the presentation and, per track, the archive files its
// fragments live in. The writers stay functions of a view; they read `live` where live output
// differs from VOD (DASH @type, HLS ENDLIST) and nowhere else.

/** A live channel's presentation-wide facts (origin/live/channel-presentation.ts builds them). */
export interface LiveDescription {
  /**
   * The channel has ended (every track's end of stream, `stopped`): DASH static, HLS ENDLIST
   * (ISO/IEC 23009-1 §5.4.1 end of a dynamic presentation; RFC 8216 §6.2.1).
   */
  ended: boolean;
  /** When the channel last changed (channel.json `updated`), ms since 1970: DASH @publishTime. */
  publishedMs: number;
  /** The DVR window, seconds (`dvr_window_length`): how far back manifests list media. */
  dvrWindowSeconds: number;
  /**
   * The channel anchor, seconds since 1970 (0: the Unix epoch): output time 0, DASH
   * @availabilityStartTime, the zero of HLS media sequence numbers. Fixed, so that two origins
   * fed by the same encoders write the same `$Time$`, MSN and PDT.
   */
  anchorSeconds: number;
  /** The end of the newest fragment over the media tracks, seconds from the anchor. */
  edgeSeconds: number;
  /** The first fragment start over the media tracks still archived, seconds from the anchor. */
  archiveStartSeconds: number;
}

/** One archive file of a track, placed on the track's byte axis. */
export interface ArchiveFileSpan {
  /** Absolute path of the archive file (ftyp + moov, then moof + mdat …). */
  path: string;
  /** Where the file's byte 0 sits on the track's byte axis (the fragment table's offsets). */
  base: number;
  /** Bytes of the file when its index was read: published fragments lie below it. */
  size: number;
}

/**
 * The archive files of a live track. A track spans several files; its fragment table's offsets
 * are on one byte axis where file k starts at `files[k].base`, so every segment reader reads a
 * live track through one ByteSource (io/spanning-source.ts), a read crossing files being read as
 * two, and `fileOf` names each fragment's file.
 */
export interface TrackArchiveFiles {
  files: readonly ArchiveFileSpan[];
  /** Index into `files` of each fragment. */
  fileOf: Uint16Array;
  /**
   * Source times (track timescale) of the latest fragments that broke the track's timeline (an
   * encoder restarted with a new anchor), oldest first, and how many there were ever: persisted
   * in channel.json (live/status.ts), so every origin process rebuilds the same discontinuities.
   */
  restarts: readonly bigint[];
  discontinuities: number;
  /**
   * The newest wall-clock mapping of the track's ingest `prft` boxes whose flags give one
   * (ISO/IEC 14496-12 §8.16.5): the LL-DASH ProducerReferenceTime (manifests/dash-low-latency.ts).
   */
  producer?: ProducerClock;
}

/** A media time of a live track and the wall-clock time the encoder says it was produced at. */
export interface ProducerClock {
  /** Source time (track timescale) of the fragment whose `prft` this is. */
  fragment: bigint;
  /** Source time, track timescale. */
  mediaTime: bigint;
  /** Milliseconds since 1970. */
  wallClockMs: number;
  /** ISO/IEC 23009-1 §5.12.3 ProducerReferenceTime@type, from the prft's flags. */
  type: 'encoder' | 'captured';
}
