// `origin demo` (what `npm start` runs): packages the sample content in fixtures/media into the
// README's device-class server manifests and prints them. HTTP playout of these manifests comes
// with the VOD playout issue; until then this command says so rather than pretending.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ismTrackToProperties } from '../ism/ism-tracks';
import { StreamOptions } from '../options/registry';
import { buildServerManifest, writeServerManifestFile } from '../package/packager';

const ROOT = path.resolve(__dirname, '..', '..', '..');

/** The README's device classes over the sample content. */
export const DEMO_CLASSES: Record<string, string[]> = {
  phones: ['video_baseline_400k.ismv', 'audio_eng_64k.isma', 'audio_eng_128k.isma', 'audio_nld_128k.isma', 'text_eng.ismt', 'text_nld.ismt'],
  tablets: ['video_baseline_400k.ismv', 'video_sar_500k.ismv', 'video_2997_600k.ismv', 'video_main_900k.ismv', 'audio_eng_64k.isma', 'audio_eng_128k.isma', 'audio_nld_128k.isma', 'text_eng.ismt', 'text_nld.ismt'],
  consoles: ['video_baseline_400k.ismv', 'video_sar_500k.ismv', 'video_2997_600k.ismv', 'video_main_900k.ismv', 'video_high_1600k.ismv', 'audio_eng_64k.isma', 'audio_eng_128k.isma', 'audio_nld_128k.isma', 'audio_ac3_384k.isma', 'text_eng.ismt', 'text_nld.ismt'],
  settop: ['video_baseline_400k.ismv', 'video_main_900k.ismv', 'video_high_1600k.ismv', 'video_sar_500k.ismv', 'video_2997_600k.ismv', 'video_interlaced_800k.ismv', 'audio_eng_64k.isma', 'audio_eng_128k.isma', 'audio_nld_128k.isma', 'audio_ac3_384k.isma', 'audio_eac3_256k.isma', 'text_eng.ismt', 'text_nld.ismt'],
};

export async function runDemo(argv: readonly string[], out: NodeJS.WritableStream): Promise<number> {
  const mediaDir = path.join(ROOT, 'fixtures', 'media');
  const outDir = argv[0] ?? path.join(ROOT, 'build', 'demo');
  await fs.mkdir(outDir, { recursive: true });
  out.write(`Sample content: ${mediaDir}\n\n`);
  for (const [name, files] of Object.entries(DEMO_CLASSES)) {
    const target = path.join(outDir, `${name}.ism`);
    const manifest = await buildServerManifest({ output: target, inputs: files.map((f) => ({ path: path.join(mediaDir, f), trackType: undefined })), options: new StreamOptions() });
    await writeServerManifestFile(target, manifest);
    out.write(`${target}\n`);
    manifest.tracks.forEach((t, i) => {
      const p = ismTrackToProperties(t, i);
      const detail = p.type === 'video' ? `${p.DisplayWidth}x${p.DisplayHeight} ${p.codecs}` : p.type === 'audio' ? `${p.Channels} ch ${p.codecs}` : p.codecs;
      out.write(`  ${p.trackName}=${p.systemBitrate}  ${p.type} ${detail} ${p.systemLanguage}\n`);
    });
  }
  out.write(
    '\nHTTP playout of these server manifests (Smooth, DASH, HLS URLs to open in a player) is not available yet:\n' +
      'it arrives with the VOD playout work. Inspect them meanwhile with `origin package -o stdout: <inputs>`.\n',
  );
  return 0;
}
