// `origin package --cpix`, end to end: the hand-written CPIX 2.2 and 2.3 fixtures give the fixture
// presentation's SD video, HD video and audio tracks three keys; a real origin on loopback serves
// DASH, and every segment of every track decrypts with ffmpeg using exactly the key its rule
// selects to the clear presentation's packets, while another track's key does not. The MPD gives
// each key its own AdaptationSets and validates. Packaging refuses what cannot work (a track no
// rule matches, two keys for one track, CPIX next to the key options, a document it cannot read)
// with exit 1 naming it, before anything is written; keys never reach a message, a log or a reply.

import * as http from 'node:http';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { boxes, Box } from '../../helpers/box-walk';
import { media, ROOT, runOrigin, tempDir } from '../../helpers/fixtures';
import { validateMpd } from '../manifests/format-support';
import { get, startTestOrigin, TestOrigin } from '../server/server-helpers';
import { dashWritten, Written } from '../server/written-urls';
import { packets } from './ffmpeg-decrypt';

const CPIX22 = path.join(ROOT, 'fixtures', 'cpix', 'three-keys-2.2.xml');
const CPIX23 = path.join(ROOT, 'fixtures', 'cpix', 'three-keys-2.3.xml');
const KEYS = {
  SD: { kid: 'd95627cf-a966-471b-ae89-ace6822b4664', key: 'b965b4fa4448c37c73369bd4c0c94503' },
  HD: { kid: 'dd96304a-2eea-41e3-8192-6c9010625a8b', key: '447c67908a887b0e7765bc7d1de9b01a' },
  AUDIO: { kid: 'baaf5c50-5515-4ef6-98aa-454752aeb3b6', key: '7d3a00433864636bcf0c072bf9a3ef0b' },
};
type KeyName = keyof typeof KEYS;
/** Every key value, hex and Base64: none may appear in a reply, a log or a message. */
const SECRETS = Object.values(KEYS).flatMap((k) => [k.key, Buffer.from(k.key, 'hex').toString('base64')]);

const FILES = [
  'video_baseline_400k.ismv',
  'video_main_900k.ismv',
  'video_high_1600k.ismv',
  'audio_eng_128k.isma',
  'audio_nld_128k.isma',
  'text_eng.ismt',
];
/** Which key each track's rule selects: 512x288 and 640x360 are SD, 1280x720 HD (both fixtures). */
const EXPECTED: Record<string, KeyName> = {
  'video_eng=410594': 'SD',
  'video_eng=925835': 'SD',
  'video_eng=1651699': 'HD',
  'audio_eng=127962': 'AUDIO',
  'audio_nld=127958': 'AUDIO',
};

let origin: TestOrigin;
const dir = tempDir('cpix-drm-');

beforeAll(async () => {
  origin = await startTestOrigin(
    { clear: FILES, cpix22: FILES, cpix23: FILES, single: ['video_high_1600k.ismv', 'audio_eng_128k.isma'] },
    {
      cpix22: [`--cpix=${CPIX22}`],
      cpix23: [`--cpix=${CPIX23}`, '--clearkey.license_server_url=http://127.0.0.1:1/license'],
      single: [`--cpix=${oneKeyDocument()}`],
    },
  );
}, 60_000);

