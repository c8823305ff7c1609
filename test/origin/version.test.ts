import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { VERSION } from '../../origin/version';
import { ROOT } from '../helpers/fixtures';

test('origin/version.ts matches package.json', () => {
  expect(VERSION).toBe(JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version);
});
