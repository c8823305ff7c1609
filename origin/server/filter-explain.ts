// `/_filter?ism=/tablets.ism&expression=<filter>`: the player page's filter box asks the origin
// what an expression does to a presentation's tracks, and gets what `origin filter --json`
// prints: every track with the properties a filter names and whether the expression keeps it,
// the canonical form and the count kept; or the syntax error with its message, UTF-16 offset and
// hint (400 bad-filter, the body still JSON, so the page can point at the position). The
// parameter is `expression`, not `filter`: an edge with validate_filter would answer a bad
// `filter=` itself, in text, before the origin could explain it.

import { FilterSyntaxError, filterEngine } from '../../host-glue/filter/filter-engine';
import { originError } from '../errors';
import { trackRow } from '../ism/track-table';
import { tracksAt } from './presentations';
import { decodePath } from './routes';

/** Longer expressions are refused before they are parsed (a URL query is bounded anyway). */
const MAX_EXPRESSION = 4096;

export interface FilterExplanation {
  status: 200 | 400;
  /** `origin filter --json`'s object. */
  body: Record<string, unknown>;
}

/** Answers the filter box for the presentation at `ism` (a URL path under the root). */
export async function explainFilter(root: string, rawQuery: string): Promise<FilterExplanation> {
  const params = new URLSearchParams(rawQuery);
  const ism = params.get('ism') ?? '';
  const expression = params.get('expression') ?? '';
  if (!/\.ism$/i.test(ism) || ism.length > 1024)
    throw originError('bad-parameter', 'ism must be the URL path of a server manifest (/dir/x.ism)', {
      subject: 'ism',
    });
  if (expression.length > MAX_EXPRESSION)
    throw originError('bad-parameter', `expression longer than ${MAX_EXPRESSION} characters`, {
      subject: 'expression',
    });
  // decodePath refuses dot segments and encoded slashes: the path stays under the root.
  const urlPath = '/' + decodePath(ism).map(encodeURIComponent).join('/');
  const tracks = await tracksAt(root, urlPath);
  if (tracks === undefined) throw originError('unknown-presentation', `no readable server manifest at ${urlPath}`);
  const engine = filterEngine();
  try {
    const canonical = expression === '' ? '' : engine.canonical(expression);
    const keep = expression === '' ? tracks.map(() => true) : engine.select(expression, tracks);
    return {
      status: 200,
      body: {
        expression,
        canonical,
        kept: keep.filter((k) => k).length,
        total: tracks.length,
        tracks: tracks.map((t, i) => ({ keep: keep[i] === true, ...trackRow(t, i) })),
      },
    };
  } catch (e) {
    if (!(e instanceof FilterSyntaxError)) throw e;
    return {
      status: 400,
      body: { expression, error: { message: e.reason, offset: e.offset, hint: e.hint, text: e.detail } },
    };
  }
}
