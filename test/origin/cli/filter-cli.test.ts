// The filter language from the command line: `origin filter '<expr>' <x.ism>` (table, --json,
// errors with a caret under the position, exit codes) and the packager's --track_filter (applied
// when writing, dropped tracks reported, stored in the head) and --variant_set (checked when
// stored, stored as given). Until HTTP playout exists this is where the origin-side behaviour is
// tested end to end.

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { parseServerManifest } from '../../../origin/ism/server-manifest';
import { FIXTURE_FILES, listDir, media, MEDIA, ROOT, runOrigin, tempDir } from '../../helpers/fixtures';
import { FixturePresentation, LABELS, packageFixturePresentation } from '../../assembly/filter/fixture-presentation';

let fixture: FixturePresentation;
beforeAll(async () => {
  fixture = await packageFixturePresentation();
});

/** The rows of the table, one per track: [#, keep|drop, trackName, type, FourCC, bitrate, language, properties]. */
function tableRows(stdout: string): string[][] {
  const lines = stdout.split('\n');
  const rows = lines.slice(2, lines.indexOf(''));
  return rows.map((r) => {
    const [n, keep, name, type, fourcc, bitrate, lang, ...rest] = r.trim().split(/ {2,}/);
    return [n!, keep!, name!, type!, fourcc!, bitrate!, lang!, rest.join('  ')];
  });
}

/** `origin package -o <out> <inputs and options>`. */
const packageTo = (out: string, ...args: string[]): ReturnType<typeof runOrigin> =>
  runOrigin(['package', '-o', out, ...args]);
/** `origin package -q -o <out> <inputs and options>`: no report on stderr. */
const packageQuiet = (out: string, ...args: string[]): ReturnType<typeof runOrigin> =>
  runOrigin(['package', '-q', '-o', out, ...args]);

