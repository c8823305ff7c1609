// The URL grammar of live channels, as data like server/routes.ts: the ingest URLs (on the ingest
// listener) and the channel's own endpoints (on the serving port). A channel is a publishing point
// `<dir>/<name>.isml` (MS-SSTR §2.2.7: `<name>.isml[/Events(<id>)]/Streams(<id>)`); its archive
// lives next to it in `<name>.isml.archive/`. Neither the `.isml` nor anything of its archive is
// ever a static file: a path through either is answered here or refused.

import { originError } from '../errors';

export type LiveRouteKind = 'ingest' | 'state' | 'archive' | 'output';

export interface LiveRoute {
  kind: LiveRouteKind;
  /** Matched against the path after `<name>.isml/`. */
  pattern: RegExp;
  methods: readonly string[];
  /** As docs/reference/urls.md shows it. */
  shape: string;
  description: string;
}

export const LIVE_ROUTES: readonly LiveRoute[] = [
  {
    kind: 'ingest',
    // Events(<id>) is allowed before Streams() (the encoder's event id; Azure's encoders must not send it).
    pattern: /^(?:Events\([^/()]{1,128}\)\/)?Streams\((?<stream>[A-Za-z0-9._~-]{1,128})\)$/,
    methods: ['POST', 'PUT'],
    shape: '<ch>.isml/Streams(<name>), <ch>.isml/Events(<id>)/Streams(<name>)',
    description:
      'Ingest (ingest listener only): a Smooth stream or a CMAF track, one long chunked POST or one segment per request',
  },
  {
    kind: 'state',
    pattern: /^state$/,
    methods: ['GET', 'HEAD'],
    shape: '<ch>.isml/state, <ch>.isml/state?format=json',
    description:
      "The channel's state (idle, started, stopped) as the reference's SMIL; with format=json also per track its last time, fragments, gaps, dropped duplicates, and the connected encoders",
  },
  {
    kind: 'archive',
    pattern: /^archive$/,
    methods: ['GET', 'HEAD'],
    shape: '<ch>.isml/archive',
    description: 'The archived time ranges of every track (JSON, ticks and UTC)',
  },
  {
    kind: 'output',
    // Any other tail: the server matches it against the presentation URL table (server/routes.ts).
    pattern: /^(?!(?:Events\([^/]*\)\/)?Streams\()[^]+$/,
    methods: ['GET', 'HEAD'],
    shape: '<ch>.isml/.mpd, <ch>.isml/.m3u8, <ch>.isml/Manifest, <ch>.isml/.f4m, <ch>.isml/<any URL tail of a .ism>',
    description:
      "Live output: the channel's DVR window as a dynamic MPD, sliding HLS playlists (TS or fMP4), a live Smooth manifest (fragments with tfrf) or a live HDS manifest, and their segments, as the table above names them after `<pres>.ism/`",
  },
];

export interface LiveRequest {
  route: LiveRoute;
  /** Decoded path of the `.isml` relative to the root, with a leading `/`. */
  isml: string;
  /** The stream name of an ingest URL. */
  stream: string | undefined;
  /** The decoded path after `<name>.isml/`. */
  tail: string;
}

/**
 * The live request a decoded path names; undefined when no segment is a `.isml` or its archive
 * directory. A raw `.isml`, anything under its archive, or an unknown tail is 404.
 */
export function matchLiveRoute(segments: readonly string[]): LiveRequest | undefined {
  const at = segments.findIndex((s) => /\.isml(\.archive)?$/i.test(s));
  if (at < 0) return undefined;
  if (/\.archive$/i.test(segments[at]!))
    throw originError('unknown-url', 'the archive of a channel is not served as files');
  const isml = '/' + segments.slice(0, at + 1).join('/');
  const tail = segments.slice(at + 1).join('/');
  if (tail === '') throw originError('unknown-url', 'a publishing point (.isml) is never served as a file');
  for (const route of LIVE_ROUTES) {
    const m = route.pattern.exec(tail);
    if (m !== null) return { route, isml, stream: m.groups?.stream, tail };
  }
  throw originError('unknown-url', `no live URL like "${tail.slice(0, 128)}"`);
}

/** The live rows of docs/reference/urls.md. */
export function liveRoutesMarkdown(): string {
  const rows = LIVE_ROUTES.map(
    (r) => `| ${r.methods.join(', ')} | \`${r.shape.replace(/, /g, '`, `')}\` | ${r.description} |`,
  );
  return ['| method | URL (after the server root) | what |', '|---|---|---|', ...rows].join('\n');
}
