// The origin's HTTP behaviour through real requests on loopback: Content-Type, Content-Length,
// Last-Modified (the .ism's mtime), ETag/304, HEAD, CORS, Cache-Control, Range (RFC 9110 §14),
// static files; and the URL space seen from the outside: every URL each manifest writes answers,
// with the query carried or suppressed, presentation_name, virtual paths, $Number$ templates,
// sub-clips, a changed .ism, concurrent requests. Expected values come from the fixture facts
// (fixtures/media/facts.json), the .ism the packager wrote, the file system and the source
// files, never from the origin's own model.

import { XMLParser } from 'fast-xml-parser';
import { promises as fs, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parseServeArgs } from '../../../origin/cli/serve-command';
import { startServer } from '../../../origin/server/server';
import { wasmTrackSelector } from '../../../origin/server/select';
import { media, runOrigin } from '../../helpers/fixtures';
import { PLAYABLE } from '../../helpers/presentations';
import { facts, outputTimes, parseM3u8, validateMpd } from '../manifests/format-support';
import { DEFAULT_LIMITS } from '../../../origin/cache/presentation-store';
import { Fetched, get, startTestOrigin, TestOrigin } from './server-helpers';
import { boxes } from '../../helpers/box-walk';

let origin: TestOrigin;
let tracks: IsmTrack[];
/** Every MPD this file fetched, validated against the DASH schema by the last test. */
const mpdsSeen = new Map<string, string>();

/** The .ism `c` before and after it is rewritten (its mtimes are set to these instants). */
const C_BEFORE = ['video_baseline_400k.ismv', 'audio_eng_64k.isma'];
const C_AFTER = ['video_main_900k.ismv', 'audio_nld_128k.isma', 'text_eng.ismt'];
const C_MTIME_BEFORE = new Date(Date.UTC(2024, 0, 1, 10, 0, 0));
const C_MTIME_AFTER = new Date(Date.UTC(2024, 0, 2, 3, 4, 5));
/** p.ism and the static file get fixed past mtimes, so that no clock can pass for them. */
const P_MTIME = new Date(Date.UTC(2023, 5, 15, 12, 30, 45));
const STATIC_MTIME = new Date(Date.UTC(2022, 1, 3, 4, 5, 6));

const MANIFEST_CACHE = 'public, max-age=60';
const SEGMENT_CACHE = 'public, max-age=86400';
const FILTER_AVC_AAC = 'filter=FourCC%3D%3D%22AVC1%22%7C%7CFourCC%3D%3D%22AACL%22';

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
  await fs.copyFile(media('audio_eng_64k.isma'), path.join(origin.root, 'static', 'a.isma'));
  await fs.utimes(path.join(origin.root, 'static', 'a.isma'), STATIC_MTIME, STATIC_MTIME);
});

afterAll(async () => {
  await origin.server.close();
});

// ---------------------------------------------------------------------------------------------
// What the packager wrote into the .ism (the origin's input, read with a regular expression)

interface IsmTrack {
  file: string;
  type: string;
  trackName: string;
  bitrate: number;
  /** `<trackName>=<bitrate>`: the representation id the URL grammar uses. */
  key: string;
}

function ismTracks(ism: string): IsmTrack[] {
  return [...ism.matchAll(/<(video|audio|textstream)\b([^>]*)>([\s\S]*?)<\/\1>/g)].map((m) => {
    const file = path.basename(/\bsrc="([^"]+)"/.exec(m[2]!)![1]!);
    const bitrate = Number(/\bsystemBitrate="(\d+)"/.exec(m[2]!)![1]);
    const trackName = /<param name="trackName" value="([^"]+)"/.exec(m[3]!)![1]!;
    return { file, type: m[1]!, trackName, bitrate, key: `${trackName}=${bitrate}` };
  });
}

const track = (file: string): IsmTrack => {
  const t = tracks.find((x) => x.file === file);
  if (t === undefined) throw new Error(`${file} is not in p.ism`);
  return t;
};
const VIDEO = 'video_baseline_400k.ismv';
const AUDIO = 'audio_eng_64k.isma';

/** Output time of fragment i of a fixture file in the presentation of PLAYABLE. */
const timeOf = (file: string, i: number): bigint => outputTimes(PLAYABLE, file)[i]!;

// ---------------------------------------------------------------------------------------------
// Requests

