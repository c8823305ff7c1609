// Encrypted DASH, judged by an independent decrypter: every encrypted segment of a real origin on
// loopback, with its init segment, decrypts with ffmpeg (`-decryption_key`, one fragment at a
// time as ffmpeg requires) to packets equal to the clear presentation's, for cenc and cbcs, video
// and audio. A wrong key does not. The MPD carries the descriptors and validates; the refusals
// that keep a protected presentation from being played out clear hold.

import { rmSync } from 'node:fs';
import { boxes, Box } from '../../helpers/box-walk';
import { tempDir } from '../../helpers/fixtures';
import { validateMpd } from '../manifests/format-support';
import { get, startTestOrigin, TestOrigin } from '../server/server-helpers';
import { dashWritten, smoothWritten, Written } from '../server/written-urls';
import { packets } from './ffmpeg-decrypt';

const KID = '00112233445566778899aabbccddeeff';
const KEY = '3a2a1b68dd2bd9b2eeb25e84c4776668';
const WRONG = '3a2a1b68dd2bd9b2eeb25e84c4776669';
const FILES = ['video_high_1600k.ismv', 'video_interlaced_800k.ismv', 'audio_eng_64k.isma', 'audio_ac3_384k.isma'];

let origin: TestOrigin;
const dir = tempDir('dash-drm-');

beforeAll(async () => {
  origin = await startTestOrigin(
    { clear: FILES, cenc: FILES, cbcs: FILES, lead: FILES, text: [...FILES, 'text_eng.ismt'] },
    {
      cenc: [`--drm_a.key=${KID}:${KEY}`],
      cbcs: [`--iss.key=${KID}:${KEY}`, '--mpd.protection_scheme=cbcs'],
      lead: [`--drm_a.key=${KID}:${KEY}`, '--clear_lead=4', '--clearkey.license_server_url=http://127.0.0.1:1/license'],
      text: [`--drm_a.key=${KID}:${KEY}`],
    },
  );
}, 60_000);

