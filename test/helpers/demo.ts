// `origin demo` (what `npm start` runs) in this process on free ports, for the tests that use it:
// its printed output, its log, and the edge's address once it says it serves.

import { Writable } from 'node:stream';
import { main } from '../../origin/cli/main';
import { tempDir } from './fixtures';

export class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

export interface RunningDemo {
  out: Capture;
  err: Capture;
  /** The demo's exit code, once SIGINT stops it. */
  running: Promise<number>;
  /** The edge's base URL as printed. */
  edge: string;
}

/**
 * Starts the demo (origin, edge and ClearKey server on free ports; `more` arguments, e.g. `--live
 * --ingest-port 0`) and waits until it serves.
 */
export async function startDemo(out = new Capture(), err = new Capture(), more: string[] = []): Promise<RunningDemo> {
  const running = main(
    ['demo', '--port', '0', '--edge-port', '0', '--clearkey-port', '0', '--out', tempDir('demo-'), ...more],
    out,
    err,
  );
  for (let i = 0; i < 2400 && !out.text.includes('Ctrl-C stops'); i++) await new Promise((r) => setTimeout(r, 25));
  const edge = /through the edge {2}(http:\/\/127\.0\.0\.1:\d+)\//.exec(out.text)![1]!;
  return { out, err, running, edge };
}
