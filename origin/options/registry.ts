// Stream options: one registry (name, type, default, formats, query permission) drives the
// packaging CLI (`--hls.client_manifest_version=4`), the server manifest head
// (`<meta name="hls_client_manifest_version" content="4"/>`) and the query string
// (`?hls_client_manifest_version=4`). The rule from the reference: a dot in the CLI name is an
// underscore everywhere else (docs/specs.md, reference §1.2). Query overrides manifest.

import { originError } from '../errors';
import { formatRational, parseRational, Rational } from '../rational';
import { DRM_OPTIONS } from './drm-options';
import { LIVE_OPTIONS } from './live-options';

export type OptionType = 'boolean' | 'integer' | 'rational' | 'string' | 'enum';
export type Format = 'smooth' | 'dash' | 'hls' | 'hds';
export type OptionValue = boolean | number | string | Rational | string[];

export interface OptionSpec {
  /** Canonical name: head meta name and query parameter name. */
  name: string;
  /** CLI spelling, without the leading `--`. */
  cli: string;
  type: OptionType;
  /** Default when neither manifest nor query sets it (undefined: unset). */
  default?: boolean | number | string;
  /** Integer bounds, inclusive. */
  min?: number;
  max?: number;
  /** Allowed values of an enum, or a pattern a string must match. */
  values?: readonly string[];
  pattern?: RegExp;
  patternHint?: string;
  /** May be given several times; the value is the list in order. */
  repeatable?: boolean;
  /** Formats whose output it changes. */
  formats: readonly Format[];
  /** Allowed as a query parameter (all are, except DRM and archiving options). */
  query: boolean;
  /** Stored in the server manifest head (false: request-only, like `filter` or `t`). */
  stored: boolean;
  /** A key or IV: its value never appears in a message, a log or a dry run (unless --show-keys). */
  secret?: boolean;
  /** Longest value in characters (default MAX_OPTION_VALUE); only a stored document needs more. */
  maxLength?: number;
  description: string;
}

const ALL: readonly Format[] = ['smooth', 'dash', 'hls', 'hds'];

function fragmentLength(prefix: string, format: Format, long: string, dflt: string): OptionSpec {
  return {
    name: `${prefix}_minimum_fragment_length`,
    cli: `${prefix}.minimum_fragment_length`,
    type: 'rational',
    default: dflt,
    formats: [format],
    query: true,
    stored: true,
    description: `Minimum ${long} segment length in seconds, integer or rational (48/25); segments are whole source fragments joined until they reach it. 0 keeps the source fragments.`,
  };
}