describe('origin filter', () => {
  test('prints every track with its properties and keep/drop, then the canonical form and the count', async () => {
    const r = await runOrigin(['filter', 'type=="video" && systemBitrate < 800000', fixture.ism]);
    expect([r.code, r.stderr]).toEqual([0, '']);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(/^ # {2}filter {2}trackName +type +FourCC +systemBitrate +systemLanguage +properties$/);
    expect(lines[1]).toMatch(/^-- +------ +-+ +-+/);
    const rows = tableRows(r.stdout);
    expect(rows.map((row) => row[1])).toEqual([
      'keep',
      'drop',
      'drop',
      'keep',
      'keep',
      'drop',
      'drop',
      'drop',
      'drop',
      'drop',
      'drop',
      'drop',
      'drop',
      'keep',
      'drop',
    ]);
    expect(rows[0]).toEqual([
      '1',
      'keep',
      'video_eng',
      'video',
      'AVC1',
      '410594',
      'eng',
      'avc_profile=66 avc_level=30 MaxWidth=512 MaxHeight=288 DisplayWidth=512 DisplayHeight=288 FrameRate=24 ScanType=progressive trackID=1 TimeScale=10000000',
    ]);
    expect(rows[4]![7]).toContain('FrameRate=30000/1001');
    expect(rows[9]).toEqual([
      '10',
      'drop',
      'audio_eng_ac3',
      'audio',
      'ac-3',
      '384000',
      'eng',
      'Channels=6 SamplingRate=48000 BitsPerSample=16 AudioTag=8192 trackID=1 TimeScale=10000000',
    ]);
    expect(rows[12]).toEqual([
      '13',
      'drop',
      'textstream_nld',
      'textstream',
      'TTML',
      '1598',
      'nld',
      'Roles=subtitle trackID=1 TimeScale=1000',
    ]);
    expect(rows[14]![7]).toContain('trackID=2');
    // columns are aligned: the right-aligned bitrate column ends at the same place on every row
    const ends = lines.slice(2, 17).map((l, i) => l.indexOf(rows[i]![5]!) + rows[i]![5]!.length);
    expect(new Set(ends).size).toBe(1);
    expect(r.stdout.endsWith('\ncanonical: type=="video"&&systemBitrate<800000\n4 of 15 tracks kept\n')).toBe(true);
  });

  test('--json gives the same as data', async () => {
    const r = await runOrigin(['filter', '--json', 'FourCC=="AACL"||FrameRate==30000/1001', fixture.ism]);
    expect(r.code).toBe(0);
    const json = JSON.parse(r.stdout) as {
      expression: string;
      canonical: string;
      kept: number;
      total: number;
      tracks: Array<Record<string, unknown>>;
    };
    expect([json.expression, json.canonical, json.kept, json.total]).toEqual([
      'FourCC=="AACL"||FrameRate==30000/1001',
      'FourCC=="AACL"||FrameRate==30000/1001',
      5,
      15,
    ]);
    expect(json.tracks.filter((t) => t.keep).map((t) => LABELS[t.index as number])).toEqual([
      'video_2997_600k',
      'audio_eng_64k',
      'audio_eng_128k',
      'audio_nld_128k',
      'muxed_av:audio',
    ]);
    expect(json.tracks[4]).toEqual({
      index: 4,
      keep: true,
      trackName: 'video_eng',
      type: 'video',
      FourCC: 'AVC1',
      systemBitrate: 618174,
      systemLanguage: 'eng',
      avc_profile: 77,
      avc_level: 30,
      MaxWidth: 640,
      MaxHeight: 360,
      DisplayWidth: 640,
      DisplayHeight: 360,
      FrameRate: '30000/1001',
      ScanType: 'progressive',
      trackID: 1,
      TimeScale: 10000000,
    });
    expect(json.tracks[11]).toMatchObject({ type: 'textstream', Roles: 'subtitle', keep: false });
    expect(json.tracks[11]).not.toHaveProperty('Channels');
  });

  test('a bad expression: exit 2, the message, the expression and a caret under the position', async () => {
    const r = await runOrigin(['filter', 'systemBitrate>1 && type="video"', fixture.ism]);
    expect([r.code, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toBe(
      'origin filter: unexpected "=" at 23: did you mean "=="?\n    systemBitrate>1 && type="video"\n                           ^\n',
    );
  });

  test('the caret stays in its column with tabs, newlines and non-BMP characters before it', async () => {
    const r = await runOrigin(['filter', 'trackName=="😀"\t&&\nChannels=="2"', fixture.ism]);
    expect(r.code).toBe(2);
    const [message, shown, caret] = r.stderr.split('\n');
    expect(message).toBe(
      'origin filter: cannot compare a string with a number at 27: Channels is a number: write the value without quotes',
    );
    expect(shown).toBe('    trackName=="😀" && Channels=="2"');
    expect([...caret!].length).toBe([...'    trackName=="😀" && Channels'].length + 1); // under the first "="
    expect(caret!.trimStart()).toBe('^');
  });

  test('a long expression is shown as a window around the position', async () => {
    const expr = 'type=="video"||'.repeat(20) + 'type=' + '||type=="audio"'.repeat(20);
    const r = await runOrigin(['filter', expr, fixture.ism]);
    expect(r.code).toBe(2);
    const [message, shown, caret] = r.stderr.split('\n');
    expect(message).toBe(`origin filter: unexpected "=" at ${20 * 15 + 4}: did you mean "=="?`);
    expect(shown).toMatch(/^ {4}\.\.\..{80}\.\.\.$/); // 60 characters before the position, 20 from it
    expect(shown!.slice(caret!.length - 1, caret!.length + 1)).toBe('=|');
  });

  test('with --json a bad expression is also described on stdout', async () => {
    const r = await runOrigin(['filter', '--json', 'type==', fixture.ism]);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toEqual({
      expression: 'type==',
      error: {
        message: 'unexpected end of filter',
        offset: 6,
        hint: 'expected a value, a property, "(" or "!"',
        text: 'unexpected end of filter at 6: expected a value, a property, "(" or "!"',
      },
    });
    expect(r.stderr).toMatch(/^origin filter: unexpected end of filter at 6/);
  });

  test('the expression is checked before the file is read', async () => {
    const r = await runOrigin(['filter', 'type=', path.join(fixture.dir, 'missing.ism')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unexpected "=" at 4/);
  });

  test('a valid expression that keeps nothing: the table, then exit 1 (a request would get 400)', async () => {
    const r = await runOrigin(['filter', 'FourCC=="ac-4"', fixture.ism]);
    expect(r.code).toBe(1);
    expect(tableRows(r.stdout).every((row) => row[1] === 'drop')).toBe(true);
    expect(r.stdout).toContain('\n0 of 15 tracks kept\n');
    expect(r.stderr).toBe(
      `origin filter: FourCC=="ac-4" keeps none of the 15 tracks of ${fixture.ism}: a request with this filter gets 400\n`,
    );
  });

  test('unreadable or invalid server manifests are exit 1, naming the file', async () => {
    const missing = await runOrigin(['filter', 'true', path.join(fixture.dir, 'missing.ism')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/origin filter: error: .*missing\.ism: cannot read the server manifest \(ENOENT\)/);
    const garbage = path.join(fixture.dir, 'garbage.ism');
    writeFileSync(garbage, 'not xml at all <');
    const bad = await runOrigin(['filter', 'true', garbage]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/origin filter: error: .*garbage\.ism/);
  });

  test('command line errors are exit 2; --help is exit 0', async () => {
    expect((await runOrigin(['filter', 'true'])).code).toBe(2);
    expect((await runOrigin(['filter'])).stderr).toMatch(
      /expected an expression and a server manifest, got 0 arguments/,
    );
    expect((await runOrigin(['filter', 'true', fixture.ism, 'extra'])).code).toBe(2);
    const unknown = await runOrigin(['filter', '--csv', 'true', fixture.ism]);
    expect([unknown.code, unknown.stderr]).toEqual([
      2,
      'origin filter: unknown option --csv (see origin filter --help)\n',
    ]);
    const help = await runOrigin(['filter', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: origin filter '<expression>' <x\.ism> \[--json\]/);
    expect((await runOrigin(['--help'])).stdout).toMatch(/\n {2}filter {4}show which tracks/);
  });

  test("the server manifest's own track_filter is mentioned with what both keep together", async () => {
    const dir = tempDir();
    const ism = path.join(dir, 'audio.ism');
    const p = await packageQuiet(
      ism,
      media('audio_eng_64k.isma'),
      media('audio_ac3_384k.isma'),
      media('text_eng.ismt'),
      '--track_filter=type=="audio"',
    );
    expect(p.code).toBe(0);
    const r = await runOrigin(['filter', 'Channels==6||type=="textstream"', ism]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      '\n1 of 2 tracks kept\nthe server manifest\'s track_filter type=="audio" also applies to requests: with it, 1 of 2 tracks kept\n',
    );
  });
});

describe('origin package --track_filter', () => {
  const inputs = FIXTURE_FILES.map(media);

  test('writes only the kept tracks, reports the dropped ones, stores the expression as given', async () => {
    const dir = tempDir();
    const out = path.join(dir, 'audio.ism');
    const expression = 'type == "audio" && FourCC != "ec-3"';
    const r = await packageTo(out, ...inputs, `--track_filter=${expression}`);
    expect(r.code).toBe(0);
    const m = parseServerManifest(readFileSync(out, 'utf8'), out);
    expect(m.tracks.map((t) => path.basename(t.src))).toEqual([
      'audio_eng_64k.isma',
      'audio_eng_128k.isma',
      'audio_nld_128k.isma',
      'audio_ac3_384k.isma',
    ]);
    expect(m.meta).toEqual([{ name: 'track_filter', content: expression }]);
    expect(r.stderr).toContain(`track_filter ${expression}: keeps 4 of 13 tracks, drops:\n`);
    expect(r.stderr).toContain(`  ${media('video_baseline_400k.ismv')} track 1: video_eng video AVC1 410594 bit/s\n`);
    expect(r.stderr).toContain(`  ${media('audio_eac3_256k.isma')} track 1: audio_eng_ec3 audio ec-3 256000 bit/s\n`);
    expect(r.stderr).toContain(`  ${media('text_nld.ismt')} track 1: textstream_nld textstream TTML 1598 bit/s\n`);
    expect(r.stderr.match(/^ {2}\S+ track 1: /gm)).toHaveLength(9);
    expect(r.stderr).toMatch(/wrote .*audio\.ism: 4 tracks\n$/);
    // the written manifest is what the expression keeps: origin filter agrees
    expect((await runOrigin(['filter', expression, out])).stdout).toContain('\n4 of 4 tracks kept\n');
  });

  test('-q silences the report; a filter that keeps everything drops nothing', async () => {
    const r = await packageQuiet('stdout:', media('audio_eng_64k.isma'), '--track_filter=type!="textstream"');
    expect([r.code, r.stderr]).toEqual([0, '']);
    const all = await packageTo('stdout:', media('audio_eng_64k.isma'), media('text_eng.ismt'), '--track_filter=true');
    expect(all.stderr).toContain('track_filter true: keeps 2 of 2 tracks\n');
  });

  const names = (stdout: string): string[] =>
    parseServerManifest(stdout).tracks.map((t) => t.params.find((p) => p.name === 'trackName')!.value);

  test('the kept tracks are named as if only their inputs were given', async () => {
    // over all inputs the AC-3 (first) would be audio_eng and the AAC tracks audio_eng_aacl
    const order = ['audio_ac3_384k.isma', 'audio_eng_64k.isma', 'audio_eng_128k.isma', 'video_baseline_400k.ismv'].map(
      media,
    );
    const r = await packageTo('stdout:', ...order, '--track_filter=FourCC!="ac-3"');
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`  ${media('audio_ac3_384k.isma')} track 1: audio_eng audio ac-3 384000 bit/s\n`);
    expect(names(r.stdout)).toEqual(['audio_eng', 'audio_eng', 'video_eng']);
  });

  test('...unless the expression selects by a name that would change: then the names over all inputs stay', async () => {
    const r = await packageTo(
      'stdout:',
      ...inputs,
      '--track_filter=trackName=="audio_eng_ac3"||trackName=="textstream_nld"',
    );
    expect(r.code).toBe(0);
    expect(names(r.stdout)).toEqual(['audio_eng_ac3', 'textstream_nld']);
    expect(r.stderr).toContain('  track names kept as over all inputs: the expression selects by them\n');
    // and a name that does not change is simply kept
    const plain = await packageTo('stdout:', ...inputs, '--track_filter=trackName=="audio_nld"');
    expect(names(plain.stdout)).toEqual(['audio_nld']);
    expect(plain.stderr).not.toContain('track names kept');
  });

  // Both recipes come from docs/guide/packaging.md, so the documentation and the test cannot drift
  // apart.
  const readme = readFileSync(path.join(ROOT, 'docs/guide/packaging.md'), 'utf8');
  const block = (marker: string): string[] =>
    (new RegExp(`<!-- ${marker} -->\\s*\`\`\`sh\\n([\\s\\S]*?)\`\`\``).exec(readme)?.[1] ?? '')
      .split('\n')
      .filter((l) => l.startsWith('origin package '));
  const listed = block('device-classes');
  const filtered = block('filter-device-classes');
  const files = listDir(MEDIA);
  /** The shell's expansion of the guide's globs in fixtures/media (sorted, as bash does). */
  const expand = (word: string): string[] =>
    word.includes('*')
      ? files.filter((f) => new RegExp(`^${word.replace(/\./g, '\\.').replace(/\*/g, '.*')}$`).test(f))
      : [word];

  test('the guide has the four device classes in both forms', () => {
    expect(listed).toHaveLength(4);
    expect(filtered).toHaveLength(4);
  });

  test.each(['phones', 'tablets', 'consoles', 'settop'])(
    "the guide's %s class as one --track_filter over all files equals the listed recipe",
    async (name) => {
      const byList = listed
        .find((l) => l.startsWith(`origin package -o ${name}.ism `))!
        .split(' ')
        .slice(4);
      const m = /^origin package -o \S+ (.*) --track_filter='([^']*)'$/.exec(
        filtered.find((l) => l.startsWith(`origin package -o ${name}.ism `))!,
      )!;
      const globbed = m[1]!.split(' ').flatMap(expand);
      expect(globbed).toHaveLength(13); // the globs do not pick up muxed_av.ismv
      const identity = (stdout: string): string[] =>
        parseServerManifest(stdout)
          .tracks.map(
            (t) => `${path.basename(t.src)} ${t.params.find((p) => p.name === 'trackName')!.value}=${t.systemBitrate}`,
          )
          .sort();
      const a = await packageQuiet('stdout:', ...byList.map(media));
      const b = await packageQuiet('stdout:', ...globbed.map(media), `--track_filter=${m[2]!}`);
      expect([a.code, b.code]).toEqual([0, 0]);
      // the same tracks under the same names
      expect(identity(b.stdout)).toEqual(identity(a.stdout));
    },
  );

  test('a filter that keeps nothing: exit 1 naming it, no output file', async () => {
    const dir = tempDir();
    const r = await packageTo(
      path.join(dir, 'x.ism'),
      media('audio_eng_64k.isma'),
      media('text_eng.ismt'),
      '--track_filter=type=="video"',
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/\norigin package: error: track_filter: type=="video" keeps none of the 2 tracks\n$/);
    expect(listDir(dir)).toEqual([]);
  });

  test('a syntax error: exit 2 with the position and a caret, before any input is read', async () => {
    const dir = tempDir();
    const r = await packageTo(
      path.join(dir, 'x.ism'),
      media('audio_eng_64k.isma'),
      '--track_filter=type=="audio" || Channels=2',
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'origin package: --track_filter: unexpected "=" at 25: did you mean "=="?\n    type=="audio" || Channels=2\n                             ^\n',
    );
    expect(listDir(dir)).toEqual([]);
    const empty = await packageTo(path.join(dir, 'x.ism'), media('audio_eng_64k.isma'), '--track_filter=');
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/^origin package: --track_filter: unexpected end of filter at 0/);
  });

  test('an expression that would keep fewer tracks of the written manifest than it selected is refused', async () => {
    // count() sees the audio inputs when packaging, but the written manifest has only video
    const dir = tempDir();
    const out = path.join(dir, 'x.ism');
    const r = await packageTo(
      out,
      media('video_baseline_400k.ismv'),
      media('audio_eng_64k.isma'),
      '--track_filter=type=="video"&&count(type=="audio")>0',
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      'origin package: error: track_filter: type=="video"&&count(type=="audio")>0 keeps 1 of the 2 input tracks, but only 0 of those 1 when applied to the written server manifest',
    );
    expect(existsSync(out)).toBe(false);
    // a count() that holds on the written tracks too is fine: "AC-3 when present, else AAC"
    const ok = await packageQuiet(
      'stdout:',
      media('audio_eng_64k.isma'),
      media('audio_ac3_384k.isma'),
      '--track_filter=FourCC=="ac-3"||count(FourCC=="ac-3")==0',
    );
    expect(ok.code).toBe(0);
    expect(parseServerManifest(ok.stdout).tracks.map((t) => path.basename(t.src))).toEqual(['audio_ac3_384k.isma']);
  });
});

describe('origin package --variant_set', () => {
  test('expressions are checked and stored as given, in order', async () => {
    const r = await packageQuiet(
      'stdout:',
      media('audio_eng_64k.isma'),
      '--variant_set=SampleRate == 48000',
      '--variant_set=type!="video"||systemBitrate<800000',
    );
    expect(r.code).toBe(0);
    expect(parseServerManifest(r.stdout).meta).toEqual([
      { name: 'variant_set', content: 'SampleRate == 48000' },
      { name: 'variant_set', content: 'type!="video"||systemBitrate<800000' },
    ]);
  });

  test('a variant set is not applied: one that keeps nothing here is stored all the same', async () => {
    const r = await packageQuiet('stdout:', media('audio_eng_64k.isma'), '--variant_set=type=="video"');
    expect(r.code).toBe(0);
    expect(parseServerManifest(r.stdout).tracks).toHaveLength(1);
  });

  test('a syntax error in any of them: exit 2 with the position', async () => {
    const r = await packageTo(
      'stdout:',
      media('audio_eng_64k.isma'),
      '--variant_set=true',
      '--variant_set',
      'systemBitrate<"800000"',
    );
    expect([r.code, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toBe(
      'origin package: --variant_set: cannot compare a string with a number at 13: systemBitrate is a number: write the value without quotes\n    systemBitrate<"800000"\n                 ^\n',
    );
  });
});