afterAll(async () => {
  await origin?.server.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The 2.2 fixture cut down to its HD key and no rules: one key for every track. */
function oneKeyDocument(): string {
  const file = path.join(dir, 'one-key.xml');
  writeFileSync(
    file,
    readFileSync(CPIX22, 'utf8')
      .replace(/<cpix:ContentKeyUsageRuleList>[\s\S]*<\/cpix:ContentKeyUsageRuleList>/, '')
      .replace(/<cpix:DRMSystemList>[\s\S]*<\/cpix:DRMSystemList>/, '')
      .replace(/<cpix:ContentKey kid="d956[\s\S]*?<\/cpix:ContentKey>/, '')
      .replace(/<cpix:ContentKey kid="baaf[\s\S]*?<\/cpix:ContentKey>/, ''),
  );
  return file;
}

async function fetchOk(url: string): Promise<Buffer> {
  const r = await get(origin.url, url.replace(origin.url, ''));
  expect([url, r.status]).toEqual([url, 200]);
  for (const s of SECRETS) expect(r.body.includes(s)).toBe(false);
  return r.body;
}

async function mpdOf(name: string): Promise<string> {
  return (await fetchOk(`${origin.url}/${name}.ism/.mpd`)).toString('utf8');
}

async function written(name: string): Promise<Written[]> {
  return dashWritten(await mpdOf(name), `${origin.url}/${name}.ism/.mpd`);
}

const child = (list: Box[], type: string): Box => {
  const found = list.find((b) => b.type === type);
  if (found === undefined) throw new Error(`no ${type} in ${list.map((b) => b.type).join(',')}`);
  return found;
};

/** The tenc of an init segment's first sample entry, and the moov's pssh boxes. */
function protectionBoxes(init: Buffer): { scheme: string; kid: string; pssh: Buffer[] } {
  const moov = child(boxes(init), 'moov');
  const stbl = ['trak', 'mdia', 'minf', 'stbl'].reduce((b, t) => child(boxes(b.body), t), moov);
  const entry = boxes(child(boxes(stbl.body), 'stsd').body.subarray(8))[0]!.body;
  const sinf = boxes(entry.subarray(entry.lastIndexOf('sinf', undefined, 'latin1') - 4))[0]!;
  const parts = boxes(sinf.body);
  const tenc = child(boxes(child(parts, 'schi').body), 'tenc').body;
  return {
    scheme: child(parts, 'schm').body.toString('latin1', 4, 8),
    kid: tenc.subarray(8, 24).toString('hex'),
    pssh: boxes(moov.body)
      .filter((b) => b.type === 'pssh')
      .map((b) => Buffer.concat([Buffer.from([0, 0, 0, 0]), Buffer.from('pssh'), b.body])),
  };
}

const hexKid = (name: KeyName): string => KEYS[name].kid.replace(/-/g, '');

describe.each([
  ['cpix22', 'cenc'],
  ['cpix23', 'cbcs'],
])('%s', (name, scheme) => {
  test('the MPD: one AdaptationSet per key, switchable, each with its default_KID; it validates', async () => {
    const mpd = await mpdOf(name);
    expect(validateMpd(mpd)).toEqual({ ok: true, output: expect.any(String) });
    const sets = [...mpd.matchAll(/<AdaptationSet id="(\d+)"[\s\S]*?<\/AdaptationSet>/g)];
    const byKid = new Map<string, { id: string; reps: string[]; text: string }>();
    for (const [text, id] of sets) {
      const kid = /cenc:default_KID="([^"]+)"/.exec(text)?.[1];
      const reps = [...text.matchAll(/<Representation id="([^"]+)"/g)].map((m) => m[1]!);
      if (kid === undefined) {
        expect(reps).toEqual(['textstream_eng=1549']); // text stays clear
        continue;
      }
      expect(text).toContain(`value="${scheme}" cenc:default_KID="${kid}"`);
      for (const r of reps) expect([r, kid]).toEqual([r, KEYS[EXPECTED[r]!].kid]);
      byKid.set(kid, { id: id!, reps, text });
    }
    const sd = byKid.get(KEYS.SD.kid)!;
    const hd = byKid.get(KEYS.HD.kid)!;
    expect(sd.reps).toEqual(['video_eng=410594', 'video_eng=925835']);
    expect(hd.reps).toEqual(['video_eng=1651699']);
    // Audio: both languages under the one audio key, in their own (language) sets.
    expect(sets.filter(([t]) => t.includes(`cenc:default_KID="${KEYS.AUDIO.kid}"`))).toHaveLength(2);
    const switching = (s: { text: string }): string | undefined =>
      /<SupplementalProperty schemeIdUri="urn:mpeg:dash:adaptation-set-switching:2016" value="([^"]+)"/.exec(
        s.text,
      )?.[1];
    expect([switching(sd), switching(hd)]).toEqual([hd.id, sd.id]);
    expect(mpd.match(/adaptation-set-switching/g)).toHaveLength(2); // audio sets differ by language, not key
  });

  test('init segments: the tenc KID of the rule, the Common PSSH with every key', async () => {
    for (const w of (await written(name)).filter((x) => x.kind === 'init' && x.key in EXPECTED)) {
      const got = protectionBoxes(await fetchOk(w.url));
      expect([w.key, got.scheme, got.kid]).toEqual([w.key, scheme, hexKid(EXPECTED[w.key]!)]);
      const common = got.pssh[0]!;
      expect(common.subarray(12, 28).toString('hex')).toBe('1077efecc0b24d02ace33c1e52e2fb4b');
      expect(common.readUInt32BE(28)).toBe(3);
      const kids = [0, 1, 2].map((i) => common.subarray(32 + 16 * i, 48 + 16 * i).toString('hex'));
      expect(kids.sort()).toEqual([hexKid('SD'), hexKid('HD'), hexKid('AUDIO')].sort());
    }
  });

  test("every segment decrypts with exactly its rule's key to the clear packets; another track's key does not", async () => {
    const clearAll = await written('clear');
    const clearMedia = new Map(clearAll.filter((x) => x.kind === 'media').map((w) => [`${w.key}@${w.time}`, w]));
    const clearInits = new Map(clearAll.filter((x) => x.kind === 'init').map((w) => [w.key, w]));
    const mine = await written(name);
    const inits = new Map<string, Buffer>();
    for (const w of mine.filter((x) => x.kind === 'init')) inits.set(w.key, await fetchOk(w.url));
    const checked = new Map<string, number>();
    for (const w of mine.filter((x) => x.kind === 'media' && x.key in EXPECTED)) {
      const keyName = EXPECTED[w.key]!;
      const twin = clearMedia.get(`${w.key}@${w.time}`)!;
      const [segment, clearSegment] = await Promise.all([fetchOk(w.url), fetchOk(twin.url)]);
      expect(segment.equals(clearSegment)).toBe(false);
      const reference = packets(dir, await fetchOk(clearInits.get(w.key)!.url), clearSegment);
      const decrypted = packets(dir, inits.get(w.key)!, segment, KEYS[keyName].key);
      expect([w.url, decrypted.stderr]).toEqual([w.url, '']);
      expect(decrypted.rows.length).toBeGreaterThan(0);
      expect(decrypted.rows).toEqual(reference.rows);
      if (!checked.has(w.key)) {
        for (const other of (Object.keys(KEYS) as KeyName[]).filter((k) => k !== keyName)) {
          const wrong = packets(dir, inits.get(w.key)!, segment, KEYS[other].key);
          expect([w.key, other, wrong.rows.length > 0 && wrong.rows.join() === reference.rows.join()]).toEqual([
            w.key,
            other,
            false,
          ]);
        }
      }
      checked.set(w.key, (checked.get(w.key) ?? 0) + 1);
    }
    expect(Object.fromEntries(checked)).toEqual(Object.fromEntries(Object.keys(EXPECTED).map((k) => [k, 5])));
  }, 180_000);

  test('Smooth (several keys) and HLS are refused, never served clear', async () => {
    for (const [url, why] of [
      [`/${name}.ism/Manifest`, 'Smooth Streaming has one ProtectionHeader'],
      [`/${name}.ism/.m3u8`, 'a CPIX document encrypts DASH and Smooth Streaming in this version, not HLS'],
      [`/${name}.ism/.f4m`, 'HDS'],
    ]) {
      const r = await get(origin.url, url!);
      expect([url, r.status, r.headers['x-origin-error']]).toEqual([url, 403, 'protected-format']);
      expect(r.text).toContain(why);
    }
  });
});

