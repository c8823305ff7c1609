// The one error of the edge-config room: a file it reads is wrong (the CLI exits 1 with it).

/** A file the command reads is wrong; the message starts with `<file>:<line>:`. */
export class EdgeConfigFileError extends Error {
  override name = 'EdgeConfigFileError';
}
