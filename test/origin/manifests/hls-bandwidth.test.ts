// BANDWIDTH must cover the bytes a client downloads (RFC 8216 §4.3.4.2). The playlist writer
// estimates MPEG-TS and packed-audio sizes from the source's fragment sizes (hls-rates.ts);
// here the estimate is checked against the sizes the segment writers give for the fixture's
// real samples: the MPEG-TS planner (origin/segments/mpegts/mpegts.ts sizes a segment from sample sizes
// alone), the packed-audio layout (ID3 tag + ADTS-framed AAC, or raw Dolby syncframes) and the
// WebVTT writer (origin/segments/webvtt/webvtt.ts, whose segments are counted as the source's bytes).

import { ratesOf, renditionSeries, targetSeconds } from '../../../origin/manifests/hls-rates';
import { ADTS_HEADER_SIZE } from '../../../origin/segments/mpegts/adts';
import { carriedConfig } from '../../../origin/media/codec-config';
import { planTsSegment, to90k, TS_TIME_OFFSET, TsSample, tsStream } from '../../../origin/segments/mpegts/mpegts';
import { TIMESTAMP_TAG_SIZE } from '../../../origin/segments/packed-audio';
import { rendition } from '../../../origin/model/rendition';
import { outputShift, readFragmentRange, readSampleData, SourceSample } from '../../../origin/media/samples';
import { trackHeaderOf } from '../../../origin/media/moov';
import { webvttSegment } from '../../../origin/segments/webvtt/webvtt';
import { FileSource } from '../../../origin/io/source';
import { PlayoutView, ViewTrack } from '../../../origin/model/view';
import { FIXTURE_FILES } from '../../helpers/fixtures';
import { viewOf } from '../../helpers/presentations';
import { filesByKey, presentationOf, rfcPeak } from './format-support';
import { segmentsOf } from '../../helpers/segments';

async function samplesOf(view: PlayoutView, t: ViewTrack): Promise<SourceSample[]> {
  const source = await FileSource.open(t.track.src);
  try {
    return await readFragmentRange(
      source,
      t.track,
      0,
      t.track.fragments.count,
      outputShift(t.track, view.presentation.origin),
    );
  } finally {
    await source.close();
  }
}

/** As TS samples; DTS moved back by the largest negative composition offset (B-frames), so PTS ≥ DTS. */
function tsSamples(t: ViewTrack, samples: SourceSample[]): TsSample[] {
  const ts = t.track.properties.TimeScale;
  const back = BigInt(Math.max(0, ...samples.map((s) => -s.compositionOffset)));
  return samples.map((s) => ({
    dts: to90k(s.time - back, ts) + BigInt(TS_TIME_OFFSET),
    pts: to90k(s.time + BigInt(s.compositionOffset), ts) + BigInt(TS_TIME_OFFSET),
    size: s.size,
    keyframe: s.sync,
    group: 0,
    file: t.track.src,
    offset: s.offset,
  }));
}

/** Real TS segment sizes of video + audio multiplexed, audio cut at the video segment times. */
async function muxedSizes(view: PlayoutView, video: ViewTrack, audio: ViewTrack): Promise<number[]> {
  const vs = tsSamples(video, await samplesOf(view, video));
  const as = tsSamples(audio, await samplesOf(view, audio));
  const stream = (t: ViewTrack) =>
    tsStream(carriedConfig(trackHeaderOf(t.track), t.track.src), t.track.properties.systemLanguage, t.track.src);
  const vts = video.track.properties.TimeScale;
  const starts = segmentsOf(video).map((s) => to90k(s.time, vts) + BigInt(TS_TIME_OFFSET));
  return segmentsOf(video).map((s, i) => {
    const from = i === 0 ? -1n << 60n : starts[i]!;
    const to = i === starts.length - 1 ? 1n << 60n : starts[i + 1]!;
    const vSamples = vs.filter((x) => x.dts >= starts[i]! && (i === starts.length - 1 || x.dts < starts[i + 1]!));
    const aSamples = as.filter((x) => x.dts >= from && x.dts < to);
    const plan = planTsSegment({
      streams: [
        { stream: stream(video), samples: vSamples, cc: 0 },
        { stream: stream(audio), samples: aSamples, cc: 0 },
      ],
      patCc: 0,
      pmtCc: 0,
    });
    return plan.size;
  });
}

async function packedSizes(view: PlayoutView, audio: ViewTrack): Promise<number[]> {
  const samples = await samplesOf(view, audio);
  const aac = audio.track.properties.codecs.startsWith('mp4a');
  return segmentsOf(audio).map((s) => {
    const inSegment = samples.filter((x) => x.fragment >= s.first && x.fragment < s.first + s.count);
    return TIMESTAMP_TAG_SIZE + inSegment.reduce((a, x) => a + x.size + (aac ? ADTS_HEADER_SIZE : 0), 0);
  });
}

