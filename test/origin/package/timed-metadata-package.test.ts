// Timed metadata through `origin package` and the presentation store: urim and evte tracks are
// data tracks of the .ism, a source with inband emsg boxes is noted on its media track, and the
// view carries the events (on the output timeline) only with timed_metadata on, whatever a
// filter says. A corrupt metadata track is refused when packaging.

import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { PresentationStore } from '../../../origin/cache/presentation-store';
import { parseServerManifest } from '../../../origin/ism/server-manifest';
import { viewForQuery } from '../../../origin/model/view';
import { wasmTrackSelector } from '../../../origin/server/select';
import { media, runOrigin, tempDir } from '../../helpers/fixtures';
import { EVENTS, inbandVideo, META_EVTE, META_URIM, SCRIPT } from '../../helpers/timed-metadata';

const VIDEO = media('video_baseline_400k.ismv');
const AUDIO = media('audio_eng_64k.isma');

async function pack(name: string, inputs: string[], extra: string[] = []): Promise<{ ism: string; stderr: string }> {
  const ism = path.join(tempDir('origin-tm-'), `${name}.ism`);
  const r = await runOrigin(['package', '-o', ism, ...extra, ...inputs]);
  expect([r.code, r.stderr]).toEqual([0, expect.stringContaining('wrote')]);
  return { ism, stderr: r.stderr };
}

const expected = [...EVENTS]
  .sort((a, b) => a.time - b.time || a.id - b.id)
  // Output times in 10 MHz ticks: the presentation starts with the audio's priming, 213333 ticks before the video.
  .map((e) => ({ id: e.id, time: BigInt(e.time) * 10_000n + 213_333n, scheme: e.scheme, data: e.data }));
const seen = (
  events: readonly { event: { id: number; schemeIdUri: string; data: Uint8Array }; time: bigint; timescale: number }[],
) =>
  events.map((v) => ({
    id: v.event.id,
    time: (v.time * 10_000_000n) / BigInt(v.timescale),
    scheme: v.event.schemeIdUri,
    data: Buffer.from(v.event.data).toString('hex'),
  }));

describe('origin package with timed metadata', () => {
  it('stores urim and evte tracks as textstream data tracks and counts their events', async () => {
    const { ism, stderr } = await pack('meta', [VIDEO, AUDIO, META_URIM, META_EVTE]);
    expect(stderr).toContain('meta_urim.mp4: data urim');
    expect(stderr).toMatch(/meta_evte\.mp4: data evte .*, 6 events/);
    const m = parseServerManifest(readFileSync(ism, 'utf8'));
    const data = m.tracks.filter((t) => t.params.some((p) => p.name === 'FourCC' && /^(urim|evte)$/.test(p.value)));
    expect(data.map((t) => t.element)).toEqual(['textstream', 'textstream']);
  });

  it('notes inband emsg boxes on the media track (InbandEvents=emsg), and only there', async () => {
    const { ism, stderr } = await pack('inband', [inbandVideo(), AUDIO]);
    expect(stderr).toContain('6 inband emsg events');
    const m = parseServerManifest(readFileSync(ism, 'utf8'));
    expect(m.tracks.map((t) => t.params.find((p) => p.name === 'InbandEvents')?.value)).toEqual(['emsg', undefined]);
  });

  it('refuses a metadata track whose samples do not parse, naming the file and the box', async () => {
    const bad = SCRIPT.metadataFile('urim');
    // The first emsg's type becomes 'xmsg'.
    const at = bad.indexOf(Buffer.from('emsg'));
    bad.write('x', at, 'latin1');
    const file = path.join(tempDir('origin-tm-'), 'bad_urim.mp4');
    writeFileSync(file, bad);
    const r = await runOrigin(['package', '-o', path.join(path.dirname(file), 'bad.ism'), VIDEO, file]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/bad_urim\.mp4.*'xmsg' in a urim sample/);
  });
});

describe('the presentation and its views', () => {
  const store = new PresentationStore();

  it.each([
    ['urim', META_URIM],
    ['evte', META_EVTE],
  ])('%s: events on the output timeline with timed_metadata on, none with it off', async (_kind, file) => {
    const { ism } = await pack('meta', [VIDEO, AUDIO, file]);
    const p = await store.presentation(ism);
    const on = viewForQuery(p, 'dash', 'timed_metadata=true', wasmTrackSelector);
    expect(seen(on.events)).toEqual(expected);
    expect(on.tracks.map((t) => t.track.properties.type)).toEqual(['video', 'audio']);
    expect(viewForQuery(p, 'dash', '', wasmTrackSelector).events).toEqual([]);
  });

  it('a filter never removes the metadata when timed_metadata is on', async () => {
    const { ism } = await pack('meta', [VIDEO, AUDIO, META_URIM], ['--timed_metadata']);
    const p = await store.presentation(ism);
    for (const filter of ['type=="video"', 'type!="data"', 'FourCC!="urim"', 'systemBitrate>100000']) {
      const v = viewForQuery(p, 'hls', `filter=${encodeURIComponent(filter)}`, wasmTrackSelector);
      expect(seen(v.events)).toEqual(expected);
    }
  });

  it('?timed_metadata=true on a presentation packaged without the switch: the events, unless a packaging filter dropped the track', async () => {
    // Packaged without --timed_metadata, the metadata track is in the .ism all the same.
    const kept = await store.presentation((await pack('meta-off', [VIDEO, AUDIO, META_URIM])).ism);
    expect(seen(viewForQuery(kept, 'hls', 'timed_metadata=true', wasmTrackSelector).events)).toEqual(expected);
    expect(viewForQuery(kept, 'hls', '', wasmTrackSelector).events).toEqual([]);
    // A --track_filter applied when packaging with the switch off leaves it out: nothing to turn on.
    const mediaOnly = ['--track_filter=type=="video"||type=="audio"'];
    const dropped = await pack('meta-filtered', [VIDEO, AUDIO, META_URIM], mediaOnly);
    expect(readFileSync(dropped.ism, 'utf8')).not.toContain('urim');
    const p = await store.presentation(dropped.ism);
    expect(viewForQuery(p, 'hls', 'timed_metadata=true', wasmTrackSelector).events).toEqual([]);
    // With the switch on, the same filter keeps it.
    const on = await pack('meta-filtered-on', [VIDEO, AUDIO, META_URIM], ['--timed_metadata', ...mediaOnly]);
    expect(readFileSync(on.ism, 'utf8')).toContain('urim');
  });

  it('inband events of a media track come through as the metadata track’s do', async () => {
    const { ism } = await pack('inband', [inbandVideo(), AUDIO], ['--timed_metadata']);
    const p = await store.presentation(ism);
    expect(seen(viewForQuery(p, 'hls', '', wasmTrackSelector).events)).toEqual(expected);
  });

  it('a metadata track moves neither the origin nor the duration', async () => {
    const plain = await store.presentation((await pack('plain', [VIDEO, AUDIO])).ism);
    const meta = await store.presentation((await pack('meta', [VIDEO, AUDIO, META_URIM])).ism);
    expect([meta.origin, meta.durationSeconds]).toEqual([plain.origin, plain.durationSeconds]);
  });

  it('a sub-clip keeps the events inside its media', async () => {
    const { ism } = await pack('meta', [VIDEO, AUDIO, META_URIM], ['--timed_metadata']);
    const p = await store.presentation(ism);
    const v = viewForQuery(p, 'dash', 't=4-8', wasmTrackSelector);
    expect(seen(v.events).map((e) => e.id)).toEqual([2, 10, 11, 3]);
  });
});