export const OPTIONS: readonly OptionSpec[] = [
  {
    name: 'hls_fmp4',
    cli: 'hls.fmp4',
    type: 'boolean',
    default: false,
    formats: ['hls'],
    query: true,
    stored: true,
    description: 'HLS with fragmented-MP4 segments (true) or MPEG-TS segments (false).',
  },
  {
    name: 'hls_client_manifest_version',
    cli: 'hls.client_manifest_version',
    type: 'integer',
    default: 1,
    min: 1,
    // 9: EXT-X-SKIP, LL-HLS delta updates (rfc8216bis §7); nothing else changes above 7.
    max: 9,
    formats: ['hls'],
    query: true,
    stored: true,
    description: 'EXT-X-VERSION of the playlists; changes the output as RFC 8216 requires for that version.',
  },
  fragmentLength('iss', 'smooth', 'Smooth Streaming', '0'),
  {
    name: 'iss_chunk_repeat',
    cli: 'iss.chunk_repeat',
    type: 'boolean',
    default: false,
    formats: ['smooth'],
    query: true,
    stored: true,
    description:
      "Smooth: write a run of contiguous chunks of equal duration as one `<c>` whose `r` is the run's total count (as dash.js, shaka 4 and ExoPlayer read it; older clients ignore `r`), with MinorVersion 2. Off: one `<c>` per chunk.",
  },
  fragmentLength('hls', 'hls', 'HLS', '4'),
  fragmentLength('mpd', 'dash', 'DASH', '0'),
  fragmentLength('hds', 'hds', 'HDS', '0'),
  {
    name: 'hls_no_audio_only',
    cli: 'hls.no_audio_only',
    type: 'boolean',
    default: false,
    formats: ['hls'],
    query: true,
    stored: true,
    description: 'Leave audio-only variants out of the master playlist.',
  },
  {
    name: 'hls_no_multiplex',
    cli: 'hls.no_multiplex',
    type: 'boolean',
    default: false,
    formats: ['hls'],
    query: true,
    stored: true,
    description: 'Keep audio and video in separate media playlists instead of multiplexing them into one TS.',
  },
  {
    name: 'variant_set',
    cli: 'variant_set',
    type: 'string',
    repeatable: true,
    formats: ['hls'],
    query: true,
    stored: true,
    description:
      'Filter expression choosing the tracks of one set of HLS variants; repeat it; the order of the options is the order of the variants.',
  },
  {
    name: 'track_filter',
    cli: 'track_filter',
    type: 'string',
    formats: ALL,
    query: false,
    stored: true,
    description:
      'Filter expression applied to every request of this server manifest before the `filter` query parameter.',
  },
  {
    name: 'timed_metadata',
    cli: 'timed_metadata',
    type: 'boolean',
    default: false,
    formats: ALL,
    query: true,
    stored: true,
    description: 'Pass timed-metadata tracks through to the output (they cannot be removed with a filter).',
  },
  {
    name: 'hls_program_date_time',
    cli: 'hls.program_date_time',
    type: 'string',
    default: '1970-01-01T00:00:00Z',
    pattern: /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/,
    patternHint: 'a UTC date and time such as 2026-01-01T00:00:00Z',
    formats: ['hls'],
    query: true,
    stored: true,
    description:
      'VOD with timed_metadata: the wall-clock time of the presentation start, from which EXT-X-PROGRAM-DATE-TIME and the START-DATE of SCTE-35 EXT-X-DATERANGE tags count.',
  },
  {
    name: 'hds_multi_level',
    cli: 'hds.multi_level',
    type: 'boolean',
    default: false,
    formats: ['hds'],
    query: true,
    stored: true,
    description: 'HDS set-level manifest listing one stream-level manifest per bitrate.',
  },
  {
    name: 'hds_client_manifest_version',
    cli: 'hds.client_manifest_version',
    type: 'integer',
    default: 1,
    min: 1,
    max: 2,
    formats: ['hds'],
    query: true,
    stored: true,
    description: 'F4M version (2 with hds.multi_level).',
  },
  {
    name: 'mpd_segment_template',
    cli: 'mpd.segment_template',
    type: 'enum',
    default: 'time',
    values: ['time', 'number'],
    formats: ['dash'],
    query: true,
    stored: true,
    description: 'DASH SegmentTemplate addressing: $Time$ (time) or $Number$ (number), both with a SegmentTimeline.',
  },
  {
    name: 'presentation_name',
    cli: 'presentation_name',
    type: 'string',
    pattern: /^[A-Za-z0-9]{1,128}$/,
    patternHint: '1 to 128 letters and digits',
    formats: ALL,
    query: true,
    stored: true,
    description: 'Replaces the server manifest basename in every URL the output writes.',
  },
  {
    name: 'suppress_query_parameters',
    cli: 'suppress_query_parameters',
    type: 'boolean',
    default: false,
    formats: ALL,
    query: true,
    stored: true,
    description:
      'Do not copy the request query string into URLs and URL templates of the output, except the parameters that decide which media a segment URL names (t, vbegin, vend, mpd_segment_template, *_minimum_fragment_length, time_shift, dvr_window_length).',
  },
  // Request-only parameters (never stored in a server manifest).
  {
    name: 'filter',
    cli: 'filter',
    type: 'string',
    formats: ALL,
    query: true,
    stored: false,
    description: 'Filter expression selecting the tracks of this request.',
  },
  {
    name: 't',
    cli: 't',
    type: 'string',
    formats: ALL,
    query: true,
    stored: false,
    description:
      'Time range `<start>-<end>` or `<start>`: a sub-clip (seconds or `h:mm:ss.ff`). On a live channel also ISO 8601 dates (`2026-11-27T10:00:00`, UTC without a zone), seconds being seconds since 1970; without an end the range runs to the live edge.',
  },
  {
    name: 'vbegin',
    cli: 'vbegin',
    type: 'string',
    formats: ALL,
    query: true,
    stored: false,
    description:
      'Virtual begin of the timeline (seconds or `<h>:<mm>:<ss.ff>`; on a live channel also an ISO 8601 date, seconds being seconds since 1970).',
  },
  {
    name: 'vend',
    cli: 'vend',
    type: 'string',
    formats: ALL,
    query: true,
    stored: false,
    description:
      'Virtual end of the timeline, as `vbegin` (with it, or alone: from the start). A live range that ends before the live edge is static (DASH static, HLS ENDLIST).',
  },
  {
    name: 'start_index',
    cli: 'start_index',
    type: 'integer',
    min: 0,
    max: 9999,
    formats: ['hls'],
    query: true,
    stored: false,
    description: 'Zero-based index of the HLS variant listed first (applied after filtering).',
  },
  ...LIVE_OPTIONS,
  ...DRM_OPTIONS,
];

