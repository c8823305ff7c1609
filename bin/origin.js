#!/usr/bin/env node
// The `origin` command (package.json "bin"). Runs the compiled CLI; `npm run build` makes it.
'use strict';
let cli;
try {
  cli = require('../dist/origin/cli/main.js');
} catch (e) {
  if (e && e.code === 'MODULE_NOT_FOUND' && String(e.message).includes('dist/origin/cli/main')) {
    process.stderr.write('origin: not built yet; run `npm run build` first\n');
    process.exit(1);
  }
  throw e;
}
// `origin ... | head` closes the pipe early: that is not an error.
process.stdout.on('error', (e) => {
  if (e && e.code === 'EPIPE') process.exit(0);
  throw e;
});
cli.main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
