// Packed-audio segments from a real origin on loopback (set-up in hls-support.ts), judged by
// ffmpeg: AC-3, E-AC-3 and AAC, the AAC with its ID3 timestamp.

import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { boxes } from '../../helpers/box-walk';
import { adtsFrames } from './mpegts/ts-check';
import {
  AUDIO_TRACKS,
  dir,
  fact,
  fetchOk,
  initTimescale,
  keyOf,
  origin,
  probeFrames,
  segmentsOf,
  setUpHlsOrigin,
  sourceFrames,
  trackId,
} from './hls-support';

setUpHlsOrigin();

// ---------------------------------------------------------------------------------------------
// Packed audio

/** moof/traf/tfdt (v1: 64-bit) and the trun sample counts of an fMP4 media segment. */
function fmp4Facts(segment: Buffer): { tfdt: bigint; samples: number } {
  let tfdt: bigint | undefined;
  let samples = 0;
  for (const moof of boxes(segment).filter((b) => b.type === 'moof')) {
    for (const traf of boxes(moof.body).filter((b) => b.type === 'traf')) {
      for (const c of boxes(traf.body)) {
        if (c.type === 'tfdt' && tfdt === undefined)
          tfdt = c.body[0] === 1 ? c.body.readBigUInt64BE(4) : BigInt(c.body.readUInt32BE(4));
        if (c.type === 'trun') samples += c.body.readUInt32BE(4);
      }
    }
  }
  return { tfdt: tfdt!, samples };
}

const PACKED_TYPES: Record<string, [string, string]> = {
  aac: ['aac', 'audio/aac'],
  ac3: ['ac3', 'audio/ac3'],
  eac3: ['ec3', 'audio/eac3'],
};

describe('packed audio', () => {
  test.each(AUDIO_TRACKS.map((a) => [`${a.pres}:${a.file}`, a] as const))(
    '%s: playlist and segments decode; ID3 timestamps are the fMP4 times',
    async (_, a) => {
      const key = keyOf(a.pres, a.file, 'audio');
      const codec = a.file === 'muxed_av.ismv' ? 'aac' : fact(a.file).codec;
      const [ext, contentType] = PACKED_TYPES[codec]!;
      const expected = (await sourceFrames(a.file))['audio'];
      // ffmpeg's HLS reader checks that a segment's extension is one its detected demuxer lists:
      // its raw E-AC-3 demuxer lists `eac3`, not the `.ec3` of our URLs (extension_picky).
      const whole = await probeFrames(
        `${origin.url}/${a.pres}.ism/${a.pres}-${key}.m3u8`,
        ext === 'ec3' ? ['-extension_picky', '0'] : [],
      );
      expect(whole.stderr).toBe('');
      expect(whole.frames['audio']).toBe(expected);
      expect(whole.codecs['audio']).toBe(codec);

      const count = segmentsOf.get(trackId(a.pres, a.file, 'audio'))!.length;
      const timescale = initTimescale(await fetchOk(`/${a.pres}.ism/hls/${a.pres}-${key}.m4s`, 'video/mp4'));
      let total = 0;
      for (let n = 1; n <= count; n++) {
        const body = await fetchOk(`/${a.pres}.ism/${a.pres}-${key}-${n}.${ext}`, contentType);
        const fmp4 = fmp4Facts(await fetchOk(`/${a.pres}.ism/hls/${a.pres}-${key}-${n}.m4s`, 'video/mp4'));
        // ID3v2.4 tag with the PRIV frame (RFC 8216 §3.4).
        expect(body.subarray(0, 4).toString('latin1')).toBe('ID3\x04');
        const tagSize = 10 + ((body[6]! << 21) | (body[7]! << 14) | (body[8]! << 7) | body[9]!);
        const owner = 'com.apple.streaming.transportStreamTimestamp\0';
        expect(body.subarray(20, 20 + owner.length).toString('latin1')).toBe(owner);
        const pts = body.readBigUInt64BE(20 + owner.length);
        expect([n, pts]).toEqual([n, (2n * fmp4.tfdt * 90000n + timescale) / (2n * timescale) + 900000n]);
        const frames = body.subarray(tagSize);
        if (codec === 'aac') {
          const parsed = adtsFrames(frames);
          expect(parsed.problems).toEqual([]);
          expect([n, parsed.frames.length]).toEqual([n, fmp4.samples]);
        } else {
          expect(frames.readUInt16BE(0)).toBe(0x0b77); // AC-3 / E-AC-3 syncword
        }
        const file = path.join(dir, `packed-${a.pres}-${n}.${ext}`);
        writeFileSync(file, body);
        const probed = await probeFrames(file);
        // A raw elementary stream has no duration: ffprobe says so, and nothing else.
        expect(
          probed.stderr.split('\n').filter((l) => l !== '' && !/Estimating duration from bitrate/.test(l)),
        ).toEqual([]);
        expect([n, probed.frames['audio']]).toEqual([n, fmp4.samples]);
        total += probed.frames['audio']!;
      }
      expect(total).toBe(expected);
    },
  );
});
