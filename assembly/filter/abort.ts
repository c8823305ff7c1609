// Target of `--use abort=assembly/filter/abort/filterAbort`. Nothing should ever get here (the
// tests feed the module 20 000 garbage filters to make sure): a trap follows the call, and the
// instance must then be thrown away. The message is kept for lastAbort() to say where it was.
// (Its own file, imported first by index.ts, so the global exists before library code can abort.)

let abortMessage: string | null = null;

export function lastAbort(): string {
  const m = abortMessage;
  return m === null ? '' : m;
}

export function filterAbort(message: string | null, fileName: string | null, line: u32, column: u32): void {
  let text = 'abort';
  if (message !== null) text += ': ' + message;
  text += ' at ';
  text += fileName !== null ? fileName : '?';
  abortMessage = text + ':' + line.toString() + ':' + column.toString();
}
