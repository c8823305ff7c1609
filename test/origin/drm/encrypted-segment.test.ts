// readEncryptedSegment (segments/fmp4/encrypted-segment.ts: the segment's fragments read once,
// each moof parsed once, the samples encrypted where they were read, the avcC parsed once per
// track, cbcs with one cipher per fragment, parts instead of a joined copy) against the plain
// version written out below as it was first built: each moof read, reboxed clear to find its
// data, the data ranges read and joined, the samples listed by samplesOfMoof and encrypted one by
// one (cencEncrypt, cbcsEncrypt) with the avcC parsed afresh per fragment, the moof reboxed again
// with the aux info, everything joined. Every segment of every fixture track, cenc and cbcs, DASH,
// HLS fMP4 (segments of several fragments) and Smooth, with and without a clear lead, through the
// server's kept-handle sources, a plain FileSource and an in-memory source: the same bytes; the
// in-memory source's bytes are left as they were; the kept-handle source is read once a segment.

import { readFileSync } from 'node:fs';
import { FileHandles } from '../../../origin/io/file-handles';
import { BufferSource, FileSource, SourceOpener, withSource } from '../../../origin/io/source';
import { ParameterSets } from '../../../origin/media/h264-slice';
import { trackHeaderOf } from '../../../origin/media/moov';
import { samplesOfMoof } from '../../../origin/media/samples';
import { parseSourceMoof } from '../../../origin/media/traf-layout';
import { Presentation, PresentationTrack, ticksIn } from '../../../origin/model/presentation';
import type { Segment } from '../../../origin/model/timeline';
import { trackIvs } from '../../../origin/drm/ivs';
import { cbcsEncrypt, cencEncrypt } from '../../../origin/drm/sample-cipher';
import { avcSubsamples } from '../../../origin/drm/subsamples';
import { brandBox, serialize } from '../../../origin/segments/box-writer';
import {
  EncryptedAs,
  inClearLead,
  joinedParts,
  readEncryptedSegment,
  trackEncryption,
} from '../../../origin/segments/fmp4/encrypted-segment';
import type { SampleAuxInfo } from '../../../origin/segments/fmp4/encryption-boxes';
import {
  mdatHeader,
  readFragmentMoof,
  reboxFragment,
  STYP_COMPATIBLE_BRANDS,
  STYP_MAJOR_BRAND,
} from '../../../origin/segments/fmp4/media-segment';
import { loadPresentation, packageFixtures, viewOf } from '../../helpers/presentations';
import { ENCRYPTED_CASES, EncryptedFormat, metered } from './encrypted-setup';

const FILES = [
  'video_2997_600k.ismv',
  'video_baseline_400k.ismv',
  'video_high_1600k.ismv',
  'video_interlaced_800k.ismv',
  'video_main_900k.ismv',
  'video_sar_500k.ismv',
  'audio_ac3_384k.isma',
  'audio_eac3_256k.isma',
  'audio_eng_64k.isma',
  'text_eng.ismt',
];

/** The plain version: one sample at a time, everything read and parsed where it is needed. */
async function plainSegment(
  open: SourceOpener,
  track: PresentationTrack,
  s: Segment,
  p: Presentation,
  { protection, mode }: EncryptedAs,
): Promise<Buffer> {
  return withSource(open, track.src, async (source) => {
    const f = track.fragments;
    const trackId = track.properties.trackID;
    const shift = ticksIn(p.origin, track.properties.TimeScale);
    const encryption = trackEncryption(track, protection);
    const clear = encryption === undefined || inClearLead(track, s, protection);
    const h = trackHeaderOf(track);
    const video = h.codec?.kind === 'avc' ? h.codec : undefined;
    const ivs = trackIvs(track, protection);
    const pieces: Uint8Array[] =
      mode === 'smooth' ? [] : [serialize(brandBox('styp', STYP_MAJOR_BRAND, 0, STYP_COMPATIBLE_BRANDS))];
    for (let i = s.first; i < s.first + s.count; i++) {
      const offset = f.offsets[i]!;
      const moof = await readFragmentMoof(source, offset);
      const time = mode === 'smooth' ? f.times[i]! - (s.sourceTime - s.smoothTime) : f.times[i]! - shift;
      const common = {
        sequenceNumber: i + 1,
        baseMediaDecodeTime: time,
        keepTfxd: mode === 'smooth',
        ...(mode === 'smooth' ? { tfxdTime: time } : {}),
        headers: track.headers,
        fileSize: source.size,
        fileName: track.src,
      };
      const plain = reboxFragment(moof, offset, trackId, common);
      const reads = [];
      for (const r of plain.data) reads.push(Buffer.from(await source.read(r.offset, r.length)));
      const payload = Buffer.concat(reads);
      if (encryption === undefined) {
        pieces.push(plain.moof, mdatHeader(payload.length), payload);
        continue;
      }
      const perTraf = parseSourceMoof(moof, offset)
        .filter((t) => t.tfhd.trackId === trackId)
        .map((t) => t.truns.reduce((n, r) => n + r.sampleCount, 0));
      let trafs: Array<SampleAuxInfo[] | undefined> = perTraf.map(() => undefined);
      if (!clear) {
        const samples = samplesOfMoof(moof, offset, {
          trackId,
          trex: h.trexDefaults,
          baseTime: f.times[i]!,
          fragment: i,
          shift,
          fileSize: source.size,
        });
        const sets = video === undefined ? undefined : new ParameterSets(video.parameterSets);
        let at = 0;
        // fMP4 cenc: 16-byte IVs, the fragment's high half ‖ the blocks the samples before used.
        let blocks = 0n;
        const aux = samples.map((x, k): SampleAuxInfo => {
          const sample = payload.subarray(at, at + x.size);
          at += x.size;
          const subsamples =
            video === undefined ? undefined : avcSubsamples(sample, video.lengthSize, sets!, protection.scheme);
          if (protection.scheme === 'cenc') {
            const low = Buffer.alloc(8);
            low.writeBigUInt64BE(blocks);
            const iv = mode === 'smooth' ? ivs.sampleIv(i, k) : Buffer.concat([ivs.sampleIv(i, 0), low]);
            const bytes = subsamples?.reduce((n, x2) => n + x2.protected, 0) ?? x.size;
            blocks += BigInt(Math.ceil(bytes / 16));
            cencEncrypt(protection.key.key, iv, sample, subsamples);
            return { iv, subsamples };
          }
          const pattern = video === undefined ? { crypt: 0, skip: 0 } : { crypt: 1, skip: 9 };
          cbcsEncrypt(protection.key.key, ivs.constantIv, sample, pattern, subsamples);
          return { iv: new Uint8Array(0), subsamples };
        });
        expect(at).toBe(payload.length);
        let before = 0;
        trafs = perTraf.map((count) => aux.slice(before, (before += count)));
      }
      const encrypted = reboxFragment(moof, offset, trackId, {
        ...common,
        encryption: { sampleDescriptionIndex: clear ? 2 : 1, trafs, piff: mode === 'smooth' },
      });
      pieces.push(encrypted.moof, mdatHeader(payload.length), payload);
    }
    return Buffer.concat(pieces);
  });
}

