// The capture's pure readers on their own: the `t` grammar, MPD templates and timelines, HLS
// playlists, the range rules, and the fragment codec's round trip through the one moof reader.

import { parseTimeRange, secondsOf } from '../../../origin/capture/time-range';
import { duration, parseMpd } from '../../../origin/capture/dash-manifest';
import { attributes, parseMediaPlaylist, parseMultivariant } from '../../../origin/capture/hls-playlist';
import { mergeSegments, referenceSegments } from '../../../origin/capture/capture-range';
import { segmentSamples, writeFragment } from '../../../origin/capture/fragments';
import { readEdits, withEdits } from '../../../origin/capture/edit-lists';
import { writeMultiTrackInit } from '../../../origin/segments/fmp4/init-segment';
import { readTrackHeaders } from '../../../origin/media/moov';
import { box, field, fullBox, serialize } from '../../../origin/segments/box-writer';
import { readFileSync } from 'node:fs';
import { media as fixture } from '../../helpers/fixtures';
import type { TrackHeader } from '../../../origin/model/media';

test('t: offsets, hh:mm:ss, ISO 8601 without zone; bad ranges refused', () => {
  expect(parseTimeRange('3-7')).toEqual({ start: { kind: 'offset', seconds: 3 }, end: { kind: 'offset', seconds: 7 } });
  expect(parseTimeRange('00:01:02.5')).toEqual({ start: { kind: 'offset', seconds: 62.5 } });
  expect(parseTimeRange('12-')).toEqual({ start: { kind: 'offset', seconds: 12 } });
  const iso = parseTimeRange('2026-11-26T10:00:00-2026-11-26T10:00:30.5');
  expect(iso.end).toEqual({ kind: 'utc', ms: Date.UTC(2026, 10, 26, 10, 0, 30, 500) });
  expect(secondsOf(iso.start, Date.UTC(2026, 10, 26, 9, 59, 0))).toBe(60);
  for (const bad of ['', '7-3', '3-3', 'abc', '1:75', '2026-11-26T10:00:00Z', '3-2026-11-26T10:00:00', '-5'])
    expect(() => parseTimeRange(bad)).toThrow(/t=/);
  expect(() => secondsOf(iso.start, undefined)).toThrow(/wall-clock anchor/);
});

const mpd = (template: string, extra = ''): string => `<?xml version="1.0"?>
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT6S" ${extra}>
  <BaseURL>media/</BaseURL>
  <Period start="PT0S">
    <AdaptationSet contentType="video" lang="en">
      <Representation id="v1" bandwidth="500000" codecs="avc1.64001f" width="640" height="360">${template}</Representation>
    </AdaptationSet>
  </Period>
</MPD>`;

test('MPD: timeline with r and $Time$, @duration with $Number%05d$, PTO, BaseURL', () => {
  const timeline = parseMpd(
    mpd(`<SegmentTemplate timescale="1000" presentationTimeOffset="500" initialization="i-$RepresentationID$.mp4" media="s-$Time$-$Bandwidth$.m4s">
      <SegmentTimeline><S t="500" d="2000" r="1"/><S d="1000"/><S d="1000" r="-1"/></SegmentTimeline></SegmentTemplate>`),
    'http://h/a/x.mpd',
    0,
  );
  const s = timeline.streams[0]!;
  expect(s.initUrl).toBe('http://h/a/media/i-v1.mp4');
  expect(s.segments.map((g) => [g.url.replace('http://h/a/media/', ''), g.start, g.duration])).toEqual([
    ['s-500-500000.m4s', 0, 2],
    ['s-2500-500000.m4s', 2, 2],
    ['s-4500-500000.m4s', 4, 1],
    ['s-5500-500000.m4s', 5, 1],
  ]);
  expect(s.properties).toMatchObject({ type: 'video', systemBitrate: 500000, MaxWidth: 640, systemLanguage: 'en' });
  const numbered = parseMpd(
    mpd(
      `<SegmentTemplate timescale="10" duration="25" startNumber="7" initialization="i.mp4" media="n$Number%05d$.m4s"/>`,
    ),
    'file:///d/x.mpd',
    0,
  );
  expect(numbered.streams[0]!.segments.map((g) => g.url)).toEqual(
    ['n00007.m4s', 'n00008.m4s', 'n00009.m4s'].map((n) => `file:///d/media/${n}`),
  );
  expect(duration('PT1H2M3.5S')).toBe(3723.5);
  expect(() => duration('1 hour')).toThrow(/xs:duration/);
});