afterAll(async () => {
  await origin?.server.close();
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

const child = (list: Box[], type: string): Box => {
  const found = list.find((b) => b.type === type);
  if (found === undefined) throw new Error(`no ${type} in ${list.map((b) => b.type).join(',')}`);
  return found;
};

/** The first sample entry of an init segment's stsd, and the stsd's entry count. */
function sampleEntries(init: Buffer): { count: number; entries: Box[] } {
  const moov = child(boxes(init), 'moov');
  const stbl = ['trak', 'mdia', 'minf', 'stbl'].reduce((b, t) => child(boxes(b.body), t), moov);
  const stsd = child(boxes(stbl.body), 'stsd');
  return { count: stsd.body.readUInt32BE(4), entries: boxes(stsd.body.subarray(8)) };
}

describe.each([
  ['cenc', 'cenc'],
  ['cbcs', 'cbcs'],
])('%s', (name, scheme) => {
  test('the MPD signals the scheme, the key id and each DRM, and validates', async () => {
    const mpd = (await fetchOk(`${origin.url}/${name}.ism/.mpd`)).toString('utf8');
    expect(validateMpd(mpd)).toEqual({ ok: true, output: expect.any(String) });
    const sets = [...mpd.matchAll(/<AdaptationSet[\s\S]*?<\/AdaptationSet>/g)].map((m) => m[0]);
    expect(sets.length).toBeGreaterThanOrEqual(3); // AAC, AC-3 and video
    for (const set of sets) {
      expect(set).toContain(
        `<ContentProtection schemeIdUri="urn:mpeg:dash:mp4protection:2011" value="${scheme}" cenc:default_KID="00112233-4455-6677-8899-aabbccddeeff" />`,
      );
      expect(set).toContain('<ContentProtection schemeIdUri="urn:uuid:1077efec-c0b2-4d02-ace3-3c1e52e2fb4b">');
    }
    if (name === 'cenc') expect(mpd).toContain('schemeIdUri="urn:uuid:EDEF8BA9-79D6-4ACE-A3C8-27DCD51D21ED"');
    if (name === 'cbcs') expect(mpd).toMatch(/urn:uuid:9a04f079-9840-4286-ab92-e65be0885f95" value="MSPR 2.0"/);
    expect(mpd).not.toContain(KEY);
  });

  test('init segments: encv/enca with sinf (frma, schm, tenc) and the pssh boxes', async () => {
    for (const w of (await written(name)).filter((x) => x.kind === 'init')) {
      const init = await fetchOk(w.url);
      const { count, entries } = sampleEntries(init);
      expect(count).toBe(1);
      expect(['encv', 'enca']).toContain(entries[0]!.type);
      // The sinf is the last child of the entry, after the visual or audio fields and the codec boxes.
      const body = entries[0]!.body;
      const at = body.lastIndexOf('sinf', undefined, 'latin1') - 4;
      const sinf = boxes(body.subarray(at))[0]!;
      expect(sinf.type).toBe('sinf');
      const parts = boxes(sinf.body);
      expect(parts.map((b) => b.type)).toEqual(['frma', 'schm', 'schi']);
      expect(child(parts, 'schm').body.toString('latin1', 4, 8)).toBe(scheme);
      const tenc = child(boxes(child(parts, 'schi').body), 'tenc').body;
      expect(tenc.subarray(8, 24).toString('hex')).toBe(KID);
      expect(tenc[6]).toBe(1); // default_isProtected
      expect(tenc[7]).toBe(scheme === 'cenc' ? 16 : 0); // Per_Sample_IV_Size: 16, one keystream a fragment
      const pssh = boxes(child(boxes(init), 'moov').body).filter((b) => b.type === 'pssh');
      // The W3C Common PSSH (v1, one KID) that ClearKey CDMs read, first.
      expect(pssh[0]!.body.subarray(4, 20).toString('hex')).toBe('1077efecc0b24d02ace33c1e52e2fb4b');
      expect(pssh[0]!.body.subarray(24, 40).toString('hex')).toBe(KID);
      expect(pssh).toHaveLength(2);
    }
  });

  test('every segment decrypts with ffmpeg to the clear packets; a wrong key does not', async () => {
    const clearAll = await written('clear');
    const clearMedia = new Map(clearAll.filter((x) => x.kind === 'media').map((w) => [`${w.key}@${w.time}`, w]));
    const inits = new Map<string, Buffer>();
    const clearInits = new Map<string, Buffer>();
    const mine = await written(name);
    for (const w of mine.filter((x) => x.kind === 'init')) inits.set(w.key, await fetchOk(w.url));
    for (const w of clearAll.filter((x) => x.kind === 'init')) clearInits.set(w.key, await fetchOk(w.url));
    let checked = 0;
    for (const w of mine.filter((x) => x.kind === 'media')) {
      const twin = clearMedia.get(`${w.key}@${w.time}`);
      expect([w.url, twin === undefined]).toEqual([w.url, false]);
      const [segment, clearSegment] = await Promise.all([fetchOk(w.url), fetchOk(twin!.url)]);
      expect(segment.equals(clearSegment)).toBe(false);
      const decrypted = packets(dir, inits.get(w.key)!, segment, KEY);
      expect(decrypted.stderr).toBe('');
      const reference = packets(dir, clearInits.get(w.key)!, clearSegment);
      expect(decrypted.rows).toEqual(reference.rows);
      expect(decrypted.rows.length).toBeGreaterThan(0);
      if (checked++ === 0) {
        const wrong = packets(dir, inits.get(w.key)!, segment, WRONG);
        expect(wrong.rows).not.toEqual(reference.rows);
      }
    }
    expect(checked).toBeGreaterThan(8);
  }, 120_000);

  test('HEAD and Range are answered from the same bytes as GET', async () => {
    const w = (await written(name)).find((x) => x.kind === 'media' && x.key.startsWith('video'))!;
    const rawPath = w.url.replace(origin.url, '');
    const whole = await get(origin.url, rawPath);
    const head = await get(origin.url, rawPath, {}, 'HEAD');
    expect([head.status, head.headers['content-length'], head.headers.etag, head.body.length]).toEqual([
      200,
      String(whole.body.length),
      whole.headers.etag,
      0,
    ]);
    const part = await get(origin.url, rawPath, { range: 'bytes=100-4195' });
    expect([part.status, part.headers['content-range']]).toEqual([206, `bytes 100-4195/${whole.body.length}`]);
    expect(part.body.equals(whole.body.subarray(100, 4196))).toBe(true);
  });

  test('the same request gives the same bytes and the same ETag', async () => {
    const w = (await written(name)).find((x) => x.kind === 'media')!;
    const rawPath = w.url.replace(origin.url, '');
    const [a, b] = [await get(origin.url, rawPath), await get(origin.url, rawPath)];
    expect(a.body.equals(b.body)).toBe(true);
    expect(a.headers.etag).toBe(b.headers.etag);
  });
});

describe('clear lead', () => {
  test('segments starting before 4 s are clear (the second sample entry), the rest encrypted', async () => {
    const all = await written('lead');
    const video = all.find((x) => x.kind === 'init' && x.key.startsWith('video'))!;
    const init = await fetchOk(video.url);
    const { count, entries } = sampleEntries(init);
    expect([count, entries.map((e) => e.type)]).toEqual([2, ['encv', 'avc1']]);
    const media = all.filter((x) => x.kind === 'media' && x.key === video.key);
    const first = await fetchOk(media[0]!.url);
    const later = await fetchOk(media[media.length - 1]!.url);
    const trafOf = (seg: Buffer): Box[] => boxes(child(boxes(child(boxes(seg), 'moof').body), 'traf').body);
    expect(trafOf(first).map((b) => b.type)).not.toContain('senc');
    expect(child(trafOf(first), 'tfhd').body.readUInt32BE(8)).toBe(2); // sample_description_index
    expect(trafOf(later).map((b) => b.type)).toEqual(expect.arrayContaining(['saiz', 'saio', 'senc']));
    // The clear segment's packets need no key; the encrypted one's do.
    expect(packets(dir, init, first).rows.length).toBeGreaterThan(0);
    expect(packets(dir, init, later, KEY).stderr).toBe('');
  });

  test('the ClearKey descriptor carries the license URL', async () => {
    const mpd = (await fetchOk(`${origin.url}/lead.ism/.mpd`)).toString('utf8');
    expect(mpd).toContain('xmlns:dashif="https://dashif.org/CPS"');
    expect(mpd).toContain('<dashif:Laurl>http://127.0.0.1:1/license</dashif:Laurl>');
    expect(validateMpd(mpd).ok).toBe(true);
  });
});

test('text tracks stay clear in a protected presentation', async () => {
  const all = await written('text');
  const text = all.find((x) => x.kind === 'init' && x.key.startsWith('textstream'))!;
  expect(sampleEntries(await fetchOk(text.url)).entries[0]!.type).toBe('stpp');
  const mpd = (await fetchOk(`${origin.url}/text.ism/.mpd`)).toString('utf8');
  const textSet = [...mpd.matchAll(/<AdaptationSet[\s\S]*?<\/AdaptationSet>/g)].find((m) =>
    m[0].includes('contentType="text"'),
  )!;
  expect(textSet[0]).not.toContain('ContentProtection');
});

describe('no clear playout of a protected presentation', () => {
  test('a format without a key: the Smooth and HLS segment URLs of the clear twin are 403 too', async () => {
    const manifest = `${origin.url}/clear.ism/Manifest`;
    const smooth = smoothWritten((await fetchOk(manifest)).toString('utf8'), manifest).filter((_, i) => i % 7 === 0);
    const master = (await fetchOk(`${origin.url}/clear.ism/.m3u8`)).toString('utf8');
    const list = master.split('\n').find((l) => l !== '' && !l.startsWith('#'))!;
    const playlist = (await fetchOk(`${origin.url}/clear.ism/${list}`)).toString('utf8');
    const hls = playlist
      .split('\n')
      .filter((l) => l !== '' && !l.startsWith('#'))
      .map((u) => new URL(u, `${origin.url}/clear.ism/${list}`).href);
    const urls = [...smooth.map((w) => w.url), `${origin.url}/clear.ism/${list}`, ...hls.slice(0, 3)];
    expect(urls.length).toBeGreaterThan(6);
    for (const url of urls) {
      expect([url, (await get(origin.url, new URL(url).pathname)).status]).toEqual([url, 200]);
      // The same URL of the cenc twin (a key for DASH only).
      const mine = new URL(url).pathname.replace('/clear.ism/', '/cenc.ism/').replace(/\/clear-/, '/cenc-');
      const r = await get(origin.url, mine);
      expect([mine, r.status, r.headers['x-origin-error']]).toEqual([mine, 403, 'protected-format']);
    }
  });

  test('HDS: every manifest and fragment URL the clear twin writes is 403 protected-format', async () => {
    const f4m = await get(origin.url, '/clear.ism/.f4m');
    expect(f4m.status).toBe(200);
    // Adobe F4M 1.0 media url, then its fragments (Seg1-Frag<n>) and its stream-level manifest.
    const urls = [...f4m.text.matchAll(/<media\b[^>]*\burl="([^"]+)"/g)].map((m) => m[1]!);
    expect(urls.length).toBeGreaterThan(0);
    const paths = urls.flatMap((u) => [`${u}Seg1-Frag1`, `${u}Seg1-Frag2`, `${u}.f4m`]);
    for (const p of ['.f4m', ...paths].map((x) => `/cenc.ism/${x.replace(/^clear/, 'cenc')}`)) {
      const clearPath = p.replace('/cenc.ism/cenc', '/clear.ism/clear').replace('/cenc.ism/', '/clear.ism/');
      const [clear, mine] = [await get(origin.url, clearPath), await get(origin.url, p)];
      expect([clearPath, clear.status]).toEqual([clearPath, 200]);
      expect([p, mine.status, mine.headers['x-origin-error']]).toEqual([p, 403, 'protected-format']);
      expect(mine.text).not.toContain(KEY);
    }
  });

  test.each([
    ['/cenc.ism/Manifest', 403, 'protected-format'],
    ['/cenc.ism/.m3u8', 403, 'protected-format'],
    ['/cenc.ism/.f4m', 403, 'protected-format'],
    ['/cbcs.ism/.m3u8', 403, 'protected-format'], // a key for DASH and Smooth, none for HLS
    ['/cenc.ism/.mpd?drm_a_key=00112233445566778899aabbccddeeff:00112233445566778899aabbccddeeff', 400, 'bad-option'],
    ['/cenc.ism/.mpd?mpd_protection_scheme=cbcs', 400, 'bad-option'],
  ])('%s → %d %s', async (url, status, code) => {
    const r = await get(origin.url, url);
    expect([r.status, r.headers['x-origin-error']]).toEqual([status, code]);
    expect(r.text).not.toContain(KEY);
  });
});
