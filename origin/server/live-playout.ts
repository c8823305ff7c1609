// Live output on the serving port: a manifest or segment URL under `<ch>.isml/` answered by the
// VOD route table's handlers over the channel's presentation (origin/live/channel-presentation.ts).
// What differs from VOD is here, around the handlers, not in them:
// - the presentation is the channel's at its current version (channel.json's mtime and size), built
//   again when the ingest process has published since, from the process's fragment table
//   (live/fragment-table.ts; it reads the index files when it missed a message);
// - a live track's fragments are in several archive files: its `src` opens one source over all of
//   them (io/spanning-source.ts), and segments are read into memory before the reply starts;
// - a segment outside the view is refused as the reference does per format (error-codes.ts
//   LIVE_FRAGMENT_STATUS): older than the DVR window, inside a gap, or past the live edge;
// - a Smooth fragment gets its tfrf, and Smooth and HDS their refusals, from live-smooth.ts;
// - live manifests may be cached for half a segment at most; a segment's ETag is made from
//   (channel, URL, bytes), which neither an append nor a restart changes.

import { OriginError, liveFragmentError } from '../errors';
import { FileStat, Storage } from '../io/storage';
import { SourceOpener } from '../io/source';
import { SpanningSource } from '../io/spanning-source';
import { channelVersion, FragmentSource, HeadCache, loadChannelPresentation } from '../live/channel-loader';
import { gridDuration } from '../model/live-window';
import { Presentation } from '../model/presentation';
import { PlayoutView, trackKey, viewForQuery, ViewTrack } from '../model/view';
import { contentEtag } from './etag';
import { hdsRefusal, liveSmoothFragment } from './live-smooth';
import { inMemory } from './remote-playout';
import type { PlayoutContext, Reply } from './route-handler';
import type { PresentationRequest } from './routes';

/** Channels kept at once (a presentation each: its fragment tables). */
const MAX_CHANNELS = 256;

/** Each channel's presentation at the version it was read at. */
export class LiveChannels {
  private readonly held = new Map<string, { version: string; p: Promise<Presentation> }>();

  private readonly heads = new HeadCache();

  constructor(
    /** Where channels are read (and their archive files opened). */
    readonly storage: Storage,
    private readonly root: string,
    /** The serving process's fragment table; without one, every load reads the index files. */
    private readonly fragments?: FragmentSource,
  ) {}

  /** The channel at a decoded `.isml` URL path, read again when channel.json has changed. */
  async presentation(isml: string): Promise<Presentation> {
    const stat = await channelVersion(this.storage, this.root, isml);
    const version = stat === undefined ? 'none' : `${stat.mtimeMs}:${stat.size}`;
    const held = this.held.get(isml);
    if (held !== undefined && held.version === version) return held.p;
    const p = this.load(isml, stat);
    if (this.held.size >= MAX_CHANNELS && held === undefined) this.held.delete(this.held.keys().next().value!);
    this.held.set(isml, { version, p });
    p.catch(() => {
      if (this.held.get(isml)?.p === p) this.held.delete(isml);
    });
    return p;
  }

  private load(isml: string, stat: FileStat | undefined): Promise<Presentation> {
    const from = { fragments: this.fragments, heads: this.heads };
    // readChannelStatus answers unknown-channel when the .isml itself is missing.
    return loadChannelPresentation(this.storage, this.root, isml, stat ?? { mtimeMs: 0, size: 0 }, from);
  }
}

