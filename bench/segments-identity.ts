// Byte identity of the generated segments between this build and an older one (issue 26: "every
// TS, packed-audio and I-frame segment of the bench presentation byte-identical to before, or each
// difference explained as a fix"). Both builds serve the `http` suite's presentation (b.ism, 30 min,
// three H.264 renditions and two AAC tracks); every HLS MPEG-TS, packed audio (.aac) and I-frame
// segment its playlists list (hls_client_manifest_version=4, so the I-frame playlists are in the
// master) and every HDS fragment of its F4M is fetched from both, 8 at a time, and their SHA-256
// compared. URLs are read from this build's manifests; the older build must answer them all 200.
// Needs BENCH_BEFORE_CLI=<bin/origin.js of the older build>. Writes bench/results/identity.json.

import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { Proc, startOrigin, stop } from './http-processes';
import { prepareHttpIsm } from './http-bench';
import { fetchUrl, hdsUrls, hlsUrls, smoothUrls, TrackUrls } from './http-urls';
import { machine } from './machine';
import { repoRoot } from './media';

export const IDENTITY_KINDS = ['hls-ts', 'packed-audio', 'iframe-ts', 'hds'] as const;
type Kind = (typeof IDENTITY_KINDS)[number];

/** Every generated segment path of the presentation, by kind. */
async function generatedPaths(base: string): Promise<Record<Kind, string[]>> {
  const ism = `${base}/b.ism`;
  const hls = await hlsUrls(`${ism}/.m3u8?hls_client_manifest_version=4`);
  const fragments = (await smoothUrls(`${ism}/Manifest`)).find((t) => t.video)!.segments.length;
  const hds = await hdsUrls(`${ism}/.f4m`, fragments);
  const paths = (tracks: TrackUrls[]): string[] =>
    tracks.flatMap((t) => t.segments.map((s) => new URL(s).pathname + new URL(s).search));
  const ends = (t: TrackUrls, ext: string): boolean => new URL(t.segments[0]!).pathname.endsWith(ext);
  return {
    'hls-ts': paths(hls.filter((t) => t.iframes !== true && ends(t, '.ts'))),
    'packed-audio': paths(hls.filter((t) => ends(t, '.aac'))),
    'iframe-ts': paths(hls.filter((t) => t.iframes === true)),
    hds: paths(hds),
  };
}

/** SHA-256 of each path's body on one server, 8 requests at a time; a non-200 answer is an error. */
async function digests(proc: Proc, paths: string[]): Promise<string[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const out: string[] = new Array<string>(paths.length);
  let next = 0;
  try {
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < paths.length) {
          const i = next++;
          const r = await fetchUrl(proc.url + paths[i]!, agent);
          if (r.status !== 200) throw new Error(`${paths[i]}: HTTP ${r.status}`);
          out[i] = createHash('sha256').update(r.body).digest('hex');
        }
      }),
    );
  } finally {
    agent.destroy();
  }
  return out;
}

export async function runIdentityCheck(log: (line: string) => void = console.log): Promise<Record<string, unknown>> {
  const beforeCli = process.env['BENCH_BEFORE_CLI'];
  if (beforeCli === undefined) throw new Error('BENCH_BEFORE_CLI=<bin/origin.js of the older build> is required');
  const { dir } = await prepareHttpIsm(log);
  const origin = await startOrigin(dir, 1);
  const before = await startOrigin(dir, 1, [], beforeCli).catch(async (e: unknown) => {
    await stop(origin);
    throw e;
  });
  const kinds: Record<string, { segments: number; identical: number; different: string[] }> = {};
  try {
    const paths = await generatedPaths(origin.url);
    for (const kind of IDENTITY_KINDS) {
      const [a, b] = [await digests(origin, paths[kind]), await digests(before, paths[kind])];
      const different = paths[kind].filter((_, i) => a[i] !== b[i]);
      kinds[kind] = { segments: paths[kind].length, identical: paths[kind].length - different.length, different };
      log(`[identity] ${kind}: ${paths[kind].length} segments, ${different.length} different`);
    }
  } finally {
    await stop(origin);
    await stop(before);
  }
  const result = { suite: 'identity', date: new Date().toISOString(), machine: machine(), before: beforeCli, kinds };
  const outFile = path.join(repoRoot(), 'bench', 'results', 'identity.json');
  mkdirSync(path.dirname(outFile), { recursive: true });
  writeFileSync(outFile, `${JSON.stringify(result, null, 2)}\n`);
  log(`results: ${path.relative(repoRoot(), outFile)}`);
  const differing = Object.values(kinds).reduce((n, k) => n + k.different.length, 0);
  if (differing > 0) throw new Error(`${differing} generated segments differ from the build before (see ${outFile})`);
  return result;
}
