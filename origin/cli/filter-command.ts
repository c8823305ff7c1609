// `origin filter '<expression>' <x.ism> [--json]`: what a filter expression does to the tracks of
// a server manifest. The reference recommends checking filters against the manifest by hand; this
// prints every track with the properties a filter can name, whether the expression keeps it, the
// canonical form (what the edge uses as a cache key and logs print) and the count kept.
// Exit codes as every command: 0 at least one track kept, 1 none kept (a request with this filter
// gets 400) or the server manifest cannot be read, 2 a bad expression or command line.

import { promises as fs } from 'node:fs';
import { FilterSyntaxError, filterEngine } from '../../host-glue/filter/filter-engine';
import { originError } from '../errors';
import { ismTrackToProperties } from '../ism/ism-tracks';
import { parseServerManifest } from '../ism/server-manifest';
import { TrackProperties } from '../model/media';
import { rowDetails, trackRow } from '../ism/track-table';
import { UsageError } from './args';

export const FILTER_USAGE = `Usage: origin filter '<expression>' <x.ism> [--json]

Prints every track of the server manifest with the properties a filter can name and whether
the expression keeps it, then the canonical expression and how many tracks it keeps.
Quote the expression for the shell: origin filter 'type=="video"&&systemBitrate<800000' x.ism

Options:
  --json        the same as JSON on stdout
  -h, --help    this text
Exit codes: 0 tracks kept, 1 no track kept (a request would get 400) or the file cannot be
read, 2 a bad expression (the message points at its position) or command line.
`;

export async function runFilter(
  argv: readonly string[],
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
): Promise<number> {
  const args = parseFilterArgs(argv);
  if (args.help) {
    out.write(FILTER_USAGE);
    return 0;
  }
  const engine = filterEngine();
  // The expression is checked before the file is read: a typo is reported even with a wrong path.
  let canonical: string;
  try {
    canonical = engine.canonical(args.expression);
  } catch (e) {
    if (!(e instanceof FilterSyntaxError)) throw e;
    if (args.json)
      out.write(
        `${JSON.stringify({ expression: args.expression, error: { message: e.reason, offset: e.offset, hint: e.hint, text: e.detail } }, null, 2)}\n`,
      );
    throw new UsageError(showFilterError(e, ''));
  }
  const { tracks, trackFilter } = await readTracks(args.ism);
  const keep = engine.select(args.expression, tracks);
  const kept = keep.filter((k) => k).length;
  const context = trackFilterContext(trackFilter, tracks, keep);

  if (args.json) {
    out.write(
      `${JSON.stringify({ expression: args.expression, canonical, kept, total: tracks.length, ...(context ? { trackFilter: context.json } : {}), tracks: tracks.map((t, i) => trackJson(t, i, keep[i]!)) }, null, 2)}\n`,
    );
  } else {
    out.write(`${trackTable(tracks, keep)}\n\ncanonical: ${canonical}\n${kept} of ${tracks.length} tracks kept\n`);
    if (context) out.write(`${context.text}\n`);
  }
  if (kept === 0) {
    err.write(
      `origin filter: ${args.expression} keeps none of the ${tracks.length} tracks of ${args.ism}: a request with this filter gets 400\n`,
    );
    return 1;
  }
  return 0;
}

interface FilterArgs {
  expression: string;
  ism: string;
  json: boolean;
  help: boolean;
}

function parseFilterArgs(argv: readonly string[]): FilterArgs {
  const positional: string[] = [];
  let json = false;
  let help = false;
  let optionsDone = false;
  for (const arg of argv) {
    // No expression starts with "-" (the language has no negative numbers), so a leading dash is
    // always an option; "--" still ends them, for a file name that starts with one.
    if (optionsDone || !arg.startsWith('-') || arg === '-') positional.push(arg);
    else if (arg === '--') optionsDone = true;
    else if (arg === '--json') json = true;
    else if (arg === '-h' || arg === '--help') help = true;
    else throw new UsageError(`unknown option ${arg} (see origin filter --help)`);
  }
  if (help) return { expression: '', ism: '', json, help };
  if (positional.length !== 2) {
    throw new UsageError(
      `expected an expression and a server manifest, got ${positional.length} argument${positional.length === 1 ? '' : 's'}\n${FILTER_USAGE}`,
    );
  }
  return { expression: positional[0]!, ism: positional[1]!, json, help };
}

