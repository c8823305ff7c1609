// Smooth Streaming with PlayReady signalling (--iss.key): the manifest's Protection element
// (MS-SSTR §2.2.2.2) carries the PlayReady header with the KID; every fragment carries the PIFF
// SampleEncryptionBox (uuid A2394F52-…) with saiz/saio pointing into it, and decrypts with ffmpeg,
// behind the DASH init segment of the same track and key, to the clear fragment's packets. That
// init says 16-byte IVs (DASH's, one keystream per fragment); a Smooth player builds its own with
// 8 (shaka 4's MSS parser), which is what Smooth fragments carry, so the test sets it to 8.

import { rmSync } from 'node:fs';
import { boxes } from '../../helpers/box-walk';
import { tempDir } from '../../helpers/fixtures';
import { get, startTestOrigin, TestOrigin } from '../server/server-helpers';
import { dashWritten, smoothWritten, Written } from '../server/written-urls';
import { packets } from './ffmpeg-decrypt';

const KID = '00112233445566778899aabbccddeeff';
const KEY = '3a2a1b68dd2bd9b2eeb25e84c4776668';
const FILES = ['video_high_1600k.ismv', 'audio_eng_64k.isma'];

let origin: TestOrigin;
const dir = tempDir('smooth-drm-');

beforeAll(async () => {
  origin = await startTestOrigin({ clear: FILES, pr: FILES }, { pr: [`--iss.key=${KID}:${KEY}`] });
}, 60_000);

afterAll(async () => {
  await origin?.server.close();
  rmSync(dir, { recursive: true, force: true });
});

async function fetched(url: string): Promise<Buffer> {
  const r = await get(origin.url, url.replace(origin.url, ''));
  expect([url, r.status]).toEqual([url, 200]);
  return r.body;
}

async function smooth(name: string): Promise<{ manifest: string; written: Written[] }> {
  const url = `${origin.url}/${name}.ism/Manifest`;
  const manifest = (await fetched(url)).toString('utf8');
  return { manifest, written: smoothWritten(manifest, url) };
}

test('the manifest carries the PlayReady header: SystemID lower case, no braces, the KID as a GUID', async () => {
  const { manifest } = await smooth('pr');
  const m = /<Protection>\s*<ProtectionHeader SystemID="([^"]+)">([^<]+)<\/ProtectionHeader>\s*<\/Protection>/.exec(
    manifest,
  );
  expect(m).not.toBeNull();
  expect(m![1]).toBe('9a04f079-9840-4286-ab92-e65be0885f95');
  const xml = Buffer.from(m![2]!, 'base64').subarray(10).toString('utf16le');
  expect(xml).toContain('<KID>MyIRAFVEd2aImaq7zN3u/w==</KID>');
  expect(manifest.indexOf('<Protection>')).toBeLessThan(manifest.indexOf('<StreamIndex'));
  expect(manifest).not.toContain(KEY);
});

/** A DASH init segment with the tenc's Per_Sample_IV_Size (ISO/IEC 23001-7 §8.2) 16 → 8. */
function asSmoothPlayerInit(init: Buffer): Buffer {
  const out = Buffer.from(init);
  // 'tenc' fourcc, then version/flags (4), reserved (2), default_isProtected (1), the IV size.
  const at = out.indexOf('tenc', 0, 'latin1') + 4 + 4 + 2 + 1;
  expect(out[at]).toBe(16);
  out[at] = 8;
  return out;
}

test('every fragment: PIFF uuid with saiz/saio, and it decrypts with ffmpeg to the clear packets', async () => {
  const mine = (await smooth('pr')).written;
  const clear = new Map((await smooth('clear')).written.map((w) => [`${w.key}@${w.time}`, w]));
  const mpdUrl = `${origin.url}/pr.ism/.mpd`;
  const inits = dashWritten((await fetched(mpdUrl)).toString('utf8'), mpdUrl).filter((w) => w.kind === 'init');
  let checked = 0;
  for (const w of mine) {
    const type = w.key.split('=')[0]!.startsWith('video') ? 'video' : 'audio';
    const init = asSmoothPlayerInit(await fetched(inits.find((i) => i.key.startsWith(type))!.url));
    const fragment = await fetched(w.url);
    const twin = await fetched(clear.get(`${w.key}@${w.time}`)!.url);
    const traf = boxes(boxes(boxes(fragment)[0]!.body).find((b) => b.type === 'traf')!.body);
    expect(traf.map((b) => b.type)).toEqual(expect.arrayContaining(['saiz', 'saio', 'uuid']));
    const uuid = traf.filter((b) => b.type === 'uuid').map((b) => b.body.subarray(0, 16).toString('hex'));
    expect(uuid).toContain('a2394f525a9b4f14a2446c427c648df4');
    expect(fragment.equals(twin)).toBe(false);
    const decrypted = packets(dir, init, fragment, KEY);
    expect(decrypted.stderr).toBe('');
    expect(decrypted.rows).toEqual(
      packets(
        dir,
        await fetched(
          inits
            .find((i) => i.key.startsWith(type))!
            .url.replace('/pr.ism/', '/clear.ism/')
            .replace('/pr-', '/clear-'),
        ),
        twin,
      ).rows,
    );
    checked++;
  }
  expect(checked).toBeGreaterThan(6);
}, 60_000);
