// How file-system errors become the origin's (origin/io/source.ts ioError): paths that name
// nothing are not-found, whatever errno says why; only a storage failure is `io` (500). Found by
// the hardening suite's URL fuzzing (test/hardening/): `/file.txt/x.ism/...` answered 500 io.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { statFile } from '../../../origin/io/storage';
import { ioError } from '../../../origin/io/source';
import { OriginError } from '../../../origin/errors';
import { tempDir } from '../../helpers/fixtures';

async function statError(p: string): Promise<OriginError> {
  try {
    await statFile(p);
  } catch (e) {
    if (e instanceof OriginError) return e;
    throw e;
  }
  throw new Error(`${p} has a stat`);
}

test('a path through a file, a name too long, a loop of links: not-found', async () => {
  const dir = tempDir('io-errors-');
  await fs.writeFile(path.join(dir, 'file.txt'), 'x');
  await fs.symlink('b', path.join(dir, 'a'));
  await fs.symlink('a', path.join(dir, 'b'));
  for (const p of [
    path.join(dir, 'file.txt', 'x.ism'), // ENOTDIR
    path.join(dir, `${'n'.repeat(300)}.ism`), // ENAMETOOLONG
    path.join(dir, 'a'), // ELOOP
    path.join(dir, 'missing.ism'), // ENOENT
  ]) {
    const e = await statError(p);
    expect([path.basename(p).slice(0, 12), e.kind, e.code]).toEqual([
      path.basename(p).slice(0, 12),
      'not-found',
      'not-found',
    ]);
  }
});

test('a storage failure stays io', () => {
  const e = ioError('/x', Object.assign(new Error('EIO: i/o error'), { code: 'EIO' }));
  expect([e.kind, e.code]).toEqual(['io', 'io']);
});
