// Rendered manifests (MPD, Smooth manifest, playlists, F4M), kept with their UTF-8 bytes and
// ETag so that a hit costs neither a render, nor an encode, nor a hash.
//
// Two keys, one document:
// - the request key: (presentation, route, tail, raw query). Looked up before the query is even
//   parsed: a repeated request line costs one map lookup.
// - the canonical key: what the writers actually read. The writers are pure functions of the
//   view (CONTRIBUTING.md design rule 1), so the key is the view itself in canonical text: the options set
//   (manifest or query; sorted, parsed values), the clip, the *selected tracks* (so two spellings
//   of a filter, or two filters keeping the same tracks, are one entry: stronger than the filter's
//   canonical text), the variant sets, `<name>`, and the query carried into the URLs the document
//   writes. The carried query is the raw query unless `suppress_query_parameters` is set, so
//   spellings share a document only when their output is byte-identical.
// A presentation is identified by its object (a new one is built whenever the .ism or a source
// changes), not only by the .ism's mtime and size: a source replaced under an unchanged .ism must
// not be answered from a stale document.

import { createHash } from 'node:crypto';
import { formatOptionValue, OptionValue } from '../options/registry';
import { PlayoutView } from '../model/view';
import { derived } from '../model/view-derived';
import { CostLru } from './presentation-store';
import { Presentation } from '../model/presentation';
import { PresentationIds } from './request-caches';

export interface RenderedManifest {
  text: string;
  /** `text` in UTF-8. */
  bytes: Buffer;
  /** Strong validator: a hash of the text. */
  etag: string;
}

export interface ManifestCacheStats {
  /** Requests answered by the request key (no parse, no render). */
  requestHits: number;
  /** Requests whose view matched a document rendered for another spelling. */
  canonicalHits: number;
  /** Documents rendered. */
  renders: number;
  /** Documents held, and their cost in bytes. */
  documents: number;
  bytes: number;
  /** Documents dropped to stay within the byte bound. */
  evictions: number;
}

/**
 * How a request's document was found: `hit`, by its request line (forRequest, also the hot path);
 * `view-hit`, rendered before for another spelling of the same view; `miss`, rendered now.
 */
export type ManifestOutcome = 'hit' | 'view-hit' | 'miss';

/** Bytes of a request key entry besides its text (map entry, strings' headers). */
const ENTRY_OVERHEAD = 96;

export class ManifestCache {
  /** Request key → canonical key (strings only: the documents' bytes are bounded in one place). */
  private readonly byRequest: CostLru<string>;
  private readonly byCanonical: CostLru<RenderedManifest>;
  private readonly counts = { requestHits: 0, canonicalHits: 0, renders: 0 };
  private readonly ids = new PresentationIds();

  /** `maxBytes` bounds the documents; the request keys (strings) get up to an eighth more. 0 disables the cache. */
  constructor(readonly maxBytes: number) {
    this.byCanonical = new CostLru(maxBytes);
    this.byRequest = new CostLru(Math.ceil(maxBytes / 8));
  }

  /** The document for exactly this request line, if one is held (undefined otherwise). */
  forRequest(p: Presentation, requestKey: string): RenderedManifest | undefined {
    if (this.maxBytes === 0) return undefined;
    const identity = this.identity(p);
    const canonicalKey = this.byRequest.peek(`${p.path}\n${requestKey}`, identity);
    const hit = canonicalKey === undefined ? undefined : this.byCanonical.peek(canonicalKey, identity);
    if (hit !== undefined) this.counts.requestHits++;
    return hit;
  }

  /**
   * The document of a view (rendered once for concurrent misses), remembered for the request key
   * too. `view` is the object the text is a pure function of (with the canonical key's route and
   * tail): its text's ETag is hashed once per view and canonical key, so that with the cache off
   * (or a document evicted) a render costs the render and the encode, not a hash of the text
   * again. The ETag stays the hash of the very text sent. With it, whether it was rendered now.
   */
  async get(
    p: Presentation,
    requestKey: string,
    canonicalKey: string,
    render: () => string,
    view?: object,
  ): Promise<{ doc: RenderedManifest; outcome: Exclude<ManifestOutcome, 'hit'> }> {
    const renderNow = (): RenderedManifest => {
      this.counts.renders++;
      const text = render();
      if (view === undefined) return rendered(text);
      const bytes = Buffer.from(text, 'utf8');
      // The canonical key names the text: its hash once per view (model/view-derived.ts).
      return { text, bytes, etag: derived(view, `etag\n${canonicalKey}`, () => etagOf(bytes)) };
    };
    if (this.maxBytes === 0) return { doc: renderNow(), outcome: 'miss' };
    const identity = this.identity(p);
    let fresh = false;
    const doc = this.byCanonical.get(canonicalKey, identity, async () => {
      fresh = true;
      const value = renderNow();
      return { value, cost: value.text.length * 2 + value.bytes.byteLength + canonicalKey.length * 2 + ENTRY_OVERHEAD };
    });
    if (!fresh) this.counts.canonicalHits++;
    const value = await doc;
    const id = `${p.path}\n${requestKey}`;
    this.byRequest.delete(id);
    await this.byRequest.get(id, identity, async () => ({
      value: canonicalKey,
      cost: (id.length + canonicalKey.length) * 2 + ENTRY_OVERHEAD,
    }));
    return { doc: value, outcome: fresh ? 'miss' : 'view-hit' };
  }

  stats(): ManifestCacheStats {
    const { entries, cost, evictions } = this.byCanonical.counts();
    return { ...this.counts, documents: entries, bytes: cost, evictions };
  }

  private identity(p: Presentation): string {
    return `${this.ids.of(p)}`;
  }
}

export function rendered(text: string): RenderedManifest {
  const bytes = Buffer.from(text, 'utf8');
  return { text, bytes, etag: etagOf(bytes) };
}

function etagOf(bytes: Uint8Array): string {
  return `"${createHash('sha1').update(bytes).digest('base64url').slice(0, 22)}"`;
}

/** The view in canonical text: everything a manifest writer reads besides the presentation. */
export function canonicalViewKey(view: PlayoutView, route: string, tail: string): string {
  // The filter's text is left out: its whole effect is the selected tracks (the selector is its
  // only reader; no writer looks at it), which the key holds.
  const options = view.options
    .entries()
    .filter(([name]) => name !== 'filter')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => `${name}=${optionText(value)}`)
    .join('&');
  const clip = view.clip === undefined ? '' : `${view.clip.start}-${view.clip.end ?? ''}`;
  const tracks = view.tracks.map((t) => t.track.index).join(',');
  const sets = view.variantSets === undefined ? '' : view.variantSets.map((s) => s.join(',')).join(';');
  return [
    view.presentation.path,
    route,
    tail,
    view.format,
    view.name,
    options,
    clip,
    tracks,
    sets,
    view.carriedQuery,
    view.playlistQuery ?? '\0',
  ].join('\n');
}

function optionText(v: OptionValue): string {
  return Array.isArray(v) ? v.map((x) => encodeURIComponent(x)).join(',') : encodeURIComponent(formatOptionValue(v));
}
