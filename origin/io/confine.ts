// The root's one rule for symbolic links: a path under the served root must stay under it once its
// links are resolved. A link planted in a content folder (a `.ism`, a source, a static file, a
// directory pointing at /etc or another customer's folder) is then as good as absent, unless the
// operator allows links out (`origin serve --follow-symlinks`). Paths that name a place outside the
// root themselves (a source an operator's .ism names as `../shared/video.ismv`) are the operator's
// choice and are not this rule's business. Static files (server/static.ts) and presentations
// (cache/presentation-store.ts) both ask here.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { originError } from '../errors';

export class RootConfinement {
  private realRoot: Promise<string> | undefined;

  constructor(readonly root: string) {}

  /** Whether `file` (absolute) names a place under the root before its links are resolved. */
  names(file: string): boolean {
    const rel = path.relative(this.root, file);
    return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
  }

  /** Whether `file`, its links resolved, is under the root (itself resolved); false when it cannot be resolved. */
  async holds(file: string): Promise<boolean> {
    try {
      this.realRoot ??= fs.realpath(this.root);
      const [realRoot, real] = await Promise.all([this.realRoot, fs.realpath(file)]);
      return real.startsWith(realRoot.endsWith(path.sep) ? realRoot : realRoot + path.sep);
    } catch {
      this.realRoot = undefined; // a root that was not there may be made later
      return false;
    }
  }

  /**
   * Throws not-found (as for a file that is not there) when `file` names a place under the root
   * but resolves outside it.
   */
  async check(file: string): Promise<void> {
    if (this.names(file) && !(await this.holds(file))) {
      throw originError('not-found', 'no such file (a symbolic link out of the root)', { subject: file });
    }
  }
}