test('MPD: a live template lists the segments complete by now', () => {
  const ast = Date.UTC(2026, 0, 1);
  const live = parseMpd(
    mpd(
      `<SegmentTemplate timescale="1" duration="2" initialization="i.mp4" media="$Number$.m4s"/>`,
      `availabilityStartTime="2026-01-01T00:00:00Z" minimumUpdatePeriod="PT1S"`,
    ).replace('type="static"', 'type="dynamic"'),
    'http://h/x.mpd',
    ast + 7_000,
  );
  expect([live.dynamic, live.anchorMs, live.reloadSeconds]).toEqual([true, ast, 1]);
  expect(live.streams[0]!.segments.map((g) => g.start)).toEqual([0, 2, 4]);
});

test('HLS: variants and renditions once each; media playlists; refusals', () => {
  const master = `#EXTM3U
#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",LANGUAGE="nl",NAME="Dutch",URI="a.m3u8"
#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="s",NAME="subs",URI="s.m3u8"
#EXT-X-STREAM-INF:BANDWIDTH=900000,CODECS="avc1.4d401e,mp4a.40.2",RESOLUTION=640x360,AUDIO="a"
v.m3u8
#EXT-X-STREAM-INF:BANDWIDTH=100000,CODECS="mp4a.40.2",AUDIO="a"
a.m3u8
`;
  const refs = parseMultivariant(master, 'http://h/p/m.m3u8');
  expect(refs.map((r) => [r.url, r.properties.type, r.properties.systemLanguage])).toEqual([
    ['http://h/p/a.m3u8', 'audio', 'nl'],
    ['http://h/p/v.m3u8', 'video', 'und'],
  ]);
  expect(() => parseMultivariant(master.replace('avc1.4d401e', 'hvc1.1.6.L93'), 'http://h/m.m3u8')).toThrow(/HEVC/);
  const media = `#EXTM3U
#EXT-X-TARGETDURATION:2
#EXT-X-MEDIA-SEQUENCE:10
#EXT-X-MAP:URI="init.mp4"
#EXTINF:2.0,
a.m4s
#EXTINF:1.5,
b.m4s
`;
  const p = parseMediaPlaylist(media, 'http://h/v.m3u8');
  expect([p.ended, p.initUrl, p.segments.map((s) => [s.key, s.start, s.duration])]).toEqual([
    false,
    'http://h/init.mp4',
    [
      ['s10', 0, 2],
      ['s11', 2, 1.5],
    ],
  ]);
  // Without EXT-X-MAP: MPEG-TS segments, read by capture/ts-segments.ts (no init URL).
  const ts = parseMediaPlaylist(media.replace('#EXT-X-MAP:URI="init.mp4"\n', ''), 'http://h/u.m3u8');
  expect([ts.initUrl, ts.segments.length > 0]).toEqual(['', true]);
  expect(() =>
    parseMediaPlaylist(media.replace('a.m4s', '#EXT-X-KEY:METHOD=SAMPLE-AES,URI="k"\na.m4s'), 'http://h/u.m3u8'),
  ).toThrow(/encryption/);
  expect(() => parseMediaPlaylist(media.replace('#EXTINF:2.0,\n', ''), 'http://h/u.m3u8')).toThrow(/without EXTINF/);
  expect(attributes('A=1,B="x,y",C=z')).toEqual({ A: '1', B: 'x,y', C: 'z' });
});