describe('estimated rates against the segment writers', () => {
  const byFile = (view: PlayoutView, file: string): ViewTrack =>
    view.tracks.find(
      (t) => filesByKey(view).get(`${t.track.properties.trackName}=${t.track.properties.systemBitrate}`) === file,
    )!;

  test.each([
    ['video_baseline_400k.ismv', 'audio_eng_64k.isma'],
    ['video_main_900k.ismv', 'audio_eng_128k.isma'],
    ['video_high_1600k.ismv', 'audio_ac3_384k.isma'],
    ['video_2997_600k.ismv', 'audio_eac3_256k.isma'],
    ['video_interlaced_800k.ismv', 'audio_nld_128k.isma'],
  ])(
    'multiplexed TS %s + %s: the estimate covers the real peak and average, by at most 6 %%',
    async (videoFile, audioFile) => {
      for (const query of ['', 'hls_minimum_fragment_length=0', 'hls_minimum_fragment_length=6']) {
        const view = viewOf(await presentationOf(FIXTURE_FILES), 'hls', query);
        const video = byFile(view, videoFile);
        const audio = byFile(view, audioFile);
        const sizes = await muxedSizes(view, video, audio);
        const ts = video.track.properties.TimeScale;
        const target = targetSeconds(
          segmentsOf(video).map((s) => s.duration),
          ts,
        );
        const real = {
          peak: rfcPeak(
            sizes,
            segmentsOf(video).map((s) => s.duration),
            ts,
            target,
          ),
          average: Math.ceil(
            (sizes.reduce((a, b) => a + b, 0) * 8 * ts) /
              Number(segmentsOf(video).reduce((a, s) => a + s.duration, 0n)),
          ),
        };
        const estimate = ratesOf(renditionSeries(rendition([audio, video]), 'ts'), target);
        expect([query, estimate.peak >= real.peak, estimate.average >= real.average]).toEqual([query, true, true]);
        expect(estimate.peak / real.peak).toBeLessThan(1.06);
        expect(estimate.average / real.average).toBeLessThan(1.06);
      }
    },
  );

  test.each(['audio_eng_64k.isma', 'audio_nld_128k.isma', 'audio_ac3_384k.isma', 'audio_eac3_256k.isma'])(
    'packed audio %s: the estimate covers the real peak, by at most 6 %% (the source bytes include the moof)',
    async (file) => {
      const view = viewOf(await presentationOf(FIXTURE_FILES), 'hls');
      const audio = byFile(view, file);
      const sizes = await packedSizes(view, audio);
      const ts = audio.track.properties.TimeScale;
      const target = targetSeconds(
        segmentsOf(audio).map((s) => s.duration),
        ts,
      );
      const real = rfcPeak(
        sizes,
        segmentsOf(audio).map((s) => s.duration),
        ts,
        target,
      );
      const kind = file.includes('ac3') ? 'ac3' : file.includes('eac3') ? 'ec3' : 'aac';
      const estimate = ratesOf(renditionSeries(rendition([audio]), kind), target).peak;
      expect(estimate).toBeGreaterThanOrEqual(real);
      expect(estimate / real).toBeLessThan(1.06);
    },
  );

  test.each(['text_eng.ismt', 'text_nld.ismt'])(
    'WebVTT %s: every segment is smaller than the source bytes it is counted as',
    async (file) => {
      for (const query of ['', 'hls_minimum_fragment_length=0']) {
        const view = viewOf(await presentationOf(FIXTURE_FILES), 'hls', query);
        const text = byFile(view, file);
        const source = await FileSource.open(text.track.src);
        try {
          const samples = await readSampleData(source, await samplesOf(view, text), 1 << 20);
          for (const s of segmentsOf(text)) {
            const inSegment = samples
              .filter((x) => x.fragment >= s.first && x.fragment < s.first + s.count)
              .map((x) => ({ data: x.data, sourceTime: x.sourceTime, time: x.time, duration: BigInt(x.duration) }));
            const vtt = webvttSegment(inSegment, text.track.properties.TimeScale, TS_TIME_OFFSET, {
              start: s.time,
              end: s.time + s.duration,
            });
            expect(vtt).toContain('-->'); // the fixtures have a cue in every segment: a real comparison
            expect(Buffer.byteLength(vtt)).toBeLessThanOrEqual(s.bytes);
          }
        } finally {
          await source.close();
        }
      }
    },
  );
});