const handles = new FileHandles(60_000);
afterAll(() => handles.close());

const memory = new Map<string, { bytes: Uint8Array; copy: Buffer }>();
const inMemory: SourceOpener = async (path) => {
  let m = memory.get(path);
  if (m === undefined) {
    const copy = readFileSync(path);
    m = { bytes: Uint8Array.from(copy), copy };
    memory.set(path, m);
  }
  return new BufferSource(path, m.bytes);
};

const OPENERS: Record<string, SourceOpener> = {
  'kept handles': handles.opener,
  FileSource: (path) => FileSource.open(path),
  'in memory': inMemory,
};

const CASES: Array<[string, string[], string[], EncryptedFormat[]]> = [
  ['cenc', [...FILES, 'muxed_av.ismv'], ENCRYPTED_CASES.cenc.options, ENCRYPTED_CASES.cenc.formats],
  ['cbcs', FILES, ENCRYPTED_CASES.cbcs.options, ENCRYPTED_CASES.cbcs.formats],
  ['clear lead, operator IV base', FILES, ENCRYPTED_CASES.clearLead.options, ENCRYPTED_CASES.clearLead.formats],
  [
    'HLS fMP4 cbcs, muxed source',
    [...FILES, 'muxed_av.ismv'],
    ENCRYPTED_CASES.hlsCbcs.options,
    ENCRYPTED_CASES.hlsCbcs.formats,
  ],
  ['HLS fMP4 cenc', FILES, ENCRYPTED_CASES.hlsCenc.options, ENCRYPTED_CASES.hlsCenc.formats],
];

describe.each(CASES)('%s', (_name, files, options, formats) => {
  let p: Presentation;
  beforeAll(async () => {
    p = await loadPresentation(await packageFixtures(files, 'p', options));
  }, 60_000);

  test.each(formats)(
    '%s: every segment is the plain version, through every kind of source',
    async (format, query, as) => {
      const view = viewOf(p, format, query);
      let segments = 0;
      let clearSegments = 0;
      for (const t of view.tracks) {
        for (let i = 0; i < t.segments.count; i++) {
          const s = t.segments.segment(i);
          const expected = await plainSegment(OPENERS['FileSource']!, t.track, s, p, as(p));
          for (const [name, open] of Object.entries(OPENERS)) {
            const count = { reads: 0 };
            const got = await readEncryptedSegment(metered(open, count), t.track, s, p, as(p));
            const bytes = Buffer.from(joinedParts(got.parts));
            expect([name, trackKeyOf(t.track), i, bytes.equals(expected)]).toEqual([
              name,
              trackKeyOf(t.track),
              i,
              true,
            ]);
            expect(got.length).toBe(bytes.length);
            // The one read of the segment's fragments (the kept-handle sources can read into a buffer of ours).
            if (name === 'kept handles')
              expect([trackKeyOf(t.track), i, count.reads]).toEqual([trackKeyOf(t.track), i, 1]);
          }
          segments++;
          if (inClearLead(t.track, s, as(p).protection)) clearSegments++;
        }
      }
      expect(segments).toBeGreaterThan(20);
      if (as(p).protection.clearLeadSeconds > 0) expect(clearSegments).toBeGreaterThan(0);
      // Encrypting in place never reaches a source's own bytes.
      for (const m of memory.values()) expect(Buffer.from(m.bytes).equals(m.copy)).toBe(true);
    },
    120_000,
  );
});

function trackKeyOf(t: PresentationTrack): string {
  return `${t.properties.trackName}=${t.properties.systemBitrate}`;
}

test('the HLS case has segments of several fragments (one read covers them all)', async () => {
  const p = await loadPresentation(await packageFixtures(['video_main_900k.ismv'], 'p', []));
  const view = viewOf(p, 'hls', 'hls_fmp4=true');
  expect(view.tracks[0]!.segments.segment(0).count).toBeGreaterThan(1);
}, 60_000);
