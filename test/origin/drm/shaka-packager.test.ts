// shaka-packager (npm `shaka-packager`, a static build of the reference packager) as the second
// judge of encrypted DASH: it decrypts our segments to the clear packets, and for the same key id
// and key it writes the same signalling we write (the W3C Common PSSH, drm_a's pssh when the
// license server gave no data, PlayReady's pssh with its header), in the init segment, the MPD and
// the HLS key lines. FairPlay is not compared: shaka-packager 3.4 writes its skd:// line with
// KEYFORMAT="identity", where Apple's and our line say "com.apple.streamingkeydelivery".

import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { boxes, Box } from '../../helpers/box-walk';
import { media, ROOT, tempDir } from '../../helpers/fixtures';
import { runSync } from '../../helpers/process';
import { get, startTestOrigin, TestOrigin } from '../server/server-helpers';
import { dashWritten } from '../server/written-urls';

const PACKAGER = path.join(ROOT, 'node_modules', 'shaka-packager', 'bin', 'packager-linux-x64');
const KID = '00112233445566778899aabbccddeeff';
const KEY = '3a2a1b68dd2bd9b2eeb25e84c4776668';
const VIDEO = 'video_main_900k.ismv';

let origin: TestOrigin;
const dir = tempDir('shaka-packager-');

beforeAll(async () => {
  origin = await startTestOrigin(
    { clear: [VIDEO], cenc: [VIDEO], cbcs: [VIDEO], hls: [VIDEO] },
    {
      hls: [
        `--hls.key=${KID}:${KEY}`,
        '--hls.playout=sample_aes',
        `--drm_a.key=${KID}:${KEY}`,
        `--iss.key=${KID}:${KEY}`,
      ],
      cenc: [`--drm_a.key=${KID}:${KEY}`, `--iss.key=${KID}:${KEY}`],
      cbcs: [`--drm_a.key=${KID}:${KEY}`, `--iss.key=${KID}:${KEY}`, '--mpd.protection_scheme=cbcs'],
    },
  );
}, 60_000);

afterAll(async () => {
  await origin?.server.close();
  rmSync(dir, { recursive: true, force: true });
});

test('the packager binary is installed (devDependency shaka-packager)', () => {
  expect(existsSync(PACKAGER)).toBe(true);
});

async function fetched(url: string): Promise<Buffer> {
  const r = await get(origin.url, url.replace(origin.url, ''));
  expect([url, r.status]).toEqual([url, 200]);
  return r.body;
}

/** Init segment and the first three media segments of the video of presentation `name`. */
async function firstSegments(name: string): Promise<{ init: Buffer; media: Buffer[] }> {
  const mpdUrl = `${origin.url}/${name}.ism/.mpd`;
  const written = dashWritten((await fetched(mpdUrl)).toString('utf8'), mpdUrl);
  const init = await fetched(written.find((w) => w.kind === 'init')!.url);
  const list = written.filter((w) => w.kind === 'media').slice(0, 3);
  return { init, media: await Promise.all(list.map((w) => fetched(w.url))) };
}

function framemd5(file: string): string[] {
  const r = runSync('ffmpeg', ['-v', 'error', '-i', file, '-map', '0:v', '-c', 'copy', '-f', 'framemd5', '-']);
  expect(r.stderr).toBe('');
  return r.stdout.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
}

test.each(['cenc', 'cbcs'])(
  '%s: shaka-packager decrypts each segment to the clear packets',
  async (name) => {
    const mine = await firstSegments(name);
    const clear = await firstSegments('clear');
    mine.media.forEach((segment, i) => {
      const input = path.join(dir, `${name}-${i}.mp4`);
      const output = path.join(dir, `${name}-${i}-dec.mp4`);
      const reference = path.join(dir, `clear-${i}.mp4`);
      writeFileSync(input, Buffer.concat([mine.init, segment]));
      writeFileSync(reference, Buffer.concat([clear.init, clear.media[i]!]));
      const r = runSync(PACKAGER, [
        `in=${input},stream=video,output=${output}`,
        '--enable_raw_key_decryption',
        '--keys',
        `label=:key_id=${KID}:key=${KEY}`,
        '--quiet',
      ]);
      expect([r.code, r.stderr.replace(/^.*(W|I)\d{4}.*$/gm, '').trim()]).toEqual([0, '']);
      const packets = framemd5(output);
      expect(packets.length).toBeGreaterThan(0);
      expect(packets.map((l) => l.split(',').slice(4).join(','))).toEqual(
        framemd5(reference).map((l) => l.split(',').slice(4).join(',')),
      );
    });
  },
  60_000,
);

