// The LL-HLS load generator's playlist reading (bench/ll-hls-clients.ts newestPart): the last
// EXT-X-PART before the preload hint, on a playlist the origin wrote and on bad input.

import { newestPart } from '../../bench/ll-hls-clients';

const PLAYLIST = [
  '#EXTM3U',
  '#EXT-X-PART-INF:PART-TARGET=0.32',
  '#EXT-X-MEDIA-SEQUENCE:100',
  '#EXT-X-PART:DURATION=0.32,URI="hls/ll-video=300000-101.part0.m4s",INDEPENDENT=YES',
  '#EXTINF:1.92,',
  'hls/ll-video=300000-101.m4s',
  '#EXT-X-PART:DURATION=0.32,URI="hls/ll-video=300000-102.part0.m4s",INDEPENDENT=YES',
  '#EXT-X-PART:DURATION=0.32,URI="hls/ll-video=300000-102.part1.m4s"',
  '#EXT-X-PRELOAD-HINT:TYPE=PART,URI="hls/ll-video=300000-102.part2.m4s"',
  '#EXT-X-RENDITION-REPORT:URI="ll-audio=64000.m3u8",LAST-MSN=102,LAST-PART=1',
  '',
].join('\n');

test('the newest part is the last EXT-X-PART, not the preload hint', () => {
  expect(newestPart(Buffer.from(PLAYLIST))).toEqual({ msn: 102, part: 1 });
});

test('without a preload hint, the last part listed', () => {
  const noHint = PLAYLIST.split('\n')
    .filter((l) => !l.startsWith('#EXT-X-PRELOAD-HINT'))
    .join('\n');
  expect(newestPart(Buffer.from(noHint))).toEqual({ msn: 102, part: 1 });
});

test('no parts, an empty body, or a mangled URI: none', () => {
  expect(newestPart(Buffer.alloc(0))).toBeUndefined();
  expect(newestPart(Buffer.from('#EXTM3U\n#EXTINF:1.92,\nhls/x-101.m4s\n'))).toBeUndefined();
  expect(newestPart(Buffer.from('#EXT-X-PART:URI="hls/x-abc.partq.m4s"\n'))).toBeUndefined();
  expect(newestPart(Buffer.from('.part'))).toBeUndefined();
});
