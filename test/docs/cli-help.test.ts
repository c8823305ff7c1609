// docs/reference/cli.md prints each command's --help as the command itself prints it: every
// `<!-- help: <command> -->` block is compared with the output of `origin <command> --help`, so
// the reference cannot drift from the code's own help text. The one value that depends on the
// machine (the default worker count of `origin serve`, the CPUs of this process) is written as
// <cpus> in the document.

import { readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { runOrigin } from '../helpers/fixtures';

const ROOT = path.join(__dirname, '..', '..');
const DOC_PATH = path.join(ROOT, 'docs', 'reference', 'cli.md');
const DOC = readFileSync(DOC_PATH, 'utf8');
const BLOCK = /<!-- help: ([a-z-]*) -->\n```\n([\s\S]*?)```\n<!-- \/help -->/g;

const blocks = [...DOC.matchAll(BLOCK)].map((m) => ({ command: m[1]!, text: m[2]! }));

test('docs/reference/cli.md has the help of origin and of every command it lists', () => {
  expect(blocks.map((b) => b.command)).toEqual([
    '',
    'package',
    'capture',
    'keys',
    'serve',
    'filter',
    'edge',
    'edge-config',
    'sign-url',
  ]);
});

async function helpOf(command: string): Promise<string> {
  const r = await runOrigin(command === '' ? ['--help'] : [command, '--help']);
  expect(r.code).toBe(0);
  return r.stdout.replace(`of CPUs, ${availableParallelism()} here`, 'of CPUs, <cpus> here');
}

test.each(blocks.map((b) => [b.command || '(none)', b.text] as const))(
  'docs/reference/cli.md prints origin %s --help as the command does',
  async (command, text) => {
    expect(await helpOf(command === '(none)' ? '' : command)).toBe(text);
  },
);

// UPDATE_GOLDEN=1 rewrites every help block from the commands themselves.
if (process.env.UPDATE_GOLDEN === '1') {
  test('rewrite docs/reference/cli.md', async () => {
    let doc = DOC;
    for (const b of blocks) {
      const help = await helpOf(b.command);
      doc = doc.replace(
        `<!-- help: ${b.command} -->\n\`\`\`\n${b.text}\`\`\``,
        `<!-- help: ${b.command} -->\n\`\`\`\n${help}\`\`\``,
      );
    }
    writeFileSync(DOC_PATH, doc);
  });
}