/** The pssh boxes of an init segment, by system id. */
function psshOf(init: Buffer): Map<string, Buffer> {
  const moov = boxes(init).find((b) => b.type === 'moov')!;
  const out = new Map<string, Buffer>();
  for (const b of boxes(moov.body).filter((x: Box) => x.type === 'pssh')) {
    const whole = Buffer.concat([Buffer.from([0, 0, 0, 0]), Buffer.from('pssh'), b.body]);
    whole.writeUInt32BE(whole.length, 0);
    out.set(b.body.subarray(4, 20).toString('hex'), whole);
  }
  return out;
}

test.each(['cenc', 'cbcs'])(
  '%s: our pssh boxes are the ones shaka-packager writes for the same key',
  async (scheme) => {
    const out = path.join(dir, `shaka-${scheme}`);
    const r = runSync(PACKAGER, [
      `in=${media(VIDEO)},stream=video,init_segment=${out}-init.mp4,segment_template=${out}-$Number$.m4s`,
      '--enable_raw_key_encryption',
      '--keys',
      `label=:key_id=${KID}:key=${KEY}`,
      '--protection_scheme',
      scheme,
      '--protection_systems',
      'Widevine,PlayReady,CommonSystem',
      '--mpd_output',
      `${out}.mpd`,
      '--quiet',
    ]);
    expect(r.code).toBe(0);
    const theirs = psshOf(readFileSync(`${out}-init.mp4`));
    const ours = psshOf((await firstSegments(scheme)).init);
    for (const system of [
      '1077efecc0b24d02ace33c1e52e2fb4b', // W3C Common
      'edef8ba979d64acea3c827dcd51d21ed', // drm_a
      '9a04f07998404286ab92e65be0885f95', // PlayReady
    ]) {
      expect(theirs.get(system)).toBeDefined();
      expect([system, ours.get(system)?.toString('hex')]).toEqual([system, theirs.get(system)!.toString('hex')]);
    }
  },
  60_000,
);

/** The ContentProtection elements of an MPD's first AdaptationSet, by lower-case scheme id URI. */
function contentProtection(mpd: string): Map<string, { value?: string; kid?: string; pssh?: string; pro?: string }> {
  const set = /<AdaptationSet[\s\S]*?<\/AdaptationSet>/.exec(mpd)![0];
  const out = new Map<string, { value?: string; kid?: string; pssh?: string; pro?: string }>();
  for (const m of set.matchAll(/<ContentProtection\b([^>]*?)(?:\/>|>([\s\S]*?)<\/ContentProtection>)/g)) {
    const attr = (name: string): string | undefined => new RegExp(`\\b${name}="([^"]*)"`).exec(m[1]!)?.[1];
    const inner = (name: string): string | undefined =>
      new RegExp(`<${name}>\\s*([^<]*?)\\s*</${name}>`).exec(m[2] ?? '')?.[1];
    out.set(attr('schemeIdUri')!.toLowerCase(), {
      value: attr('value'),
      kid: attr('cenc:default_KID')?.toLowerCase(),
      // Compared as bytes: Base64 may be spelt with or without line breaks.
      pssh: inner('cenc:pssh') && Buffer.from(inner('cenc:pssh')!, 'base64').toString('hex'),
      pro: inner('mspr:pro') && Buffer.from(inner('mspr:pro')!, 'base64').toString('hex'),
    });
  }
  return out;
}

