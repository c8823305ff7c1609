// EncryptedSegments (segments/fmp4/encrypted-layout.ts: an encrypted segment made again from its
// kept layout, the read and the AES only) against readEncryptedSegment, the plain build that
// encrypted-segment.test.ts checks against the one-sample-at-a-time version. Every segment of the
// fixture tracks, cenc and cbcs, DASH, HLS fMP4 (segments of several fragments) and Smooth, with
// and without a clear lead: the first request (the plain build, its layout kept) and the next ones
// (made from the layout, one read) give the plain bytes; pooled buffers go back; a layout is
// never used for another presentation object, another protection or another segment; the bound
// holds; a source that changed under a kept layout is built the plain way.

import { createHash } from 'node:crypto';
import { copyFileSync, mkdtempSync, rmSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { PresentationStore } from '../../../origin/cache/presentation-store';
import { PresentationIds } from '../../../origin/cache/request-caches';
import { BufferPool } from '../../../origin/io/buffers';
import { FileHandles } from '../../../origin/io/file-handles';
import { ByteSource, FileSource, SourceOpener } from '../../../origin/io/source';
import type { Format } from '../../../origin/options/registry';
import type { Presentation, PresentationTrack } from '../../../origin/model/presentation';
import type { CencProtection } from '../../../origin/model/protection';
import { EncryptedSegments } from '../../../origin/segments/fmp4/encrypted-layout';
import { EncryptedAs, joinedParts, readEncryptedSegment } from '../../../origin/segments/fmp4/encrypted-segment';
import { loadPresentation, packageFixtures, viewOf } from '../../helpers/presentations';

const KID = '00112233445566778899aabbccddeeff';
const KEY = '3a2a1b68dd2bd9b2eeb25e84c4776668';
const FILES = ['video_main_900k.ismv', 'video_interlaced_800k.ismv', 'audio_eng_64k.isma', 'text_eng.ismt'];

const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');
const oneKey = (p: Presentation): CencProtection => [...p.protection!.dash!.values()][0]!;

let handles: FileHandles;
beforeAll(() => {
  handles = new FileHandles(60_000);
});
afterAll(() => handles.close());

/** Counts the reads of the sources it opens. */
function metered(open: SourceOpener, count: { reads: number }): SourceOpener {
  return async (p) => {
    const inner = (await open(p)) as ByteSource & { readInto: (t: Uint8Array, o: number, l: number) => Promise<void> };
    return {
      name: inner.name,
      size: inner.size,
      read: (o: number, l: number) => {
        count.reads++;
        return inner.read(o, l);
      },
      readInto: (t: Uint8Array, o: number, l: number) => {
        count.reads++;
        return inner.readInto(t, o, l);
      },
      close: () => inner.close(),
    };
  };
}

const CASES: Array<[string, string[], Array<[Format, string, (p: Presentation) => EncryptedAs]>]> = [
  [
    'cenc',
    [`--drm_a.key=${KID}:${KEY}`, `--iss.key=${KID}:${KEY}`],
    [
      ['dash', '', (p) => ({ protection: oneKey(p), mode: 'fmp4' })],
      ['smooth', '', (p) => ({ protection: p.protection!.smooth!, mode: 'smooth' })],
    ],
  ],
  [
    'cbcs',
    [`--drm_a.key=${KID}:${KEY}`, '--mpd.protection_scheme=cbcs'],
    [['dash', '', (p) => ({ protection: oneKey(p), mode: 'fmp4' })]],
  ],
  [
    'clear lead',
    [`--iss.key=${KID}:${KEY}`, '--iss.key_iv=fffffffffffff000', '--clear_lead=4'],
    [['dash', '', (p) => ({ protection: oneKey(p), mode: 'fmp4' })]],
  ],
  [
    'HLS fMP4 cenc',
    [`--hls.key=${KID}:${KEY}`, '--hls.protection_scheme=cenc', '--hls.license_server_url=https://k.example/k'],
    [['hls', 'hls_fmp4=true', (p) => ({ protection: hlsFmp4(p), mode: 'fmp4' })]],
  ],
];

function hlsFmp4(p: Presentation): CencProtection {
  const hls = p.protection!.hls!;
  if (hls.method !== 'SAMPLE-AES') throw new Error('not SAMPLE-AES');
  return hls.fmp4;
}

const keyOf = (t: PresentationTrack): string => `${t.properties.trackName}=${t.properties.systemBitrate}`;

describe.each(CASES)('%s', (_name, options, formats) => {
  let p: Presentation;
  beforeAll(async () => {
    p = await loadPresentation(await packageFixtures(FILES, 'layout', options));
  }, 60_000);

  test.each(formats)(
    '%s: first and later requests give the plain bytes, later ones from one read',
    async (format, query, as) => {
      const view = viewOf(p, format, query);
      const layouts = new EncryptedSegments(new PresentationIds(), 32 << 20);
      const pool = new BufferPool();
      let segments = 0;
      for (const t of view.tracks) {
        for (let i = 0; i < t.segments.count; i++) {
          const s = t.segments.segment(i);
          const expected = sha(joinedParts((await readEncryptedSegment(handles.opener, t.track, s, p, as(p))).parts));
          for (const round of ['first', 'again', 'pooled']) {
            const count = { reads: 0 };
            const got = await layouts.read(metered(handles.opener, count), t.track, s, p, {
              ...as(p),
              ...(round === 'pooled' ? { pool } : {}),
            });
            const bytes = joinedParts(got.parts);
            expect([keyOf(t.track), i, round, sha(bytes), got.length]).toEqual([
              keyOf(t.track),
              i,
              round,
              expected,
              bytes.byteLength,
            ]);
            if (round !== 'first')
              expect([keyOf(t.track), i, round, count.reads]).toEqual([keyOf(t.track), i, round, 1]);
            expect(got.loan === undefined).toBe(round !== 'pooled');
            got.loan?.share(0);
          }
          segments++;
        }
      }
      expect(segments).toBeGreaterThan(10);
      expect(pool.outstanding).toBe(0);
      const counts = layouts.counts();
      expect(counts.hits).toBeGreaterThanOrEqual(2 * segments);
    },
    120_000,
  );
});

describe('what a layout is kept for', () => {
  let dir: string;
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('another presentation object, protection or segment never gets it; the bound holds', async () => {
    const ism = await packageFixtures(['video_main_900k.ismv'], 'layout-keys', [
      `--drm_a.key=${KID}:${KEY}`,
      `--iss.key=${KID}:${KEY}`,
    ]);
    const p1 = await loadPresentation(ism);
    // Another store: another object for the same .ism (as a change of it would give).
    const p2 = await new PresentationStore().presentation(ism);
    expect(p2).not.toBe(p1);
    const ids = new PresentationIds();
    const layouts = new EncryptedSegments(ids, 32 << 20);
    const t = viewOf(p1, 'dash').tracks[0]!;
    const s0 = t.segments.segment(0);
    const s1 = t.segments.segment(1);
    const dash = (p: Presentation): EncryptedAs => ({ protection: oneKey(p), mode: 'fmp4' });
    const read = async (p: Presentation, s: typeof s0, as: EncryptedAs): Promise<string> =>
      sha(joinedParts((await layouts.read(handles.opener, t.track, s, p, as)).parts));
    const plain = async (p: Presentation, s: typeof s0, as: EncryptedAs): Promise<string> =>
      sha(joinedParts((await readEncryptedSegment(handles.opener, t.track, s, p, as)).parts));
    expect(await read(p1, s0, dash(p1))).toBe(await plain(p1, s0, dash(p1)));
    expect(layouts.counts().misses).toBe(1);
    // Another segment, another protection (Smooth's key and IVs), another presentation object: misses.
    expect(await read(p1, s1, dash(p1))).toBe(await plain(p1, s1, dash(p1)));
    const smooth: EncryptedAs = { protection: p1.protection!.smooth!, mode: 'smooth' };
    const smoothSegment = viewOf(p1, 'smooth').tracks[0]!.segments.segment(0);
    expect(await read(p1, smoothSegment, smooth)).toBe(await plain(p1, smoothSegment, smooth));
    expect(await read(p2, s0, dash(p2))).toBe(await plain(p2, s0, dash(p2)));
    expect(layouts.counts()).toMatchObject({ hits: 0, misses: 4 });
    expect(await read(p1, s0, dash(p1))).toBe(await plain(p1, s0, dash(p1)));
    expect(layouts.counts()).toMatchObject({ hits: 1, misses: 4 });

    // A bound smaller than one layout keeps only the last (CostLru keeps one entry), and every
    // request is still right.
    const tiny = new EncryptedSegments(ids, 64);
    for (const s of [s0, s1, s0, s1]) {
      const got = await tiny.read(handles.opener, t.track, s, p1, dash(p1));
      expect(sha(joinedParts(got.parts))).toBe(await plain(p1, s, dash(p1)));
    }
    expect(tiny.counts()).toMatchObject({ entries: 1, hits: 0, misses: 4 });
    expect(tiny.counts().evictions).toBeGreaterThanOrEqual(3);
  }, 60_000);

  test('a source that changed size under a kept layout is built the plain way (its error)', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'layout-'));
    const ism = await packageFixtures(['video_main_900k.ismv'], 'layout-changed', [`--drm_a.key=${KID}:${KEY}`]);
    const p = await loadPresentation(ism);
    const t = viewOf(p, 'dash').tracks[0]!;
    const s = t.segments.segment(t.segments.count - 1);
    const copy = path.join(dir, 'copy.ismv');
    copyFileSync(t.track.src, copy);
    // The same track read from a copy that is cut short after its layout was kept.
    const fromCopy: SourceOpener = (name) => FileSource.open(name === t.track.src ? copy : name);
    const layouts = new EncryptedSegments(new PresentationIds(), 32 << 20);
    const as: EncryptedAs = { protection: oneKey(p), mode: 'fmp4' };
    const first = await layouts.read(fromCopy, t.track, s, p, as);
    expect(sha(joinedParts(first.parts))).toBe(
      sha(joinedParts((await readEncryptedSegment(handles.opener, t.track, s, p, as)).parts)),
    );
    truncateSync(copy, t.track.fragments.offsets[s.first]! + 8);
    await expect(layouts.read(fromCopy, t.track, s, p, as)).rejects.toThrow();
  }, 60_000);
});
