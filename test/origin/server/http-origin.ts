// The origin the HTTP tests (http-headers.test.ts, http-urls.test.ts) run against: one origin on
// loopback per test file with the presentations they use, what the packager wrote into its .ism,
// and the requests the tests make. Expected values come from the fixture facts
// (fixtures/media/facts.json), the .ism the packager wrote, the file system and the source files,
// never from the origin's own model.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { media } from '../../helpers/fixtures';
import { PLAYABLE } from '../../helpers/presentations';
import { outputTimes } from '../manifests/format-support';
import { Fetched, get, startTestOrigin, TestOrigin } from './server-helpers';
import { boxes } from '../../helpers/box-walk';

export let origin: TestOrigin;
export let tracks: IsmTrack[];
/** Every MPD this file fetched, validated against the DASH schema by the last test. */
export const mpdsSeen = new Map<string, string>();

/** The .ism `c` before and after it is rewritten (its mtimes are set to these instants). */
export const C_BEFORE = ['video_baseline_400k.ismv', 'audio_eng_64k.isma'];
export const C_AFTER = ['video_main_900k.ismv', 'audio_nld_128k.isma', 'text_eng.ismt'];
export const C_MTIME_BEFORE = new Date(Date.UTC(2024, 0, 1, 10, 0, 0));
export const C_MTIME_AFTER = new Date(Date.UTC(2024, 0, 2, 3, 4, 5));
/** p.ism and the static file get fixed past mtimes, so that no clock can pass for them. */
export const P_MTIME = new Date(Date.UTC(2023, 5, 15, 12, 30, 45));
export const STATIC_MTIME = new Date(Date.UTC(2022, 1, 3, 4, 5, 6));

export const MANIFEST_CACHE = 'public, max-age=60';
export const SEGMENT_CACHE = 'public, max-age=86400';
export const FILTER_AVC_AAC = 'filter=FourCC%3D%3D%22AVC1%22%7C%7CFourCC%3D%3D%22AACL%22';

/** Starts the origin for the calling test file and lays out the presentations the tests use. */
export function setUpHttpOrigin(): void {
  beforeAll(async () => {
    origin = await startTestOrigin({ p: PLAYABLE, c: C_BEFORE });
    const pIsm = path.join(origin.root, 'p.ism');
    const text = await fs.readFile(pIsm, 'utf8');
    tracks = ismTracks(text);
    await fs.utimes(pIsm, P_MTIME, P_MTIME);
    await fs.utimes(path.join(origin.root, 'c.ism'), C_MTIME_BEFORE, C_MTIME_BEFORE);
    // `d`: the same presentation, never requested before the concurrency test (a cold cache).
    await fs.writeFile(path.join(origin.root, 'd.ism'), text);
    // `a/b/q`: the same presentation one directory deeper, its sources made absolute.
    await fs.mkdir(path.join(origin.root, 'a', 'b'), { recursive: true });
    await fs.writeFile(
      path.join(origin.root, 'a', 'b', 'q.ism'),
      text.replace(/src="([^"]+)"/g, (_, src: string) => `src="${path.resolve(origin.root, src)}"`),
    );
    // A static file under the root.
    await fs.mkdir(path.join(origin.root, 'static'));
    await fs.copyFile(media('audio_eng_64k.isma'), path.join(origin.root, 'static', 'a.bin'));
    await fs.utimes(path.join(origin.root, 'static', 'a.bin'), STATIC_MTIME, STATIC_MTIME);
  });

  afterAll(async () => {
    await origin.server.close();
  });
}

// ---------------------------------------------------------------------------------------------
// What the packager wrote into the .ism (the origin's input, read with a regular expression)

export interface IsmTrack {
  file: string;
  type: string;
  trackName: string;
  bitrate: number;
  /** `<trackName>=<bitrate>`: the representation id the URL grammar uses. */
  key: string;
}

export function ismTracks(ism: string): IsmTrack[] {
  return [...ism.matchAll(/<(video|audio|textstream)\b([^>]*)>([\s\S]*?)<\/\1>/g)].map((m) => {
    const file = path.basename(/\bsrc="([^"]+)"/.exec(m[2]!)![1]!);
    const bitrate = Number(/\bsystemBitrate="(\d+)"/.exec(m[2]!)![1]);
    const trackName = /<param name="trackName" value="([^"]+)"/.exec(m[3]!)![1]!;
    return { file, type: m[1]!, trackName, bitrate, key: `${trackName}=${bitrate}` };
  });
}

export const track = (file: string): IsmTrack => {
  const t = tracks.find((x) => x.file === file);
  if (t === undefined) throw new Error(`${file} is not in p.ism`);
  return t;
};
export const VIDEO = 'video_baseline_400k.ismv';
export const AUDIO = 'audio_eng_64k.isma';

/** Output time of fragment i of a fixture file in the presentation of PLAYABLE. */
export const timeOf = (file: string, i: number): bigint => outputTimes(PLAYABLE, file)[i]!;

// ---------------------------------------------------------------------------------------------
// Requests

/** GET (or another method) of a path or of an absolute URL on the origin. */
export function request(u: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Fetched> {
  const raw = u.startsWith('/') ? u : new URL(u).pathname + new URL(u).search;
  return get(origin.url, raw, headers, method);
}

export async function ok(u: string): Promise<Fetched> {
  const r = await request(u);
  if (r.status !== 200) throw new Error(`GET ${u} → ${r.status} ${r.text.slice(0, 200)}`);
  if (u.includes('.mpd')) mpdsSeen.set(u, r.text);
  return r;
}

/** Fetches every URL (a few at a time); fails listing every one that did not answer 200. */
export async function fetchAll(urls: readonly string[], concurrency = 8): Promise<Map<string, Fetched>> {
  const unique = [...new Set(urls)];
  const out = new Map<string, Fetched>();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < unique.length) {
      const u = unique[next++]!;
      out.set(u, await request(u));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const failed = [...out]
    .filter(([, r]) => r.status !== 200)
    .map(([u, r]) => `${u} → ${r.status} ${r.text.trim().slice(0, 120)}`);
  expect(failed).toEqual([]);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Segment checks over the tests' own box walk (test/helpers/box-walk.ts)

export const TFXD = '6d1d9b0542d544e680e2141daff757b2';

/** For each moof of a segment: the first traf's tfdt and its tfxd time, if any. */
export function fragmentTimes(segment: Buffer): Array<{ tfdt: bigint | undefined; tfxd: bigint | undefined }> {
  return boxes(segment)
    .filter((b) => b.type === 'moof')
    .map((moof) => {
      const traf = boxes(moof.body).find((b) => b.type === 'traf')!;
      const inner = boxes(traf.body);
      const tfdt = inner.find((b) => b.type === 'tfdt');
      const tfxd = inner.find((b) => b.type === 'uuid' && b.body.toString('hex', 0, 16) === TFXD);
      return {
        tfdt:
          tfdt === undefined
            ? undefined
            : tfdt.body[0] === 1
              ? tfdt.body.readBigUInt64BE(4)
              : BigInt(tfdt.body.readUInt32BE(4)),
        tfxd:
          tfxd === undefined
            ? undefined
            : tfxd.body[16] === 1
              ? tfxd.body.readBigInt64BE(20)
              : BigInt(tfxd.body.readUInt32BE(20)),
      };
    });
}
