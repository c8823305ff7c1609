// HDS fragments, judged the way HDS clients consume them: the mdat payloads of every fragment of a
// media, in order, after an FLV header, are one FLV stream. ffmpeg must decode it without a
// single complaint (-v warning prints nothing), with every video and audio frame of the source
// (fixtures/media/facts.json), and the demuxed packets must be the source's samples byte for
// byte. Each fragment's afra and moof are checked against the tags they describe.

import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { writeHdsManifest } from '../../../origin/manifests/hds';
import { hdsFragment } from '../../../origin/segments/f4f/fragment-samples';
import { HdsMedia, hdsMedia } from '../../../origin/model/hds-media';
import { PlayoutView } from '../../../origin/model/view';
import { FIXTURE_FILES, media as mediaFile, tempDir } from '../../helpers/fixtures';
import { viewOf } from '../../helpers/presentations';
import { FlvTag, parseAbst, parseFragment } from '../segments/f4f/f4f-reader';
import { AVC_AAC, facts, filesByKey, outputTimes, presentationOf } from './format-support';
import { runSync } from '../../helpers/process';

interface Fact {
  file: string;
  packets: number;
  box: { fragments: Array<{ samples: number }> };
}
const FACTS = JSON.parse(readFileSync(mediaFile('facts.json'), 'utf8')) as Fact[];
const fact = (file: string): Fact => FACTS.find((f) => f.file === file)!;

const dir = tempDir('hds-flv-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** FLV header (E.2: 'FLV', version 1, audio and video present, header size 9) and PreviousTagSize0. */
const FLV_HEADER = Buffer.from([0x46, 0x4c, 0x56, 0x01, 0x05, 0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00, 0x00]);

interface Fetched {
  flv: Buffer;
  tags: FlvTag[];
  fragments: ReturnType<typeof parseFragment>[];
}

/** Every fragment of a media, checked one by one, and the FLV stream they make. */
async function fetchAll(view: PlayoutView, m: HdsMedia, metadata?: Uint8Array): Promise<Fetched> {
  const parts: Buffer[] = [FLV_HEADER];
  if (metadata !== undefined) {
    // As youtube-dl's HDS downloader does: the manifest's onMetaData as a script tag first.
    const tag = Buffer.alloc(11 + metadata.byteLength + 4);
    tag.writeUInt8(18, 0);
    tag.writeUIntBE(metadata.byteLength, 1, 3);
    Buffer.from(metadata).copy(tag, 11);
    tag.writeUInt32BE(11 + metadata.byteLength, 11 + metadata.byteLength);
    parts.push(tag);
  }
  const tags: FlvTag[] = [];
  const fragments: Fetched['fragments'] = [];
  for (let n = 1; n <= m.timeline.segments.count; n++) {
    const bytes = await hdsFragment(view, m, n);
    const f = parseFragment(bytes);
    expect(f.moof.sequenceNumber).toBe(n);
    checkDescriptions(bytes, f);
    parts.push(Buffer.from(bytes.subarray(f.mdatPayloadStart)));
    tags.push(...f.tags);
    fragments.push(f);
  }
  return { flv: Buffer.concat(parts), tags, fragments };
}

/** The afra points at sequence headers followed by their key frame; each trun at its sample's bytes. */
function checkDescriptions(bytes: Uint8Array, f: ReturnType<typeof parseFragment>): void {
  // F4V afra fields the origin fixes: 32-bit IDs and offsets, local entries only.
  expect([
    f.afra.version,
    f.afra.flags,
    f.afra.longIds,
    f.afra.longOffsets,
    f.afra.globalEntries,
    f.afra.reserved,
  ]).toEqual([0, 0, 0, 0, 0, 0]);
  expect(f.afra.entries.length).toBeGreaterThan(0);
  const byStart = new Map(f.tags.map((t, i) => [t.start + f.mdatPayloadStart, i]));
  for (const e of f.afra.entries) {
    const i = byStart.get(e.offset);
    expect(i).toBeDefined();
    const header = f.tags[i!]!;
    if (header.tagType === 9) {
      expect(header.avcPacketType).toBe(0);
      const key = f.tags[i! + 1]!;
      expect([key.tagType, key.avcPacketType, key.frameType]).toEqual([9, 1, 1]);
    } else {
      expect([header.tagType, header.aacPacketType]).toEqual([8, 0]);
    }
  }
  const bodies = [9, 8].map((type) =>
    f.tags.filter((t) => t.tagType === type && (type === 9 ? t.avcPacketType : t.aacPacketType) === 1),
  );
  f.moof.trafs.forEach((traf, k) => {
    const kindTags = f.moof.trafs.length === 2 ? bodies[k]! : bodies.find((b) => b.length > 0)!;
    expect(traf.truns).toHaveLength(kindTags.length);
    traf.truns.forEach((trun, j) => {
      const at = f.moofStart + trun.dataOffset!;
      expect(at).toBe(f.mdatPayloadStart + kindTags[j]!.bodyAt);
      expect(trun.samples[0]!.size).toBe(kindTags[j]!.body.byteLength);
      expect(Buffer.from(bytes.subarray(at, at + trun.samples[0]!.size!)).equals(Buffer.from(kindTags[j]!.body))).toBe(
        true,
      );
    });
  });
}

/** ffmpeg decodes the whole stream silently; the frame counts by stream type. */
function decode(file: string): { video: number; audio: number } {
  const r = runSync('ffmpeg', ['-nostdin', '-v', 'warning', '-i', file, '-f', 'null', '-']);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  const p = runSync('ffprobe', [
    '-v',
    'warning',
    '-count_frames',
    '-show_entries',
    'stream=codec_type,nb_read_frames',
    '-of',
    'csv=p=0',
    file,
  ]);
  expect(p.stderr).toBe('');
  const counts = new Map(
    p.stdout
      .trim()
      .split('\n')
      .map((l) => l.split(',') as [string, string]),
  );
  return { video: Number(counts.get('video') ?? 0), audio: Number(counts.get('audio') ?? 0) };
}

/**
 * Packet sizes and hashes of one stream, demuxed without decoding (`-c copy` framemd5), and the
 * side data ffmpeg attaches: a sequence header repeated in a later fragment becomes "new
 * extradata" on the next packet (` S=1 <size> <hash>`), which the source, with its one sample
 * description, does not have.
 */
function packets(file: string, map: string): { rows: string[]; sideData: string[] } {
  const r = runSync('ffmpeg', [
    '-nostdin',
    '-v',
    'error',
    '-i',
    file,
    '-map',
    map,
    '-c',
    'copy',
    '-f',
    'framemd5',
    '-',
  ]);
  expect(r.stderr).toBe('');
  const lines = r.stdout
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) =>
      l
        .split(',')
        .slice(4)
        .map((c) => c.trim())
        .join(' '),
    );
  return {
    rows: lines.map((l) => l.replace(/ S=.*$/, '')),
    sideData: lines.flatMap((l) => /S=(.*)$/.exec(l)?.[1] ?? []),
  };
}

