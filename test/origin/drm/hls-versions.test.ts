// EXT-X-VERSION against every tag written (RFC 8216 §7): for a clear, an AES-128 and a SAMPLE-AES
// presentation, in each packaging (MPEG-TS multiplexed, MPEG-TS with packed audio, fMP4) and for
// each requested hls_client_manifest_version, every playlist of the presentation (master, media,
// I-frame) carries max(requested, the highest version any tag of its playlists needs): the lowest
// version that allows every tag used, never less than asked for.

import { get, startTestOrigin, TestOrigin } from '../server/server-helpers';

const KID = '00112233445566778899aabbccddeeff';
const KEY = '3a2a1b68dd2bd9b2eeb25e84c4776668';
const FILES = ['video_main_900k.ismv', 'audio_eng_64k.isma', 'text_eng.ismt'];

let origin: TestOrigin;

beforeAll(async () => {
  origin = await startTestOrigin(
    { clear: FILES, aes: FILES, sa: FILES },
    {
      aes: [`--hls.key=:${KEY}`, '--hls.license_server_url=https://keys.example/k'],
      sa: [`--hls.key=${KID}:${KEY}`, '--hls.playout=sample_aes', '--hls.license_server_url=https://keys.example/k'],
    },
  );
}, 60_000);

afterAll(async () => {
  await origin?.server.close();
});

/** RFC 8216 §7: the version one line needs. */
function versionOf(line: string, iframesOnly: boolean): number {
  if (/^#EXT-X-(SESSION-)?KEY:/.test(line)) {
    if (/METHOD=SAMPLE-AES/.test(line) || /KEYFORMAT/.test(line)) return 5;
    if (/,IV=/.test(line)) return 2;
    return 1;
  }
  if (/^#EXTINF:\d+\.\d/.test(line)) return 3;
  if (line === '#EXT-X-I-FRAMES-ONLY' || line.startsWith('#EXT-X-BYTERANGE')) return 4;
  if (line.startsWith('#EXT-X-MAP')) return iframesOnly ? 5 : 6;
  return 1;
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
  test.each(['clear', 'aes', 'sa'])(
    '%s: the lowest version every tag allows, at least the one asked for',
    async (name) => {
      for (const requested of [1, 2, 3, 4, 5, 6, 7]) {
        const query = `?hls_client_manifest_version=${requested}${mode === '' ? '' : `&${mode}`}`;
        const lists = await presentationPlaylists(name, query);
        const needed = Math.max(...lists.map(required));
        const written = lists.map((l) => Number(/#EXT-X-VERSION:(\d+)/.exec(l)![1]));
        expect([name, mode, requested, written]).toEqual([
          name,
          mode,
          requested,
          lists.map(() => Math.max(requested, needed)),
        ]);
        // What the encrypted playlists need whatever is asked: IV 2, SAMPLE-AES 5, EXT-X-MAP 6.
        const floor = mode.includes('fmp4') ? 6 : name === 'sa' ? 5 : name === 'aes' ? 2 : 1;
        expect(Math.min(...written)).toBeGreaterThanOrEqual(floor);
      }
    },
    60_000,
  );
});
