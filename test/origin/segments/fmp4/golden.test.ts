// Golden box dumps of what players read (CONTRIBUTING.md design rule 11): one video and one audio init segment,
// one video and one audio media segment. Regenerate with `UPDATE_GOLDEN=1 npx jest test/fmp4`
// and review the diff. Also tests of the dump and golden helpers themselves.

import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { writeInitSegment } from '../../../../origin/segments/fmp4/init-segment';
import { dumpBoxes } from '../../../helpers/box-dump';
import { tempDir } from '../../../helpers/fixtures';
import { expectGolden, lineDiff } from '../../../helpers/golden';
import { openFixture, segmentsOf } from './fixture-segments';

describe('golden segments', () => {
  test.each(['video_baseline_400k.ismv', 'audio_eng_64k.isma'])('%s: init segment', async (name) => {
    const f = await openFixture(name);
    await f.source.close();
    expectGolden(`fmp4/${name}.init.txt`, dumpBoxes(writeInitSegment(f.headers.get(1)!)));
  });

  // Video: the second fragment (times as in the source). Audio: the first, whose negative
  // priming time (-213333) the caller shifts to 0.
  test.each([
    ['video_baseline_400k.ismv', 1],
    ['audio_eng_64k.isma', 0],
  ] as const)('%s: media segment of fragment %i', async (name, k) => {
    const f = await openFixture(name);
    try {
      const { segments } = await segmentsOf(f, 1);
      expectGolden(`fmp4/${name}.segment${k + 1}.txt`, dumpBoxes(segments[k]!));
    } finally {
      await f.source.close();
    }
  });
});

describe('box dump', () => {
  test('is deterministic and shows the fields players read', async () => {
    const f = await openFixture('text_eng.ismt');
    try {
      const { init, segments } = await segmentsOf(f, 1);
      const text = dumpBoxes(Buffer.concat([init, segments[0]!]));
      expect(dumpBoxes(Buffer.concat([init, segments[0]!]))).toBe(text);
      expect(text).toContain('ftyp 28 major=iso6 minor=0 compatible=iso6,cmfc,dash\n');
      expect(text).toContain('    mdhd 32 v0 timescale=1000 duration=0 language=eng\n');
      expect(text).toContain('    hdlr 48 handler=subt name="SubtitleHandler"\n');
      expect(text).toMatch(/\n {8}sthd 12\n/);
      expect(text).toContain('  mfhd 16 sequence_number=1\n');
      expect(text).toContain(
        '    tfhd 32 flags=0x02003a track_ID=1 sample_description_index=1 default_duration=2000 default_size=378 default_flags=0x00000000\n',
      );
      expect(text).toContain('    tfdt 20 v1 baseMediaDecodeTime=0\n');
      expect(text).toMatch(/trun 20 v0 flags=0x000001 sample_count=1 data_offset=112\n {6}\[0\] \(defaults\)\n/);
      expect(text).toMatch(/\nmdat 386 sha256=[0-9a-f]{16}\n$/);
    } finally {
      await f.source.close();
    }
  });
});

describe('golden mechanism', () => {
  const root = tempDir('golden-');
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  test('a missing golden file fails without the update switch', () => {
    expect(() => expectGolden('a/missing.txt', 'x', { root, update: false })).toThrow(
      /golden file .*a\/missing\.txt does not exist; create it with UPDATE_GOLDEN=1/,
    );
    expect(existsSync(path.join(root, 'a/missing.txt'))).toBe(false);
  });

  test('the update switch writes the file (with a final newline), which then matches', () => {
    expectGolden('b/new.txt', 'one\ntwo', { root, update: true });
    expect(readFileSync(path.join(root, 'b/new.txt'), 'utf8')).toBe('one\ntwo\n');
    expect(() => expectGolden('b/new.txt', 'one\ntwo\n', { root, update: false })).not.toThrow();
  });

  test('a difference fails with a diff naming the lines', () => {
    writeFileSync(path.join(root, 'c.txt'), ['a', 'b', 'c', 'd', 'e', 'f', 'g', ''].join('\n'));
    let message = '';
    try {
      expectGolden('c.txt', ['a', 'b', 'c', 'D', 'e', 'f', 'g', 'h', ''].join('\n'), { root, update: false });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain('output differs from golden file');
    expect(message).toContain('rerun with UPDATE_GOLDEN=1');
    expect(message.split('\n').slice(1)).toEqual([
      '@@ golden line 2, actual line 2 @@',
      '  b',
      '  c',
      '- d',
      '+ D',
      '  e',
      '  f',
      '  g',
      '+ h',
      '  ',
    ]);
  });

  test('line diff: insertions, deletions, and a long diff is truncated', () => {
    expect(lineDiff('a\nb\nc', 'a\nc')).toBe('@@ golden line 1, actual line 1 @@\n  a\n- b\n  c');
    const many = Array.from({ length: 200 }, (_, i) => `line ${i}`).join('\n');
    const diff = lineDiff(many, many.replace(/line/g, 'LINE'));
    expect(diff.split('\n')).toHaveLength(81);
    expect(diff).toMatch(/\.\.\. \d+ more diff lines$/);
  });
});
