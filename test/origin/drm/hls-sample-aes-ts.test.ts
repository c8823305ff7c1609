// SAMPLE-AES HLS with MPEG-TS and packed-audio segments (Apple's MPEG-2 stream encryption,
// origin/drm/sample-aes-ts.ts), from an origin on loopback:
// - the playlists: one EXT-X-KEY with METHOD=SAMPLE-AES, the key file URI and the IV in every
//   audio/video media playlist (none for WebVTT), the same in EXT-X-SESSION-KEY, no I-frame
//   playlists; FairPlay's line with its key format; ClearKey's EME line only for fMP4;
// - the bytes: every segment, checked as a stream (continuity counters run on across segments,
//   PCR, PES), has the PMT stream types and descriptors of §3.0, and every NAL unit and audio frame
//   decrypts with the tests' own decrypter (sample-aes-reference.ts) to the clear presentation's;
// - ffmpeg's HLS demuxer, fetching the key from the key URI, decodes what the clear playlist
//   decodes (H.264, AAC, AC-3, E-AC-3, multiplexed and packed), and with a wrong key it does not.

import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { run } from '../../helpers/process';
import { get, startTestOrigin, TestOrigin } from '../server/server-helpers';
import { adtsFrames, checkTs } from '../segments/mpegts/ts-check';
import { annexBNals, decryptAudioBlock, decryptNal, emulationProblems } from './sample-aes-reference';

const KID = '00112233445566778899aabbccddeeff';
const KEY = '3a2a1b68dd2bd9b2eeb25e84c4776668';
const FIXED_IV = '000102030405060708090a0b0c0d0e0f';
const FILES = ['video_main_900k.ismv', 'audio_eng_64k.isma', 'text_eng.ismt'];
const DOLBY = ['video_main_900k.ismv', 'audio_ac3_384k.isma', 'audio_eac3_256k.isma', 'audio_eng_64k.isma'];

let origin: TestOrigin;
let keys: http.Server;
let keyBase = '';
const hand = new Map<string, string>(); // hand-written masters the key server serves

