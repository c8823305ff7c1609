// The track selection of a request: the server manifest's track_filter AND the request's filter,
// evaluated by the process-wide engine (filter-engine.ts), with the errors a client sees.

import { originError } from '../../origin/errors';
import { TrackProperties } from '../../origin/model/media';
import { FilterSyntaxError, filterEngine } from './filter-engine';

/**
 * Indices of tracks kept by track_filter AND filter (either may be undefined/empty = keep all).
 * Both see every given track (count() counts the presentation before filtering). Tracks of type
 * 'data' are always kept when keepTimedMetadata. Throws OriginError('bad-request', ...) naming the
 * expression when the expressions keep no track (the timed-metadata passthrough does not count),
 * and for syntax errors prefixes which parameter ("filter: ..." / "track_filter: ...").
 */
export function applyTrackFilters(
  tracks: readonly TrackProperties[],
  trackFilter: string | undefined,
  filter: string | undefined,
  opts: { keepTimedMetadata?: boolean } = {},
): number[] {
  const given: Array<[string, string]> = [];
  if (trackFilter !== undefined && trackFilter !== '') given.push(['track_filter', trackFilter]);
  if (filter !== undefined && filter !== '') given.push(['filter', filter]);
  const passthrough = (t: TrackProperties): boolean => opts.keepTimedMetadata === true && t.type === 'data';
  if (given.length === 0) return tracks.map((_, i) => i);

  const engine = filterEngine();
  for (const [name, text] of given) {
    try {
      engine.canonical(text);
    } catch (e) {
      throw e instanceof FilterSyntaxError ? e.forParameter(name) : e;
    }
  }
  const results = engine.selectAll(
    given.map(([, text]) => text),
    tracks,
  );
  const candidates = tracks.filter((t) => !passthrough(t)).length;
  const keep = tracks.map(() => true);
  results.forEach((selected, g) => {
    selected.forEach((k, i) => {
      if (!k) keep[i] = false;
    });
    const [name, text] = given[g]!;
    const alive = tracks.filter((t, i) => keep[i] && !passthrough(t)).length;
    if (candidates > 0 && alive === 0) {
      const scope =
        g === 0
          ? `the ${candidates} tracks`
          : `the ${tracks.filter((t, i) => results[0]![i] && !passthrough(t)).length} tracks that track_filter ${given[0]![1]} keeps`;
      throw originError('bad-request', `${text} keeps none of ${scope}`, { subject: name });
    }
  });
  return tracks.flatMap((t, i) => (keep[i] || passthrough(t) ? [i] : []));
}
