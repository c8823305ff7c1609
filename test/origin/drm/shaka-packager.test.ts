// shaka-packager (npm `shaka-packager`, a static build of the reference packager) as the second
// judge of encrypted DASH: it decrypts our segments to the clear packets, and for the same key id
// and key it writes the same signalling we write (the W3C Common PSSH, drm_a's pssh when the
// license server gave no data, PlayReady's pssh with its header).

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
    { clear: [VIDEO], cenc: [VIDEO], cbcs: [VIDEO] },
    {
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