/** The FLV's packets are the source's; the only side data is the repeated sequence header, once per later fragment. */
function expectSourcePackets(flv: string, source: string, map: string, fragments: number): void {
  const mine = packets(flv, map);
  expect(mine.rows).toEqual(packets(source, map).rows);
  expect(mine.sideData).toHaveLength(fragments - 1);
  expect(new Set(mine.sideData).size).toBeLessThanOrEqual(1);
}

function expectMonotonic(tags: FlvTag[]): void {
  const ts = tags.map((t) => t.timestamp);
  expect(ts.every((t, i) => i === 0 || t >= ts[i - 1]!)).toBe(true);
}

const VIDEOS = FIXTURE_FILES.filter((f) => f.startsWith('video_'));

describe('every H.264 rendition with its audio: the FLV ffmpeg reads is the source', () => {
  test.each(VIDEOS)('%s', async (videoFile) => {
    const view = viewOf(await presentationOf(FIXTURE_FILES), 'hds');
    const files = filesByKey(view);
    const m = hdsMedia(view).find((x) => files.get(x.key.split('-')[1]!) === videoFile)!;
    const audioFile = files.get(m.key.split('-')[0]!)!;
    expect(audioFile).toBe('audio_eng_128k.isma');
    const { flv, tags, fragments } = await fetchAll(view, m);
    expectMonotonic(tags);
    // One key frame per source fragment: one afra entry each, at the fragment's afrt time.
    const times = outputTimes(FIXTURE_FILES, videoFile);
    expect(fragments.map((f) => f.afra.entries.map((e) => e.time))).toEqual(times.map((t) => [t]));
    expect(fragments.map((f) => f.afra.timeScale)).toEqual(times.map(() => facts(videoFile).timescale));
    const out = path.join(dir, `${videoFile}.flv`);
    writeFileSync(out, flv);
    expect(decode(out)).toEqual({ video: fact(videoFile).packets, audio: fact(audioFile).packets });
    expectSourcePackets(out, mediaFile(videoFile), '0:v', fragments.length);
    expectSourcePackets(out, mediaFile(audioFile), '0:a', fragments.length);
  });
});

test('the manifest metadata as a script tag first (what youtube-dl writes) still decodes silently', async () => {
  const view = viewOf(await presentationOf(AVC_AAC), 'hds');
  const m = hdsMedia(view)[0]!;
  const xml = writeHdsManifest(view, '');
  const metadata = Buffer.from(/<metadata>([^<]+)<\/metadata>/.exec(xml)![1]!, 'base64');
  const out = path.join(dir, 'with-metadata.flv');
  writeFileSync(out, (await fetchAll(view, m, metadata)).flv);
  expect(decode(out)).toEqual({ video: 240, audio: 470 });
  const probe = runSync('ffprobe', [
    '-v',
    'error',
    '-show_entries',
    'stream=codec_type,width,height',
    '-of',
    'csv=p=0',
    out,
  ]);
  expect(probe.stdout).toContain('video,512,288');
});

