// MPEG-TS segments from a real origin on loopback (set-up in hls-support.ts), judged by ffmpeg
// and by the tests' own TS checker (mpegts/ts-check.ts):
// - every rendition (each video alone, each audio + video multiplexed), read as a whole through
//   its media playlist, and each segment on its own, decodes with `-v warning` printing nothing,
//   with the source's frame counts (fixtures/media/facts.json, or ffprobe on the source);
// - per segment, the video frames of its fragments and the audio frames the cut rule gives it
//   (video[i] ≤ t < video[i+1] on the source timeline, the first and last segments open ended),
//   computed from the facts;
// - the segments of a rendition form one valid transport stream (counters, PCR, PTS/DTS), also
//   for a sub-clip and for other segment lengths, and whatever order they are fetched in;
// - timestamps: TS time = fMP4 time of the same origin at 90 kHz + 10 s (packet by packet).

import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { get, startTestOrigin } from '../server/server-helpers';
import { checkTs } from './mpegts/ts-check';
import {
  compositionTimes,
  dir,
  expectedAudioPerSegment,
  expectedVideoPerSegment,
  fetchOk,
  initTimescale,
  keyOf,
  nameOf,
  origin,
  packetTimes,
  pool,
  PRESENTATIONS,
  probeFrames,
  Rendition,
  renditionKey,
  RENDITIONS,
  renditionSegments,
  segmentsOf,
  setUpHlsOrigin,
  sourceFrames,
  trackId,
} from './hls-support';

setUpHlsOrigin();

// ---------------------------------------------------------------------------------------------
// MPEG-TS renditions

describe('MPEG-TS renditions', () => {
  test('the renditions cover every video alone and every audio + video pair', () => {
    expect(RENDITIONS.length).toBe(3 * 4 + 3 * 2 + 1 * 3 + 1 * 2);
  });

  test.each(RENDITIONS.map((r) => [nameOf(r), r] as const))(
    '%s: the playlist read as one stream, and every segment alone',
    async (_, r) => {
      const expected = await sourceFrames(r.video);
      const audioExpected = r.audio !== undefined ? await sourceFrames(r.audio) : undefined;
      // Whole, through the media playlist.
      const whole = await probeFrames(`${origin.url}/${r.pres}.ism/${r.pres}-${renditionKey(r)}.m3u8`);
      expect(whole.stderr).toBe('');
      expect(whole.codecs['video']).toBe('h264');
      expect(whole.frames['video']).toBe(expected['video']);
      expect(whole.frames['audio']).toBe(audioExpected?.['audio']);

      // Each segment alone: the checker over the sequence, ffmpeg on each.
      const segments = await renditionSegments(r);
      const check = checkTs(segments);
      expect(check.problems).toEqual([]);
      expect(check.streams.length).toBe(r.audio !== undefined ? 2 : 1);
      const files = segments.map((b, i) => {
        const file = path.join(dir, `${r.pres}-${renditionKey(r)}-${i + 1}.ts`);
        writeFileSync(file, b);
        return file;
      });
      const probed = await pool(files.map((f) => () => probeFrames(f)));
      probed.forEach((p, i) => expect([i + 1, p.stderr]).toEqual([i + 1, '']));
      const videoPer = probed.map((p) => p.frames['video'] ?? 0);
      const audioPer = probed.map((p) => p.frames['audio'] ?? 0);
      expect(videoPer.reduce((a, b) => a + b, 0)).toBe(expected['video']);
      if (r.audio !== undefined) expect(audioPer.reduce((a, b) => a + b, 0)).toBe(audioExpected!['audio']);
      const ranges = segmentsOf.get(trackId(r.pres, r.video, 'video'))!;
      if (r.video !== 'muxed_av.ismv') {
        expect(videoPer).toEqual(expectedVideoPerSegment(r.video, ranges));
        if (r.audio !== undefined) expect(audioPer).toEqual(expectedAudioPerSegment(r.audio, r.video, ranges));
      }
    },
  );

  test.each([
    ['p', 'video_main_900k.ismv', 'audio_eng_64k.isma'],
    ['d', 'video_baseline_400k.ismv', 'audio_ac3_384k.isma'],
    ['v', 'video_2997_600k.ismv', 'audio_nld_128k.isma'],
    ['v', 'video_interlaced_800k.ismv', 'audio_nld_128k.isma'],
    ['m', 'muxed_av.ismv', 'muxed_av.ismv'],
  ])('%s %s + %s: every frame presents at its fMP4 time at 90 kHz + 10 s', async (pres, video, audio) => {
    const r: Rendition = { pres, video, audio };
    const tsFile = path.join(dir, `times-${pres}.ts`);
    writeFileSync(tsFile, Buffer.concat(await renditionSegments(r)));
    const ts = await packetTimes(tsFile);
    for (const [type, file] of [
      ['video', video],
      ['audio', audio],
    ] as const) {
      const key = keyOf(pres, file, type);
      const count = segmentsOf.get(trackId(pres, file, type))!.length;
      const init = await fetchOk(`/${pres}.ism/hls/${pres}-${key}.m4s`, 'video/mp4');
      const segments: Buffer[] = [];
      for (let n = 1; n <= count; n++)
        segments.push(await fetchOk(`/${pres}.ism/hls/${pres}-${key}-${n}.m4s`, 'video/mp4'));
      const timescale = initTimescale(init);
      // Composition times (§8.8.8: decode time + signed offset), halves up to 90 kHz, + 10 s.
      const expected = compositionTimes(init, segments).map(
        (t) => (2n * t * 90000n + timescale) / (2n * timescale) + 900000n,
      );
      expect(ts[type]!.timeBase).toEqual([1, 90000]);
      expect(ts[type]!.pts).toEqual(expected);
    }
  });

  test('a sub-clip and other segment lengths stay one valid stream, fetched in any order', async () => {
    const r: Rendition = { pres: 'p', video: 'video_high_1600k.ismv', audio: 'audio_nld_128k.isma' };
    const cold = await startTestOrigin({ p: PRESENTATIONS['p']! });
    try {
      for (const query of [
        '?t=2-8',
        '?vbegin=0:00:04',
        '?hls_minimum_fragment_length=0',
        '?hls_minimum_fragment_length=6',
        '?hls_minimum_fragment_length=3&t=3',
      ]) {
        const playlist = (await get(origin.url, `/p.ism/p-${renditionKey(r)}.m3u8${query}`)).text;
        // A clip's segments keep the whole presentation's numbers (vbegin=0:00:04 starts at 2).
        const urls = playlist
          .split('\n')
          .filter((l) => /\.ts(\?|$)/.test(l))
          .map((l) => `/p.ism/${l}`);
        expect([query, urls.length > 0]).toEqual([query, true]);
        const forward: Buffer[] = [];
        for (const u of urls) forward.push(await fetchOk(u, 'video/mp2t'));
        const check = checkTs(forward);
        expect([query, check.problems]).toEqual([query, []]);
        // Another origin (cold for the first query) answering in reverse order gives the same bytes.
        for (let i = urls.length - 1; i >= 0; i--) {
          const again = await get(cold.url, urls[i]!);
          expect([query, urls[i], again.body.equals(forward[i]!)]).toEqual([query, urls[i], true]);
        }
        const file = path.join(dir, `clip.ts`);
        writeFileSync(file, Buffer.concat(forward));
        const probed = await probeFrames(file);
        expect([query, probed.stderr]).toEqual([query, '']);
      }
    } finally {
      await cold.server.close();
    }
  }, 120_000);
});