test("2.2: drm_a's PSSH as the document gives it; ClearKey without a license URL", async () => {
  const mpd = await mpdOf('cpix22');
  const doc = readFileSync(CPIX22, 'utf8');
  const given = [...doc.matchAll(/<cpix:PSSH>([^<]+)<\/cpix:PSSH>/g)].map((m) => m[1]!);
  for (const pssh of given) expect(mpd).toContain(`<cenc:pssh>${pssh}</cenc:pssh>`);
  const hd = (await written('cpix22')).find((w) => w.kind === 'init' && EXPECTED[w.key] === 'HD')!;
  const inInit = protectionBoxes(await fetchOk(hd.url)).pssh.map((b) => b.subarray(8).toString('base64'));
  expect(inInit.map((b) => b.slice(0, 10))).toEqual(['AQAAABB37+', 'AAAAAO3vi6']); // common v1, drm_a v0
  expect(mpd).toContain(
    '<ContentProtection schemeIdUri="urn:uuid:e2719d58-a985-b3c9-781a-b030af78d30e" value="ClearKey1.0" />',
  );
  expect(mpd).not.toContain('9a04f079'); // no PlayReady in this document
});

test('2.3: PlayReady from the given PSSH (HD) or written for the key, drm_a written, ClearKey URL', async () => {
  const mpd = await mpdOf('cpix23');
  const setOf = (kid: string): string =>
    [...mpd.matchAll(/<AdaptationSet[\s\S]*?<\/AdaptationSet>/g)].find((m) =>
      m[0].includes(`cenc:default_KID="${kid}"`),
    )![0];
  const proOf = (set: string): string =>
    Buffer.from(/<mspr:pro>([^<]+)<\/mspr:pro>/.exec(set)![1]!, 'base64')
      .subarray(10)
      .toString('utf16le');
  expect(proOf(setOf(KEYS.HD.kid))).toContain('<LA_URL>https://playready.example/rightsmanager.asmx</LA_URL>');
  expect(proOf(setOf(KEYS.SD.kid))).toContain('version="4.3.0.0"'); // cbcs: WRMHEADER 4.3, written here
  expect(proOf(setOf(KEYS.SD.kid))).not.toContain('LA_URL');
  expect(setOf(KEYS.SD.kid)).toContain('schemeIdUri="urn:uuid:EDEF8BA9-79D6-4ACE-A3C8-27DCD51D21ED"');
  expect(mpd).toContain('<dashif:Laurl>http://127.0.0.1:1/license</dashif:Laurl>');
});