/** GET (or another method) of a path or of an absolute URL on the origin. */
function request(u: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Fetched> {
  const raw = u.startsWith('/') ? u : new URL(u).pathname + new URL(u).search;
  return get(origin.url, raw, headers, method);
}

async function ok(u: string): Promise<Fetched> {
  const r = await request(u);
  if (r.status !== 200) throw new Error(`GET ${u} → ${r.status} ${r.text.slice(0, 200)}`);
  if (u.includes('.mpd')) mpdsSeen.set(u, r.text);
  return r;
}

/** Fetches every URL (a few at a time); fails listing every one that did not answer 200. */
async function fetchAll(urls: readonly string[], concurrency = 8): Promise<Map<string, Fetched>> {
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

const TFXD = '6d1d9b0542d544e680e2141daff757b2';

/** For each moof of a segment: the first traf's tfdt and its tfxd time, if any. */
function fragmentTimes(segment: Buffer): Array<{ tfdt: bigint | undefined; tfxd: bigint | undefined }> {
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

// ---------------------------------------------------------------------------------------------
// The URLs each manifest writes

interface Written {
  /** Absolute, resolved against the document that wrote it. */
  url: string;
  kind: 'playlist' | 'init' | 'media';
  /** Representation id / `<StreamIndex Name>=<Bitrate>` / media playlist URI. */
  key: string;
  time?: bigint;
  duration?: bigint;
  number?: number;
}

const unescapeXml = (s: string): string =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
const attr = (attrs: string, name: string): string | undefined => {
  const m = new RegExp(`\\b${name}="([^"]*)"`).exec(attrs);
  return m === null ? undefined : unescapeXml(m[1]!);
};

/** MS-SSTR §2.2.2.3/§2.2.2.6: the StreamIndex Url template filled for every QualityLevel and `<c>`. */
function smoothWritten(manifest: string, manifestUrl: string): Written[] {
  const out: Written[] = [];
  for (const m of manifest.matchAll(/<StreamIndex\b([^>]*)>([\s\S]*?)<\/StreamIndex>/g)) {
    const name = attr(m[1]!, 'Name')!;
    const template = attr(m[1]!, 'Url')!;
    const bitrates = [...m[2]!.matchAll(/<QualityLevel\b([^>]*)>/g)].map((q) => attr(q[1]!, 'Bitrate')!);
    let next = 0n;
    const chunks: Array<{ time: bigint; duration: bigint }> = [];
    for (const c of m[2]!.matchAll(/<c\b([^>]*)\/>/g)) {
      const t = attr(c[1]!, 't');
      const d = BigInt(attr(c[1]!, 'd')!);
      // §2.2.2.6.1: r is the number of consecutive fragments of this duration.
      const r = Number(attr(c[1]!, 'r') ?? '1');
      let time = t !== undefined ? BigInt(t) : next;
      for (let i = 0; i < r; i++, time += d) chunks.push({ time, duration: d });
      next = time;
    }
    for (const b of bitrates) {
      for (const c of chunks) {
        const rel = template
          .replace('{bitrate}', b)
          .replace('{Bitrate}', b)
          .replace('{start time}', String(c.time))
          .replace('{start_time}', String(c.time));
        out.push({
          url: new URL(rel, manifestUrl).href,
          kind: 'media',
          key: `${name}=${b}`,
          time: c.time,
          duration: c.duration,
        });
      }
    }
  }
  return out;
}

/** An element as fast-xml-parser returns it: attributes as strings, children as objects. */
type XmlNode = { [name: string]: unknown };
const str = (node: XmlNode, name: string): string | undefined =>
  node[name] === undefined ? undefined : String(node[name]);
const xml = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseAttributeValue: false,
  isArray: (n) => ['Period', 'AdaptationSet', 'Representation', 'S'].includes(n),
});

/** ISO/IEC 23009-1 §5.3.9.4/§5.3.9.6: each SegmentTemplate expanded for every S of its timeline. */
function dashWritten(mpd: string, mpdUrl: string): Written[] {
  expect(mpd).not.toContain('<BaseURL'); // the expansion below resolves against the MPD URL only
  type Template = XmlNode & { SegmentTimeline: { S: XmlNode[] } };
  const doc = xml.parse(mpd) as {
    MPD: {
      Period: Array<{
        AdaptationSet: Array<{
          SegmentTemplate?: Template;
          Representation: Array<XmlNode & { SegmentTemplate?: Template }>;
        }>;
      }>;
    };
  };
  const out: Written[] = [];
  for (const period of doc.MPD.Period) {
    for (const set of period.AdaptationSet) {
      for (const rep of set.Representation) {
        const tpl = rep.SegmentTemplate ?? set.SegmentTemplate!;
        const id = str(rep, 'id')!;
        const fill = (s: string, time?: bigint, n?: number): string =>
          s
            .replace(/\$RepresentationID\$/g, id)
            .replace(/\$Bandwidth\$/g, str(rep, 'bandwidth')!)
            .replace(/\$Time\$/g, String(time))
            .replace(/\$Number\$/g, String(n));
        out.push({ url: new URL(fill(str(tpl, 'initialization')!), mpdUrl).href, kind: 'init', key: id });
        let time = 0n;
        let n = Number(str(tpl, 'startNumber') ?? '1');
        for (const s of tpl.SegmentTimeline.S) {
          if (str(s, 't') !== undefined) time = BigInt(str(s, 't')!);
          const d = BigInt(str(s, 'd')!);
          for (let i = 0; i <= Number(str(s, 'r') ?? '0'); i++, time += d, n++) {
            out.push({
              url: new URL(fill(str(tpl, 'media')!, time, n), mpdUrl).href,
              kind: 'media',
              key: id,
              time,
              duration: d,
              number: n,
            });
          }
        }
      }
    }
  }
  return out;
}

interface ResolvedPlaylist {
  segments: Array<{ resolvedUri: string; map: { resolvedUri: string } }>;
}
interface ResolvedMpd {
  playlists: ResolvedPlaylist[];
  mediaGroups: { AUDIO: Record<string, Record<string, { playlists: ResolvedPlaylist[] }>> };
}
const mpdParser = require('mpd-parser') as { parse(text: string, opts: { manifestUri: string }): ResolvedMpd };

/** What mpd-parser (video.js's reader) resolves: its URLs must be ours (it skips stpp text). */
function mpdParserUrls(mpd: string, mpdUrl: string): string[] {
  const m = mpdParser.parse(mpd, { manifestUri: mpdUrl });
  const lists = [...m.playlists];
  for (const group of Object.values(m.mediaGroups.AUDIO))
    for (const g of Object.values(group)) lists.push(...g.playlists);
  return lists.flatMap((p) => [p.segments[0]!.map.resolvedUri, ...p.segments.map((s) => s.resolvedUri)]);
}

/** RFC 8216 §4.3.4: every URI of the master, then of each media playlist (fetched). */
async function hlsWritten(
  masterPath: string,
): Promise<{ written: Written[]; playlists: Map<string, ReturnType<typeof parseM3u8>['manifest']> }> {
  const masterUrl = origin.url + masterPath;
  const master = parseM3u8((await ok(masterPath)).text).manifest;
  const uris = [...(master.playlists ?? []).map((p) => p.uri)];
  for (const kind of [master.mediaGroups.AUDIO, master.mediaGroups.SUBTITLES]) {
    // A rendition without URI is carried in the variant's own (multiplexed) playlist (§4.3.4.1).
    for (const group of Object.values(kind))
      for (const r of Object.values(group)) if (r.uri !== undefined) uris.push(r.uri);
  }
  const written: Written[] = [];
  const playlists = new Map<string, ReturnType<typeof parseM3u8>['manifest']>();
  // An audio-only variant names the same playlist as its group's rendition, and a multiplexed
  // master's DEFAULT rendition the playlist of an audio-only variant, possibly spelled otherwise
  // (a raw `"` in a variant's URI line is `%22` in an EXT-X-MEDIA quoted-string, RFC 8216 §4.2):
  // fetch each resolved URL once.
  const seen = new Set<string>();
  for (const uri of uris) {
    const url = new URL(uri, masterUrl).href;
    if (seen.has(url)) continue;
    seen.add(url);
    written.push({ url, kind: 'playlist', key: uri });
    const list = parseM3u8((await ok(url)).text).manifest;
    playlists.set(uri, list);
    const init = list.segments[0]?.map?.uri;
    if (init !== undefined) written.push({ url: new URL(init, url).href, kind: 'init', key: uri });
    for (const s of list.segments)
      written.push({
        url: new URL(s.uri, url).href,
        kind: 'media',
        key: uri,
        duration: BigInt(Math.round(s.duration * 1e7)),
      });
  }
  return { written, playlists };
}

async function writtenBy(format: 'smooth' | 'dash' | 'hls', manifestPath: string): Promise<Written[]> {
  if (format === 'hls') return (await hlsWritten(manifestPath)).written;
  // Sent as written (a raw `"` stays raw); URLs resolve against it as a client would.
  const url = origin.url + manifestPath;
  const text = (await ok(manifestPath)).text;
  return format === 'smooth' ? smoothWritten(text, url) : dashWritten(text, url);
}

/** The part of a URL after the manifest's directory, with the query. */
const tailOf = (u: string, dir: string): string => {
  const x = new URL(u);
  expect(x.pathname.startsWith(dir)).toBe(true);
  return x.pathname.slice(dir.length) + x.search;
};

// ---------------------------------------------------------------------------------------------
// Headers

/** One URL of each output (built from the .ism's bitrates and the fixture facts). */
function outputs(): Array<{ what: string; url: string; type: string; cacheControl: string }> {
  const v = track(VIDEO);
  const a = track(AUDIO);
  return [
    { what: 'Smooth manifest', url: '/p.ism/Manifest', type: 'text/xml; charset=utf-8', cacheControl: MANIFEST_CACHE },
    { what: 'MPD', url: '/p.ism/.mpd', type: 'application/dash+xml', cacheControl: MANIFEST_CACHE },
    {
      what: 'HLS master',
      url: '/p.ism/.m3u8?hls_fmp4=true',
      type: 'application/vnd.apple.mpegurl',
      cacheControl: MANIFEST_CACHE,
    },
    {
      what: 'HLS media playlist',
      url: `/p.ism/p-${a.key}.m3u8?hls_fmp4=true`,
      type: 'application/vnd.apple.mpegurl',
      cacheControl: MANIFEST_CACHE,
    },
    {
      what: 'Smooth fragment',
      url: `/p.ism/QualityLevels(${v.bitrate})/Fragments(${v.trackName}=${timeOf(VIDEO, 1)})`,
      type: 'video/mp4',
      cacheControl: SEGMENT_CACHE,
    },
    { what: 'DASH init', url: `/p.ism/dash/p-${v.key}.dash`, type: 'video/mp4', cacheControl: SEGMENT_CACHE },
    {
      what: 'DASH media',
      url: `/p.ism/dash/p-${a.key}-${timeOf(AUDIO, 2)}.dash`,
      type: 'video/mp4',
      cacheControl: SEGMENT_CACHE,
    },
    {
      what: 'HLS init',
      url: `/p.ism/hls/p-${v.key}.m4s?hls_fmp4=true`,
      type: 'video/mp4',
      cacheControl: SEGMENT_CACHE,
    },
    {
      what: 'HLS segment',
      url: `/p.ism/hls/p-${v.key}-1.m4s?hls_fmp4=true`,
      type: 'video/mp4',
      cacheControl: SEGMENT_CACHE,
    },
  ];
}

describe('headers', () => {
  test('Content-Type, Content-Length, Last-Modified (the .ism mtime), ETag, CORS and Cache-Control of each output', async () => {
    const lastModified = P_MTIME.toUTCString();
    expect(lastModified).toBe('Thu, 15 Jun 2023 12:30:45 GMT');
    const seen = [];
    for (const o of outputs()) {
      const r = await ok(o.url);
      const h = r.headers;
      seen.push([
        o.what,
        h['content-type'],
        Number(h['content-length']) === r.body.length,
        h['last-modified'],
        /^"[^"]+"$/.test(String(h.etag)),
        h['access-control-allow-origin'],
        h['cache-control'],
      ]);
    }
    expect(seen).toEqual(outputs().map((o) => [o.what, o.type, true, lastModified, true, '*', o.cacheControl]));
  });

  test('ETags are equal exactly when the bodies are, and repeat for the same output', async () => {
    const answers: Fetched[] = [];
    for (const o of outputs()) answers.push(await ok(o.url));
    const pairs: Array<[string, string, boolean, boolean]> = [];
    answers.forEach((a, i) =>
      answers.forEach(
        (b, j) =>
          j > i &&
          pairs.push([
            outputs()[i]!.what,
            outputs()[j]!.what,
            a.headers.etag === b.headers.etag,
            a.body.equals(b.body),
          ]),
      ),
    );
    expect(pairs.filter(([, , sameTag, sameBody]) => sameTag !== sameBody)).toEqual([]);
    // The DASH and HLS init segments of one track are the same bytes; nothing else is.
    expect(pairs.filter(([, , sameTag]) => sameTag).map(([a, b]) => `${a} = ${b}`)).toEqual(['DASH init = HLS init']);
    for (const [i, o] of outputs().entries()) expect((await ok(o.url)).headers.etag).toBe(answers[i]!.headers.etag);
  });

  test('If-None-Match with the ETag → 304 without a body, for manifests, segments and static files', async () => {
    for (const u of [...outputs().map((o) => o.url), '/static/a.isma']) {
      const full = await ok(u);
      const etag = String(full.headers.etag);
      for (const inm of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
        const r = await request(u, { 'If-None-Match': inm });
        expect([u, inm, r.status, r.body.length, r.headers.etag, r.headers['last-modified']]).toEqual([
          u,
          inm,
          304,
          0,
          etag,
          full.headers['last-modified'],
        ]);
      }
      const miss = await request(u, { 'If-None-Match': '"not-this-one"' });
      expect([u, miss.status, miss.body.equals(full.body)]).toEqual([u, 200, true]);
    }
  });

  test('If-Modified-Since → 304 when nothing changed since, 200 otherwise; If-None-Match takes precedence', async () => {
    for (const u of [...outputs().map((o) => o.url), '/static/a.isma']) {
      const full = await ok(u);
      const lm = String(full.headers['last-modified']);
      const before = new Date(Date.parse(lm) - 1000).toUTCString();
      expect([u, (await request(u, { 'If-Modified-Since': lm })).status]).toEqual([u, 304]);
      expect([u, (await request(u, { 'If-Modified-Since': before })).status]).toEqual([u, 200]);
      expect([u, (await request(u, { 'If-Modified-Since': 'not a date' })).status]).toEqual([u, 200]);
      expect([u, (await request(u, { 'If-Modified-Since': lm, 'If-None-Match': '"other"' })).status]).toEqual([u, 200]);
    }
  });

  test('HEAD has the headers of GET and no body', async () => {
    const volatile = new Set(['date', 'connection', 'keep-alive']);
    const headersOf = (r: Fetched): Record<string, unknown> =>
      Object.fromEntries(Object.entries(r.headers).filter(([k]) => !volatile.has(k)));
    for (const u of [...outputs().map((o) => o.url), '/static/a.isma']) {
      const g = await ok(u);
      const h = await request(u, {}, 'HEAD');
      expect([u, h.status, h.body.length]).toEqual([u, 200, 0]);
      expect(headersOf(h)).toEqual(headersOf(g));
    }
  });

  test('CORS: every answer allows any origin; OPTIONS is a preflight answer', async () => {
    const error = await request('/nope.ism/.mpd', { Origin: 'https://player.example' });
    expect([error.status, error.headers['access-control-allow-origin']]).toEqual([404, '*']);
    const seg = outputs().find((o) => o.what === 'HLS segment')!.url;
    const r = await request(
      seg,
      {
        Origin: 'https://player.example',
        'Access-Control-Request-Method': 'GET',
        'Access-Control-Request-Headers': 'range',
      },
      'OPTIONS',
    );
    expect(r.status).toBe(204);
    expect(r.body.length).toBe(0);
    expect(r.headers['access-control-allow-origin']).toBe('*');
    const methods = String(r.headers['access-control-allow-methods']).split(/,\s*/);
    expect(methods).toEqual(expect.arrayContaining(['GET', 'HEAD']));
    expect(String(r.headers['access-control-allow-headers']).toLowerCase().split(/,\s*/)).toContain('range');
    // What a player reads from a cross-origin answer must be exposed.
    const exposed = String((await ok(seg)).headers['access-control-expose-headers'])
      .toLowerCase()
      .split(/,\s*/);
    expect(exposed).toEqual(expect.arrayContaining(['content-length', 'content-range', 'etag', 'last-modified']));
  });

  test('Cache-Control: the CLI defaults are what the server sends by class; errors are no-store; "" sends none', async () => {
    const defaults = parseServeArgs(['--root', origin.root]);
    expect([defaults.manifestCacheControl, defaults.segmentCacheControl]).toEqual([MANIFEST_CACHE, SEGMENT_CACHE]);
    expect((await request('/p.ism/QualityLevels(1)/Fragments(video_eng=0)')).headers['cache-control']).toBe('no-store');
    // The same root served with other settings.
    const other = await startServer({
      root: origin.root,
      host: '127.0.0.1',
      port: 0,
      manifestCacheControl: '',
      segmentCacheControl: 'private, max-age=5',
      select: wasmTrackSelector,
      playerPage: false,
    });
    try {
      const m = await get(other.url, '/p.ism/.mpd');
      const s = await get(other.url, outputs().find((o) => o.what === 'DASH media')!.url);
      expect([m.status, m.headers['cache-control'], s.status, s.headers['cache-control']]).toEqual([
        200,
        undefined,
        200,
        'private, max-age=5',
      ]);
    } finally {
      await other.close();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Range

describe('Range (RFC 9110 §14)', () => {
  /** Ranges of a body: both ends, inside, across every top-level box boundary, open, suffix. */
  function rangesOf(body: Buffer): Array<[string, number, number]> {
    const n = body.length;
    const out: Array<[string, number, number]> = [
      ['bytes=0-0', 0, 0],
      ['bytes=0-99', 0, 99],
      [`bytes=100-${n - 101}`, 100, n - 101],
      [`bytes=${n - 1}-${n - 1}`, n - 1, n - 1],
      [`bytes=${n - 10}-${n + 1000}`, n - 10, n - 1],
      [`bytes=${Math.floor(n / 3)}-`, Math.floor(n / 3), n - 1],
      ['bytes=-500', n - 500, n - 1],
      [`bytes=-${n + 10}`, 0, n - 1],
    ];
    let at = 0;
    for (const b of boxes(body)) {
      if (at > 16) out.push([`bytes=${at - 16}-${at + 15}`, at - 16, at + 15]);
      at += b.size;
    }
    return out;
  }

  async function checkRanges(u: string, minBoxes: number): Promise<void> {
    const full = await ok(u);
    const n = full.body.length;
    expect(full.headers['accept-ranges']).toBe('bytes');
    expect(boxes(full.body).length).toBeGreaterThanOrEqual(minBoxes);
    for (const [header, start, end] of rangesOf(full.body)) {
      const r = await request(u, { Range: header });
      expect([u, header, r.status, r.headers['content-range'], Number(r.headers['content-length'])]).toEqual([
        u,
        header,
        206,
        `bytes ${start}-${end}/${n}`,
        end - start + 1,
      ]);
      expect(r.body.equals(full.body.subarray(start, end + 1))).toBe(true);
    }
    for (const header of [`bytes=${n}-`, `bytes=${n + 5}-${n + 9}`, 'bytes=-0']) {
      const r = await request(u, { Range: header });
      expect([header, r.status, r.headers['content-range'], r.body.length]).toEqual([header, 416, `bytes */${n}`, 0]);
    }
    // RFC 9110 §14.2 lets a server ignore a Range it does not support: the whole body, 200.
    for (const header of ['bytes=0-1,5-6', 'bytes=abc', 'items=0-1', 'bytes=9-2']) {
      const r = await request(u, { Range: header });
      expect([header, r.status, r.body.equals(full.body)]).toEqual([header, 200, true]);
    }
  }

  test('an HLS segment of two fragments (styp, moof, mdat, moof, mdat: rewritten boxes and file ranges)', async () => {
    await checkRanges(outputs().find((o) => o.what === 'HLS segment')!.url, 5);
  });

  test('a Smooth fragment and a DASH init segment', async () => {
    await checkRanges(outputs().find((o) => o.what === 'Smooth fragment')!.url, 2);
    await checkRanges(outputs().find((o) => o.what === 'DASH init')!.url, 2);
  });

  test('a static file under the root: type, Last-Modified, the file bytes, ranges of them', async () => {
    const source = readFileSync(media('audio_eng_64k.isma'));
    const r = await ok('/static/a.isma');
    expect([r.headers['content-type'], r.headers['last-modified'], Number(r.headers['content-length'])]).toEqual([
      'audio/mp4',
      'Thu, 03 Feb 2022 04:05:06 GMT',
      source.length,
    ]);
    expect(r.body.equals(source)).toBe(true);
    await checkRanges('/static/a.isma', 5);
  });
});

// ---------------------------------------------------------------------------------------------
// Every URL a manifest writes answers

describe('every URL each manifest writes answers 200', () => {
  test('Smooth: the Url template filled for every QualityLevel and chunk; each fragment carries its time', async () => {
    const written = await writtenBy('smooth', '/p.ism/Manifest');
    // One ladder per trackName, 5 chunks each, at the facts' times; every bitrate of the .ism.
    const expected = tracks.flatMap((t) =>
      outputTimes(PLAYABLE, t.file).map((time, i) => [`${t.trackName}=${t.bitrate}`, time, facts(t.file).durations[i]]),
    );
    expect(written.map((w) => [w.key, w.time, w.duration]).sort()).toEqual(expected.sort());
    const bodies = await fetchAll(written.map((w) => w.url));
    for (const w of written) {
      const body = bodies.get(w.url)!.body;
      expect(boxes(body).map((b) => b.type)).toEqual(['moof', 'mdat']);
      const [f] = fragmentTimes(body);
      // MS-SSTR §2.2.4.4: tfxd's fragment_absolute_time is the time the client asked for.
      if (!w.key.startsWith('textstream')) expect([w.url, f!.tfxd]).toEqual([w.url, w.time]);
    }
  });

  test('DASH: the SegmentTemplate expanded for every S of every Representation; tfdt = $Time$', async () => {
    const written = await writtenBy('dash', '/p.ism/.mpd');
    const expected = tracks.flatMap((t) => [
      [t.key, 'init', undefined],
      ...outputTimes(PLAYABLE, t.file).map((time) => [t.key, 'media', time]),
    ]);
    expect(written.map((w) => [w.key, w.kind, w.time])).toEqual(expect.arrayContaining(expected));
    expect(written.length).toBe(expected.length);
    // video.js's reader resolves the same URLs for the audio and video it understands.
    const theirs = mpdParserUrls(mpdsSeen.get('/p.ism/.mpd')!, `${origin.url}/p.ism/.mpd`);
    expect(theirs.length).toBe(6 * 6);
    expect(written.map((w) => w.url)).toEqual(expect.arrayContaining(theirs));
    const bodies = await fetchAll(written.map((w) => w.url));
    for (const w of written.filter((x) => x.kind === 'media')) {
      const body = bodies.get(w.url)!.body;
      expect(boxes(body).map((b) => b.type)).toEqual(['styp', 'moof', 'mdat']);
      expect([w.url, fragmentTimes(body)]).toEqual([w.url, [{ tfdt: w.time, tfxd: undefined }]]);
    }
  });

  test('HLS: every URI of the master and of each media playlist; 4 s segments of whole fragments', async () => {
    const { written, playlists } = await hlsWritten('/p.ism/.m3u8?hls_fmp4=true');
    // One media playlist per track: 3 variants (video), 3 audio and 2 subtitle renditions.
    expect([...playlists.keys()].sort()).toEqual(tracks.map((t) => `p-${t.key}.m3u8?hls_fmp4=true`).sort());
    const bodies = await fetchAll(written.map((w) => w.url));
    for (const t of tracks) {
      const uri = `p-${t.key}.m3u8?hls_fmp4=true`;
      const f = facts(t.file);
      const times = outputTimes(PLAYABLE, t.file);
      // 2 s source fragments joined to at least 4 s: fragments [0,1], [2,3], [4].
      const groups = [[0, 1], [2, 3], [4]];
      const list = playlists.get(uri)!;
      expect(list.segments.map((s) => s.duration)).toEqual(
        groups.map((g) => Number(g.reduce((s, i) => s + f.durations[i]!, 0n)) / f.timescale),
      );
      const segs = written.filter((w) => w.key === uri && w.kind === 'media');
      if (t.type === 'textstream') {
        // Subtitles are WebVTT in every HLS mode (no init section), one document per segment.
        expect(segs.every((w) => new URL(w.url).pathname.endsWith('.webvtt'))).toBe(true);
        expect(segs.map((w) => Buffer.from(bodies.get(w.url)!.body).toString('utf8').split('\n')[0])).toEqual(
          groups.map(() => 'WEBVTT'),
        );
        expect(written.some((w) => w.key === uri && w.kind === 'init')).toBe(false);
        continue;
      }
      expect(segs.map((w) => fragmentTimes(bodies.get(w.url)!.body).map((x) => x.tfdt))).toEqual(
        groups.map((g) => g.map((i) => times[i])),
      );
      const init = written.find((w) => w.key === uri && w.kind === 'init')!;
      expect(boxes(bodies.get(init.url)!.body).map((b) => b.type)).toEqual(['ftyp', 'moov']);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Query, names, paths

describe('URL options', () => {
  const MANIFESTS = [
    ['smooth', '/p.ism/Manifest'],
    ['dash', '/p.ism/.mpd'],
    ['hls', '/p.ism/.m3u8'],
  ] as const;

  test.each([
    ['percent-encoded', `${FILTER_AVC_AAC}&token=abc123`],
    // Raw `"` and `&` must come out escaped for XML and for HLS quoted-strings (RFC 8216 §4.2).
    ['raw quotes', 'filter=FourCC=="AVC1"||FourCC=="AACL"&token=a,b'],
  ])(
    'the query (%s) is carried into every URL and template; suppress_query_parameters removes it',
    async (_, query) => {
      // What a client resolving the written URL sends: the query as the URL standard encodes it.
      const search = new URL(`http://x/?${query}`).search;
      for (const [format, manifest] of MANIFESTS) {
        const carried = await writtenBy(format, `${manifest}?${query}`);
        const bad = carried.filter((w) => new URL(w.url).search !== search).map((w) => w.url);
        expect([format, bad]).toEqual([format, []]);
        // The filter kept H.264 and AAC only: no text track is named.
        expect(carried.some((w) => w.url.includes('textstream'))).toBe(false);
        expect(new Set(carried.map((w) => w.key)).size).toBe(6); // 3 video + 3 audio tracks
        await fetchAll(carried.map((w) => w.url));

        const suppressed = await writtenBy(format, `${manifest}?${query}&suppress_query_parameters=true`);
        expect([format, suppressed.filter((w) => w.url.includes('?')).map((w) => w.url)]).toEqual([format, []]);
        expect(suppressed.length).toBe(carried.length);
        await fetchAll(suppressed.map((w) => w.url));
      }
    },
  );

  test('suppress_query_parameters keeps what decides a segment: the clip, the segmentation, $Number$', async () => {
    const cases: Array<['smooth' | 'dash' | 'hls', string, string]> = [
      ['dash', '/p.ism/.mpd', 'mpd_segment_template=number'],
      ['dash', '/p.ism/.mpd', 't=4-8'],
      ['hls', '/p.ism/.m3u8', 'vbegin=0:00:04'],
      ['hls', '/p.ism/.m3u8', 'hls_minimum_fragment_length=6'],
      ['smooth', '/p.ism/Manifest', 't=2-6'],
    ];
    for (const [format, manifest, addressing] of cases) {
      const plain = await writtenBy(format, `${manifest}?${addressing}&${FILTER_AVC_AAC}`);
      const suppressed = await writtenBy(
        format,
        `${manifest}?${addressing}&${FILTER_AVC_AAC}&suppress_query_parameters=true`,
      );
      // Only the addressing parameter is written, and every URL answers the same bytes as the
      // URL the unsuppressed manifest wrote for the same segment.
      expect([
        addressing,
        suppressed.filter((w) => new URL(w.url).search !== `?${addressing}`).map((w) => w.url),
      ]).toEqual([addressing, []]);
      expect(suppressed.length).toBe(plain.length);
      const a = await fetchAll(plain.map((w) => w.url));
      const b = await fetchAll(suppressed.map((w) => w.url));
      let compared = 0;
      plain.forEach((w, i) => {
        // Media playlists differ by the URLs they write; the media they lead to must not.
        if (new URL(w.url).pathname.endsWith('.m3u8')) return;
        compared++;
        expect([addressing, w.url, Buffer.compare(a.get(w.url)!.body, b.get(suppressed[i]!.url)!.body)]).toEqual([
          addressing,
          w.url,
          0,
        ]);
      });
      expect(compared).toBeGreaterThan(5);
    }
  });

  test('presentation_name=foo replaces <name> in every URL written, and those URLs answer', async () => {
    const plainDash = await writtenBy('dash', '/p.ism/.mpd');
    const dash = await writtenBy('dash', '/p.ism/.mpd?presentation_name=foo');
    expect(dash.map((w) => tailOf(w.url, '/p.ism/'))).toEqual(
      plainDash.map((w) => tailOf(w.url, '/p.ism/').replace(/^dash\/p-/, 'dash/foo-') + '?presentation_name=foo'),
    );
    const hls = await writtenBy('hls', '/p.ism/.m3u8?presentation_name=foo');
    const names = hls.map((w) => tailOf(w.url, '/p.ism/').replace(/^hls\//, ''));
    expect(names.filter((n) => !n.startsWith('foo-')).length).toBe(0);
    // With fMP4 every track has its own playlist: playlist, init and 3 segments per track (no
    // init for the WebVTT subtitles).
    const fmp4 = await writtenBy('hls', '/p.ism/.m3u8?hls_fmp4=true&presentation_name=foo');
    expect(
      fmp4.filter(
        (w) =>
          !tailOf(w.url, '/p.ism/')
            .replace(/^hls\//, '')
            .startsWith('foo-'),
      ).length,
    ).toBe(0);
    expect(fmp4.length).toBe(tracks.length * 5 - tracks.filter((t) => t.type === 'textstream').length);
    // Smooth URLs carry no <name>: only the query changes.
    const smooth = await writtenBy('smooth', '/p.ism/Manifest?presentation_name=foo');
    expect(smooth.every((w) => w.url.endsWith('?presentation_name=foo') && !w.url.includes('foo-'))).toBe(true);
    const bodies = await fetchAll([...dash, ...hls, ...smooth].map((w) => w.url));
    // The renamed segment URLs answer the bytes of the plain ones.
    const plain = await fetchAll(plainDash.map((w) => w.url));
    dash.forEach((w, i) => expect(bodies.get(w.url)!.body.equals(plain.get(plainDash[i]!.url)!.body)).toBe(true));
    // With the query suppressed the renamed URLs stand on their own.
    await fetchAll(
      (await writtenBy('dash', '/p.ism/.mpd?presentation_name=foo&suppress_query_parameters=true')).map((w) => w.url),
    );
  });

  test('virtual paths: <pres>.ism/<virtual>/<name>.<suffix> and the URLs under it answer the same bytes', async () => {
    const cases = [
      ['smooth', '/p.ism/Manifest', '/p.ism/some/virtual/Manifest'],
      ['dash', '/p.ism/.mpd', '/p.ism/some/virtual/p.mpd'],
      ['hls', '/p.ism/.m3u8', '/p.ism/some/virtual/p.m3u8'],
    ] as const;
    for (const [format, plainPath, virtualPath] of cases) {
      expect((await ok(virtualPath)).body.equals((await ok(plainPath)).body)).toBe(true);
      const plain = await writtenBy(format, plainPath);
      const virtual = await writtenBy(format, virtualPath);
      expect(virtual.map((w) => tailOf(w.url, '/p.ism/some/virtual/'))).toEqual(
        plain.map((w) => tailOf(w.url, '/p.ism/')),
      );
      const a = await fetchAll(plain.map((w) => w.url));
      const b = await fetchAll(virtual.map((w) => w.url));
      const differ = virtual.filter((w, i) => !b.get(w.url)!.body.equals(a.get(plain[i]!.url)!.body)).map((w) => w.url);
      expect([format, differ]).toEqual([format, []]);
    }
  });

  test('mpd_segment_template=number: $Number$ URLs answer the bytes of the $Time$ URLs', async () => {
    const byTime = await writtenBy('dash', '/p.ism/.mpd');
    const byNumber = await writtenBy('dash', '/p.ism/.mpd?mpd_segment_template=number');
    expect(mpdsSeen.get('/p.ism/.mpd?mpd_segment_template=number')).toContain('$Number$');
    // Same timeline, numbered from 1 per representation.
    expect(byNumber.map((w) => [w.key, w.kind, w.time])).toEqual(byTime.map((w) => [w.key, w.kind, w.time]));
    for (const t of tracks) {
      const numbers = byNumber
        .filter((w) => w.key === t.key && w.kind === 'media')
        .map((w) => tailOf(w.url, '/p.ism/'));
      expect(numbers).toEqual([1, 2, 3, 4, 5].map((n) => `dash/p-${t.key}-${n}.dash?mpd_segment_template=number`));
    }
    const a = await fetchAll(byTime.map((w) => w.url));
    const b = await fetchAll(byNumber.map((w) => w.url));
    const differ = byNumber.filter((w, i) => !b.get(w.url)!.body.equals(a.get(byTime[i]!.url)!.body)).map((w) => w.url);
    expect(differ).toEqual([]);
  });

  test('a presentation in a subdirectory is served under its path, named after its basename', async () => {
    const written = await writtenBy('dash', '/a/b/q.ism/.mpd');
    expect(written.length).toBe(tracks.length * 6);
    expect(written.every((w) => new URL(w.url).pathname.startsWith('/a/b/q.ism/dash/q-'))).toBe(true);
    await fetchAll(written.map((w) => w.url));
    expect((await ok('/a/b/q.ism/Manifest')).text).toBe((await ok('/p.ism/Manifest')).text);
  });
});

// ---------------------------------------------------------------------------------------------
// Sub-clips

describe('sub-clip t=0-0:00:06: exactly 3 fragments (6 s) in every format', () => {
  const Q = 't=0-0:00:06';
  const firstThree = (file: string): bigint =>
    facts(file)
      .durations.slice(0, 3)
      .reduce((s, d) => s + d, 0n);

  test('Smooth: 3 chunks per stream at the full presentation times', async () => {
    const written = await writtenBy('smooth', `/p.ism/Manifest?${Q}`);
    const expected = tracks.flatMap((t) =>
      outputTimes(PLAYABLE, t.file)
        .slice(0, 3)
        .map((time) => [`${t.trackName}=${t.bitrate}`, time]),
    );
    expect(written.map((w) => [w.key, w.time]).sort()).toEqual(expected.sort());
    const video = written.filter((w) => w.key === `${track(VIDEO).trackName}=${track(VIDEO).bitrate}`);
    expect(video.reduce((s, w) => s + w.duration!, 0n)).toBe(60_000_000n); // 6 s at 10 MHz
    await fetchAll(written.map((w) => w.url));
  });

  test('DASH: 3 segments per representation', async () => {
    const written = await writtenBy('dash', `/p.ism/.mpd?${Q}`);
    for (const t of tracks) {
      const segments = written.filter((w) => w.key === t.key && w.kind === 'media');
      expect([t.key, segments.map((w) => w.time)]).toEqual([t.key, outputTimes(PLAYABLE, t.file).slice(0, 3)]);
      expect(segments.reduce((s, w) => s + w.duration!, 0n)).toBe(firstThree(t.file));
    }
    await fetchAll(written.map((w) => w.url));
  });

  test('HLS: the media playlists add up to the 3 fragments, and their segments hold exactly them', async () => {
    const { written, playlists } = await hlsWritten(`/p.ism/.m3u8?hls_fmp4=true&${Q}`);
    const bodies = await fetchAll(written.map((w) => w.url));
    for (const t of tracks) {
      const uri = `p-${t.key}.m3u8?hls_fmp4=true&${Q}`;
      const f = facts(t.file);
      const list = playlists.get(uri)!;
      expect(list.segments.map((s) => s.duration)).toEqual([
        Number(f.durations[0]! + f.durations[1]!) / f.timescale,
        Number(f.durations[2]!) / f.timescale,
      ]);
      if (t.type === 'textstream') continue; // WebVTT: its cues are checked in test/hls
      const tfdts = written
        .filter((w) => w.key === uri && w.kind === 'media')
        .flatMap((w) => fragmentTimes(bodies.get(w.url)!.body).map((x) => x.tfdt));
      expect(tfdts).toEqual(outputTimes(PLAYABLE, t.file).slice(0, 3));
    }
    expect(
      playlists.get(`p-${track(VIDEO).key}.m3u8?hls_fmp4=true&${Q}`)!.segments.reduce((s, x) => s + x.duration, 0),
    ).toBe(6);
  });
});

// ---------------------------------------------------------------------------------------------
// Changes and load

test('a rewritten .ism (another track set, new mtime) is picked up by every output once the stat TTL has passed', async () => {
  const before = ismTracks(await fs.readFile(path.join(origin.root, 'c.ism'), 'utf8'));
  const old = before.find((t) => t.type === 'video')!;
  const firsts = {
    smooth: await ok('/c.ism/Manifest'),
    dash: await ok('/c.ism/.mpd'),
    hls: await ok('/c.ism/.m3u8'),
  };
  expect(firsts.smooth.headers['last-modified']).toBe(C_MTIME_BEFORE.toUTCString());
  expect((await ok(`/c.ism/dash/c-${old.key}.dash`)).status).toBe(200);

  const cIsm = path.join(origin.root, 'c.ism');
  const r = await runOrigin(['package', '-q', '-o', cIsm, ...C_AFTER.map(media)]);
  expect(r.stderr).toBe('');
  await fs.utimes(cIsm, C_MTIME_AFTER, C_MTIME_AFTER);
  const after = ismTracks(await fs.readFile(cIsm, 'utf8'));
  expect(after.map((t) => t.file)).toEqual(C_AFTER);
  // The default server trusts a stat for DEFAULT_LIMITS.statTtlMs (test/origin/server/caches.test.ts
  // covers the window itself and --stat-ttl-ms 0).
  await new Promise((resolve) => setTimeout(resolve, DEFAULT_LIMITS.statTtlMs! + 100));

  const smooth = await ok('/c.ism/Manifest');
  expect([...smooth.text.matchAll(/<StreamIndex\b[^>]*\bName="([^"]+)"/g)].map((m) => m[1])).toEqual(
    after.map((t) => t.trackName),
  );
  const dash = await ok('/c.ism/.mpd');
  expect([...dash.text.matchAll(/<Representation\b[^>]*\bid="([^"]+)"/g)].map((m) => m[1]).sort()).toEqual(
    after.map((t) => t.key).sort(),
  );
  const hls = await ok('/c.ism/.m3u8');
  for (const t of after) expect(hls.text).toContain(t.key);
  expect(hls.text).not.toContain(old.key);
  for (const [format, r2] of Object.entries({ smooth, dash, hls })) {
    const r1 = firsts[format as keyof typeof firsts];
    expect([format, r2.headers['last-modified'], r2.headers.etag === r1.headers.etag]).toEqual([
      format,
      C_MTIME_AFTER.toUTCString(),
      false,
    ]);
  }
  const gone = await request(`/c.ism/dash/c-${old.key}.dash`);
  expect([gone.status, gone.headers['x-origin-error']]).toEqual([404, 'unknown-track']);
  const fresh = await ok(`/c.ism/dash/c-${after[0]!.key}.dash`);
  expect(fresh.headers['last-modified']).toBe(C_MTIME_AFTER.toUTCString());
});

test('concurrent identical requests on a cold presentation all succeed with identical answers', async () => {
  const v = track(VIDEO);
  const urls = [
    '/d.ism/.mpd',
    '/d.ism/Manifest',
    '/d.ism/.m3u8',
    `/d.ism/hls/d-${v.key}-2.m4s`,
    `/d.ism/dash/d-${v.key}.dash`,
  ];
  const answers = await Promise.all(urls.flatMap((u) => Array.from({ length: 12 }, () => request(u))));
  urls.forEach((u, i) => {
    const group = answers.slice(i * 12, (i + 1) * 12);
    expect([u, group.map((r) => r.status)]).toEqual([u, Array(12).fill(200)]);
    expect(group.every((r) => r.body.equals(group[0]!.body) && r.headers.etag === group[0]!.headers.etag)).toBe(true);
    expect(group[0]!.body.length).toBeGreaterThan(0);
  });
  // And they are what the warm presentation `p` answers, renamed.
  expect(answers[0]!.text).toBe((await ok('/p.ism/.mpd')).text.replace(/dash\/p-/g, 'dash/d-'));
});

test('every MPD fetched in this file validates against the DASH schema', () => {
  expect(mpdsSeen.size).toBeGreaterThanOrEqual(10);
  const invalid = [...mpdsSeen]
    .map(([u, text]) => [u, validateMpd(text)] as const)
    .filter(([, v]) => !v.ok)
    .map(([u, v]) => `${u}: ${v.output}`);
  expect(invalid).toEqual([]);
});
