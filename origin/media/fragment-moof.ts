// Reads one source fragment's moof box by the offset a fragment table gives (ISO/IEC 14496-12
// §8.8.4), checking the box header before the box: the one moof read of the segment writers (the
// fMP4 reboxing in segments/fmp4/, the sample reader in samples.ts).

import { ByteSource } from '../io/source';
import { printable, readBoxHeader } from './boxes';
import { corruptAt } from './byte-reader';
import { inFile } from './moov';

/** Caps that keep a corrupt index or file from making us allocate or stream without bound. */
export const MAX_MOOF_BYTES = 16 << 20;
export const MAX_FRAGMENT_DATA_BYTES = 1 << 30;

/** Reads the whole moof box at `offset` (a fragment table's offsets entry). */
export async function readFragmentMoof(source: ByteSource, offset: number): Promise<Uint8Array> {
  const path = `moof@${offset}`;
  try {
    if (!Number.isSafeInteger(offset) || offset < 0 || offset >= source.size) {
      throw corruptAt(path, offset, `fragment offset is outside the file (${source.size} bytes)`);
    }
    if (offset + 8 > source.size) throw corruptAt(path, offset, 'truncated box header at the end of the file');
    const head = await source.read(offset, Math.min(16, source.size - offset));
    const h = readBoxHeader(head, 0, offset, source.size, path);
    if (h === undefined) throw corruptAt(path, offset, 'truncated box header at the end of the file');
    if (h.type !== 'moof') throw corruptAt(path, offset, `expected a moof box, found '${printable(h.type)}'`);
    if (h.size > MAX_MOOF_BYTES)
      throw corruptAt(path, offset, `moof of ${h.size} bytes exceeds the ${MAX_MOOF_BYTES}-byte limit`);
    return await source.read(offset, h.size);
  } catch (e) {
    throw inFile(e, source.name);
  }
}
