// ETags of generated HLS segments (MPEG-TS, packed audio, WebVTT, I-frame TS and fMP4) and of HDS
// fragments come from
// the segment's identity, not from a hash of its bytes (server/handlers.ts generatedEtag). What
// that must keep: the same request gives the same ETag (also on a fresh origin context, as on
// another worker), and whatever changes the bytes changes the ETag: another segment, another
// rendition or segment kind, other options, a changed source under the same .ism.

import { copyFileSync } from 'node:fs';
import * as path from 'node:path';
import { PresentationStore } from '../../../origin/cache/presentation-store';
import { handlePlayout, newPlayoutContext, PlayoutContext, Reply } from '../../../origin/server/handlers';
import { decodePath, matchPresentationRoute } from '../../../origin/server/routes';
import { media, runOrigin, tempDir } from '../../helpers/fixtures';
import { selectAll } from '../../helpers/presentations';

const FILES = ['video_baseline_400k.ismv', 'video_main_900k.ismv', 'audio_eng_64k.isma', 'text_eng.ismt'];

let dir: string;
let ism: string;

beforeAll(async () => {
  // Copies: one test replaces a source.
  dir = tempDir('origin-ts-etag-');
  for (const f of [...FILES, 'audio_eng_128k.isma']) copyFileSync(media(f), path.join(dir, f));
  ism = path.join(dir, 'p.ism');
  const r = await runOrigin(['package', '-o', ism, ...FILES.map((f) => path.join(dir, f))]);
  if (r.code !== 0) throw new Error(`packaging failed: ${r.stderr}`);
});

/** Stats are never trusted: a replaced source is seen by the next request. */
function context(): PlayoutContext {
  return newPlayoutContext(new PresentationStore({ mediaBytes: 64 << 20, presentations: 16, statTtlMs: 0 }), selectAll);
}

async function fetch(ctx: PlayoutContext, url: string): Promise<{ etag: string; body: Buffer }> {
  const [tail, query] = url.split('?');
  const req = matchPresentationRoute(decodePath(tail!));
  if (req === undefined) throw new Error(`no route for ${url}`);
  const reply: Reply = await handlePlayout(ctx, req, ism, query ?? '');
  const b = reply.body;
  const body = b.type === 'bytes' ? Buffer.from(b.bytes) : b.type === 'text' ? Buffer.from(b.text) : Buffer.alloc(0);
  expect(reply.etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
  return { etag: reply.etag, body };
}

async function keys(ctx: PlayoutContext): Promise<{ v1: string; v2: string; a: string; t: string }> {
  const master = (await fetch(ctx, '/p.ism/p.m3u8')).body.toString();
  const lists = [...master.matchAll(/^p-(.+)\.m3u8$/gm)].map((m) => m[1]!);
  const text = /URI="p-([^"]+)\.m3u8"/.exec(master.split('\n').find((l) => l.includes('TYPE=SUBTITLES')) ?? '')?.[1];
  const muxed = lists.filter((k) => k.includes('video') && k.includes('audio'));
  const audio = lists.find((k) => !k.includes('video'))!;
  if (muxed.length < 2 || audio === undefined || text === undefined)
    throw new Error(`unexpected master playlist:\n${master}`);
  return { v1: muxed[0]!, v2: muxed[1]!, a: audio, t: text };
}

/** The HDS media stems of the F4M (`<media url>`), in manifest order. */
async function hdsStems(ctx: PlayoutContext): Promise<string[]> {
  const f4m = (await fetch(ctx, '/p.ism/.f4m')).body.toString();
  const stems = [...f4m.matchAll(/<media url="([^"]+)"/g)].map((m) => m[1]!);
  if (stems.length < 2) throw new Error(`unexpected F4M:\n${f4m}`);
  return stems;
}

