// The live options of a publishing point (`origin package -o <ch>.isml`): archiving, the DVR
// window and how a channel takes its encoders. Stored in the server manifest; archiving options
// never from a query string (reference §1.2: "all stream options may be given as query
// parameters, except those concerning DRM and archiving"). The playout controls are: a query's
// `dvr_window_length` may shrink the channel's window (the reference's "overrides (and is capped
// by)"), `time_shift` moves the live point back (model/live-window.ts); `hls_low_latency` and
// `mpd_low_latency`, output choices, may come from a query too. docs/guide/live.md.

import type { Format, OptionSpec } from './registry';

const ALL: readonly Format[] = ['smooth', 'dash', 'hls', 'hds'];

export const LIVE_OPTIONS: readonly OptionSpec[] = [
  {
    name: 'archiving',
    cli: 'archiving',
    type: 'boolean',
    default: false,
    formats: ALL,
    query: false,
    stored: true,
    description: 'Live: keep ingested media on disk beyond the DVR window.',
  },
  {
    name: 'archive_length',
    cli: 'archive_length',
    type: 'integer',
    min: 0,
    max: 2 ** 31,
    formats: ALL,
    query: false,
    stored: true,
    description: 'Live: seconds of archive to keep.',
  },
  {
    name: 'archive_segment_length',
    cli: 'archive_segment_length',
    type: 'integer',
    min: 0,
    max: 2 ** 31,
    formats: ALL,
    query: false,
    stored: true,
    description: 'Live: seconds per archive file.',
  },
  {
    name: 'dvr_window_length',
    cli: 'dvr_window_length',
    type: 'integer',
    min: 0,
    max: 2 ** 31,
    formats: ALL,
    query: true,
    stored: true,
    description:
      "Live: seconds of DVR window in client manifests (30 unset). In a query it may shrink the channel's window, never grow it: a larger value is taken as the channel's.",
  },
  {
    name: 'time_shift',
    cli: 'time_shift',
    type: 'integer',
    default: 0,
    min: 0,
    max: 2 ** 31,
    formats: ALL,
    query: true,
    stored: false,
    description:
      'Live: seconds the live point of the client manifests lies behind the live edge; the DVR window ends there, and later segments are refused as not yet available.',
  },
  {
    name: 'restart_on_encoder_reconnect',
    cli: 'restart_on_encoder_reconnect',
    type: 'boolean',
    default: false,
    formats: ALL,
    query: false,
    stored: true,
    description:
      'Live: a stopped channel (its encoders ended the stream) starts again when an encoder pushes to it; without it such a push is refused (403 channel-stopped). Needs encoders on UTC times.',
  },
  {
    name: 'hls_low_latency',
    cli: 'hls.low_latency',
    type: 'boolean',
    default: false,
    formats: ['hls'],
    query: true,
    stored: true,
    description:
      "Live HLS fMP4: LL-HLS playlists (parts = ingest fragments, blocking reload, delta updates, rendition reports); segments are `hls_minimum_fragment_length` long. Other playlists don't change.",
  },
  {
    name: 'mpd_low_latency',
    cli: 'mpd.low_latency',
    type: 'boolean',
    default: false,
    formats: ['dash'],
    query: true,
    stored: true,
    description:
      'Live DASH: low-latency MPD (availabilityTimeOffset = segment − chunk, availabilityTimeComplete="false", ServiceDescription latency target 2 500 ms, ProducerReferenceTime from the newest ingest `prft`, else the UTC anchor); the segment being ingested is listed from its first chunk and sent chunk by chunk as its ingest fragments arrive; segments are `mpd_minimum_fragment_length` long. Clear, without timed metadata.',
  },
  {
    name: 'lookahead_fragments',
    cli: 'lookahead_fragments',
    type: 'integer',
    default: 2,
    min: 0,
    max: 16,
    formats: ['smooth'],
    query: false,
    stored: true,
    description:
      'Live Smooth: a fragment is listed and served once this many later fragments of its track are archived (their times go in its `tfrf`).',
  },
];
