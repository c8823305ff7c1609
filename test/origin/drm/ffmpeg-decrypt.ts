// ffmpeg as the independent decrypter of the DRM tests: init + one fragment in a file (ffmpeg's
// mov demuxer decrypts one fragment per file, docs/guide/drm.md), `-decryption_key`, and the
// framemd5 of the packets (-c copy), so equal rows mean the decrypted samples are the clear ones.

import { rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { runSync } from '../../helpers/process';

/** The framemd5 rows of init + `fragment` (one moof + mdat), decrypted with `key` when given. */
export function packets(
  dir: string,
  init: Buffer,
  fragment: Buffer,
  key?: string,
): { code: number; rows: string[]; stderr: string } {
  const file = path.join(dir, `one-${Math.random().toString(36).slice(2)}.mp4`);
  writeFileSync(file, Buffer.concat([init, fragment]));
  const args = ['-v', 'error', ...(key === undefined ? [] : ['-decryption_key', key]), '-i', file];
  const r = runSync('ffmpeg', [...args, '-map', '0:0', '-c', 'copy', '-f', 'framemd5', '-']);
  rmSync(file);
  // ffmpeg adds the first packet's encryption side data (`S=1, …`) to its row: not a packet byte.
  const rows = r.stdout.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
  return { code: r.code, stderr: r.stderr, rows: rows.map((l) => l.replace(/, S=\d+,.*$/, '')) };
}

/** A segment's fragments (moof + mdat) one by one. */
export function fragments(segment: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let moof = -1;
  for (let at = 0; at < segment.length;) {
    const size = segment.readUInt32BE(at);
    const type = segment.toString('latin1', at + 4, at + 8);
    if (type === 'moof') moof = at;
    if (type === 'mdat') out.push(segment.subarray(moof, at + size));
    at += size;
  }
  return out;
}
