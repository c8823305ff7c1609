// Readers for what HDS clients read, written for the tests from the specifications and
// independent of the origin's writers: the F4V boxes abst, asrt, afrt, afra (Adobe Flash Video
// File Format Specification 10.1), moof, FLV tags (FLV 10.1 Annex E) and AMF0 (AMF0 §2). Every
// length is checked: a reader that silently stopped early would let a broken writer pass.

export class Cursor {
  private readonly view: DataView;
  at = 0;
  constructor(
    readonly bytes: Uint8Array,
    readonly what: string,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  get remaining(): number {
    return this.bytes.byteLength - this.at;
  }
  private need(n: number): number {
    if (this.at + n > this.bytes.byteLength)
      throw new Error(`${this.what}: ${n} bytes needed at ${this.at}, ${this.remaining} left`);
    const at = this.at;
    this.at += n;
    return at;
  }
  u8(): number {
    return this.view.getUint8(this.need(1));
  }
  u16(): number {
    return this.view.getUint16(this.need(2));
  }
  u24(): number {
    const at = this.need(3);
    return (this.view.getUint8(at) << 16) | this.view.getUint16(at + 1);
  }
  si24(): number {
    const v = this.u24();
    return v & 0x800000 ? v - 0x1000000 : v;
  }
  u32(): number {
    return this.view.getUint32(this.need(4));
  }
  i32(): number {
    return this.view.getInt32(this.need(4));
  }
  u64(): bigint {
    return this.view.getBigUint64(this.need(8));
  }
  f64(): number {
    return this.view.getFloat64(this.need(8));
  }
  bytesOf(n: number): Uint8Array {
    const at = this.need(n);
    return this.bytes.subarray(at, at + n);
  }
  fourcc(): string {
    return String.fromCharCode(...this.bytesOf(4));
  }
  /** A NUL-terminated UTF-8 string (F4V STRING). */
  cstring(): string {
    const end = this.bytes.indexOf(0, this.at);
    if (end < 0) throw new Error(`${this.what}: unterminated string at ${this.at}`);
    const s = new TextDecoder().decode(this.bytes.subarray(this.at, end));
    this.at = end + 1;
    return s;
  }
  end(): void {
    if (this.remaining !== 0) throw new Error(`${this.what}: ${this.remaining} bytes left over`);
  }
}

export interface Box {
  type: string;
  /** Offset of the box's first byte in the bytes given. */
  start: number;
  size: number;
  payload: Uint8Array;
}

/** Consecutive boxes filling `bytes` exactly (32-bit sizes and largesize). */
export function boxes(bytes: Uint8Array, what = 'boxes'): Box[] {
  const out: Box[] = [];
  const c = new Cursor(bytes, what);
  while (c.remaining > 0) {
    const start = c.at;
    let size = c.u32();
    const type = c.fourcc();
    if (size === 1) size = Number(c.u64());
    const header = c.at - start;
    if (size < header || start + size > bytes.byteLength)
      throw new Error(`${what}: box '${type}' at ${start} has size ${size}`);
    out.push({ type, start, size, payload: bytes.subarray(c.at, start + size) });
    c.at = start + size;
  }
  return out;
}

function fullBoxHeader(c: Cursor): { version: number; flags: number } {
  return { version: c.u8(), flags: c.u24() };
}

function oneBox(c: Cursor, type: string): Box {
  const start = c.at;
  const size = c.u32();
  const found = c.fourcc();
  if (found !== type) throw new Error(`${c.what}: expected '${type}' at ${start}, found '${found}'`);
  return { type, start, size, payload: c.bytesOf(size - 8) };
}

export interface Asrt {
  version: number;
  flags: number;
  qualitySegmentUrlModifiers: string[];
  segmentRuns: Array<{ firstSegment: number; fragmentsPerSegment: number }>;
}

export interface AfrtEntry {
  firstFragment: number;
  firstFragmentTimestamp: bigint;
  fragmentDuration: number;
  discontinuityIndicator?: number;
}

export interface Afrt {
  version: number;
  flags: number;
  timeScale: number;
  qualitySegmentUrlModifiers: string[];
  entries: AfrtEntry[];
}

export interface Abst {
  version: number;
  flags: number;
  bootstrapinfoVersion: number;
  profile: number;
  live: number;
  update: number;
  reserved: number;
  timeScale: number;
  currentMediaTime: bigint;
  smpteTimeCodeOffset: bigint;
  movieIdentifier: string;
  serverEntries: string[];
  qualityEntries: string[];
  drmData: string;
  metaData: string;
  segmentRunTables: Asrt[];
  fragmentRunTables: Afrt[];
}

function strings(c: Cursor, count: number): string[] {
  return Array.from({ length: count }, () => c.cstring());
}

export function parseAsrt(payload: Uint8Array): Asrt {
  const c = new Cursor(payload, 'asrt');
  const h = fullBoxHeader(c);
  const qualitySegmentUrlModifiers = strings(c, c.u8());
  const n = c.u32();
  const segmentRuns = Array.from({ length: n }, () => ({ firstSegment: c.u32(), fragmentsPerSegment: c.u32() }));
  c.end();
  return { ...h, qualitySegmentUrlModifiers, segmentRuns };
}

export function parseAfrt(payload: Uint8Array): Afrt {
  const c = new Cursor(payload, 'afrt');
  const h = fullBoxHeader(c);
  const timeScale = c.u32();
  const qualitySegmentUrlModifiers = strings(c, c.u8());
  const n = c.u32();
  const entries: AfrtEntry[] = [];
  for (let i = 0; i < n; i++) {
    const e: AfrtEntry = { firstFragment: c.u32(), firstFragmentTimestamp: c.u64(), fragmentDuration: c.u32() };
    if (e.fragmentDuration === 0) e.discontinuityIndicator = c.u8();
    entries.push(e);
  }
  c.end();
  return { ...h, timeScale, qualitySegmentUrlModifiers, entries };
}

/** An abst box, header included (what `<bootstrapInfo>` holds). */
export function parseAbst(bytes: Uint8Array): Abst {
  const [top, ...rest] = boxes(bytes, 'bootstrap');
  if (top === undefined || top.type !== 'abst' || rest.length > 0)
    throw new Error('the bootstrap is not exactly one abst box');
  const c = new Cursor(top.payload, 'abst');
  const h = fullBoxHeader(c);
  const bootstrapinfoVersion = c.u32();
  const bits = c.u8();
  const out: Abst = {
    ...h,
    bootstrapinfoVersion,
    profile: bits >> 6,
    live: (bits >> 5) & 1,
    update: (bits >> 4) & 1,
    reserved: bits & 0x0f,
    timeScale: c.u32(),
    currentMediaTime: c.u64(),
    smpteTimeCodeOffset: c.u64(),
    movieIdentifier: c.cstring(),
    serverEntries: strings(c, c.u8()),
    qualityEntries: strings(c, c.u8()),
    drmData: c.cstring(),
    metaData: c.cstring(),
    segmentRunTables: [],
    fragmentRunTables: [],
  };
  const segmentTables = c.u8();
  for (let i = 0; i < segmentTables; i++) out.segmentRunTables.push(parseAsrt(oneBox(c, 'asrt').payload));
  const fragmentTables = c.u8();
  for (let i = 0; i < fragmentTables; i++) out.fragmentRunTables.push(parseAfrt(oneBox(c, 'afrt').payload));
  c.end();
  return out;
}

export interface Afra {
  version: number;
  flags: number;
  longIds: number;
  longOffsets: number;
  globalEntries: number;
  reserved: number;
  timeScale: number;
  entries: Array<{ time: bigint; offset: number }>;
}

export function parseAfra(payload: Uint8Array): Afra {
  const c = new Cursor(payload, 'afra');
  const h = fullBoxHeader(c);
  const bits = c.u8();
  const longOffsets = (bits >> 6) & 1;
  const out: Afra = {
    ...h,
    longIds: bits >> 7,
    longOffsets,
    globalEntries: (bits >> 5) & 1,
    reserved: bits & 0x1f,
    timeScale: c.u32(),
    entries: [],
  };
  const n = c.u32();
  for (let i = 0; i < n; i++) out.entries.push({ time: c.u64(), offset: longOffsets ? Number(c.u64()) : c.u32() });
  if (out.globalEntries) throw new Error('afra: global entries are not expected');
  c.end();
  return out;
}

export interface Trun {
  version: number;
  flags: number;
  sampleCount: number;
  dataOffset?: number;
  samples: Array<{ duration?: number; size?: number; flags?: number; compositionOffset?: number }>;
}

export interface Traf {
  tfhd: { flags: number; trackId: number };
  baseMediaDecodeTime?: bigint;
  truns: Trun[];
}

export interface Moof {
  sequenceNumber: number;
  trafs: Traf[];
}

export function parseMoof(payload: Uint8Array): Moof {
  let sequenceNumber = -1;
  const trafs: Traf[] = [];
  for (const b of boxes(payload, 'moof')) {
    if (b.type === 'mfhd') {
      const c = new Cursor(b.payload, 'mfhd');
      fullBoxHeader(c);
      sequenceNumber = c.u32();
      c.end();
    } else if (b.type === 'traf') {
      trafs.push(parseTraf(b.payload));
    } else throw new Error(`moof: unexpected '${b.type}'`);
  }
  return { sequenceNumber, trafs };
}

function parseTraf(payload: Uint8Array): Traf {
  let tfhd: Traf['tfhd'] | undefined;
  let baseMediaDecodeTime: bigint | undefined;
  const truns: Trun[] = [];
  for (const b of boxes(payload, 'traf')) {
    const c = new Cursor(b.payload, b.type);
    const h = fullBoxHeader(c);
    if (b.type === 'tfhd') {
      tfhd = { flags: h.flags, trackId: c.u32() };
      if (h.flags & ~0x020000) throw new Error(`tfhd: unexpected flags ${h.flags.toString(16)}`);
    } else if (b.type === 'tfdt') {
      baseMediaDecodeTime = h.version === 1 ? c.u64() : BigInt(c.u32());
    } else if (b.type === 'trun') {
      const t: Trun = { ...h, sampleCount: c.u32(), samples: [] };
      if (h.flags & 0x1) t.dataOffset = c.i32();
      if (h.flags & 0x4) c.u32();
      for (let i = 0; i < t.sampleCount; i++) {
        const s: Trun['samples'][number] = {};
        if (h.flags & 0x100) s.duration = c.u32();
        if (h.flags & 0x200) s.size = c.u32();
        if (h.flags & 0x400) s.flags = c.u32();
        if (h.flags & 0x800) s.compositionOffset = h.version === 1 ? c.i32() : c.u32();
        t.samples.push(s);
      }
      truns.push(t);
    } else throw new Error(`traf: unexpected '${b.type}'`);
    c.end();
  }
  if (tfhd === undefined) throw new Error('traf without tfhd');
  return { tfhd, ...(baseMediaDecodeTime !== undefined ? { baseMediaDecodeTime } : {}), truns };
}

export interface FlvTag {
  /** Offset of the tag's first byte in the bytes given. */
  start: number;
  filter: number;
  tagType: number;
  dataSize: number;
  /** ms, Timestamp + TimestampExtended × 2^24. */
  timestamp: number;
  streamId: number;
  previousTagSize: number;
  /** Video: FrameType, CodecID, AVCPacketType, CompositionTime. */
  frameType?: number;
  codecId?: number;
  avcPacketType?: number;
  compositionTime?: number;
  /** Audio: SoundFormat, SoundRate, SoundSize, SoundType, AACPacketType. */
  soundFormat?: number;
  soundRate?: number;
  soundSize?: number;
  soundType?: number;
  aacPacketType?: number;
  /** Offset of the payload after the codec header, in the bytes given. */
  bodyAt: number;
  body: Uint8Array;
}

/** FLV tags each followed by its PreviousTagSize, filling `bytes` exactly (an HDS mdat payload). */
export function parseFlvTags(bytes: Uint8Array): FlvTag[] {
  const c = new Cursor(bytes, 'flv');
  const out: FlvTag[] = [];
  while (c.remaining > 0) {
    const start = c.at;
    const first = c.u8();
    const dataSize = c.u24();
    const low = c.u24();
    const timestamp = low + c.u8() * 0x1000000;
    const streamId = c.u24();
    const dataStart = c.at;
    const tag: Partial<FlvTag> = {
      start,
      filter: (first >> 5) & 1,
      tagType: first & 0x1f,
      dataSize,
      timestamp,
      streamId,
    };
    if (first >> 6 !== 0) throw new Error(`flv: reserved bits set at ${start}`);
    if (tag.tagType === 9) {
      const b = c.u8();
      Object.assign(tag, { frameType: b >> 4, codecId: b & 0x0f, avcPacketType: c.u8(), compositionTime: c.si24() });
    } else if (tag.tagType === 8) {
      const b = c.u8();
      Object.assign(tag, { soundFormat: b >> 4, soundRate: (b >> 2) & 3, soundSize: (b >> 1) & 1, soundType: b & 1 });
      if (tag.soundFormat === 10) tag.aacPacketType = c.u8();
    }
    const bodyAt = c.at;
    if (bodyAt - dataStart > dataSize) throw new Error(`flv: tag at ${start} is shorter than its codec header`);
    tag.bodyAt = bodyAt;
    tag.body = c.bytesOf(dataSize - (bodyAt - dataStart));
    tag.previousTagSize = c.u32();
    if (tag.previousTagSize !== 11 + dataSize)
      throw new Error(`flv: PreviousTagSize ${tag.previousTagSize} after a tag of ${11 + dataSize} bytes at ${start}`);
    out.push(tag as FlvTag);
  }
  return out;
}

export type Amf0 = number | boolean | string | Array<[string, Amf0]>;

/** AMF0 values back to back, filling `bytes` exactly. */
export function parseAmf0(bytes: Uint8Array): Amf0[] {
  const c = new Cursor(bytes, 'amf0');
  const out: Amf0[] = [];
  while (c.remaining > 0) out.push(amf0Value(c));
  return out;
}

function amf0String(c: Cursor): string {
  return new TextDecoder().decode(c.bytesOf(c.u16()));
}

function amf0Value(c: Cursor): Amf0 {
  const marker = c.u8();
  switch (marker) {
    case 0:
      return c.f64();
    case 1:
      return c.u8() !== 0;
    case 2:
      return amf0String(c);
    case 8: {
      const count = c.u32();
      const props: Array<[string, Amf0]> = [];
      for (;;) {
        const name = amf0String(c);
        if (name === '') {
          if (c.u8() !== 9) throw new Error('amf0: an empty property name not followed by object-end');
          break;
        }
        props.push([name, amf0Value(c)]);
      }
      if (count !== props.length) throw new Error(`amf0: ECMA array says ${count} properties, holds ${props.length}`);
      return props;
    }
    default:
      throw new Error(`amf0: unexpected marker ${marker} at ${c.at - 1}`);
  }
}

/** An F4F fragment split into its boxes, parsed: exactly afra, moof, mdat. */
export function parseFragment(bytes: Uint8Array): {
  afra: Afra;
  moof: Moof;
  moofStart: number;
  mdatPayloadStart: number;
  tags: FlvTag[];
  boxTypes: string[];
} {
  const list = boxes(bytes, 'fragment');
  const types = list.map((b) => b.type);
  const [afra, moof, mdat] = list;
  if (types.join() !== 'afra,moof,mdat') throw new Error(`fragment boxes: ${types.join(' ')}`);
  const mdatPayloadStart = mdat!.payload.byteOffset - bytes.byteOffset;
  return {
    afra: parseAfra(afra!.payload),
    moof: parseMoof(moof!.payload),
    moofStart: moof!.start,
    mdatPayloadStart,
    tags: parseFlvTags(mdat!.payload),
    boxTypes: types,
  };
}