beforeAll(async () => {
  // The key file (identity key format): 16 raw bytes; /wrong holds another key.
  keys = http.createServer((req, res) => {
    const master = hand.get(req.url ?? '');
    if (master !== undefined) {
      res.writeHead(200, { 'Content-Type': 'application/vnd.apple.mpegurl' });
      res.end(master);
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
    res.end(Buffer.from(req.url === '/wrong' ? KEY.replace(/^./, 'f') : KEY, 'hex'));
  });
  await new Promise<void>((resolve) => keys.listen(0, '127.0.0.1', resolve));
  keyBase = `http://127.0.0.1:${(keys.address() as AddressInfo).port}`;
  const sampleAes = (uri: string): string[] => [
    `--hls.key=${KID}:${KEY}`,
    '--hls.playout=sample_aes',
    `--hls.license_server_url=${uri}`,
  ];
  origin = await startTestOrigin(
    { clear: FILES, sa: FILES, wrong: FILES, fixed: FILES, fps: FILES, ck: FILES, dolby: DOLBY, dolbyclear: DOLBY },
    {
      sa: sampleAes(`${keyBase}/key`),
      wrong: sampleAes(`${keyBase}/wrong`),
      fixed: [...sampleAes(`${keyBase}/key`), `--hls.key_iv=0x${FIXED_IV}`],
      fps: [`--hls.key=${KID}:${KEY}`, '--hls.playout=sample_aes_streamingkeydelivery'],
      ck: [...sampleAes(`${keyBase}/key`), '--clearkey.license_server_url=http://127.0.0.1:1/license'],
      dolby: sampleAes(`${keyBase}/key`),
    },
  );
}, 90_000);

afterAll(async () => {
  await origin?.server.close();
  await new Promise((resolve) => keys.close(resolve));
});

async function body(path: string): Promise<Buffer> {
  const r = await get(origin.url, path);
  expect([path, r.status]).toEqual([path, 200]);
  return r.body;
}
const text = async (path: string): Promise<string> => (await body(path)).toString('utf8');

/** The media playlist URIs of a master (variant lines and EXT-X-MEDIA URIs), as written. */
function playlistsOf(master: string): string[] {
  const out = new Set<string>();
  for (const line of master.split('\n')) {
    if (line !== '' && !line.startsWith('#')) out.add(line);
    const m = /^#EXT-X-MEDIA:.*URI="([^"]+)"/.exec(line);
    if (m !== null) out.add(m[1]!);
  }
  return [...out];
}

const segmentLines = (list: string): string[] => list.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
const KEY_LINE = /^#EXT-X-(?:SESSION-)?KEY:METHOD=SAMPLE-AES,URI="([^"]+)",IV=0x([0-9A-F]{32})$/;

describe.each([
  ['multiplexed', ''],
  ['packed audio', '?hls_no_multiplex=true'],
])('playlists, %s', (_, query) => {
  test('one key line with the key URI and the IV before the segments, the same in the master', async () => {
    const master = await text(`/sa.ism/.m3u8${query}`);
    expect(master).not.toContain('EXT-X-I-FRAME-STREAM-INF');
    const session = master.split('\n').filter((l) => l.startsWith('#EXT-X-SESSION-KEY'));
    expect(session).toHaveLength(1);
    const [, uri, iv] = KEY_LINE.exec(session[0]!)!;
    expect(uri).toBe(`${keyBase}/key`);
    let encrypted = 0;
    for (const p of playlistsOf(master)) {
      const list = await text(`/sa.ism/${p}`);
      expect(Number(/#EXT-X-VERSION:(\d+)/.exec(list)![1])).toBeGreaterThanOrEqual(5);
      const keyLines = list.split('\n').filter((l) => l.startsWith('#EXT-X-KEY'));
      if (p.includes('textstream') || list.includes('.webvtt')) {
        expect(keyLines).toEqual([]);
        continue;
      }
      expect(keyLines).toEqual([session[0]!.replace('SESSION-KEY', 'KEY')]);
      expect(list.indexOf('#EXT-X-KEY')).toBeLessThan(list.indexOf('#EXTINF'));
      expect(iv).toMatch(/^[0-9A-F]{32}$/);
      encrypted++;
    }
    expect(encrypted).toBeGreaterThanOrEqual(2);
  });
});

test('--hls.key_iv is the IV of every key line', async () => {
  const master = await text('/fixed.ism/.m3u8');
  expect(master).toContain(`#EXT-X-SESSION-KEY:METHOD=SAMPLE-AES,URI="${keyBase}/key",IV=0x${FIXED_IV.toUpperCase()}`);
  const list = await text(`/fixed.ism/${playlistsOf(master).find((p) => p.includes('video'))!}`);
  expect(list).toContain(`#EXT-X-KEY:METHOD=SAMPLE-AES,URI="${keyBase}/key",IV=0x${FIXED_IV.toUpperCase()}\n`);
});

test('FairPlay: its skd:// line with its key format, and the IV TS needs', async () => {
  const master = await text('/fps.ism/.m3u8');
  expect(master).toMatch(
    new RegExp(
      `#EXT-X-SESSION-KEY:METHOD=SAMPLE-AES,URI="skd://${KID}",IV=0x[0-9A-F]{32},KEYFORMAT="com.apple.streamingkeydelivery",KEYFORMATVERSIONS="1"\\n`,
    ),
  );
});

test('ClearKey signalled: fMP4 gets the org.w3.clearkey line, MPEG-TS the key file (EME does not decrypt TS)', async () => {
  const fmp4 = await text('/ck.ism/.m3u8?hls_fmp4=true');
  expect(fmp4).toContain('KEYFORMAT="org.w3.clearkey"');
  expect(fmp4).not.toContain(`${keyBase}/key`);
  const ts = await text('/ck.ism/.m3u8');
  const session = ts.split('\n').filter((l) => l.startsWith('#EXT-X-SESSION-KEY'));
  expect(session.map((l) => KEY_LINE.exec(l)?.[1])).toEqual([`${keyBase}/key`]);
});

test.each(['/sa.ism/keyframes/sa-video_eng=925835.m3u8', '/sa.ism/keyframes/sa-video_eng=925835-1.ts'])(
  '%s: no I-frame playlists (403 protected-format)',
  async (url) => {
    const r = await get(origin.url, url);
    expect([r.status, r.headers['x-origin-error']]).toEqual([403, 'protected-format']);
  },
);

/** The segments of the media playlist `uri` of presentation `name`, and the clear ones at the same URLs. */
async function segmentPairs(name: string, clearName: string, uri: string): Promise<[Buffer[], Buffer[]]> {
  const lines = segmentLines(await text(`/${name}.ism/${uri}`));
  const mine = await Promise.all(lines.map((l) => body(`/${name}.ism/${l}`)));
  const clear = await Promise.all(
    lines.map((l) => body(`/${clearName}.ism/${l.split(`${name}-`).join(`${clearName}-`)}`)),
  );
  return [mine, clear];
}

const key = Buffer.from(KEY, 'hex');

/** The IV of the key lines of presentation `name`. */
async function ivOf(name: string): Promise<Buffer> {
  const master = await text(`/${name}.ism/.m3u8`);
  return Buffer.from(KEY_LINE.exec(master.split('\n').find((l) => l.startsWith('#EXT-X-SESSION-KEY'))!)![2]!, 'hex');
}

/** AC-3 syncframes at 48 kHz (ETSI TS 102 366 Table 4.13: words by frmsizecod) and E-AC-3 ones (frmsiz). */
function dolbyFrames(b: Buffer): Buffer[] {
  const words48 = [64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 448, 512, 640, 768, 896, 1024, 1152, 1280];
  const out: Buffer[] = [];
  for (let at = 0; at < b.length;) {
    const eac3 = b[at + 5]! >> 3 > 10;
    const size = eac3 ? (((b[at + 2]! & 7) << 8) + b[at + 3]! + 1) * 2 : words48[(b[at + 4]! & 0x3f) >> 1]! * 2;
    out.push(b.subarray(at, at + size));
    at += size;
  }
  return out;
}

describe.each([
  ['H.264 + AAC', ['sa', 'clear', 'sa-audio_eng=64113-video_eng=925835.m3u8'], 0xcf, 'aacd'],
  ['H.264 + AC-3', ['dolby', 'dolbyclear', 'dolby-audio_eng=384000-video_eng=925835.m3u8'], 0xc1, 'ac3d'],
  ['H.264 + E-AC-3', ['dolby', 'dolbyclear', 'dolby-audio_eng_ec3=256000-video_eng=925835.m3u8'], 0xc2, 'ec3d'],
] as Array<[string, [string, string, string], number, string]>)(
  'MPEG-TS %s',
  (_, [name, clearName, uri], audioType, indicator) => {
    test('a valid stream whose NAL units and audio frames decrypt to the clear ones', async () => {
      const [mine, clear] = await segmentPairs(name, clearName, uri);
      const iv = await ivOf(name);
      const a = checkTs(mine);
      const b = checkTs(clear);
      // Continuity counters run on across segments, as in the clear stream (keepContinuity).
      expect(a.problems).toEqual([]);
      expect(a.pes.length).toBe(b.pes.length);
      // §3.0: stream types and descriptors; the audio setup information in 'apad' (§2.3.4).
      const [video, audio] = a.streams;
      expect(video!.streamType).toBe(0xdb);
      expect(video!.descriptors.toString('latin1')).toBe('\x0f\x04zavc');
      expect(audio!.streamType).toBe(audioType);
      const d = audio!.descriptors;
      expect(d.subarray(0, 6).toString('latin1')).toBe(`\x0f\x04${indicator}`);
      expect([d[6], d.subarray(8, 12).toString('latin1')]).toEqual([0x05, 'apad']);
      expect(d.subarray(12, 16).toString('latin1')).toBe({ aacd: 'zaac', ac3d: 'zac3', ec3d: 'zec3' }[indicator]);
      let nals = 0;
      let audioFrames = 0;
      a.pes.forEach((p, i) => {
        const c = b.pes[i]!;
        expect([p.pid, p.pts, p.dts]).toEqual([c.pid, c.pts, c.dts]);
        if (p.pid === 0x100) {
          const sealed = annexBNals(p.payload);
          const plain = annexBNals(c.payload);
          expect(sealed.length).toBe(plain.length);
          sealed.forEach((n, j) => {
            expect(emulationProblems(n)).toEqual([]);
            if (!decryptNal(key, iv, n).equals(plain[j]!)) throw new Error(`PES ${i} NAL ${j} differs`);
            if (n.length > 48 && [1, 5].includes(n[0]! & 0x1f)) nals++;
          });
        } else if (indicator === 'aacd') {
          const sealed = adtsFrames(p.payload).frames;
          const plain = adtsFrames(c.payload).frames;
          expect(sealed.length).toBe(plain.length);
          sealed.forEach((f, j) => {
            expect(f.subarray(0, 7).equals(plain[j]!.subarray(0, 7))).toBe(true); // the ADTS header clear
            expect(decryptAudioBlock(key, iv, f.subarray(7)).equals(plain[j]!.subarray(7))).toBe(true);
            audioFrames++;
          });
        } else {
          const sealed = dolbyFrames(p.payload);
          const plain = dolbyFrames(c.payload);
          expect(sealed.map((f) => f.length)).toEqual(plain.map((f) => f.length));
          sealed.forEach((f, j) => {
            expect(decryptAudioBlock(key, iv, f).equals(plain[j]!)).toBe(true);
            audioFrames++;
          });
        }
      });
      expect(nals).toBeGreaterThan(200);
      expect(audioFrames).toBeGreaterThan(300);
    }, 60_000);
  },
);

test('an encrypted segment that needs more packets is padded back to the clear count modulo 16', async () => {
  // On this fixture segment 1's emulation prevention bytes (doubled by the re-escaping) push a
  // video PES over a packet boundary: the stream is padded by 15 packets, so that segment 2's
  // continuity counters follow on (the stream check above sees no jump).
  const [mine, clear] = await segmentPairs('sa', 'clear', 'sa-audio_eng=64113-video_eng=925835.m3u8');
  const extra = mine.map((m, i) => (m.length - clear[i]!.length) / 188);
  expect(extra.every((x) => x % 16 === 0)).toBe(true);
  expect(extra.some((x) => x > 0)).toBe(true);
});

test('packed audio: the ID3 tag carries the audio setup information, the frames decrypt to the clear ones', async () => {
  const [mine, clear] = await segmentPairs('sa', 'clear', 'sa-audio_eng=64113.m3u8?hls_no_multiplex=true');
  const iv = await ivOf('sa');
  // The same audio setup information as the multiplexed TS's PMT ('apad' registration descriptor).
  const pmt = checkTs([await body('/sa.ism/sa-audio_eng=64113-video_eng=925835-1.ts')]).streams[1]!.descriptors;
  const setup = pmt.subarray(12, 12 + pmt[7]! - 4);
  expect(setup.subarray(0, 8).toString('hex')).toBe(
    `${Buffer.from('zaac').toString('hex')}000001${(setup.length - 8).toString(16).padStart(2, '0')}`,
  );
  for (let i = 0; i < mine.length; i++) {
    const m = mine[i]!;
    const tagSize = 10 + ((m[6]! << 21) | (m[7]! << 14) | (m[8]! << 7) | m[9]!);
    const tag = m.subarray(0, tagSize);
    const owner = 'com.apple.streaming.audioDescription\0';
    const at = tag.indexOf(owner);
    expect(at).toBeGreaterThan(0);
    expect(tag.subarray(at + owner.length).equals(setup)).toBe(true);
    const clearTagSize = 10 + clear[i]![9]!;
    const sealed = adtsFrames(m.subarray(tagSize)).frames;
    const plain = adtsFrames(clear[i]!.subarray(clearTagSize)).frames;
    expect(sealed.length).toBe(plain.length);
    sealed.forEach((f, j) =>
      expect(decryptAudioBlock(key, iv, f.subarray(7)).equals(plain[j]!.subarray(7))).toBe(true),
    );
  }
});

/** framemd5 rows of stream `map` of an HLS URL (ffmpeg's HLS demuxer fetches the key itself). */
async function frames(url: string, map: string, extra: string[] = []): Promise<{ rows: string[]; stderr: string }> {
  const r = await run('ffmpeg', ['-v', 'error', ...extra, '-i', url, '-map', map, '-f', 'framemd5', '-']);
  return { rows: r.stdout.split('\n').filter((l) => l !== '' && !l.startsWith('#')), stderr: r.stderr };
}

describe("ffmpeg's HLS demuxer", () => {
  const muxed = (name: string): string => `${origin.url}/${name}.ism/${name}-audio_eng=64113-video_eng=925835.m3u8`;

  test('decodes the video and audio the clear playlist decodes; the last video frame excepted', async () => {
    const [video, audio, clearVideo, clearAudio] = await Promise.all([
      frames(muxed('sa'), '0:v'),
      frames(muxed('sa'), '0:a'),
      frames(muxed('clear'), '0:v'),
      frames(muxed('clear'), '0:a'),
    ]);
    expect(clearVideo.rows.length).toBe(240);
    expect(audio.rows).toEqual(clearAudio.rows);
    // ffmpeg 5.1 decrypts a packet with the key and IV of the segment it is reading when its
    // H.264 parser lets the frame out, one frame later; the last frame comes out at the end of the
    // input, when there is no segment any more, and stays encrypted (its first slice block decodes
    // to noise). Every other frame is the clear one. (The test's own decrypter checks that frame.)
    expect(video.rows.slice(0, -1)).toEqual(clearVideo.rows.slice(0, -1));
    expect(video.rows.at(-1)).not.toEqual(clearVideo.rows.at(-1));
  }, 90_000);

  test('with a wrong key file the frames differ (negative control)', async () => {
    const [video, audio, clearVideo, clearAudio] = await Promise.all([
      frames(muxed('wrong'), '0:v'),
      frames(muxed('wrong'), '0:a'),
      frames(muxed('clear'), '0:v'),
      frames(muxed('clear'), '0:a'),
    ]);
    const same = (a: string[], b: string[]): number => a.filter((r, i) => r === b[i]).length;
    expect(same(video.rows, clearVideo.rows)).toBeLessThan(10);
    expect(same(audio.rows, clearAudio.rows)).toBeLessThan(10);
  }, 90_000);

  test.each([
    ['AC-3', 'audio_eng=384000'],
    ['E-AC-3', 'audio_eng_ec3=256000'],
  ])(
    'decodes multiplexed %s as the clear playlist does (the last frame excepted)',
    async (_, track) => {
      const url = (name: string): string => `${origin.url}/${name}.ism/${name}-${track}-video_eng=925835.m3u8`;
      const [mine, clear] = await Promise.all([frames(url('dolby'), '0:a'), frames(url('dolbyclear'), '0:a')]);
      expect(clear.rows.length).toBeGreaterThan(300);
      // The AC-3 parser holds the last frame too (see above).
      expect(mine.rows.slice(0, -1)).toEqual(clear.rows.slice(0, -1));
    },
    90_000,
  );

  test('decodes packed AAC, AC-3 and E-AC-3 as the clear playlists do', async () => {
    // ffmpeg reads the audio setup information (and so the codec of encrypted AC-3) only for
    // EXT-X-MEDIA renditions; an audio-only variant's segments it probes, which fails on encrypted
    // AC-3. So this master lists the audio as renditions only (docs/guide/drm.md).
    for (const name of ['dolby', 'dolbyclear']) {
      const pl = (t: string): string => `${origin.url}/${name}.ism/${name}-${t}.m3u8?hls_no_multiplex=true`;
      hand.set(
        `/${name}.m3u8`,
        [
          '#EXTM3U',
          '#EXT-X-VERSION:5',
          `#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="aac",DEFAULT=YES,URI="${pl('audio_eng_aacl=64113')}"`,
          `#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="ac3",DEFAULT=NO,URI="${pl('audio_eng=384000')}"`,
          `#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="ec3",DEFAULT=NO,URI="${pl('audio_eng_ec3=256000')}"`,
          '#EXT-X-STREAM-INF:BANDWIDTH=1500000,AUDIO="a"',
          pl('video_eng=925835'),
          '',
        ].join('\n'),
      );
    }
    // The clear playlists need extension_picky off: ffmpeg 5.1 finds "eac3" in an .ec3 URL otherwise.
    const clearOptions = ['-extension_picky', '0'];
    for (const [stream, last] of [
      ['0:a:0', false],
      ['0:a:1', true],
      ['0:a:2', true],
    ] as const) {
      const [mine, clear] = await Promise.all([
        frames(`${keyBase}/dolby.m3u8`, stream),
        frames(`${keyBase}/dolbyclear.m3u8`, stream, clearOptions),
      ]);
      expect([stream, clear.stderr]).toEqual([stream, '']);
      expect(clear.rows.length).toBeGreaterThan(300);
      // AAC frames leave ffmpeg's ADTS parser at once; AC-3's parser holds the last one (see above).
      expect(last ? mine.rows.slice(0, -1) : mine.rows).toEqual(last ? clear.rows.slice(0, -1) : clear.rows);
    }
  }, 120_000);

  test('ffprobe finds H.264 and AAC behind the SAMPLE-AES stream types', async () => {
    const segment = `${origin.url}/sa.ism/sa-audio_eng=64113-video_eng=925835-1.ts`;
    const r = await run('ffprobe', [
      '-v',
      'error',
      '-show_entries',
      'stream=codec_name,codec_tag_string',
      '-of',
      'csv=p=0',
      segment,
    ]);
    expect([...new Set(r.stdout.split('\n').filter((l) => l !== ''))]).toEqual(['h264,[219][0][0][0]', 'aac,apad']);
  });
});
