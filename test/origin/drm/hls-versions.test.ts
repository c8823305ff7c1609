// EXT-X-VERSION against every tag written (RFC 8216 §7): for a clear, an AES-128 (per-segment IVs
// and one --hls.key_iv), a SAMPLE-AES and a FairPlay presentation, in each packaging (MPEG-TS
// multiplexed, MPEG-TS with packed audio, fMP4) and for each requested hls_client_manifest_version
// (and none), every playlist of the presentation (master, media, I-frame) carries max(requested,
// the highest version any tag of its playlists needs): the lowest version that allows every tag
// used, never less than asked for. A tag the table below does not know fails the test, so a new
// tag cannot be written without its version being checked.

import { get, startTestOrigin, TestOrigin } from '../server/server-helpers';

const KID = '00112233445566778899aabbccddeeff';
const KEY = '3a2a1b68dd2bd9b2eeb25e84c4776668';
const FILES = ['video_main_900k.ismv', 'audio_eng_64k.isma', 'text_eng.ismt'];

let origin: TestOrigin;

beforeAll(async () => {
  origin = await startTestOrigin(
    { clear: FILES, aes: FILES, aesiv: FILES, sa: FILES, fps: FILES },
    {
      aes: [`--hls.key=:${KEY}`, '--hls.license_server_url=https://keys.example/k'],
      aesiv: [`--hls.key=:${KEY}`, '--hls.license_server_url=https://keys.example/k', `--hls.key_iv=${KID}`],
      sa: [`--hls.key=${KID}:${KEY}`, '--hls.playout=sample_aes', '--hls.license_server_url=https://keys.example/k'],
      fps: [`--hls.key=${KID}:${KEY}`, '--hls.playout=sample_aes_streamingkeydelivery'],
    },
  );
}, 60_000);

afterAll(async () => {
  await origin?.server.close();
});

/** RFC 8216 §4.3: every tag these playlists may carry, with the version it needs by itself (§7). */
const TAG_VERSIONS: Record<string, number> = {
  EXTM3U: 1,
  'EXT-X-VERSION': 1,
  EXTINF: 1, // 3 with a decimal duration, below
  'EXT-X-TARGETDURATION': 1,
  'EXT-X-MEDIA-SEQUENCE': 1,
  'EXT-X-DISCONTINUITY-SEQUENCE': 1,
  'EXT-X-DISCONTINUITY': 1,
  'EXT-X-ENDLIST': 1,
  'EXT-X-PLAYLIST-TYPE': 1,
  'EXT-X-PROGRAM-DATE-TIME': 1,
  'EXT-X-DATERANGE': 1,
  'EXT-X-INDEPENDENT-SEGMENTS': 1,
  'EXT-X-START': 1,
  'EXT-X-MEDIA': 1, // 7 with INSTREAM-ID="SERVICEn", below
  'EXT-X-STREAM-INF': 1,
  'EXT-X-I-FRAME-STREAM-INF': 1,
  'EXT-X-SESSION-DATA': 1,
  'EXT-X-KEY': 1, // 2 with IV, 5 with KEYFORMAT(VERSIONS) or SAMPLE-AES, below
  'EXT-X-SESSION-KEY': 1,
  'EXT-X-BYTERANGE': 4,
  'EXT-X-I-FRAMES-ONLY': 4,
  'EXT-X-MAP': 5, // 6 outside an I-frame playlist, below
};

/** RFC 8216 §7: the version one line needs; a tag not in the table fails the test, named. */
function versionOf(line: string, iframesOnly: boolean): number {
  if (!line.startsWith('#EXT')) return 1;
  const tag = /^#([A-Z0-9-]+)/.exec(line)![1]!;
  const base = TAG_VERSIONS[tag];
  if (base === undefined) throw new Error(`a tag this test does not know the version of: ${line}`);
  if (/^#EXT-X-(SESSION-)?KEY:/.test(line)) {
    if (/METHOD=SAMPLE-AES/.test(line) || /KEYFORMAT/.test(line)) return 5;
    if (/,IV=/.test(line)) return 2;
  }
  if (/^#EXTINF:\d+\.\d/.test(line)) return 3;
  if (tag === 'EXT-X-MEDIA' && /INSTREAM-ID="SERVICE/.test(line)) return 7;
  if (tag === 'EXT-X-MAP' && !iframesOnly) return 6;
  return base;
}

const required = (playlist: string): number => {
  const iframes = playlist.includes('#EXT-X-I-FRAMES-ONLY');
  return Math.max(...playlist.split('\n').map((l) => versionOf(l, iframes)));
};

/** Every playlist a master leads to (media playlists and I-frame playlists), with the master. */
async function presentationPlaylists(name: string, query: string): Promise<string[]> {
  const fetchText = async (path: string): Promise<string> => {
    const r = await get(origin.url, path);
    expect([path, r.status]).toEqual([path, 200]);
    return r.text;
  };
  const master = await fetchText(`/${name}.ism/.m3u8${query}`);
  const uris = new Set<string>();
  for (const line of master.split('\n')) {
    if (line !== '' && !line.startsWith('#')) uris.add(line);
    const m = /URI="([^"]+)"/.exec(line);
    if (m !== null && /^#EXT-X-(MEDIA|I-FRAME-STREAM-INF):/.test(line)) uris.add(m[1]!);
  }
  const lists = [master];
  for (const u of uris)
    lists.push(await fetchText(new URL(u, `http://x/${name}.ism/`).pathname + new URL(u, 'http://x/').search));
  return lists;
}

describe.each([
  ['MPEG-TS', ''],
  ['MPEG-TS + packed audio', 'hls_no_multiplex=true'],
  ['fMP4', 'hls_fmp4=true'],
])('%s', (_, mode) => {
  test.each(['clear', 'aes', 'aesiv', 'sa', 'fps'])(
    '%s: the lowest version every tag allows, at least the one asked for',
    async (name) => {
      for (const requested of [undefined, 1, 2, 3, 4, 5, 6, 7]) {
        const asked = requested === undefined ? [] : [`hls_client_manifest_version=${requested}`];
        const query = `?${[...asked, ...(mode === '' ? [] : [mode])].join('&')}`;
        const lists = await presentationPlaylists(name, query);
        const needed = Math.max(...lists.map(required));
        const written = lists.map((l) => Number(/#EXT-X-VERSION:(\d+)/.exec(l)![1]));
        // Removed in version 6 (PROGRAM-ID) and 7 (EXT-X-ALLOW-CACHE): never next to those versions.
        lists.forEach((l, i) => {
          if (written[i]! >= 6) expect(l).not.toMatch(/PROGRAM-ID=/);
          if (written[i]! >= 7) expect(l).not.toContain('#EXT-X-ALLOW-CACHE');
        });
        expect([name, mode, requested, written]).toEqual([
          name,
          mode,
          requested,
          lists.map(() => Math.max(requested ?? 1, needed)), // default 1 (docs/guide/hls.md)
        ]);
        // What the encrypted playlists need whatever is asked: IV 2, SAMPLE-AES 5, EXT-X-MAP 6.
        const floor = mode.includes('fmp4') ? 6 : ['sa', 'fps'].includes(name) ? 5 : name.startsWith('aes') ? 2 : 1;
        expect(Math.min(...written)).toBeGreaterThanOrEqual(floor);
      }
    },
    60_000,
  );
});
