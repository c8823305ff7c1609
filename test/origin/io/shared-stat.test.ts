// io/shared-stat.ts against the plain stat on real files: concurrent callers share one stat and
// see what a stat of their own sees; a caller after it settles sees the file's change; errors are
// shared and not kept.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { FILE_STORAGE, FileStat } from '../../../origin/io/storage';
import { SharedStat } from '../../../origin/io/shared-stat';
import { tempDir } from '../../helpers/fixtures';

test('concurrent stats of one path: one stat, the plain answer for all', async () => {
  const dir = tempDir('origin-shared-stat-');
  const file = path.join(dir, 'channel.json');
  fs.writeFileSync(file, '{}');
  const shared = new SharedStat(FILE_STORAGE);
  const all = await Promise.all(Array.from({ length: 50 }, () => shared.stat(file)));
  expect(shared.started).toBe(1);
  const plain = await FILE_STORAGE.stat(file);
  for (const s of all) expect(s).toEqual(plain);
  // Another path is its own stat.
  const other = path.join(dir, 'other.json');
  fs.writeFileSync(other, '[1]');
  await Promise.all([shared.stat(file), shared.stat(other)]);
  expect(shared.started).toBe(3);
});

test('after a stat settles, the next caller sees the file as it is now', async () => {
  const dir = tempDir('origin-shared-stat-');
  const file = path.join(dir, 'channel.json');
  fs.writeFileSync(file, '{}');
  const shared = new SharedStat(FILE_STORAGE);
  const before: FileStat = await shared.stat(file);
  fs.writeFileSync(file, '{"grown": true}');
  const after = await shared.stat(file);
  expect(after.size).toBeGreaterThan(before.size);
  expect(after).toEqual(await FILE_STORAGE.stat(file));
  expect(shared.started).toBe(2);
});

test('a missing file: every concurrent caller gets the plain error, and it is not kept', async () => {
  const dir = tempDir('origin-shared-stat-');
  const file = path.join(dir, 'missing.json');
  const shared = new SharedStat(FILE_STORAGE);
  const plain = await FILE_STORAGE.stat(file).then(
    () => undefined,
    (e: unknown) => e as Error,
  );
  expect(plain).toBeDefined();
  const results = await Promise.allSettled([shared.stat(file), shared.stat(file), shared.stat(file)]);
  expect(shared.started).toBe(1);
  for (const r of results) {
    expect(r.status).toBe('rejected');
    const e = (r as PromiseRejectedResult).reason as Error & { code?: string };
    expect([e.constructor, e.message, e.code]).toEqual([
      plain!.constructor,
      plain!.message,
      (plain as Error & { code?: string }).code,
    ]);
  }
  fs.writeFileSync(file, 'now');
  expect((await shared.stat(file)).size).toBe(3);
  expect(shared.started).toBe(2);
});