const BY_NAME = new Map(OPTIONS.map((o) => [o.name, o]));
const BY_CLI = new Map<string, OptionSpec>();
for (const o of OPTIONS) {
  BY_CLI.set(o.cli, o);
  BY_CLI.set(o.name, o); // `--hls_fmp4` is accepted as well as `--hls.fmp4`
}

export function optionByName(name: string): OptionSpec | undefined {
  return BY_NAME.get(name);
}

export function optionByCli(flag: string): OptionSpec | undefined {
  return BY_CLI.get(flag);
}

/** Longest accepted option value: filters are capped at 4 KiB by the language; URLs at 8 KiB. */
export const MAX_OPTION_VALUE = 8192;

/**
 * Parses one value. `raw` undefined is the bare-flag form (`--hls.fmp4`, `?hls_fmp4`): true for
 * booleans, an error for anything else. Errors name the option as the user wrote it.
 */
export function parseOptionValue(spec: OptionSpec, raw: string | undefined, shownAs: string): OptionValue {
  const bad = (why: string): never => {
    throw originError('bad-option', why, { subject: shownAs });
  };
  const max = spec.maxLength ?? MAX_OPTION_VALUE;
  if (raw !== undefined && raw.length > max) bad(`value is longer than ${max} characters`);
  switch (spec.type) {
    case 'boolean': {
      if (raw === undefined || raw === '' || raw === 'true' || raw === '1') return true;
      if (raw === 'false' || raw === '0') return false;
      return bad(`"${raw}" is not a boolean (true, false, 1, 0, or the bare flag)`);
    }
    case 'integer': {
      if (raw === undefined || !/^-?\d{1,15}$/.test(raw))
        return bad(`${raw === undefined ? 'a value is required' : `"${raw}" is not an integer`}`);
      const n = Number(raw);
      if ((spec.min !== undefined && n < spec.min) || (spec.max !== undefined && n > spec.max)) {
        return bad(`${n} is out of range ${spec.min ?? '-∞'}..${spec.max ?? '∞'}`);
      }
      return n;
    }
    case 'rational': {
      const r = raw === undefined ? undefined : parseRational(raw);
      if (r === undefined)
        return bad(`${raw === undefined ? 'a value is required' : `"${raw}" is not a number or rational like 48/25`}`);
      if (r.num < 0) return bad(`"${raw}" must not be negative`);
      return r;
    }
    case 'enum': {
      if (raw === undefined || !spec.values!.includes(raw))
        return bad(
          `${raw === undefined ? 'a value is required' : `"${raw}" is not allowed`}; use one of: ${spec.values!.join(', ')}`,
        );
      return raw;
    }
    case 'string': {
      if (raw === undefined) return bad('a value is required');
      if (spec.pattern && !spec.pattern.test(raw))
        return bad(`${spec.secret ? 'the value (not shown)' : `"${raw}"`} is not valid: ${spec.patternHint}`);
      return raw;
    }
  }
}

/** Text form of a value, as stored in `<meta content>` and written in query strings. */
export function formatOptionValue(value: Exclude<OptionValue, string[]>): string {
  if (typeof value === 'object') return formatRational(value);
  return String(value);
}

/** Effective options of one request: defaults < server manifest head < query string. */
export class StreamOptions {
  private readonly values = new Map<string, OptionValue>();

  get(name: string): OptionValue | undefined {
    const v = this.values.get(name);
    if (v !== undefined) return v;
    const spec = BY_NAME.get(name);
    if (spec === undefined) throw new Error(`unregistered option ${name}`);
    if (spec.default === undefined) return spec.repeatable ? [] : undefined;
    return spec.type === 'rational' ? parseRational(String(spec.default))! : spec.default;
  }

