// LL-HLS test material: CMAF fixtures cut by ffmpeg into 0.32 s fragments (the live notes'
// recipe: GOP 48 at 25 fps = 1.92 s = 90 AAC frames, `-frag_duration 320000` for video and audio),
// replayed by the test encoder, and a channel whose segments are 48/25 s (six parts each).

import * as path from 'node:path';
import { loadFixture, Fixture } from './test-encoder';
import { run } from './process';

/** Seconds of one fixture pass: four 1.92 s segments. */
export const FIXTURE_SECONDS = 7.68;
/** Fragments (parts) per segment. */
export const PARTS_PER_SEGMENT = 6;
/** The publishing point's options for LL-HLS in tests (`origin package`). */
export const LL_CHANNEL_OPTIONS = ['--hls.minimum_fragment_length=48/25', '--hls.fmp4', '--hls.low_latency'];

/** The video (25 fps, H.264, GOP 48) and audio (AAC 48 kHz) CMAF fixtures, made in `dir`. */
export async function makeLlFixtures(dir: string): Promise<{ video: Fixture; audio: Fixture }> {
  const v = path.join(dir, 'll-video.cmfv');
  const a = path.join(dir, 'll-audio.cmfa');
  const common = ['-v', 'error', '-y', '-t', String(FIXTURE_SECONDS), '-frag_duration', '320000'];
  const flags = '+cmaf+empty_moov+separate_moof+default_base_moof+skip_trailer';
  const video = await run('ffmpeg', [
    ...['-f', 'lavfi', '-i', 'testsrc2=size=320x180:rate=25', ...common],
    ...['-c:v', 'libx264', '-preset', 'veryfast', '-b:v', '300k', '-g', '48', '-keyint_min', '48'],
    ...['-sc_threshold', '0', '-video_track_timescale', '25', '-movflags', `${flags}+frag_keyframe`, '-f', 'mp4', v],
  ]);
  if (video.code !== 0) throw new Error(`ffmpeg (video fixture): ${video.stderr}`);
  const audio = await run('ffmpeg', [
    ...['-f', 'lavfi', '-i', 'sine=frequency=1000:sample_rate=48000', ...common],
    ...['-c:a', 'aac', '-b:a', '64k', '-movflags', flags, '-f', 'mp4', a],
  ]);
  if (audio.code !== 0) throw new Error(`ffmpeg (audio fixture): ${audio.stderr}`);
  return { video: loadFixture(v), audio: loadFixture(a) };
}