test.each(['cenc', 'cbcs'])(
  '%s: the MPD ContentProtection payloads are the ones shaka-packager writes for the same key',
  async (scheme) => {
    const out = path.join(dir, `shaka-mpd-${scheme}`);
    const r = runSync(PACKAGER, [
      `in=${media(VIDEO)},stream=video,init_segment=${out}-init.mp4,segment_template=${out}-$Number$.m4s`,
      '--enable_raw_key_encryption',
      '--keys',
      `label=:key_id=${KID}:key=${KEY}`,
      '--protection_scheme',
      scheme,
      '--protection_systems',
      'Widevine,PlayReady,CommonSystem',
      '--mpd_output',
      `${out}.mpd`,
      '--quiet',
    ]);
    expect(r.code).toBe(0);
    const theirs = contentProtection(readFileSync(`${out}.mpd`, 'utf8'));
    const ours = contentProtection((await fetched(`${origin.url}/${scheme}.ism/.mpd`)).toString('utf8'));
    const mp4 = 'urn:mpeg:dash:mp4protection:2011';
    expect([ours.get(mp4)?.value, ours.get(mp4)?.kid]).toEqual([theirs.get(mp4)!.value, theirs.get(mp4)!.kid]);
    expect(theirs.get(mp4)!.kid).toBe('00112233-4455-6677-8899-aabbccddeeff');
    for (const system of [
      'urn:uuid:1077efec-c0b2-4d02-ace3-3c1e52e2fb4b', // W3C Common: the v1 pssh with the KID
      'urn:uuid:edef8ba9-79d6-4ace-a3c8-27dcd51d21ed', // drm_a: its pssh
      'urn:uuid:9a04f079-9840-4286-ab92-e65be0885f95', // PlayReady: its pssh and mspr:pro
    ]) {
      const [a, b] = [ours.get(system), theirs.get(system)!];
      expect(b.pssh).toBeDefined();
      expect([system, a?.pssh, a?.pro]).toEqual([system, b.pssh, b.pro]);
    }
  },
  60_000,
);

/** RFC 8216 §4.3.2.4: the attributes of each EXT-X-KEY line, by KEYFORMAT. */
function keyLines(playlist: string): Map<string, Map<string, string>> {
  const out = new Map<string, Map<string, string>>();
  for (const line of playlist.split('\n').filter((l) => /^#EXT-X-(SESSION-)?KEY:/.test(l))) {
    const attrs = new Map(
      [...line.matchAll(/([A-Z-]+)=("[^"]*"|[^,]*)/g)].map((m) => [m[1]!, m[2]!.replace(/"/g, '')]),
    );
    out.set(attrs.get('KEYFORMAT') ?? 'identity', attrs);
  }
  return out;
}

test('HLS cbcs: the drm_a and PlayReady key lines carry what shaka-packager writes for the same key', async () => {
  const out = path.join(dir, 'shaka-hls');
  const r = runSync(PACKAGER, [
    `in=${media(VIDEO)},stream=video,init_segment=${out}-init.mp4,segment_template=${out}-$Number$.m4s,playlist_name=${out}.m3u8`,
    '--enable_raw_key_encryption',
    '--keys',
    `label=:key_id=${KID}:key=${KEY}`,
    '--protection_scheme',
    'cbcs',
    '--protection_systems',
    'Widevine,PlayReady',
    '--hls_master_playlist_output',
    `${out}-master.m3u8`,
    '--quiet',
  ]);
  expect(r.code).toBe(0);
  const theirs = keyLines(readFileSync(`${out}.m3u8`, 'utf8'));
  const master = (await get(origin.url, '/hls.ism/.m3u8?hls_fmp4=true')).text;
  const video = master.split('\n').find((l) => l !== '' && !l.startsWith('#') && l.includes('video'))!;
  const playlist = await get(origin.url, `/hls.ism/${video}`);
  expect(playlist.status).toBe(200);
  for (const ours of [keyLines(master), keyLines(playlist.text)]) {
    for (const format of ['urn:uuid:edef8ba9-79d6-4ace-a3c8-27dcd51d21ed', 'com.microsoft.playready']) {
      const [a, b] = [ours.get(format), theirs.get(format)!];
      expect(b).toBeDefined();
      // The data: URI (the pssh box, the PlayReady Object) as bytes, the method and the key format version.
      const payload = (uri: string | undefined): string | undefined =>
        uri &&
        `${uri.slice(0, uri.indexOf(',') + 1)}${Buffer.from(uri.slice(uri.indexOf(',') + 1), 'base64').toString('hex')}`;
      expect([format, a?.get('METHOD'), payload(a?.get('URI')), a?.get('KEYFORMATVERSIONS')]).toEqual([
        format,
        b.get('METHOD'),
        payload(b.get('URI')),
        b.get('KEYFORMATVERSIONS'),
      ]);
      if (b.has('KEYID')) expect(a?.get('KEYID')?.toLowerCase()).toBe(b.get('KEYID')!.toLowerCase());
    }
  }
}, 60_000);
