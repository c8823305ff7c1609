// The sample auxiliary information of every encrypted fragment points where it says (ISO/IEC
// 14496-12 §8.7.8 saiz, §8.7.9 saio; ISO/IEC 23001-7 §7.1: CENC's aux info is the senc entries):
// in each traf, saio's one offset (from the moof's first byte, default-base-is-moof) is the first
// byte of the senc's first entry, saiz counts the senc's samples and gives each entry's own size,
// and the moof with them precedes its mdat. DASH cenc and cbcs, HLS fMP4 (segments of several
// fragments), Smooth (the PIFF box). Players that read saio (not senc) depend on it; ffmpeg,
// which the other tests decrypt with, does not look at it.

import { Box } from '../../helpers/box-walk';
import { get, startTestOrigin, TestOrigin } from '../server/server-helpers';
import { dashWritten, smoothWritten } from '../server/written-urls';

const PAIR = '00112233445566778899aabbccddeeff:3a2a1b68dd2bd9b2eeb25e84c4776668';
const FILES = ['video_main_900k.ismv', 'audio_eng_64k.isma'];
const PIFF_SENC = 'a2394f525a9b4f14a2446c427c648df4';

let origin: TestOrigin;

beforeAll(async () => {
  origin = await startTestOrigin(
    { cenc: FILES, cbcs: FILES, hls: FILES },
    {
      cenc: [`--drm_a.key=${PAIR}`, `--iss.key=${PAIR}`],
      cbcs: [`--drm_a.key=${PAIR}`, '--mpd.protection_scheme=cbcs'],
      hls: [`--hls.key=${PAIR}`, '--hls.protection_scheme=cenc', '--hls.license_server_url=https://k.example/'],
    },
  );
}, 60_000);

afterAll(() => origin?.server.close());

interface Placed extends Box {
  /** Offset of the box's first byte in the whole segment. */
  at: number;
  header: number;
}

/** ISO/IEC 14496-12 §4.2 boxes of `buf`, each with its offset in the segment. */
function placed(buf: Buffer, base: number): Placed[] {
  const out: Placed[] = [];
  for (let at = 0; at + 8 <= buf.length;) {
    const size = buf.readUInt32BE(at);
    if (size < 8 || at + size > buf.length) throw new Error(`box at ${base + at} of size ${size} overruns`);
    out.push({
      type: buf.toString('latin1', at + 4, at + 8),
      size,
      header: 8,
      at: base + at,
      body: buf.subarray(at + 8, at + size),
    });
    at += size;
  }
  return out;
}

/** Checks every encrypted traf of `segment`; returns how many it checked. */
function checkSegment(segment: Buffer, url: string): number {
  const top = placed(segment, 0);
  let checked = 0;
  top.forEach((moof, i) => {
    if (moof.type !== 'moof') return;
    expect([url, top[i + 1]?.type]).toEqual([url, 'mdat']);
    for (const traf of placed(moof.body, moof.at + 8).filter((b) => b.type === 'traf')) {
      const kids = placed(traf.body, traf.at + 8);
      const piff = kids.find((b) => b.type === 'uuid' && b.body.subarray(0, 16).toString('hex') === PIFF_SENC);
      const senc = kids.find((b) => b.type === 'senc') ?? piff;
      const saiz = kids.find((b) => b.type === 'saiz');
      const saio = kids.find((b) => b.type === 'saio');
      if (senc === undefined) continue; // clear
      const body = piff === senc ? senc.body.subarray(16) : senc.body;
      const count = body.readUInt32BE(4);
      if (saiz === undefined) {
        // cbcs audio: empty senc entries (constant IV, whole blocks) and neither saiz nor saio, as
        // shaka-packager writes it.
        expect([url, body.length, saio]).toEqual([url, 8, undefined]);
        continue;
      }
      const flags = body.readUInt32BE(0) & 0xffffff;
      const entriesAt = senc.at + 8 + (piff === senc ? 16 : 0) + 8;
      // saio: version/flags, entry_count 1, one offset (32-bit in version 0) from the moof.
      expect([url, saio!.body.readUInt32BE(4)]).toEqual([url, 1]);
      const offset = saio!.body[0] === 0 ? saio!.body.readUInt32BE(8) : Number(saio!.body.readBigUInt64BE(8));
      expect([url, moof.at + offset]).toEqual([url, entriesAt]);
      // saiz: version/flags, default size, count, sizes; each the length of its senc entry.
      const defaultSize = saiz.body[4]!;
      expect([url, saiz.body.readUInt32BE(5)]).toEqual([url, count]);
      const ivSize = (flags & 0x2) === 0 ? (body.length - 8) / count : undefined;
      let at = 8;
      for (let k = 0; k < count; k++) {
        const size = defaultSize !== 0 ? defaultSize : saiz.body[9 + k]!;
        // With subsamples the IV size (0 for cbcs, 8 or 16) is the one whose entry is `size` long.
        const withSubsamples = (iv: number): number =>
          at + iv + 2 <= body.length ? iv + 2 + 6 * body.readUInt16BE(at + iv) : -1;
        const own = ivSize ?? withSubsamples([0, 8, 16].find((iv) => withSubsamples(iv) === size) ?? 16);
        expect([url, k, size]).toEqual([url, k, own]);
        at += own;
      }
      expect([url, at]).toEqual([url, body.length]);
      checked++;
    }
  });
  return checked;
}

async function fetched(path: string): Promise<Buffer> {
  const r = await get(origin.url, path);
  expect([path, r.status]).toEqual([path, 200]);
  return r.body;
}

async function mediaUrls(kind: string): Promise<string[]> {
  if (kind === 'hls') {
    const master = (await fetched('/hls.ism/.m3u8?hls_fmp4=true')).toString('utf8');
    const lists = master.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
    for (const m of master.matchAll(/#EXT-X-MEDIA:TYPE=AUDIO[^\n]*URI="([^"]+)"/g)) lists.push(m[1]!);
    const out: string[] = [];
    for (const list of new Set(lists)) {
      const u = new URL(list, `${origin.url}/hls.ism/`);
      const text = (await fetched(u.pathname + u.search)).toString('utf8');
      for (const s of text.split('\n').filter((l) => l !== '' && !l.startsWith('#'))) out.push(new URL(s, u).href);
    }
    return out;
  }
  const [name, format] = kind.split(' ') as [string, string];
  const path = `/${name}.ism/${format === 'smooth' ? 'Manifest' : '.mpd'}`;
  const text = (await fetched(path)).toString('utf8');
  const written = format === 'smooth' ? smoothWritten(text, origin.url + path) : dashWritten(text, origin.url + path);
  return written.filter((w) => w.kind === 'media').map((w) => w.url);
}

test.each(['cenc dash', 'cbcs dash', 'cenc smooth', 'hls'])(
  '%s: saio points at the first senc entry, saiz sizes each entry, moof before mdat',
  async (kind) => {
    const urls = await mediaUrls(kind);
    let checked = 0;
    for (const url of urls) checked += checkSegment(await fetched(new URL(url).pathname + new URL(url).search), url);
    expect(checked).toBeGreaterThanOrEqual(urls.length / 2);
  },
  60_000,
);
