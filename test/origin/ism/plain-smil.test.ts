// The plain-SMIL reader (origin/ism/server-manifest.ts) against fast-xml-parser: on every input,
// real or broken, parseServerManifest must give the same manifest or the same error with the
// fast reader as without it. The reader may decline a document (the parser then reads it), but
// must never accept one the validator rejects, nor read one differently.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parseServerManifest, plainSmil } from '../../../origin/ism/server-manifest';
import { media, runOrigin, tempDir } from '../../helpers/fixtures';
import { PLAYABLE } from '../../helpers/presentations';

const ROOT = path.join(__dirname, '..', '..', '..');

function outcome(text: string, fast: boolean): unknown {
  try {
    return { ok: parseServerManifest(text, 'x.ism', fast) };
  } catch (e) {
    return { error: String((e as Error).message), kind: (e as { kind?: string }).kind };
  }
}

function realManifests(): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const dir of [
    'build/demo',
    'bench/.cache/http',
    'bench/.cache/http/long',
    'bench/.cache/edge',
    'fixtures/media',
  ]) {
    const d = path.join(ROOT, dir);
    if (!existsSync(d)) continue;
    for (const f of readdirSync(d))
      if (/\.isml?$/.test(f)) out.push([`${dir}/${f}`, readFileSync(path.join(d, f), 'utf8')]);
  }
  return out;
}

const BASE = `<?xml version="1.0" encoding="utf-8"?>
<!-- Created with Streaming Origin (version=0.1.0) -->
<smil xmlns="http://www.w3.org/2001/SMIL20/Language">
  <head>
    <meta name="mpd_segment_template" content="number" />
    <paramGroup id="g1">
      <meta name="a" content="b" />
    </paramGroup>
  </head>
  <body>
    <switch>
      <video src="video_640x360_400k.ismv" systemBitrate="400000" systemLanguage="und" extra="x">
        <param name="trackID" value="1" valueType="data" />
        <param name="trackName" value="video_und" valueType="data" />
        <param name="TimeScale" value="10000000" valuetype="data" />
      </video>
      <audio src='audio_aac_64k.isma' systemBitrate="64000">
        <!-- a comment inside -->
        <param name="trackID" value="1" />
      </audio>
    </switch>
  </body>
</smil>
`;

// Each turns BASE into a document the fast reader must decline or read exactly as the parser.
const VARIANTS: Array<[string, (s: string) => string]> = [
  ['as is', (s) => s],
  ['no declaration', (s) => s.replace(/^<\?xml[^>]*>\n/, '')],
  ['whitespace before the declaration', (s) => `  ${s}`],
  ['byte order mark', (s) => `\ufeff${s}`],
  ['CRLF', (s) => s.replace(/\n/g, '\r\n')],
  ['tabs', (s) => s.replace(/ {2}/g, '\t')],
  ['entity in a value', (s) => s.replace('content="b"', 'content="b&amp;c"')],
  ['character reference', (s) => s.replace('content="b"', 'content="b&#10;c"')],
  ['unknown entity', (s) => s.replace('content="b"', 'content="b&nope;"')],
  ['bare ampersand', (s) => s.replace('content="b"', 'content="b&c"')],
  ['padded value', (s) => s.replace('content="b"', 'content=" b "')],
  ['newline in a value', (s) => s.replace('content="b"', 'content="b\nc"')],
  ['tab in a value', (s) => s.replace('content="b"', 'content="b\tc"')],
  ['gt in a value', (s) => s.replace('content="b"', 'content="b>c"')],
  ['lt in a value', (s) => s.replace('content="b"', 'content="b<c"')],
  ['non-breaking space around a value', (s) => s.replace('content="b"', 'content="\u00a0b"')],
  ['unicode in a value', (s) => s.replace('content="b"', 'content="bé€"')],
  ['duplicate attribute', (s) => s.replace('extra="x"', 'extra="x" extra="y"')],
  ['xmlns on a track', (s) => s.replace('extra="x"', 'xmlns="urn:x" extra="x"')],
  ['prefixed attribute', (s) => s.replace('extra="x"', 'x:extra="x"')],
  ['xmlns prefix declaration', (s) => s.replace('extra="x"', 'xmlns:x="urn:x" x:extra="x"')],
  ['prefixed element', (s) => s.replace(/<(\/?)switch/g, '<$1s:switch')],
  ['spaces around =', (s) => s.replace('extra="x"', 'extra = "x"')],
  ['no space between attributes', (s) => s.replace('systemLanguage="und" extra="x"', 'systemLanguage="und"extra="x"')],
  ['unquoted attribute', (s) => s.replace('extra="x"', 'extra=x')],
  ['boolean attribute', (s) => s.replace('extra="x"', 'extra')],
  ['mismatched close tag', (s) => s.replace('</audio>', '</video>')],
  ['unclosed element', (s) => s.replace('</switch>', '')],
  ['stray close tag', (s) => s.replace('</switch>', '</switch></switch>')],
  ['space in close tag', (s) => s.replace('</switch>', '</switch >')],
  ['space after <', (s) => s.replace('<switch>', '< switch>')],
  ['text content', (s) => s.replace('<switch>', '<switch>hello')],
  ['CDATA', (s) => s.replace('<switch>', '<switch><![CDATA[x]]>')],
  ['DOCTYPE', (s) => s.replace('<smil', '<!DOCTYPE smil>\n<smil')],
  [
    'DOCTYPE with an entity',
    (s) => s.replace('<smil', '<!DOCTYPE smil [<!ENTITY e "v">]>\n<smil').replace('content="b"', 'content="&e;"'),
  ],
  ['processing instruction', (s) => s.replace('<smil', '<?pi x?>\n<smil')],
  ['second declaration', (s) => s.replace('<smil', '<?xml version="1.0"?>\n<smil')],
  ['declaration version 1.1', (s) => s.replace('version="1.0"', 'version="1.1"')],
  ['comment after the root', (s) => `${s}<!-- after -->\n`],
  ['text after the root', (s) => `${s}junk`],
  ['second root', (s) => `${s}<smil/>`],
  ['comment with --', (s) => s.replace('a comment inside', 'a -- comment')],
  ['comment ending in -', (s) => s.replace('a comment inside -->', 'a comment inside --->')],
  ['unclosed comment', (s) => s.replace('a comment inside -->', 'a comment inside')],
  ['self-closed root', () => '<smil xmlns="x"/>'],
  ['no smil root', (s) => s.replace(/<(\/?)smil/g, '<$1smol')],
  ['empty', () => ''],
  ['only a declaration', () => '<?xml version="1.0"?>'],
  ['__proto__ attribute', (s) => s.replace('extra="x"', '__proto__="x"')],
  ['constructor attribute', (s) => s.replace('extra="x"', 'constructor="x"')],
  ['toString element', (s) => s.replace('<switch>', '<switch><toString/>')],
  ['bare track in body', (s) => s.replace(/<\/?switch>/g, '')],
  ['track without src', (s) => s.replace('src="video_640x360_400k.ismv" ', '')],
  ['bad bitrate', (s) => s.replace('systemBitrate="400000"', 'systemBitrate="4e5"')],
  ['meta without name', (s) => s.replace('name="a" ', '')],
  ['paramGroup without id', (s) => s.replace(' id="g1"', '')],
  ['param without name', (s) => s.replace('name="trackID" value="1" />', 'value="1" />')],
  ['uppercase element', (s) => s.replace(/<(\/?)video/g, '<$1Video')],
  ['dots and dashes in names', (s) => s.replace('extra="x"', 'a.b-c_d="x"')],
  ['empty value', (s) => s.replace('extra="x"', 'extra=""')],
  ['single quote inside double', (s) => s.replace('extra="x"', `extra="it's"`)],
  ['double quote inside single', (s) => s.replace(`src='audio_aac_64k.isma'`, `src='a"b.isma'`)],
];