test('the same request gives the same ETag, on the same and on a fresh context', async () => {
  const ctx = context();
  const k = await keys(ctx);
  const urls = [
    `/p.ism/p-${k.v1}-2.ts`,
    `/p.ism/p-${k.a}-2.aac`,
    `/p.ism/p-${k.t}-2.webvtt`,
    `/p.ism/keyframes/p-${k.v1.replace(/^.*(video[^-]*)$/, '$1')}-2.ts?hls_client_manifest_version=4`,
    `/p.ism/${(await hdsStems(ctx))[0]}Seg1-Frag2`,
  ];
  const other = context();
  for (const url of urls) {
    const a = await fetch(ctx, url);
    const b = await fetch(ctx, url);
    const c = await fetch(other, url);
    expect([url, b.etag, c.etag]).toEqual([url, a.etag, a.etag]);
    expect(b.body.equals(a.body) && c.body.equals(a.body)).toBe(true);
  }
  ctx.files.close();
  other.files.close();
});

test('different segments, renditions, kinds and options give different ETags', async () => {
  const ctx = context();
  const k = await keys(ctx);
  const video = k.v1.replace(/^.*(video[^-]*)$/, '$1');
  const urls = [
    `/p.ism/p-${k.v1}-1.ts`,
    `/p.ism/p-${k.v1}-2.ts`,
    `/p.ism/p-${k.v1}-3.ts`,
    `/p.ism/p-${k.v2}-2.ts`,
    `/p.ism/p-${video}-2.ts`,
    `/p.ism/p-${k.v1}-2.ts?hls_minimum_fragment_length=6`,
    `/p.ism/p-${k.v1}-2.ts?vbegin=0:00:04`,
    `/p.ism/p-${k.a}-1.aac`,
    `/p.ism/p-${k.a}-2.aac`,
    `/p.ism/p-${k.t}-1.webvtt`,
    `/p.ism/p-${k.t}-2.webvtt`,
    `/p.ism/p-${k.t}-2.webvtt?hls_fmp4=true`,
    `/p.ism/keyframes/p-${video}-1.ts?hls_client_manifest_version=4`,
    `/p.ism/keyframes/p-${video}-2.ts?hls_client_manifest_version=4`,
    `/p.ism/keyframes/p-${video}-2.m4s?hls_client_manifest_version=4&hls_fmp4=true`,
    ...(await hdsStems(ctx)).flatMap((stem, i) => (i === 0 ? [1, 2] : [2]).map((n) => `/p.ism/${stem}Seg1-Frag${n}`)),
  ];
  const answers: Array<{ url: string; etag: string; body: Buffer }> = [];
  for (const url of urls) answers.push({ url, ...(await fetch(ctx, url)) });
  // Every pair of distinct bodies has distinct ETags (here every ETag is distinct).
  const clashes = answers.flatMap((a, i) =>
    answers
      .slice(i + 1)
      .filter((b) => b.etag === a.etag && !b.body.equals(a.body))
      .map((b) => `${a.url} = ${b.url}`),
  );
  expect(clashes).toEqual([]);
  expect(new Set(answers.map((a) => a.etag)).size).toBe(answers.length);
  ctx.files.close();
});

test('a source replaced under the same .ism changes the ETags of the segments made from it', async () => {
  const ctx = context();
  const k = await keys(ctx);
  const urls = [`/p.ism/p-${k.v1}-2.ts`, `/p.ism/p-${k.a}-2.aac`, `/p.ism/${(await hdsStems(ctx))[0]}Seg1-Frag2`];
  const before: Array<{ etag: string; body: Buffer }> = [];
  for (const url of urls) before.push(await fetch(ctx, url));
  const text = await fetch(ctx, `/p.ism/p-${k.t}-2.webvtt`);
  // Other audio (other bitrate, other bytes) at the same path; the .ism is untouched.
  copyFileSync(path.join(dir, 'audio_eng_128k.isma'), path.join(dir, 'audio_eng_64k.isma'));
  for (const [i, url] of urls.entries()) {
    const after = await fetch(ctx, url);
    expect([url, after.body.equals(before[i]!.body), after.etag === before[i]!.etag]).toEqual([url, false, false]);
  }
  // A segment made from other sources only keeps its ETag.
  expect((await fetch(ctx, `/p.ism/p-${k.t}-2.webvtt`)).etag).toBe(text.etag);
  ctx.files.close();
});
