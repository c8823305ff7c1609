// `origin package` end to end: real fixture files, real output files, the real CLI entry point
// (in-process for speed, and once as a spawned process through bin/origin.js).

import { execFileSync, spawnSync } from 'node:child_process';
import { startServer } from '../../../origin/server/server';
import { plainServerOptions } from '../../helpers/server-options';
import { get } from '../server/server-helpers';
import { copyFileSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { DEMO_CLASSES } from '../../../origin/cli/demo-command';
import { ismTrackToProperties } from '../../../origin/ism/ism-tracks';
import { parseServerManifest } from '../../../origin/ism/server-manifest';
import { readMediaFile } from '../../../origin/media/media-file';
import { FileSource } from '../../../origin/io/source';
import { FIXTURE_FILES, listDir, media, MEDIA, ROOT, runOrigin, tempDir } from '../../helpers/fixtures';
import { comparable, EXPECTED } from '../../helpers/expected';

describe('origin package -o all.ism <every fixture file>', () => {
  const dir = tempDir();
  const out = path.join(dir, 'all.ism');
  let run: { code: number; stdout: string; stderr: string };

  beforeAll(async () => {
    run = await runOrigin(
      ['package', '-o', out, ...FIXTURE_FILES.map(media), 'muxed_av.ismv'].map((f) =>
        f === 'muxed_av.ismv' ? media(f) : f,
      ),
    );
  });

  test('succeeds and reports progress per input on stderr', () => {
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('');
    for (const f of FIXTURE_FILES) expect(run.stderr).toContain(`${media(f)}: `);
    expect(run.stderr).toMatch(/wrote .*all\.ism: 15 tracks/);
    expect(listDir(dir)).toEqual(['all.ism']); // no temporary file left behind
  });

  test('lists every fixture track, keyed by (src, trackID), with reference-style names', () => {
    const m = parseServerManifest(readFileSync(out, 'utf8'), out);
    const srcPrefix = path.relative(dir, MEDIA).split(path.sep).join('/');
    expect(
      m.tracks.map((t) => [
        t.src.slice(srcPrefix.length + 1),
        t.element,
        t.params.find((p) => p.name === 'trackName')?.value,
      ]),
    ).toEqual([
      ['video_baseline_400k.ismv', 'video', 'video_eng'],
      ['video_main_900k.ismv', 'video', 'video_eng'],
      ['video_high_1600k.ismv', 'video', 'video_eng'],
      ['video_sar_500k.ismv', 'video', 'video_eng'],
      ['video_2997_600k.ismv', 'video', 'video_eng'],
      ['video_interlaced_800k.ismv', 'video', 'video_eng'],
      ['audio_eng_64k.isma', 'audio', 'audio_eng'],
      ['audio_eng_128k.isma', 'audio', 'audio_eng'],
      ['audio_nld_128k.isma', 'audio', 'audio_nld'],
      ['audio_ac3_384k.isma', 'audio', 'audio_eng_ac3'],
      ['audio_eac3_256k.isma', 'audio', 'audio_eng_ec3'],
      ['text_eng.ismt', 'textstream', 'textstream_eng'],
      ['text_nld.ismt', 'textstream', 'textstream_nld'],
      ['muxed_av.ismv', 'video', 'video_eng'],
      ['muxed_av.ismv', 'audio', 'audio_eng'],
    ]);
    // (trackName, systemBitrate) identifies a track in every URL: unique.
    const keys = m.tracks.map((t) => `${t.params.find((p) => p.name === 'trackName')?.value}=${t.systemBitrate}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  test('every property read back from the server manifest equals the encoded values', () => {
    const m = parseServerManifest(readFileSync(out, 'utf8'), out);
    EXPECTED.forEach((e, i) => {
      const p = ismTrackToProperties(m.tracks[i]!, i);
      const { trackName: _ignored, ...expected } = e.props;
      expect(comparable(p)).toMatchObject(expected);
      if (e.target > 0) expect(Math.abs(p.systemBitrate - e.target) / e.target).toBeLessThan(0.1);
    });
  });

  test('the server manifest carries exactly what the media says', async () => {
    const m = parseServerManifest(readFileSync(out, 'utf8'), out);
    for (const [i, t] of m.tracks.entries()) {
      const source = await FileSource.open(path.resolve(dir, t.src));
      const file = await readMediaFile(source, 'exact');
      await source.close();
      const fromMedia = file.tracks.find(
        (x) => x.properties.trackID === ismTrackToProperties(t, i).trackID,
      )!.properties;
      const { trackName: _fromIsm, ...fromIsm } = ismTrackToProperties(t, i);
      const { trackName: _direct, ...direct } = fromMedia;
      expect(fromIsm).toEqual(direct);
    }
  });
});

describe('--track_type', () => {
  test('an input followed by --track_type contributes only that type', async () => {
    const r = await runOrigin([
      'package',
      '-q',
      '-o',
      'stdout:',
      media('muxed_av.ismv'),
      '--track_type=video',
      media('audio_eng_128k.isma'),
    ]);
    expect(r.code).toBe(0);
    const m = parseServerManifest(r.stdout);
    expect(m.tracks.map((t) => [path.basename(t.src), t.element])).toEqual([
      ['muxed_av.ismv', 'video'],
      ['audio_eng_128k.isma', 'audio'],
    ]);
  });

  test('an input without it contributes all its tracks', async () => {
    const r = await runOrigin(['package', '-q', '-o', 'stdout:', media('muxed_av.ismv')]);
    expect(parseServerManifest(r.stdout).tracks.map((t) => t.element)).toEqual(['video', 'audio']);
  });

  test('asking for a type the input lacks names the file and what it has', async () => {
    const r = await runOrigin(['package', '-o', 'stdout:', media('audio_eng_64k.isma'), '--track_type=video']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${media('audio_eng_64k.isma')}: has no video track (it has: audio)`);
  });

  test('the same track twice is refused', async () => {
    const r = await runOrigin(['package', '-o', 'stdout:', media('audio_eng_64k.isma'), media('audio_eng_64k.isma')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/track 1 is given twice/);
  });
});

test('-o stdout: prints the server manifest, options stored as head metas', async () => {
  const r = await runOrigin([
    'package',
    '-q',
    '-o',
    'stdout:',
    media('audio_eng_64k.isma'),
    '--hls.client_manifest_version=4',
    '--hls.fmp4',
    '--track_filter=type!="textstream"',
    '--variant_set=true',
    '--timed_metadata=false',
  ]);
  expect(r.code).toBe(0);
  expect(r.stderr).toBe('');
  expect(parseServerManifest(r.stdout).meta).toEqual([
    { name: 'hls_fmp4', content: 'true' },
    { name: 'hls_client_manifest_version', content: '4' },
    { name: 'variant_set', content: 'true' },
    { name: 'track_filter', content: 'type!="textstream"' },
    { name: 'timed_metadata', content: 'false' },
  ]);
});

describe('dry run: origin package -o stdout: <x.ism> <client-manifest path> prints what HTTP serves', () => {
  const dir = tempDir();
  const ism = path.join(dir, 'p.ism');
  beforeAll(async () => {
    expect(
      (await runOrigin(['package', '-q', '-o', ism, media('video_baseline_400k.ismv'), media('audio_eng_64k.isma')]))
        .code,
    ).toBe(0);
  });

  test.each([
    'Manifest',
    '.mpd',
    'p.mpd?filter=type=="audio"',
    '.m3u8?hls_fmp4=true',
    '.mpd?t=0-0:00:04&mpd_segment_template=number',
    '.f4m',
    'p.f4m?hds_multi_level=true',
  ])('%s equals the HTTP response byte for byte', async (request) => {
    const r = await runOrigin(['package', '-o', 'stdout:', ism, request]);
    expect([r.code, r.stderr]).toEqual([0, '']);
    const server = await startServer(plainServerOptions(dir));
    try {
      // The same request line, query as written (the origin decodes it exactly once either way).
      const http = await get(server.url, `/p.ism/${request}`);
      expect(http.status).toBe(200);
      expect(r.stdout.length).toBeGreaterThan(100);
      expect(r.stdout).toBe(http.text);
    } finally {
      await server.close();
    }
  });

  test('a bad filter is reported with its position (exit 1), nothing on stdout', async () => {
    const r = await runOrigin(['package', '-o', 'stdout:', ism, '.mpd?filter=type="audio"']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/filter: unexpected "=" at 4: did you mean "=="\?/);
  });

  test('a path that is no client manifest is a usage error', async () => {
    const r = await runOrigin(['package', '-o', 'stdout:', ism, 'video.ts']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/not a client-manifest path/);
  });

  test('to a file instead of stdout: is a usage error', async () => {
    const r = await runOrigin(['package', '-o', path.join(dir, 'q.ism'), ism, 'Manifest']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/use -o stdout:/);
  });
});

describe('bad input: a clear message naming the file, a non-zero exit, no output file', () => {
  const dir = tempDir();
  const main = readFileSync(media('video_main_900k.ismv'));
  const moovEnd = 24 + main.readUInt32BE(24); // ftyp(24) then moov
  expect(main.toString('latin1', 28, 32)).toBe('moov');

  const withMvexRenamed = Buffer.from(main.subarray(0, moovEnd));
  const mvexAt = withMvexRenamed.indexOf('mvex', 0, 'latin1');
  withMvexRenamed.write('free', mvexAt, 'latin1');
  const withCodecRenamed = Buffer.from(main);
  withCodecRenamed.write('xyz1', withCodecRenamed.indexOf('avc1', 0, 'latin1'), 'latin1');
  // Deterministic noise (a 32-bit LCG) so a failure is reproducible.
  const noise = Buffer.alloc(4096);
  for (let i = 0, x = 12345; i < noise.length; i++) noise[i] = (x = (Math.imul(x, 1103515245) + 12345) >>> 0) >>> 24;

  const cases: Array<[string, Buffer | null, RegExp]> = [
    ['truncated.ismv', main.subarray(0, 300_000), /box 'mdat' of \d+ bytes runs past the end of its container/],
    ['random.ismv', noise, /not an MP4 file \(first box type is '.+', expected ftyp\)/],
    [
      'moov-only.ismv',
      main.subarray(0, moovEnd),
      /track 1 \(video\) has no fragments: no moof boxes and no mfra index/,
    ],
    ['progressive.ismv', withMvexRenamed, /not a fragmented MP4 \(moov has no mvex\)/],
    ['empty.ismv', Buffer.alloc(0), /empty file \(0 bytes\), not an MP4 file/],
    ['codec.ismv', withCodecRenamed, /unsupported codec 'xyz1' \(supported: avc1, avc3, mp4a/],
    ['missing.ismv', null, /no such file/],
  ];

  test.each(cases)('%s', async (name, bytes, message) => {
    const input = path.join(dir, name);
    if (bytes !== null) writeFileSync(input, bytes);
    const out = path.join(dir, `${name}.ism`);
    const r = await runOrigin(['package', '-o', out, media('audio_eng_64k.isma'), input]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`error: ${input}: `);
    expect(r.stderr).toMatch(message);
    expect(existsSync(out)).toBe(false);
    expect(listDir(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  test('a directory as input', async () => {
    const r = await runOrigin(['package', '-o', 'stdout:', dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/is a directory|not a regular file/);
  });

  test('a failed run leaves an existing output untouched', async () => {
    const out = path.join(dir, 'keep.ism');
    writeFileSync(out, 'previous contents');
    const r = await runOrigin(['package', '-o', out, path.join(dir, 'truncated.ismv')]);
    expect(r.code).toBe(1);
    expect(readFileSync(out, 'utf8')).toBe('previous contents');
  });

  test('an output that would overwrite an input is refused, also through a symlink', async () => {
    const victim = path.join(dir, 'victim.ism');
    copyFileSync(media('audio_eng_64k.isma'), victim);
    const r1 = await runOrigin(['package', '-o', victim, victim]);
    expect(r1.code).toBe(1);
    expect(r1.stderr).toContain(`${victim}: the output would overwrite this input`);
    const link = path.join(dir, 'link.ism');
    const original = path.join(dir, 'original.isma');
    copyFileSync(media('audio_eng_64k.isma'), original);
    symlinkSync(original, link);
    const r2 = await runOrigin(['package', '-o', link, original]);
    expect(r2.code).toBe(1);
    expect(r2.stderr).toMatch(/would overwrite this input/);
    expect(readFileSync(original).equals(readFileSync(media('audio_eng_64k.isma')))).toBe(true);
  });

  test('usage errors exit 2 and say what to do', async () => {
    expect(await runOrigin(['package', media('audio_eng_64k.isma')])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/no output: give -o/),
    });
    expect(await runOrigin(['package', '-o', 'x.mp4', media('audio_eng_64k.isma')])).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/must end in \.ism/),
    });
    expect(await runOrigin(['package', '-o', path.join(dir, 'none.ism')])).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/no input files/),
    });
    expect(await runOrigin(['package', '-o', 'stdout:', '--bogus'])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/unknown option --bogus/),
    });
    expect(await runOrigin(['frobnicate'])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/unknown command 'frobnicate'/),
    });
  });

  test('an unwritable output directory is an io error naming the target', async () => {
    const r = await runOrigin([
      'package',
      '-o',
      path.join(dir, 'no', 'such', 'dir', 'x.ism'),
      media('audio_eng_64k.isma'),
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/x\.ism: cannot write the server manifest/);
  });
});

