// A minimal ISO BMFF box walk of the tests' own (ISO/IEC 14496-12 §4.2), independent of the
// origin's readers, for checks on what the origin serves.

export interface Box {
  type: string;
  size: number;
  body: Buffer;
}

export function boxes(buf: Buffer): Box[] {
  const out: Box[] = [];
  for (let at = 0; at + 8 <= buf.length;) {
    let size = buf.readUInt32BE(at);
    let header = 8;
    if (size === 1) {
      size = Number(buf.readBigUInt64BE(at + 8));
      header = 16;
    }
    if (size === 0) size = buf.length - at;
    if (size < header || at + size > buf.length)
      throw new Error(`box at ${at} of size ${size} overruns ${buf.length} bytes`);
    out.push({ type: buf.toString('latin1', at + 4, at + 8), size, body: buf.subarray(at + header, at + size) });
    at += size;
  }
  return out;
}
