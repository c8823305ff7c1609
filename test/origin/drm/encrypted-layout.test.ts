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
import { FileSource, SourceOpener } from '../../../origin/io/source';
import type { Presentation, PresentationTrack } from '../../../origin/model/presentation';
import { EncryptedSegments } from '../../../origin/segments/fmp4/encrypted-layout';
import { EncryptedAs, joinedParts, readEncryptedSegment } from '../../../origin/segments/fmp4/encrypted-segment';
import { loadPresentation, packageFixtures, viewOf } from '../../helpers/presentations';
import { ENCRYPTED_CASES, EncryptedFormat, KEY, KID, metered, oneKey } from './encrypted-setup';

const FILES = ['video_main_900k.ismv', 'video_interlaced_800k.ismv', 'audio_eng_64k.isma', 'text_eng.ismt'];

const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

let handles: FileHandles;
beforeAll(() => {
  handles = new FileHandles(60_000);
});
afterAll(() => handles.close());

const CASES: Array<[string, string[], EncryptedFormat[]]> = [
  ['cenc', ENCRYPTED_CASES.cenc.options, ENCRYPTED_CASES.cenc.formats],
  ['cbcs', ENCRYPTED_CASES.cbcs.options, ENCRYPTED_CASES.cbcs.formats],
  ['clear lead', ENCRYPTED_CASES.clearLead.options, ENCRYPTED_CASES.clearLead.formats],
  ['HLS fMP4 cenc', ENCRYPTED_CASES.hlsCenc.options, ENCRYPTED_CASES.hlsCenc.formats],
];

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