async function readTracks(file: string): Promise<{ tracks: TrackProperties[]; trackFilter: string | undefined }> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (e) {
    throw originError(
      'not-found',
      `cannot read the server manifest (${(e as NodeJS.ErrnoException).code ?? 'error'})`,
      { subject: file },
    );
  }
  const manifest = parseServerManifest(text, file);
  const tracks = manifest.tracks.map((t, i) => ismTrackToProperties(t, i));
  if (tracks.length === 0) throw originError('bad-request', 'has no tracks to filter', { subject: file });
  return { tracks, trackFilter: manifest.meta.find((m) => m.name === 'track_filter')?.content };
}

/**
 * The manifest's own track_filter also applies to every request (before `filter`): say what the
 * two keep together, so the table is not mistaken for what a request gets.
 */
function trackFilterContext(
  trackFilter: string | undefined,
  tracks: TrackProperties[],
  keep: boolean[],
): { text: string; json: object } | undefined {
  if (trackFilter === undefined || trackFilter === '') return undefined;
  try {
    const base = filterEngine().select(trackFilter, tracks);
    const together = base.filter((b, i) => b && keep[i]).length;
    return {
      text: `the server manifest's track_filter ${trackFilter} also applies to requests: with it, ${together} of ${tracks.length} tracks kept`,
      json: { expression: trackFilter, kept: base.filter((b) => b).length, keptTogether: together },
    };
  } catch (e) {
    if (!(e instanceof FilterSyntaxError)) throw e;
    return {
      text: `the server manifest's track_filter is invalid: ${e.detail}`,
      json: { expression: trackFilter, error: e.detail },
    };
  }
}

function trackTable(tracks: TrackProperties[], keep: boolean[]): string {
  const rows = tracks.map((p, i) => [
    String(i + 1),
    keep[i] ? 'keep' : 'drop',
    p.trackName,
    p.type,
    p.FourCC,
    String(p.systemBitrate),
    p.systemLanguage,
    rowDetails(trackRow(p, i)).join(' '),
  ]);
  const header = ['#', 'filter', 'trackName', 'type', 'FourCC', 'systemBitrate', 'systemLanguage', 'properties'];
  const rightAligned = new Set([0, 5]);
  const all = [header, ...rows];
  const widths = header.map((_, c) => Math.max(...all.map((r) => r[c]!.length)));
  const line = (r: string[]): string =>
    r
      .map((cell, c) =>
        c === r.length - 1 ? cell : rightAligned.has(c) ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!),
      )
      .join('  ')
      .trimEnd();
  const rule = widths.map((w, c) => '-'.repeat(c === widths.length - 1 ? header[c]!.length : w));
  return [line(header), line(rule), ...rows.map(line)].join('\n');
}

function trackJson(p: TrackProperties, index: number, keep: boolean): Record<string, unknown> {
  const { index: at, ...rest } = trackRow(p, index);
  return { index: at, keep, ...rest };
}

/**
 * A filter error for a terminal: the message (prefixed with `subject` when given), then the
 * expression with a caret under the offending character. Long expressions are shown as a
 * window around it; tabs and newlines print as spaces so the caret stays in its column.
 */
export function showFilterError(e: FilterSyntaxError, subject: string | undefined = e.subject): string {
  const head = subject ? `${subject}: ${e.detail}` : e.detail;
  return `${head}\n${caretLines(e.expression, e.offset)}`;
}

export function caretLines(text: string, offset: number, indent = '    '): string {
  // Code points with their UTF-16 offsets (the error offset counts UTF-16 units).
  const points: Array<{ at: number; ch: string }> = [];
  for (let at = 0; at < text.length;) {
    const ch = String.fromCodePoint(text.codePointAt(at)!);
    points.push({ at, ch: /[\u0000-\u001f\u007f]/.test(ch) ? (/[\t\n\r]/.test(ch) ? ' ' : '?') : ch });
    at += ch.length;
  }
  let column = points.findIndex((p) => p.at >= offset);
  if (column < 0) column = points.length;
  const from = Math.max(0, column - 60);
  const to = Math.min(points.length, column + 20);
  const before = from > 0 ? '...' : '';
  const visible = points
    .slice(from, to)
    .map((p) => p.ch)
    .join('');
  const after = to < points.length ? '...' : '';
  return `${indent}${before}${visible}${after}\n${indent}${' '.repeat(before.length + column - from)}^`;
}