  bool(name: string): boolean {
    return this.get(name) === true;
  }

  int(name: string): number | undefined {
    const v = this.get(name);
    return typeof v === 'number' ? v : undefined;
  }

  str(name: string): string | undefined {
    const v = this.get(name);
    return typeof v === 'string' ? v : undefined;
  }

  list(name: string): string[] {
    const v = this.get(name);
    return Array.isArray(v) ? v : [];
  }

  rational(name: string): Rational | undefined {
    const v = this.get(name);
    return typeof v === 'object' && !Array.isArray(v) ? v : undefined;
  }

  /** Whether the value was set explicitly (manifest or query), not defaulted. */
  isSet(name: string): boolean {
    return this.values.has(name);
  }

  set(name: string, value: OptionValue): void {
    this.values.set(name, value);
  }

  entries(): Array<[string, OptionValue]> {
    return [...this.values.entries()];
  }
}

/** Adds one occurrence of an option; repeatable options accumulate in order. */
function put(into: StreamOptions, spec: OptionSpec, value: OptionValue, replaceList: Set<string>): void {
  if (spec.repeatable) {
    const previous = replaceList.has(spec.name) ? [] : into.list(spec.name);
    replaceList.delete(spec.name);
    into.set(spec.name, [...previous, String(value)]);
  } else {
    into.set(spec.name, value);
  }
}

/**
 * Reads the head metas of a server manifest. Metas that are not stream options (creator,
 * clientManifestRelativePath, ...) are kept by the server manifest but ignored here; a stream
 * option with a bad value is an error naming the option and the file.
 */
export function optionsFromManifest(
  meta: ReadonlyArray<{ name: string; content: string }>,
  fileName: string,
): StreamOptions {
  const out = new StreamOptions();
  const none = new Set<string>();
  for (const m of meta) {
    const spec = BY_NAME.get(m.name);
    if (spec === undefined || !spec.stored) continue;
    put(out, spec, parseOptionValue(spec, m.content, `${fileName}: <meta name="${m.name}">`), none);
  }
  return out;
}

/**
 * Applies query parameters over manifest options. Unknown names are ignored (CDNs add their
 * own); a known option that is not allowed in a query, or a bad value, is a 400 naming it.
 */
export function applyQuery(base: StreamOptions, pairs: ReadonlyArray<[string, string | undefined]>): StreamOptions {
  const out = new StreamOptions();
  for (const [k, v] of base.entries()) out.set(k, v);
  // A repeatable option given in the query replaces the manifest's list rather than extending it.
  const replace = new Set(pairs.map(([n]) => n).filter((n) => BY_NAME.get(n)?.repeatable));
  for (const [name, raw] of pairs) {
    // `?iss.key=` is the command-line spelling of a DRM option: refused like `?iss_key=`, not
    // ignored as an unknown name, so no one believes a key was set from a URL.
    const spec = BY_NAME.get(name) ?? (BY_CLI.get(name)?.query === false ? BY_CLI.get(name) : undefined);
    if (spec === undefined) continue;
    if (!spec.query)
      throw originError(
        'bad-option',
        'this option cannot be given as a query parameter (DRM and archiving options are set when packaging)',
        { subject: name },
      );
    put(out, spec, parseOptionValue(spec, raw, `query parameter ${name}`), replace);
  }
  return out;
}

/** Head metas for the stored options that were set, in registry order (what `origin package` writes). */
export function optionsToMeta(options: StreamOptions): Array<{ name: string; content: string }> {
  const out: Array<{ name: string; content: string }> = [];
  for (const spec of OPTIONS) {
    if (!spec.stored || !options.isSet(spec.name)) continue;
    const v = options.get(spec.name)!;
    if (Array.isArray(v)) for (const item of v) out.push({ name: spec.name, content: item });
    else out.push({ name: spec.name, content: formatOptionValue(v) });
  }
  return out;
}

/** CLI parsing of one `--name[=value]` occurrence into `into` (repeatables accumulate). */
export function applyCliOption(into: StreamOptions, spec: OptionSpec, raw: string | undefined, shownAs: string): void {
  if (!spec.stored)
    throw originError('bad-request', 'is a request parameter, not a packaging option', { subject: shownAs });
  put(into, spec, parseOptionValue(spec, raw, shownAs), new Set());
}