/** The reply to a manifest or segment URL of a live channel (`req.ismPath` is the `.isml`). */
export async function handleLivePlayout(
  ctx: PlayoutContext,
  channels: LiveChannels,
  req: PresentationRequest,
  rawQuery: string,
  signal?: AbortSignal,
): Promise<Reply> {
  const format = req.route.format;
  const p = await channels.presentation(req.ismPath);
  const view = ctx.views.get(
    p,
    `${format}\n${rawQuery}`,
    () => viewForQuery(p, format, rawQuery, ctx.select),
    (v) => 1024 + v.tracks.reduce((n, t) => n + 64 + t.segments.count * 160, 0),
  );
  const live: PlayoutContext = { ...ctx, open: liveOpener(ctx.open, channels.storage, p) };
  let reply: Reply;
  try {
    // Live Smooth fragments carry a tfrf (live-smooth.ts); every other route is VOD's handler.
    const handler = req.route.kind === 'smooth-fragment' ? liveSmoothFragment : req.route.handler;
    reply = await inMemory(await handler({ ctx: live, req, presentation: p, view, rawQuery, signal }), live.open);
  } catch (e) {
    if (!(e instanceof OriginError) || e.code !== 'unknown-time') throw e;
    if (format === 'smooth') throw e;
    throw format === 'hds' ? hdsRefusal(view, req, e) : refusal(view, req, e);
  }
  if (reply.cacheClass === 'manifest') {
    if (p.live?.ended === true) return reply;
    return { ...reply, cacheControl: `max-age=${Math.floor(halfSegmentSeconds(view))}` };
  }
  const length =
    reply.body.type === 'text'
      ? Buffer.byteLength(reply.body.text)
      : reply.body.type === 'bytes'
        ? reply.body.bytes.byteLength
        : reply.body.length;
  return { ...reply, etag: contentEtag(`live\n${req.ismPath}\n${req.tail}\n${rawQuery}\n${length}`) };
}

/** Opens a live track's `src` as one source over its archive files; any other path as `open` does. */
function liveOpener(open: SourceOpener, storage: Storage, p: Presentation): SourceOpener {
  const bySrc = new Map(p.tracks.map((t) => [t.src, t.archive]));
  return async (path, version) => {
    const archive = bySrc.get(path);
    if (archive === undefined) return open(path, version);
    // Archive files grow while they are read: opened fresh (a kept handle's size may be old).
    return new SpanningSource(path, archive.files, (file) => storage.open(file));
  };
}

/** Half the shortest grid duration of the view's tracks, seconds (RFC 8216 §6.2.1 reload rules). */
function halfSegmentSeconds(view: PlayoutView): number {
  let best = Infinity;
  for (const t of view.tracks) {
    const d = Number(gridDuration(t.segments)) / t.track.properties.TimeScale;
    if (d > 0) best = Math.min(best, d);
  }
  return best === Infinity ? 0 : best / 2;
}

/**
 * A segment the view does not hold, refused as the reference does: before the window's first
 * segment (expired), after its last (not yet), or between (missing: a gap). The URL's number is
 * a `$Time$` for DASH, an HLS media sequence number otherwise.
 */
function refusal(view: PlayoutView, req: PresentationRequest, e: OriginError): OriginError {
  const format = req.route.format as 'dash' | 'hls';
  const stem = req.groups.stem ?? '';
  const n = req.groups.n ?? /-(\d{1,20})$/.exec(stem)?.[1];
  const t = trackOf(view, stem);
  if (n === undefined || t === undefined) return e;
  const s = t.segments;
  const byTime = format === 'dash' && view.options.str('mpd_segment_template') !== 'number';
  const at = BigInt(n);
  const first = byTime ? s.time(0) : BigInt(t.firstNumber);
  const last = byTime ? s.time(s.count - 1) : BigInt(t.firstNumber + s.count - 1);
  const what = `${trackKey(t.track)} ${byTime ? 'time' : 'segment'} ${n}`;
  if (at < first) return liveFragmentError('fragment-expired', format, `${what} is older than the DVR window`);
  if (at > last) return liveFragmentError('fragment-not-yet', format, `${what} is past the live edge`);
  return liveFragmentError('fragment-missing', format, `${what} is not in the archive (a gap)`);
}

/** The view track a segment stem names: the video of a multiplexed key, else the one whose key it holds. */
function trackOf(view: PlayoutView, stem: string): ViewTrack | undefined {
  const named = view.tracks.filter((t) => stem.includes(trackKey(t.track)));
  return named.find((t) => t.track.properties.type === 'video') ?? named[0];
}
