// The fixture presentation the filter tests run against: all 13 single-track fixture files plus
// muxed_av.ismv, packaged into one server manifest by the real CLI (`origin package`), read
// back into TrackProperties the way the origin reads them. Track names repeat (six renditions
// are all `video_eng`: one ladder), so tests name each track by its source instead (LABELS).

import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { ismTrackToProperties } from '../../../origin/ism/ism-tracks';
import { parseServerManifest } from '../../../origin/ism/server-manifest';
import { TrackProperties } from '../../../origin/model/media';
import { FIXTURE_FILES, media, runOrigin, tempDir } from '../../helpers/fixtures';
import { buildFilterWasm } from './filter-wasm';

/** Input order = track order of the server manifest. */
export const INPUTS = [...FIXTURE_FILES, 'muxed_av.ismv'];

/** One label per track, in server-manifest order: the file's base name (muxed_av: plus the type). */
export const LABELS = [
  'video_baseline_400k',
  'video_main_900k',
  'video_high_1600k',
  'video_sar_500k',
  'video_2997_600k',
  'video_interlaced_800k',
  'audio_eng_64k',
  'audio_eng_128k',
  'audio_nld_128k',
  'audio_ac3_384k',
  'audio_eac3_256k',
  'text_eng',
  'text_nld',
  'muxed_av:video',
  'muxed_av:audio',
] as const;
export type Label = (typeof LABELS)[number];

export interface FixturePresentation {
  ism: string;
  dir: string;
  tracks: TrackProperties[];
}

/** Packages the presentation into a fresh temporary directory (also builds filter.wasm if stale). */
export async function packageFixturePresentation(extra: string[] = []): Promise<FixturePresentation> {
  buildFilterWasm();
  const dir = tempDir('filter-fixture-');
  const ism = path.join(dir, 'all.ism');
  const run = await runOrigin(['package', '-q', '-o', ism, ...INPUTS.map(media), ...extra]);
  if (run.code !== 0) throw new Error(`origin package failed (${run.code}): ${run.stderr}`);
  const manifest = parseServerManifest(readFileSync(ism, 'utf8'), ism);
  return { ism, dir, tracks: manifest.tracks.map((t, i) => ismTrackToProperties(t, i)) };
}

export const labelsOf = (keep: readonly boolean[]): Label[] => LABELS.filter((_, i) => keep[i]);