test('--help documents every stored option', async () => {
  const r = await runOrigin(['package', '--help']);
  expect(r.code).toBe(0);
  for (const flag of [
    '--hls.client_manifest_version',
    '--hls.fmp4',
    '--variant_set',
    '--track_filter',
    '--mpd.segment_template=time|number',
    '--track_type',
  ]) {
    expect(r.stdout).toContain(flag);
  }
});

// The device-class recipe is taken from docs/guide/packaging.md, so the documentation and the test
// cannot drift apart (docs/guide/packaging.md#device-classes-the-reference-products-recipe).
describe('the device-class recipe of docs/guide/packaging.md', () => {
  const readme = readFileSync(path.join(ROOT, 'docs/guide/packaging.md'), 'utf8');
  const block = /<!-- device-classes -->\s*```sh\n([\s\S]*?)```/.exec(readme);
  const commands = (block?.[1] ?? '').split('\n').filter((l) => l.startsWith('origin package '));
  const dir = tempDir();

  // The demo packages the same classes (origin/cli/demo-command.ts): the guide's commands must give them.
  const EXPECTED_CLASSES: Record<string, string[]> = Object.fromEntries(
    Object.entries(DEMO_CLASSES).map(([name, files]) => [`${name}.ism`, files]),
  );

  test('the guide holds four origin package commands', () => {
    expect(commands).toHaveLength(4);
  });

  test.each(Object.keys(EXPECTED_CLASSES))('%s holds exactly the expected tracks', async (name) => {
    const line = commands.find((c) => c.includes(`-o ${name} `));
    expect(line).toBeDefined();
    // Run from a copy of the media directory, as the guide does (`cd fixtures/media`).
    const work = path.join(dir, name.replace('.ism', ''));
    mkdirSync(work);
    for (const f of FIXTURE_FILES) symlinkSync(media(f), path.join(work, f));
    const args = line!
      .split(/\s+/)
      .slice(1)
      .map((a) => (a.startsWith('-') || a === 'package' || a.endsWith('.ism') ? a : path.join(work, a)));
    const r = await runOrigin(args.map((a) => (a.endsWith('.ism') ? path.join(work, a) : a)));
    expect(r.code).toBe(0);
    const m = parseServerManifest(readFileSync(path.join(work, name), 'utf8'));
    expect(m.tracks.map((t) => t.src)).toEqual(EXPECTED_CLASSES[name]);
    // Check what the class promises, from the track properties themselves.
    const props = m.tracks.map((t, i) => ismTrackToProperties(t, i));
    const videos = props.filter((p) => p.type === 'video');
    const audios = props.filter((p) => p.type === 'audio');
    if (name === 'phones.ism') {
      expect(videos.every((p) => p.avc_profile === 66 && p.systemBitrate <= 1_000_000)).toBe(true);
      expect(audios.every((p) => p.FourCC === 'AACL')).toBe(true);
    }
    if (name === 'tablets.ism') {
      expect(videos.every((p) => (p.avc_profile ?? 0) <= 77 && p.systemBitrate <= 1_500_000)).toBe(true);
      expect(audios.every((p) => p.FourCC === 'AACL')).toBe(true);
    }
    if (name === 'consoles.ism') expect(audios.map((p) => p.FourCC)).toContain('ac-3');
  });
});

test('bin/origin.js runs as a real process', () => {
  const r = spawnSync(
    process.execPath,
    [path.join(ROOT, 'bin', 'origin.js'), 'package', '-q', '-o', 'stdout:', media('text_eng.ismt')],
    { encoding: 'utf8' },
  );
  expect(r.status).toBe(0);
  expect(parseServerManifest(r.stdout).tracks[0]).toMatchObject({ element: 'textstream', systemLanguage: 'eng' });
  const bad = spawnSync(
    process.execPath,
    [path.join(ROOT, 'bin', 'origin.js'), 'package', '-o', 'stdout:', '/nonexistent.ismv'],
    { encoding: 'utf8' },
  );
  expect(bad.status).toBe(1);
  expect(bad.stderr).toBe('origin package: error: /nonexistent.ismv: no such file\n');
  expect(
    execFileSync(process.execPath, [path.join(ROOT, 'bin', 'origin.js'), 'version'], { encoding: 'utf8' }).trim(),
  ).toMatch(/^\d+\.\d+\.\d+$/);
});
