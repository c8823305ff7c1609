// Values derived from a view, computed once per view object: the one memo layer of the writers
// and of the manifest cache. A writer is a plain function of its view; where a part of it walks
// every segment (a SegmentTimeline, the Smooth `<c>` list, EXTINF lines, HLS bit rates) or sorts
// the options (the canonical key), its caller asks derived() for the value instead of computing
// it again.
//
// Why this is sound: a PlayoutView, its `tracks` array, its ViewTracks and their segments are
// never changed once buildView returns them (view.ts), and the server keeps each view per
// (presentation, format, raw query) (server/handlers.ts ctx.views), also with the rendered-
// manifest cache off. A value derived from one of those objects is therefore the same on every
// render of that view, and a later render is mostly string concatenation.
//
// The rule: the owner is the object the value is derived from (a ViewTrack, a view's `tracks`
// array, a view), and `key` names every other input (the value's kind, options, URL parts,
// protocol version...), since one ViewTrack can appear in views that differ in those (a view
// spread with other options). test/origin/manifests/view-memo.test.ts checks it for every writer.
//
// This is not the server's rendered-manifest cache (cache/manifest-cache.ts: whole documents,
// keyed by request, bounded, optional): entries here are parts of a document, live exactly as
// long as the object they are keyed by (WeakMap), and hold only what a fresh render would
// compute again. Segment statistics (peak rate, longest segment, sync starts) live with the
// segments themselves (segment-list.ts).

const byOwner = new WeakMap<object, Map<string, unknown>>();

/** The value `compute` derives from `owner`, computed on the first call for (owner, key). */
export function derived<V>(owner: object, key: string, compute: () => V): V {
  let known = byOwner.get(owner);
  if (known === undefined) {
    known = new Map();
    byOwner.set(owner, known);
  }
  let value = known.get(key) as V | undefined;
  if (value === undefined) {
    value = compute();
    known.set(key, value);
  }
  return value;
}
