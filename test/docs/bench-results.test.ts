// bench/README.md's figures are generated from bench/results/*.json by bench/results-table.ts:
// the table between the bench-results markers must be what the generator renders from the JSON
// files as they are committed.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { resultsTable, withTable } from '../../bench/results-table';

const BENCH = path.join(__dirname, '..', '..', 'bench');

test('bench/README.md holds the results table rendered from bench/results/*.json', () => {
  const readme = readFileSync(path.join(BENCH, 'README.md'), 'utf8');
  expect(withTable(readme, resultsTable(path.join(BENCH, 'results')))).toBe(readme);
});

test('the table names every suite and its targets', () => {
  const table = resultsTable(path.join(BENCH, 'results'));
  for (const suite of ['index', 'filter', 'http', 'segments', 'ts', 'drm', 'edge', 'edge-plugin'])
    expect(table).toContain(`| ${suite} |`);
  expect(table).not.toContain('NaN');
  expect(table).not.toContain('undefined');
});
