// Builds real presentations from the fixture media for playout tests: packages the chosen files
// with the real CLI into a temp directory, then loads them through the real store.

import * as path from 'node:path';
import { Format } from '../../origin/options/registry';
import { PresentationStore } from '../../origin/cache/presentation-store';
import { Presentation, PresentationTrack } from '../../origin/model/presentation';
import { PlayoutView, viewForQuery } from '../../origin/model/view';
import { media, runOrigin, tempDir } from './fixtures';

/** The playable fixture set: H.264 + AAC + TTML (what the player tests use). */
export const PLAYABLE = [
  'video_baseline_400k.ismv',
  'video_main_900k.ismv',
  'video_high_1600k.ismv',
  'audio_eng_64k.isma',
  'audio_eng_128k.isma',
  'audio_nld_128k.isma',
  'text_eng.ismt',
  'text_nld.ismt',
];

export async function packageFixtures(
  files: readonly string[],
  name = 'presentation',
  extra: string[] = [],
): Promise<string> {
  const dir = tempDir('origin-pres-');
  const ism = path.join(dir, `${name}.ism`);
  const r = await runOrigin(['package', '-o', ism, ...extra, ...files.map(media)]);
  if (r.code !== 0) throw new Error(`packaging failed: ${r.stderr}`);
  return ism;
}

const store = new PresentationStore();

export function loadPresentation(ism: string): Promise<Presentation> {
  return store.presentation(ism);
}

/** Keeps every track, or those a predicate keeps (tests that do not exercise the filter language). */
export function selectAll(tracks: readonly PresentationTrack[]): number[] {
  return tracks.map((_, i) => i);
}

/** A view as the origin builds it for a request with this query (no `filter` evaluation). */
export function viewOf(p: Presentation, format: Format, query = ''): PlayoutView {
  return viewForQuery(p, format, query, selectAll);
}