/** Server manifests as `origin package` writes them from the fixture media, with and without options. */
async function packaged(): Promise<Array<[string, string]>> {
  const dir = tempDir('plain-smil-');
  const all = readdirSync(path.join(ROOT, 'fixtures', 'media')).filter((f) => /\.ism[vat]$/.test(f));
  const cases: Array<[string, string[]]> = [
    ['playable', PLAYABLE.map(media)],
    ['every fixture file', all.map(media)],
    ['with options', ['--hls.client_manifest_version', '4', '--hls.no_audio_only', ...PLAYABLE.map(media)]],
  ];
  const out: Array<[string, string]> = [];
  for (const [name, args] of cases) {
    const ism = path.join(dir, `${name.replace(/\W+/g, '-')}.ism`);
    const r = await runOrigin(['package', '-q', '-o', ism, ...args]);
    if (r.code !== 0) throw new Error(`packaging ${name} failed: ${r.stderr}`);
    out.push([`packaged: ${name}`, readFileSync(ism, 'utf8')]);
  }
  return out;
}

describe('plain-SMIL reader', () => {
  test('reads what origin package writes (and any .ism of the demo or the bench present) itself, as the parser does', async () => {
    const written = await packaged();
    expect(written).toHaveLength(3);
    for (const [name, text] of [...written, ...realManifests()]) {
      expect([name, plainSmil(text) !== undefined]).toEqual([name, true]);
      expect([name, outcome(text, true)]).toEqual([name, outcome(text, false)]);
    }
  });

  it.each(VARIANTS)('%s: the same manifest or error either way', (_name, change) => {
    const text = change(BASE);
    expect(outcome(text, true)).toEqual(outcome(text, false));
  });

  it('reads the usual layout itself', () => {
    expect(plainSmil(BASE)).toBeDefined();
  });

  it('agrees with the parser on 3000 random corruptions', () => {
    // Deterministic: a small LCG, so a failure is reproducible.
    let seed = 12345;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const alphabet = [
      '<',
      '>',
      '/',
      '"',
      "'",
      '=',
      ' ',
      '\n',
      '&',
      ';',
      '!',
      '-',
      '?',
      'a',
      ':',
      'x',
      '#',
      '\t',
      ']',
      '[',
    ];
    let fastTaken = 0;
    for (let i = 0; i < 3000; i++) {
      let s = BASE;
      for (let k = 1 + rand(3); k > 0; k--) {
        const at = rand(s.length);
        const op = rand(3);
        if (op === 0) s = s.slice(0, at) + s.slice(at + 1 + rand(4));
        else if (op === 1) s = s.slice(0, at) + alphabet[rand(alphabet.length)]! + s.slice(at);
        else s = s.slice(0, at) + alphabet[rand(alphabet.length)]! + s.slice(at + 1);
      }
      if (plainSmil(s) !== undefined) fastTaken++;
      const fast = outcome(s, true);
      const slow = outcome(s, false);
      if (JSON.stringify(fast) !== JSON.stringify(slow)) expect({ text: s, fast }).toEqual({ text: s, fast: slow });
    }
    // Many corruptions stay plain SMIL (a changed value, a removed space): the comparison covers the reader.
    expect(fastTaken).toBeGreaterThan(300);
  });
});
