// `origin capture <client-manifest URL> -o <out>.ismv [--copy_ts]`: records the tracks and time
// range a manifest URL selects (its `filter` and `t`) into one fragmented MP4 for `origin package`
// (origin/capture/capture.ts; docs/guide/capture.md).

import { capture } from '../capture/capture';
import { UsageError, eachArg } from './args';

export const CAPTURE_USAGE = `Usage: origin capture <client-manifest URL> -o <output>.ismv [--copy_ts] [-q]

Records the tracks and the time range a client-manifest URL selects into one fragmented MP4 file
that origin package turns into a VOD presentation. The URL is one of this origin's (Smooth
Manifest, .mpd, .m3u8 of a .ism or .isml: the origin applies its filter and t) or a third-party
DASH MPD (SegmentTemplate) or HLS playlist (fMP4 or MPEG-TS); http://, https:// or file://.
Clear H.264 and AAC only: anything else is refused with exit code 1, naming the feature.

  t=<start>[-[<end>]]   seconds, hh:mm:ss[.fff] or ISO 8601 without zone (UTC); snapped to GOPs;
                        with only a start, to the end (VOD) or to the current time (live)
  filter=<expression>   the tracks to keep (third-party: on the properties the manifest states)

Options:
  -o, --output <path>   the fragmented MP4 to write (.ismv)
      --copy_ts         keep the source times (default: the capture starts at 0)
      --retries <n>     retries of a failed request before giving up (default 10)
  -q, --quiet           no progress lines on stderr
  -h, --help            this text
`;

interface CaptureArgs {
  url?: string;
  output?: string;
  copyTs: boolean;
  quiet: boolean;
  help: boolean;
  retries?: number;
}

export function parseCaptureArgs(argv: readonly string[]): CaptureArgs {
  const a: CaptureArgs = { copyTs: false, quiet: false, help: false };
  eachArg(argv, (x) => {
    if (x.flag === '-h' || x.flag === '--help') a.help = true;
    else if (x.flag === '-q' || x.flag === '--quiet') a.quiet = true;
    else if (x.flag === '--copy_ts') a.copyTs = true;
    else if (x.flag === '-o' || x.flag === '--output') {
      if (a.output !== undefined) throw new UsageError('-o is given twice');
      a.output = x.value();
    } else if (x.flag === '--retries') {
      const v = x.value();
      if (!/^\d+$/.test(v)) throw new UsageError(`--retries must be a whole number, not "${v}"`);
      a.retries = Number(v);
    } else if (x.arg.startsWith('-')) throw new UsageError(`unknown option ${x.flag} (see origin capture --help)`);
    else if (a.url !== undefined) throw new UsageError(`one URL only: "${a.url}" and "${x.arg}"`);
    else a.url = x.arg;
  });
  return a;
}

export async function runCapture(
  argv: readonly string[],
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
): Promise<number> {
  const args = parseCaptureArgs(argv);
  if (args.help) {
    out.write(CAPTURE_USAGE);
    return 0;
  }
  if (args.url === undefined) throw new UsageError('no URL: give the client manifest to capture');
  if (args.output === undefined) throw new UsageError('no output: give -o <output>.ismv');
  if (!/\.(ismv|mp4)$/i.test(args.output)) throw new UsageError(`-o ${args.output}: the output is a .ismv (or .mp4)`);
  const progress = args.quiet ? () => {} : (line: string) => err.write(`${line}\n`);
  const r = await capture({
    url: args.url,
    output: args.output,
    copyTs: args.copyTs,
    progress,
    ...(args.retries !== undefined ? { fetch: { retries: args.retries } } : {}),
  });
  progress(`wrote ${args.output}: ${r.tracks} tracks, ${r.fragments} fragments, ${r.seconds.toFixed(3)} s`);
  return 0;
}