describe('sub-clips and joined fragments', () => {
  test('t=2-6: two fragments, numbered from 1; their video and every audio frame of the clip', async () => {
    const view = viewOf(await presentationOf(AVC_AAC), 'hds', 't=2-6');
    const m = hdsMedia(view)[1]!; // the Main profile rendition, with B-frames
    const files = filesByKey(view);
    const videoFile = files.get(m.key.split('-')[1]!)!;
    const { flv, tags, fragments } = await fetchAll(view, m);
    expect(fragments).toHaveLength(2);
    expectMonotonic(tags);
    const afrt = parseAbst(Buffer.from(/<bootstrapInfo[^>]*>([^<]+)</.exec(writeHdsManifest(view, ''))![1]!, 'base64'))
      .fragmentRunTables[0]!;
    // The first tag of the clip is at its afrt start, in ms.
    expect(tags[0]!.timestamp).toBe(Math.round(Number(afrt.entries[0]!.firstFragmentTimestamp) / 10000));
    expect(fragments.map((f) => f.afra.entries.map((e) => e.time))).toEqual(
      outputTimes(AVC_AAC, videoFile)
        .slice(1, 3)
        .map((t) => [t]),
    );
    const out = path.join(dir, 'clip.flv');
    writeFileSync(out, flv);
    const samples = (file: string, first: number, end: number) =>
      fact(file)
        .box.fragments.slice(first, end)
        .reduce((s, f) => s + f.samples, 0);
    // Audio fragments kept by their midpoints (1, 3, 5, 7, 9 s): the 2nd and 3rd.
    expect(decode(out)).toEqual({ video: samples(videoFile, 1, 3), audio: samples('audio_eng_128k.isma', 1, 3) });
  });

  test('hds_minimum_fragment_length=4: fragments of two GOPs, an afra entry for each key frame', async () => {
    const view = viewOf(await presentationOf(AVC_AAC), 'hds', 'hds_minimum_fragment_length=4');
    const m = hdsMedia(view)[0]!;
    const { flv, fragments } = await fetchAll(view, m);
    expect(fragments.map((f) => f.afra.entries.length)).toEqual([2, 2, 1]);
    const out = path.join(dir, 'joined.flv');
    writeFileSync(out, flv);
    expect(decode(out)).toEqual({ video: 240, audio: 470 });
  });

  test('an audio-only media: raw AAC frames, one afra entry per fragment', async () => {
    const view = viewOf(await presentationOf(['audio_nld_128k.isma']), 'hds');
    const [m] = hdsMedia(view);
    const { flv, fragments, tags } = await fetchAll(view, m!);
    expect(fragments.map((f) => f.afra.entries.length)).toEqual([1, 1, 1, 1, 1]);
    expect(tags.every((t) => t.tagType === 8)).toBe(true);
    const out = path.join(dir, 'audio.flv');
    writeFileSync(out, flv);
    expect(decode(out)).toEqual({ video: 0, audio: 470 });
    expectSourcePackets(out, mediaFile('audio_nld_128k.isma'), '0:a', fragments.length);
  });
});

test('the sequence headers are the source avcC record and the AudioSpecificConfig, byte for byte', async () => {
  const view = viewOf(await presentationOf(AVC_AAC), 'hds');
  const m = hdsMedia(view)[2]!; // High profile
  const files = filesByKey(view);
  const [audioKey, videoKey] = m.key.split('-') as [string, string];
  const f = parseFragment(await hdsFragment(view, m, 1));
  const videoHeader = f.tags.find((t) => t.tagType === 9 && t.avcPacketType === 0)!;
  const audioHeader = f.tags.find((t) => t.tagType === 8 && t.aacPacketType === 0)!;
  // The avcC box of the source's sample entry, found by a plain search of its moov.
  const source = readFileSync(mediaFile(files.get(videoKey)!));
  const at = source.indexOf('avcC', 0, 'latin1');
  expect(Buffer.from(videoHeader.body).equals(source.subarray(at + 4, at - 4 + source.readUInt32BE(at - 4)))).toBe(
    true,
  );
  // The server manifest's CodecPrivateData of an AAC track is its AudioSpecificConfig.
  const audioTrack = view.tracks.find(
    (t) => `${t.track.properties.trackName}=${t.track.properties.systemBitrate}` === audioKey,
  )!;
  expect(Buffer.from(audioHeader.body).toString('hex').toUpperCase()).toBe(
    audioTrack.track.properties.CodecPrivateData.toUpperCase(),
  );
});
