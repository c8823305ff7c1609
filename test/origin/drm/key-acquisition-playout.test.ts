// A presentation packaged with a key from the key server (test/helpers/key-server.ts) plays out
// encrypted with that key: the MPD and the init segments carry its KID and the key server's PSSH
// data byte for byte, and every DASH segment decrypts with ffmpeg, given the key the server
// handed out, to the clear presentation's packets. The origin's log never holds the key.

import { rmSync } from 'node:fs';
import { boxes } from '../../helpers/box-walk';
import { tempDir } from '../../helpers/fixtures';
import {
  psshDataOf,
  SIGNER,
  SIGNING_IV,
  SIGNING_KEY,
  startKeyServer,
  TestKeyServer,
  TRACK_KEYS,
} from '../../helpers/key-server';
import { get, startTestOrigin, TestOrigin } from '../server/server-helpers';
import { dashWritten, Written } from '../server/written-urls';
import { packets } from './ffmpeg-decrypt';

const FILES = ['video_high_1600k.ismv', 'audio_eng_64k.isma'];
const CONTENT_ID = 'tears-of-steel';
const SD = TRACK_KEYS.SD!;
const DATA = psshDataOf(SD.kid, Buffer.from(CONTENT_ID));
const DRM_A_ID = 'edef8ba979d64acea3c827dcd51d21ed';

let keyServer: TestKeyServer;
let origin: TestOrigin;
const dir = tempDir('keys-playout-');

beforeAll(async () => {
  keyServer = await startKeyServer();
  const keyOptions = [
    `--key_server_url=${keyServer.url}`,
    `--content_id=${CONTENT_ID}`,
    `--signer=${SIGNER}`,
    `--aes_signing_key=${SIGNING_KEY}`,
    `--aes_signing_iv=${SIGNING_IV}`,
  ];
  origin = await startTestOrigin({ clear: FILES, keyed: FILES }, { keyed: keyOptions });
  expect(keyServer.received.map((r) => r.signatureValid)).toEqual([true]);
}, 60_000);

afterAll(async () => {
  await origin?.server.close();
  await keyServer?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function fetchOk(url: string): Promise<Buffer> {
  const r = await get(origin.url, url.replace(origin.url, ''));
  expect([url, r.status]).toEqual([url, 200]);
  return r.body;
}

async function written(name: string): Promise<Written[]> {
  const mpdUrl = `${origin.url}/${name}.ism/.mpd`;
  return dashWritten((await fetchOk(mpdUrl)).toString('utf8'), mpdUrl);
}

/** The data of a pssh box of drm_a's system (version 0, as the origin writes a given data). */
function drmAData(pssh: Buffer): Buffer {
  expect(pssh.subarray(12, 28).toString('hex')).toBe(DRM_A_ID);
  expect(pssh[8]).toBe(0);
  return pssh.subarray(32, 32 + pssh.readUInt32BE(28));
}

test('the MPD signals the key server KID and carries its PSSH data as given', async () => {
  const mpd = (await fetchOk(`${origin.url}/keyed.ism/.mpd`)).toString('utf8');
  const uuid = SD.kid.replace(/^(.{8})(.{4})(.{4})(.{4})/, '$1-$2-$3-$4-');
  expect(mpd).toContain(`value="cenc" cenc:default_KID="${uuid}"`);
  const drmA = [
    ...mpd.matchAll(
      /<ContentProtection schemeIdUri="urn:uuid:EDEF8BA9-79D6-4ACE-A3C8-27DCD51D21ED"[^>]*>\s*<cenc:pssh>([^<]+)<\/cenc:pssh>/g,
    ),
  ];
  expect(drmA.length).toBeGreaterThanOrEqual(2); // audio and video
  for (const m of drmA) expect(drmAData(Buffer.from(m[1]!, 'base64')).equals(DATA)).toBe(true);
  expect(mpd).not.toContain(SD.key);
});

test('the init segments carry the KID in tenc and the PSSH data in the pssh box', async () => {
  const inits = (await written('keyed')).filter((w) => w.kind === 'init');
  expect(inits.length).toBe(2);
  for (const w of inits) {
    const init = await fetchOk(w.url);
    const moov = boxes(init).find((b) => b.type === 'moov')!;
    const pssh = boxes(moov.body).filter((b) => b.type === 'pssh');
    const ofDrmA = pssh.filter((b) => b.body.subarray(4, 20).toString('hex') === DRM_A_ID);
    expect(ofDrmA).toHaveLength(1);
    expect(drmAData(Buffer.concat([Buffer.alloc(8), ofDrmA[0]!.body])).equals(DATA)).toBe(true);
    expect(init.includes(Buffer.from(SD.kid, 'hex'))).toBe(true);
  }
});

test('every segment decrypts with ffmpeg using the key the server gave; another key does not', async () => {
  const clear = await written('clear');
  const clearMedia = new Map(clear.filter((x) => x.kind === 'media').map((w) => [`${w.key}@${w.time}`, w]));
  const clearInits = new Map<string, Buffer>();
  for (const w of clear.filter((x) => x.kind === 'init')) clearInits.set(w.key, await fetchOk(w.url));
  const mine = await written('keyed');
  const inits = new Map<string, Buffer>();
  for (const w of mine.filter((x) => x.kind === 'init')) inits.set(w.key, await fetchOk(w.url));
  let checked = 0;
  for (const w of mine.filter((x) => x.kind === 'media')) {
    const twin = clearMedia.get(`${w.key}@${w.time}`)!;
    const [segment, clearSegment] = await Promise.all([fetchOk(w.url), fetchOk(twin.url)]);
    expect(segment.equals(clearSegment)).toBe(false);
    const decrypted = packets(dir, inits.get(w.key)!, segment, SD.key);
    expect(decrypted.stderr).toBe('');
    const reference = packets(dir, clearInits.get(w.key)!, clearSegment);
    expect(decrypted.rows.length).toBeGreaterThan(0);
    expect(decrypted.rows).toEqual(reference.rows);
    if (checked++ === 0)
      expect(packets(dir, inits.get(w.key)!, segment, TRACK_KEYS.HD!.key).rows).not.toEqual(reference.rows);
  }
  expect(checked).toBeGreaterThan(4);
  expect(origin.logs.join('\n')).not.toContain(SD.key);
}, 120_000);