test('one key for every track: Smooth is encrypted too, with that key', async () => {
  const manifest = (await fetchOk(`${origin.url}/single.ism/Manifest`)).toString('utf8');
  const header = /<ProtectionHeader SystemID="9a04f079-9840-4286-ab92-e65be0885f95">([^<]+)</.exec(manifest)![1]!;
  const guid = Buffer.from(hexKid('HD'), 'hex');
  const le = Buffer.from([
    guid[3]!,
    guid[2]!,
    guid[1]!,
    guid[0]!,
    guid[5]!,
    guid[4]!,
    guid[7]!,
    guid[6]!,
    ...guid.subarray(8),
  ]);
  expect(Buffer.from(header, 'base64').subarray(10).toString('utf16le')).toContain(
    `<KID>${le.toString('base64')}</KID>`,
  );
  const mpd = await mpdOf('single');
  expect(mpd.match(/cenc:default_KID="([^"]+)"/g)!.every((m) => m.includes(KEYS.HD.kid))).toBe(true);
  expect(mpd).not.toContain('adaptation-set-switching');
});

describe('origin package --cpix', () => {
  const pkg = async (
    args: string[],
    files = ['video_baseline_400k.ismv', 'video_high_1600k.ismv', 'audio_eng_128k.isma'],
  ): Promise<{ code: number; stdout: string; stderr: string; ism: string }> => {
    const ism = path.join(tempDir('cpix-pkg-'), 'p.ism');
    const r = await runOrigin(['package', '-o', ism, ...args, ...files.map(media)]);
    for (const s of SECRETS) expect(`${r.stdout}${r.stderr}`).not.toContain(s);
    return { ...r, ism };
  };
  const variant = (edit: (text: string) => string): string => {
    const file = path.join(dir, `variant-${Math.random().toString(36).slice(2)}.xml`);
    writeFileSync(file, edit(readFileSync(CPIX22, 'utf8')));
    return file;
  };

  test('stores the document and prints which key each track takes', async () => {
    const r = await pkg([`--cpix=${CPIX22}`]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(
      `cpix: ${media('video_baseline_400k.ismv')} track 1 (video_eng, 410594 bit/s): key ${KEYS.SD.kid} (cenc)`,
    );
    expect(r.stderr).toContain(`track 1 (video_eng, 1651699 bit/s): key ${KEYS.HD.kid} (cenc)`);
    const stored = /<meta name="cpix" content="([^"]+)" \/>/.exec(readFileSync(r.ism, 'utf8'))![1]!;
    expect(Buffer.from(stored, 'base64').toString('utf8')).toBe(readFileSync(CPIX22, 'utf8'));
  });

  test('a track no rule matches: exit 1 naming the file and the track, nothing written', async () => {
    const file = variant((t) =>
      t.replace('<cpix:VideoFilter minPixels="589825" />', '<cpix:VideoFilter minPixels="2073600" />'),
    );
    const r = await pkg([`--cpix=${file}`]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `origin package: error: --cpix: no <ContentKeyUsageRule> matches ${media('video_high_1600k.ismv')} track 1 (video_eng, 1651699 bit/s) (video, name video_eng, 1651699 bit/s, 1280x720 = 921600 pixels, 24 fps): every audio and video track needs a key`,
    );
    expect(existsSync(r.ism)).toBe(false);
  });

  test('a track two rules give different keys: exit 1 naming both', async () => {
    const file = variant((t) => t.replace('minPixels="589825"', 'minPixels="100000"'));
    const r = await pkg([`--cpix=${file}`]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `<ContentKeyUsageRule> #1 (kid ${KEYS.SD.kid}) and #2 (kid ${KEYS.HD.kid}) both match ${media('video_baseline_400k.ismv')} track 1`,
    );
  });

  test.each([
    [
      [`--drm_a.key=${hexKid('SD')}:${KEYS.SD.key}`],
      '--cpix: cannot be combined with --drm_a.key: the CPIX document gives the keys',
    ],
    [['--hls.playout=sample_aes'], 'cannot be combined with --hls.playout'],
    [
      ['--mpd.protection_scheme=cenc'],
      '--mpd.protection_scheme=cenc, but the CPIX keys are for cbcs (commonEncryptionScheme)',
    ],
  ])('%j next to --cpix: exit 1', async (extra, message) => {
    const r = await pkg([`--cpix=${extra[0]!.startsWith('--mpd') ? CPIX23 : CPIX22}`, ...extra]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(message);
  });

  test('--cpix with a key server: exit 2, before any request', async () => {
    const r = await pkg([`--cpix=${CPIX22}`, '--key_server_url=http://127.0.0.1:9/never', '--content_id=x']);
    expect([r.code, r.stderr]).toEqual([
      2,
      'origin package: --cpix and a key server cannot be combined: the CPIX document gives the keys\n',
    ]);
  });

  test('a system without a PSSH the origin does not know: exit 1 naming it', async () => {
    const file = variant((t) =>
      t.replace(
        '</cpix:DRMSystemList>',
        `<cpix:DRMSystem systemId="5e629af5-38da-4063-8977-97ffbd9902d4" kid="${KEYS.SD.kid}" /></cpix:DRMSystemList>`,
      ),
    );
    const r = await pkg([`--cpix=${file}`]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `<DRMSystem systemId="5e629af5-38da-4063-8977-97ffbd9902d4" kid="${KEYS.SD.kid}"> has no <PSSH>: this origin signals a system it does not know from its PSSH only`,
    );
  });

  test('a signed document: exit 1, named', async () => {
    const file = variant((t) =>
      t.replace('</cpix:CPIX>', '<ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#"/></cpix:CPIX>'),
    );
    const r = await pkg([`--cpix=${file}`]);
    expect([r.code, r.stderr]).toEqual([
      1,
      `origin package: error: ${file}: signed CPIX documents are not supported (<ds:Signature>): fetch the document over HTTPS instead\n`,
    ]);
  });

  test('a missing file: exit 1', async () => {
    const r = await pkg(['--cpix=/nonexistent/keys.xml']);
    expect([r.code, r.stderr]).toEqual([
      1,
      'origin package: error: --cpix /nonexistent/keys.xml: cannot read the CPIX document: no such file\n',
    ]);
  });

  test('a dry run masks the document; --show-keys prints it', async () => {
    const masked = await runOrigin([
      'package',
      '-q',
      '-o',
      'stdout:',
      `--cpix=${CPIX22}`,
      media('audio_eng_128k.isma'),
    ]);
    expect(masked.stdout).toContain('<meta name="cpix" content="****************" />');
    const shown = await runOrigin([
      'package',
      '-q',
      '-o',
      'stdout:',
      '--show-keys',
      `--cpix=${CPIX22}`,
      media('audio_eng_128k.isma'),
    ]);
    expect(shown.stdout).toContain(`<meta name="cpix" content="${readFileSync(CPIX22).toString('base64')}" />`);
  });

  describe('from an http URL', () => {
    let server: http.Server;
    let base = '';
    beforeAll(async () => {
      server = http.createServer((req, res) => {
        if (req.url?.startsWith('/keys/three.xml')) {
          res.writeHead(200, { 'content-type': 'application/xml' }).end(readFileSync(CPIX22));
        } else res.writeHead(404).end('no');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    test('fetched when packaging and stored, as a file is', async () => {
      const r = await pkg([`--cpix=${base}/keys/three.xml?token=abc`]);
      expect(r.code).toBe(0);
      expect(readFileSync(r.ism, 'utf8')).toContain(
        `<meta name="cpix" content="${readFileSync(CPIX22).toString('base64')}" />`,
      );
    });

    test('an HTTP error: exit 1 naming the URL without its query', async () => {
      const r = await pkg([`--cpix=${base}/keys/missing.xml?token=secret-token`]);
      expect([r.code, r.stderr]).toEqual([
        1,
        `origin package: error: --cpix ${base}/keys/missing.xml: cannot read the CPIX document: HTTP 404\n`,
      ]);
    });

    test('nothing listening: exit 1', async () => {
      const closed = http.createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const port = (closed.address() as { port: number }).port;
      await new Promise<void>((resolve) => closed.close(() => resolve()));
      const r = await pkg([`--cpix=http://127.0.0.1:${port}/keys.xml`]);
      expect([r.code, r.stderr]).toEqual([
        1,
        `origin package: error: --cpix http://127.0.0.1:${port}/keys.xml: cannot read the CPIX document: ECONNREFUSED\n`,
      ]);
    });
  });
});

test('a hand-edited server manifest that mixes cpix with a key option: 500 naming the options, no key', async () => {
  const ism = path.join(origin.root, 'mixed.ism');
  const text = readFileSync(path.join(origin.root, 'cpix22.ism'), 'utf8').replace(
    '<head>',
    `<head>\n    <meta name="drm_a_key" content="${hexKid('SD')}:${KEYS.SD.key}" />`,
  );
  writeFileSync(ism, text);
  const r = await get(origin.url, '/mixed.ism/.mpd');
  expect([r.status, r.headers['x-origin-error']]).toEqual([500, 'corrupt-media']);
  for (const s of SECRETS) expect(r.text).not.toContain(s);
  expect(origin.logs.join('\n')).toContain('--cpix cannot be combined with --drm_a.key');
});

test('keys never reach the logs', () => {
  const logs = origin.logs.join('\n');
  expect(logs).toContain('/cpix22.ism/'); // the requests above are there
  for (const s of SECRETS) expect(logs).not.toContain(s);
});
