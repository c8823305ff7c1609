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
import { LIVE_FRAGMENT_STATUS, LiveFragmentCode, LiveFragmentStatusTable } from '../error-codes';
import { FileStat, Storage } from '../io/storage';
import { SourceOpener } from '../io/source';
import { SharedStat } from '../io/shared-stat';
import { SpanningSource } from '../io/spanning-source';
import { channelVersion, FragmentSource, HeadCache, loadChannelPresentation } from '../live/channel-loader';
import { gridDuration } from '../model/live-window';
import { Presentation } from '../model/presentation';
import { PlayoutView, segmentNumber, trackKey, viewForQuery, ViewTrack } from '../model/view';
import { contentEtag } from './etag';
import {
  BlockTarget,
  deliveryDirectives,
  DeliveryDirectives,
  lowLatencyPlaylist,
  lowLatencyTrack,
  partTarget,
  untilTarget,
} from './live-low-latency';
import { PartWaiters } from '../live/part-waiters';
import { GrowingSegments } from '../live/chunked-segment';
import { growingSegmentReply } from './live-chunked';
import { hdsRefusal, liveSmoothFragment } from './live-smooth';
import { inMemory } from './remote-playout';
import type { PlayoutContext, Reply } from './route-handler';
import type { PresentationRequest } from './routes';

/** Channels kept at once (a presentation each: its fragment tables). */
const MAX_CHANNELS = 256;

/** Each channel's presentation at the version it was read at. */
export class LiveChannels {
  private readonly held = new Map<string, { version: string; p: Promise<Presentation> }>();
  /** Publish messages per channel: part of the version, as channel.json is written after them. */
  private readonly published = new Map<string, number>();
  /** Requests waiting for a channel's next publish (LL-HLS blocking reload). */
  readonly waiters = new PartWaiters();
  /** LL-DASH segments being ingested that requests are reading (live-chunked.ts). */
  readonly growing = new GrowingSegments();

  private readonly heads = new HeadCache();
  /** channel.json's stat, one in flight per channel (io/shared-stat.ts). */
  private readonly stats: SharedStat;

  constructor(
    /** Where channels are read (and their archive files opened). */
    readonly storage: Storage,
    private readonly root: string,
    /** The status of each refusal per format (`origin serve --fragment-*-status`). */
    readonly refusalStatus: LiveFragmentStatusTable = LIVE_FRAGMENT_STATUS,
    /** The serving process's fragment table; without one, every load reads the index files. */
    private readonly fragments?: FragmentSource,
  ) {
    this.stats = new SharedStat(storage);
  }

  /** The channel at a decoded `.isml` URL path, read again when channel.json has changed. */
  async presentation(isml: string): Promise<Presentation> {
    const stat = await channelVersion(this.stats, this.root, isml);
    const version = `${stat === undefined ? 'none' : `${stat.mtimeMs}:${stat.size}`}:${this.generation(isml)}`;
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

  /**
   * A publish message of the ingest process (fragment-table.ts LivePublished): the index files
   * hold a new fragment before channel.json says so: the channel's next use reads it again (a
   * new version), and the requests waiting for it go on.
   */
  publish(isml: string): void {
    if (!this.held.has(isml)) return;
    this.published.set(isml, this.generation(isml) + 1);
    this.waiters.wake(isml);
  }

  /** Publish messages of a channel so far (a blocking request that read before one reads again). */
  generation(isml: string): number {
    return this.published.get(isml) ?? 0;
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
  query: string,
  signal?: AbortSignal,
): Promise<Reply> {
  const format = req.route.format;
  // LL-HLS delivery directives (live-low-latency.ts): never part of the query anything else reads.
  const directives = format === 'hls' ? deliveryDirectives(query) : { query, skip: false };
  const rawQuery = directives.query;
  const load = async (): Promise<PlayoutView> => {
    const at = await channels.presentation(req.ismPath);
    return ctx.views.get(
      at,
      `${format}\n${rawQuery}`,
      () => viewForQuery(at, format, rawQuery, ctx.select),
      (v) => 1024 + v.tracks.reduce((n, t) => n + 64 + t.segments.count * 160, 0),
    );
  };
  const target = req.route.kind === 'hls-part' ? partTarget(req) : blockTarget(directives);
  const isml = req.ismPath;
  const wait = {
    waiters: channels.waiters,
    channel: isml,
    generation: () => channels.generation(isml),
    now: Date.now,
    signal,
  };
  const view =
    target === undefined ? await load() : await untilTarget(load, (v) => lowLatencyTrack(v, req), target, wait);
  const p = view.presentation;
  const live: PlayoutContext = { ...ctx, open: liveOpener(ctx.open, channels.storage, p) };
  let reply: Reply;
  try {
    const call = { ctx: live, req, presentation: p, view, rawQuery, signal };
    const ll = req.route.kind === 'hls-playlist' ? lowLatencyTrack(view, req) : undefined;
    // Live Smooth fragments carry a tfrf (live-smooth.ts), LL-HLS playlists have parts; every other
    // route is VOD's handler.
    const handler = req.route.kind === 'smooth-fragment' ? liveSmoothFragment : req.route.handler;
    const replied = ll !== undefined ? lowLatencyPlaylist(call, ll, directives.skip) : handler(call);
    reply = await inMemory(await replied, live.open);
  } catch (e) {
    if (!(e instanceof OriginError)) throw e;
    // LL-DASH: the segment being ingested, sent as it grows (live-chunked.ts).
    const source = { ...wait, load, openerFor: (at: Presentation) => liveOpener(ctx.open, channels.storage, at) };
    const growing = e.code === 'unknown-time' ? growingSegmentReply(view, req, channels.growing, source) : undefined;
    if (growing !== undefined) return growing;
    const refused =
      e.code !== 'unknown-time' || format === 'smooth'
        ? e
        : format === 'hds'
          ? hdsRefusal(view, req, e)
          : refusal(view, req, e);
    // A refusal's status is the format's in the server's table (liveFragmentError set the default).
    if (refused.status !== undefined && isLiveFragmentCode(refused.code))
      refused.status = channels.refusalStatus[format][refused.code];
    throw refused;
  }
  if (reply.cacheClass === 'manifest') {
    if (view.live?.ended === true) return reply;
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

function isLiveFragmentCode(code: string): code is LiveFragmentCode {
  return code === 'fragment-expired' || code === 'fragment-missing' || code === 'fragment-not-yet';
}

/** A playlist request's blocking target (`_HLS_msn`, `_HLS_part`), if it has one. */
function blockTarget(d: DeliveryDirectives): BlockTarget | undefined {
  return d.msn === undefined ? undefined : { msn: d.msn, part: d.part };
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
  // HLS and DASH `$Number$` numbers skip a gap's slots (model/live-window.ts).
  const last = byTime ? s.time(s.count - 1) : BigInt(segmentNumber(t, s.count - 1));
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
