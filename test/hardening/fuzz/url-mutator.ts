// Requests made from the origin's real URL grammar, then damaged: path segments swapped for
// traversals in every spelling (`..`, `%2e%2e`, `%2f`, `%5c`, overlong UTF-8, NUL, double
// encoding), re-encoded characters, huge numbers, long paths and queries, repeated and unknown
// parameters, filter expressions with junk, odd methods and Range headers. Seeded (harness/prng.ts):
// the n-th request of a seed is always the same.

import { OPTIONS } from '../../../origin/options/registry';
import { Prng } from '../harness/prng';

export interface FuzzRequest {
  method: string;
  /** The raw request target, as sent. */
  path: string;
  headers: Record<string, string>;
}

/** What the grammar starts from: presentations, their tails, and the origin's other paths. */
export interface Grammar {
  /** `/p.ism`, `/sub/dir/q.ism`, and the planted ones. */
  presentations: string[];
  /** Tails after `<pres>.ism/` with their query, as the manifests write them. */
  tails: string[];
  /** Static files and the origin's own endpoints. */
  others: string[];
  /** Relative paths from the root to planted files outside it (`../outside-x/canary.txt`). */
  escapes: string[];
}

const TRAVERSALS = [
  '..',
  '.',
  '%2e%2e',
  '%2E%2e',
  '.%2e',
  '%2e.',
  '%2e',
  '..%2f',
  '..%2F..%2F',
  '%2f',
  '%5c',
  '..%5c..%5c',
  '..\\..\\',
  '%c0%ae%c0%ae', // overlong UTF-8 '.'
  '%c0%af', // overlong '/'
  '%e0%80%ae%e0%80%ae',
  '%c1%9c', // overlong '\'
  '%252e%252e', // double encoding
  '%25%32%65',
  '%00',
  'x%00.ism',
  '%',
  '%zz',
  '%u002e%u002e',
  '',
  ';',
  '..;',
  '%ff%fe',
  '%ed%a0%80', // a UTF-16 surrogate in UTF-8
];

const NUMBERS = [
  '0',
  '-1',
  '1',
  '00000001',
  '99999999999999999999',
  '18446744073709551616',
  '4294967296',
  '1e9',
  'NaN',
  ' 1',
  '0x10',
];

const FILTER_JUNK = [
  'type=="video"',
  'systemBitrate>100000',
  'FourCC=="AVC1"||FourCC=="AACL"',
  '((((((((((',
  '"',
  '"unterminated',
  '&&',
  '||||',
  '!',
  'a'.repeat(3000),
  'systemBitrate>99999999999999999999999',
  'type==',
  '==',
  'systemLanguage=="\u0000"',
  '(type=="video")&&!(type=="audio")',
  'MaxWidth<-1',
  '1/0',
];

const OPTION_NAMES = OPTIONS.map((o) => o.name);
const VALUE_JUNK = [
  '',
  'true',
  'false',
  '1',
  '-1',
  '0',
  'x',
  '%',
  '%zz',
  '%00',
  '9'.repeat(40),
  'a'.repeat(10_000),
  '00:00:01',
  'now',
  'π',
];

export class UrlMutator {
  constructor(
    private readonly g: Grammar,
    private readonly prng: Prng,
  ) {}

  next(): FuzzRequest {
    const r = this.prng;
    let path = this.base();
    let query = '';
    const q = path.indexOf('?');
    if (q >= 0) [path, query] = [path.slice(0, q), path.slice(q + 1)];
    for (let n = 1 + r.int(3); n > 0; n--) {
      if (r.chance(0.6)) path = this.mutatePath(path);
      else query = this.mutateQuery(query);
    }
    const headers: Record<string, string> = {};
    if (r.chance(0.1)) headers['range'] = this.range();
    if (r.chance(0.03)) headers['if-none-match'] = r.pick(['*', '"x"', '', 'W/"' + 'a'.repeat(500) + '"']);
    const method = r.chance(0.9) ? 'GET' : r.pick(['HEAD', 'OPTIONS', 'POST', 'PUT', 'DELETE', 'PATCH', 'BREW']);
    return { method, path: query === '' && !r.chance(0.05) ? path : `${path}?${query}`, headers };
  }

