// The README's quick start shows one screenshot of the player page (issue 25), made by
// test/e2e/players/demo-page.test.ts with UPDATE_SCREENSHOT=1: it is there, it is a PNG, and it
// stays small enough for a clone not to notice it.

import { readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { ROOT } from '../helpers/fixtures';

const FILE = 'docs/images/player-page.png';

test('the README shows docs/images/player-page.png, a PNG under 150 kB', () => {
  expect(readFileSync(path.join(ROOT, 'README.md'), 'utf8')).toContain(`](${FILE})`);
  const bytes = readFileSync(path.join(ROOT, FILE));
  // PNG signature (ISO/IEC 15948 §5.2).
  expect(bytes.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
  expect(statSync(path.join(ROOT, FILE)).size).toBeLessThan(150 * 1024);
});
