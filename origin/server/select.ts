// The track selector of the origin: the filter language (wasm, host-glue/filter/filter-engine.ts)
// applied to the presentation's tracks — the server manifest's track_filter AND the request's
// filter (issue 3). Filter errors get their own stable code for X-Origin-Error.

import { applyTrackFilters } from '../../host-glue/filter/track-filters';
import { OriginError, originError } from '../errors';
import { TrackSelector } from '../model/view';

export const wasmTrackSelector: TrackSelector = (tracks, trackFilter, filter, keepTimedMetadata) => {
  try {
    return applyTrackFilters(
      tracks.map((t) => t.properties),
      trackFilter,
      filter,
      { keepTimedMetadata },
    );
  } catch (e) {
    if (e instanceof OriginError && e.kind === 'bad-request') {
      // The subject is the parameter, and the message already starts with it ("filter: ...").
      // A bad track_filter is in the server manifest: the operator's error, not the client's.
      if (e.subject === 'track_filter') throw originError('bad-track-filter', e.message);
      throw originError('bad-filter', e.message);
    }
    throw e;
  }
};