test('range: from the segment holding the start to the last ending by the end; merged reloads', () => {
  const segs = [0, 2, 4, 6].map((start) => ({ url: `${start}`, start, duration: 2, key: `k${start}` }));
  expect(referenceSegments(segs, { start: 3, end: 7 }).map((s) => s.start)).toEqual([2, 4]);
  expect(referenceSegments(segs, { start: 3, end: 3.5 }).map((s) => s.start)).toEqual([2]);
  expect(referenceSegments(segs, { start: -Infinity, end: Infinity }).length).toBe(4);
  expect(referenceSegments(segs, { start: 9, end: Infinity })).toEqual([]);
  // A slid window re-counted from 0 is put back on the known timeline by a shared key.
  const slid = [
    { url: 'x', start: 0, duration: 2, key: 'k6' },
    { url: 'y', start: 2, duration: 2, key: 'k8' },
  ];
  expect(mergeSegments(segs, slid).map((s) => [s.key, s.start])).toEqual([
    ['k0', 0],
    ['k2', 2],
    ['k4', 4],
    ['k6', 6],
    ['k8', 8],
  ]);
});

test('a written fragment reads back through the moof reader', () => {
  const header = {
    trackID: 3,
    trexDefaults: {
      defaultSampleDescriptionIndex: 1,
      defaultSampleDuration: 0,
      defaultSampleSize: 0,
      defaultSampleFlags: 0,
    },
  } as TrackHeader;
  const samples = [
    { time: 1n << 40n, duration: 512, compositionOffset: 1024, sync: true, data: Uint8Array.of(1, 2, 3) },
    { time: (1n << 40n) + 512n, duration: 512, compositionOffset: -512, sync: false, data: Uint8Array.of(4) },
  ];
  const bytes = writeFragment(9, 3, 1n << 40n, samples);
  expect(segmentSamples(bytes, header, 'f')).toEqual(samples);
  expect(segmentSamples(bytes, { ...header, trackID: 4 }, 'f')).toEqual([]);
  expect(() => segmentSamples(bytes.subarray(0, bytes.byteLength - 2), header, 'f')).toThrow();
});

test('edit lists: written into each track, read back; delays rescaled; others refused', () => {
  const file = new Uint8Array(readFileSync(fixture('video_main_900k.ismv')));
  const at = Buffer.from(file).indexOf('moov') - 4;
  const size = new DataView(file.buffer).getUint32(at);
  const header = [...readTrackHeaders(file.subarray(at, at + size), 'f', at).values()][0]!;
  const init = writeMultiTrackInit([
    { header, trackId: 1 },
    { header, trackId: 2 },
  ]);
  // Movie timescale 90 000 in the source, the track's (10 MHz) in the output.
  const edit = { delay: 9000n, movieTimescale: 90_000, mediaTime: 800_000n };
  const out = withEdits(init, new Map([[2, edit]]));
  expect(readEdits(out, 'o')).toEqual(
    new Map([[2, { delay: 1_000_000n, movieTimescale: header.timescale, mediaTime: 800_000n }]]),
  );
  expect(readTrackHeaders(out.subarray(Buffer.from(out).indexOf('moov') - 4), 'o').size).toBe(2);
  expect(withEdits(init, new Map())).toBe(init);
  expect(readEdits(init, 'i').size).toBe(0);
  const entry = (d: number, t: number) => field.group(field.u32(d), field.i32(t), field.i16(1), field.i16(0));
  const moov = (...entries: ReturnType<typeof entry>[]) =>
    serialize(
      box(
        'moov',
        fullBox('mvhd', 0, 0, field.u32(0), field.u32(0), field.u32(1000), field.zeros(88)),
        box(
          'trak',
          fullBox('tkhd', 0, 3, field.u32(0), field.u32(0), field.u32(7), field.zeros(68)),
          box('edts', fullBox('elst', 0, 0, field.u32(entries.length), ...entries)),
        ),
      ),
    );
  expect(readEdits(moov(entry(0, 1024)), 'm').get(7)).toEqual({ delay: 0n, movieTimescale: 1000, mediaTime: 1024n });
  expect(readEdits(moov(entry(500, -1), entry(0, 0)), 'm').get(7)).toMatchObject({ delay: 500n, mediaTime: 0n });
  expect(() => readEdits(moov(entry(500, 0), entry(500, 1000)), 'm')).toThrow(/edit list other than/);
  expect(() => readEdits(moov(entry(500, -1)), 'm')).toThrow(/edit list other than/);
});
