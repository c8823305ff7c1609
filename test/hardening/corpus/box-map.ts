// Where every box of an ISO BMFF file is (ISO/IEC 14496-12 §4.2), nested boxes included, so the
// corpus can damage one field of one box at a time. The test's own walk, independent of the
// origin's readers; it reads the committed fixtures only, so it trusts their sizes.

export interface BoxAt {
  type: string;
  /** Slash path from the top, with the index among same-type siblings: `moof[4]/traf/trun`. */
  path: string;
  /** Offset of the box header and of the payload (after size, type and, for a full box, version/flags). */
  offset: number;
  payload: number;
  size: number;
  /** End of the enclosing box (the file's length at the top). */
  parentEnd: number;
}

/** Boxes made only of boxes, and where their children start within the payload. */
const CHILDREN_AT: Record<string, number> = {
  moov: 0,
  trak: 0,
  mdia: 0,
  minf: 0,
  stbl: 0,
  mvex: 0,
  moof: 0,
  traf: 0,
  mfra: 0,
  dinf: 0,
  edts: 0,
  udta: 0,
  // Sample description: version/flags and entry_count, then sample entries (§8.5.2).
  stsd: 8,
  // Visual sample entry fields (§12.1.3) and audio sample entry fields (§12.2.3) before their boxes.
  avc1: 78,
  encv: 78,
  mp4a: 28,
  'ac-3': 28,
  'ec-3': 28,
};

/** Full boxes (version and flags after the type) among those the corpus edits. */
export const FULL_BOXES = new Set([
  'mvhd',
  'tkhd',
  'mdhd',
  'hdlr',
  'stsd',
  'stts',
  'stsc',
  'stsz',
  'stco',
  'trex',
  'mehd',
  'mfhd',
  'tfhd',
  'tfdt',
  'trun',
  'tfra',
  'mfro',
  'sidx',
  'esds',
]);

export function boxMap(buf: Buffer): BoxAt[] {
  const out: BoxAt[] = [];
  walk(buf, 0, buf.length, '', out);
  return out;
}

function walk(buf: Buffer, from: number, end: number, prefix: string, out: BoxAt[]): void {
  const seen = new Map<string, number>();
  for (let at = from; at + 8 <= end;) {
    let size = buf.readUInt32BE(at);
    const type = buf.toString('latin1', at + 4, at + 8);
    let header = 8;
    if (size === 1) {
      size = Number(buf.readBigUInt64BE(at + 8));
      header = 16;
    } else if (size === 0) size = end - at;
    if (size < header || at + size > end) return;
    const n = seen.get(type) ?? 0;
    seen.set(type, n + 1);
    const name = n === 0 ? type : `${type}[${n}]`;
    const path = prefix === '' ? name : `${prefix}/${name}`;
    const payload = at + header + (FULL_BOXES.has(type) ? 4 : 0);
    out.push({ type, path, offset: at, payload, size, parentEnd: end });
    const childAt = CHILDREN_AT[type];
    if (childAt !== undefined) walk(buf, at + header + childAt, at + size, path, out);
    at += size;
  }
}