  private base(): string {
    const r = this.prng;
    const g = this.g;
    const roll = r.next();
    if (roll < 0.7) return `${r.pick(g.presentations)}/${r.pick(g.tails)}`;
    if (roll < 0.85) return r.pick(g.others);
    // A straight try for the planted files through the root's parent.
    return `/${r.pick(g.escapes)}`;
  }

  private mutatePath(path: string): string {
    const r = this.prng;
    const segments = path.split('/');
    const at = 1 + r.int(Math.max(1, segments.length - 1));
    switch (r.int(10)) {
      case 0:
        segments[at] = r.pick(TRAVERSALS);
        break;
      case 1:
        segments.splice(at, 0, ...Array.from({ length: 1 + r.int(6) }, () => r.pick(TRAVERSALS)));
        break;
      case 2:
        // The escape through encoded traversals: ../outside/canary.txt with its dots and slashes encoded.
        return `/${r
          .pick(this.g.escapes)
          .replace(/\.\./g, () => r.pick(['..', '%2e%2e', '.%2e', '%2E%2E', '%c0%ae%c0%ae']))
          .replace(/\//g, () => r.pick(['/', '%2f', '%2F', '%5c', '//']))}`;
      case 3:
        // Re-encode characters: the same path spelled another way.
        return path.replace(/[a-zA-Z0-9.=()-]/g, (c) => (r.chance(0.3) ? `%${c.charCodeAt(0).toString(16)}` : c));
      case 4:
        return path.replace(/\d+/g, (d) => (r.chance(0.5) ? r.pick(NUMBERS) : d));
      case 5:
        segments[at] = Array.from({ length: 1 + r.int(40) }, () => `%${r.int(256).toString(16).padStart(2, '0')}`).join(
          '',
        );
        break;
      case 6:
        // Long: past the 4096-character bound, or just under it.
        return path + '/' + 'a'.repeat(r.pick([100, 4000, Math.max(0, 4096 - path.length - 1), 5000, 70_000]));
      case 7:
        return path.replace(/\//g, () => (r.chance(0.3) ? '//' : '/'));
      case 8:
        return r.chance(0.5) ? path.toUpperCase() : path.toLowerCase();
      default:
        segments[at] =
          (segments[at] ?? '') + r.pick(['.ism', '.mpd', '.m3u8', 'Seg1-Frag1', '-1.ts', '.dash', '~', '%20', '+']);
    }
    return segments.join('/');
  }

  private mutateQuery(query: string): string {
    const r = this.prng;
    const pairs = query === '' ? [] : query.split('&');
    switch (r.int(7)) {
      case 0:
        pairs.push(`filter=${encodeURIComponent(r.pick(FILTER_JUNK))}`);
        break;
      case 1:
        pairs.push(`filter=${r.pick(FILTER_JUNK).replace(/[&#]/g, '')}`); // unencoded
        break;
      case 2:
        pairs.push(`${r.pick(OPTION_NAMES)}=${encodeURIComponent(r.pick(VALUE_JUNK))}`);
        break;
      case 3:
        for (let n = 2 + r.int(50); n > 0; n--) pairs.push(`${r.pick(OPTION_NAMES)}=${r.pick(['1', 'true', 'x'])}`);
        break;
      case 4:
        pairs.push(`${r.pick(['x', 'junk', '', '=', '%', '%00', 'a'.repeat(200)])}=${r.pick(VALUE_JUNK).slice(0, 64)}`);
        break;
      case 5:
        pairs.push(`t=${r.pick(NUMBERS)}-${r.pick(NUMBERS)}`, `vbegin=${r.pick(NUMBERS)}`);
        break;
      default:
        pairs.push('q=' + 'b'.repeat(r.pick([1000, 16_000, 17_000, 40_000])));
    }
    return pairs.join('&');
  }

  private range(): string {
    const r = this.prng;
    return r.pick([
      'bytes=0-0',
      'bytes=-1',
      'bytes=5-2',
      'bytes=0-',
      'bytes=99999999999999999999-',
      'bytes=' + Array.from({ length: 200 }, (_, i) => `${i}-${i}`).join(','),
      'bytes=a-b',
      'lines=1-2',
      'bytes=-0',
      '',
    ]);
  }
}

/** Whether Node's HTTP client can write this request target (it refuses controls, spaces and non-Latin-1). */
export const writable = (path: string): boolean => /^[\u0021-\u00ff]*$/.test(path);
