// A live encoder for tests: replays the fragments of a fixture file with times rewritten onto a
// UTC timeline, over chunked HTTP POSTs, the way ffmpeg and the DASH-IF / Azure ingest specs push
// (docs/guide/live.md#ingest). Unlike ffmpeg it can stall, drop its socket, reconnect and resend
// (Azure fMP4 ingest §4 req. 7: the last two fragments of every track), send duplicates, run as one
// of two redundant copies, post one segment per request, and end with an empty mfra or `lmsg`.
//
// Time is injectable: `anchorSeconds` is the UTC second the replay starts at (the channel's clock
// must be near it); fragment g of the replay is fixture fragment g mod F of loop ⌊g / F⌋, at
// anchor + loop × (the track's fixture duration) + (its fixture time − the track's first time).

import { readFileSync } from 'node:fs';
import * as http from 'node:http';
import { getBytes } from './live-catalogue';

export interface FixtureFragment {
  trackId: number;
  timescale: number;
  /** Fixture decode time (tfxd or tfdt), track timescale. */
  time: bigint;
  duration: bigint;
  /** moof + mdat. */
  bytes: Uint8Array;
  /** Offsets in `bytes` of the 64-bit times to rewrite (tfxd v1, tfdt v1) and of 32-bit ones (tfdt v0). */
  time64At: number[];
  time32At: number[];
  /**
   * Absolute event times to move with the fragment: `emsg` version 1 presentation_time (64-bit,
   * the box's own timescale), top-level before the moof or inside a `urim` track's samples.
   */
  eventTimesAt: Array<{ at: number; timescale: number }>;
}

export interface Fixture {
  /** ftyp + moov. */
  ftyp: Uint8Array;
  moov: Uint8Array;
  fragments: FixtureFragment[];
  /** Per track: its first fixture time and the duration of one pass over the fixture. */
  tracks: Map<number, { first: bigint; loop: bigint; timescale: number }>;
}

const TFXD = '6d1d9b0542d544e680e2141daff757b2';

function boxes(b: Uint8Array, from: number, to: number): Array<{ type: string; start: number; size: number }> {
  const out = [];
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  for (let at = from; at + 8 <= to;) {
    const size = v.getUint32(at);
    out.push({ type: String.fromCharCode(...b.subarray(at + 4, at + 8)), start: at, size });
    if (size < 8) break;
    at += size;
  }
  return out;
}

/** Version 1 emsg boxes among `list` (boxes of `b`): where their presentation_time is, relative to `base`. */
function emsgV1Times(
  b: Uint8Array,
  list: Array<{ type: string; start: number }>,
  base: number,
): Array<{ at: number; timescale: number }> {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  return list
    .filter((x) => x.type === 'emsg' && b[x.start + 8] === 1)
    .map((x) => ({ at: x.start + 16 - base, timescale: v.getUint32(x.start + 12) }));
}

/**
 * Reads a fragmented MP4 fixture: its header, and each fragment — the top-level emsg boxes before
 * its moof, the moof, its mdat — with where its times are written.
 */
export function loadFixture(file: string): Fixture {
  const b = new Uint8Array(readFileSync(file));
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const top = boxes(b, 0, b.byteLength);
  const ftyp = top.find((x) => x.type === 'ftyp')!;
  const moov = top.find((x) => x.type === 'moov')!;
  const timescales = new Map<number, number>();
  const urim = new Set<number>();
  for (const trak of boxes(b, moov.start + 8, moov.start + moov.size).filter((x) => x.type === 'trak')) {
    const inner = boxes(b, trak.start + 8, trak.start + trak.size);
    const tkhd = inner.find((x) => x.type === 'tkhd')!;
    const id = v.getUint32(tkhd.start + 8 + (b[tkhd.start + 8] === 1 ? 20 : 12));
    const mdia = inner.find((x) => x.type === 'mdia')!;
    const mdhd = boxes(b, mdia.start + 8, mdia.start + mdia.size).find((x) => x.type === 'mdhd')!;
    timescales.set(id, v.getUint32(mdhd.start + 8 + (b[mdhd.start + 8] === 1 ? 20 : 12)));
    // The first sample entry's type: mdia/minf/stbl/stsd, 8 bytes into stsd's payload.
    const minf = boxes(b, mdia.start + 8, mdia.start + mdia.size).find((x) => x.type === 'minf')!;
    const stbl = boxes(b, minf.start + 8, minf.start + minf.size).find((x) => x.type === 'stbl')!;
    const stsd = boxes(b, stbl.start + 8, stbl.start + stbl.size).find((x) => x.type === 'stsd')!;
    if (String.fromCharCode(...b.subarray(stsd.start + 20, stsd.start + 24)) === 'urim') urim.add(id);
  }
  const fragments: FixtureFragment[] = [];
  let emsgFrom = -1;
  for (let i = 0; i < top.length; i++) {
    const moof = top[i]!;
    const mdat = top[i + 1];
    if (moof.type === 'emsg' && emsgFrom < 0) emsgFrom = i;
    if (moof.type !== 'moof' || mdat?.type !== 'mdat') continue;
    // The emsg boxes right before this moof travel with it (ISO/IEC 23009-1 §5.10.3.3).
    const lead = emsgFrom < 0 ? [] : top.slice(emsgFrom, i).filter((x) => x.type === 'emsg');
    emsgFrom = -1;
    const start = lead[0]?.start ?? moof.start;
    const traf = boxes(b, moof.start + 8, moof.start + moof.size).find((x) => x.type === 'traf')!;
    let trackId = 0;
    let time: bigint | undefined;
    let duration = 0n;
    const time64At: number[] = [];
    const time32At: number[] = [];
    for (const c of boxes(b, traf.start + 8, traf.start + traf.size)) {
      const p = c.start + 8;
      if (c.type === 'tfhd') trackId = v.getUint32(p + 4);
      else if (c.type === 'tfdt') {
        if (b[p] === 1) time64At.push(p + 4 - start);
        else time32At.push(p + 4 - start);
        time ??= b[p] === 1 ? v.getBigUint64(p + 4) : BigInt(v.getUint32(p + 4));
      } else if (c.type === 'uuid' && Buffer.from(b.subarray(p, p + 16)).toString('hex') === TFXD) {
        time64At.push(p + 20 - start);
        time = v.getBigInt64(p + 20);
        duration = v.getBigUint64(p + 28);
      }
    }
    const eventTimesAt = emsgV1Times(b, lead, start);
    // A urim track's samples are emsg boxes one after another: the mdat's payload is a box sequence.
    if (urim.has(trackId))
      eventTimesAt.push(...emsgV1Times(b, boxes(b, mdat.start + 8, mdat.start + mdat.size), start));
    const bytes = b.slice(start, mdat.start + mdat.size);
    const timescale = timescales.get(trackId)!;
    fragments.push({ trackId, timescale, time: time!, duration, bytes, time64At, time32At, eventTimesAt });
  }
  // Without tfxd a fragment's duration is the distance to the next of its track (the last: the one before).
  for (const [i, f] of fragments.entries()) {
    if (f.duration !== 0n) continue;
    const next = fragments.slice(i + 1).find((x) => x.trackId === f.trackId);
    const prev = fragments
      .slice(0, i)
      .reverse()
      .find((x) => x.trackId === f.trackId);
    f.duration = next !== undefined ? next.time - f.time : prev !== undefined ? f.time - prev.time : 0n;
  }
  const tracks = new Map<number, { first: bigint; loop: bigint; timescale: number }>();
  for (const f of fragments) {
    const t = tracks.get(f.trackId) ?? { first: f.time, loop: 0n, timescale: f.timescale };
    if (f.time < t.first) t.first = f.time;
    t.loop += f.duration;
    tracks.set(f.trackId, t);
  }
  return {
    ftyp: b.slice(ftyp.start, ftyp.start + ftyp.size),
    moov: b.slice(moov.start, moov.start + moov.size),
    fragments,
    tracks,
  };
}

/** A box of `type` around `payload`. */
export function box(type: string, ...payload: Uint8Array[]): Uint8Array {
  const size = 8 + payload.reduce((n, p) => n + p.byteLength, 0);
  const out = new Uint8Array(size);
  new DataView(out.buffer).setUint32(0, size);
  out.set(Buffer.from(type, 'latin1'), 4);
  let at = 8;
  for (const p of payload) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

/** MS-SSTR §2.2.7.3 LiveServerManifestBox around a SMIL document. */
export function liveServerManifestBox(smil: string): Uint8Array {
  return box('uuid', Buffer.from('a5d40b30e81411ddba2f0800200c9a66', 'hex'), new Uint8Array(4), Buffer.from(smil));
}

/** The empty mfra that ends a Smooth ingest stream. */
export const EMPTY_MFRA = box('mfra');

/** A styp carrying the DASH-IF ingest `lmsg` brand (the last segment of a track). */
export function stypLmsg(): Uint8Array {
  return box('styp', Buffer.from('msdh'), new Uint8Array(4), Buffer.from('msdhmsixlmsg'));
}

export interface EncoderOptions {
  /** Ingest URL up to the channel: http://host:port/live/ch1.isml */
  channelUrl: string;
  stream: string;
  fixture: Fixture;
  /** UTC second the replay starts at. */
  anchorSeconds: number;
  method?: 'POST' | 'PUT';
  /** `user:password` for Basic auth. */
  credentials?: string;
  /** A Live Server Manifest Box (Smooth ingest) after the ftyp. */
  serverManifest?: string;
  contentType?: string;
}

export interface IngestAnswer {
  status: number;
  body: string;
  error?: string;
  headers: http.IncomingHttpHeaders;
}

/** One chunked POST in progress. */
export class Push {
  readonly answer: Promise<IngestAnswer>;
  private readonly req: http.ClientRequest;

  constructor(url: string, o: { method: string; credentials?: string; contentType?: string }) {
    const headers: http.OutgoingHttpHeaders = { 'Transfer-Encoding': 'chunked', 'User-Agent': 'origin-test-encoder' };
    if (o.credentials !== undefined) headers.Authorization = `Basic ${Buffer.from(o.credentials).toString('base64')}`;
    if (o.contentType !== undefined) headers['Content-Type'] = o.contentType;
    this.req = http.request(url, { method: o.method, headers, agent: false });
    this.answer = new Promise((resolve) => {
      this.req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), headers: res.headers }),
        );
        res.on('error', (e) => resolve({ status: res.statusCode ?? 0, body: '', error: e.message, headers: {} }));
      });
      this.req.on('error', (e) => resolve({ status: 0, body: '', error: e.message, headers: {} }));
    });
    this.req.flushHeaders();
  }

  /** Writes bytes as one chunk; resolves once they are handed to the socket. */
  write(bytes: Uint8Array): Promise<void> {
    return new Promise((resolve) => {
      if (this.req.destroyed) return resolve();
      this.req.write(bytes, () => resolve());
    });
  }

  /** Ends the chunked body gracefully and waits for the answer. */
  end(): Promise<IngestAnswer> {
    if (!this.req.destroyed) this.req.end();
    return this.answer;
  }

  /** Drops the connection (an encoder crash). */
  abort(): void {
    this.req.destroy();
  }
}

export class TestEncoder {
  private readonly o: EncoderOptions;
  push: Push | undefined;
  /** Global indexes of the fragments sent, per track, in order. */
  readonly sent = new Map<number, number[]>();

  constructor(o: EncoderOptions) {
    this.o = o;
  }

  get url(): string {
    return `${this.o.channelUrl}/Streams(${this.o.stream})`;
  }

  /** The header: ftyp, the Live Server Manifest Box when configured, moov. */
  header(): Uint8Array {
    const parts = [this.o.fixture.ftyp];
    if (this.o.serverManifest !== undefined) parts.push(liveServerManifestBox(this.o.serverManifest));
    parts.push(this.o.fixture.moov);
    return Buffer.concat(parts);
  }

  /** Fragment g of the replay with its UTC time written in. */
  fragment(g: number): { bytes: Uint8Array; trackId: number; time: bigint; duration: bigint } {
    const fx = this.o.fixture;
    const f = fx.fragments[g % fx.fragments.length]!;
    const loop = BigInt(Math.floor(g / fx.fragments.length));
    const t = fx.tracks.get(f.trackId)!;
    const time = BigInt(this.o.anchorSeconds) * BigInt(t.timescale) + loop * t.loop + (f.time - t.first);
    const bytes = f.bytes.slice();
    const v = new DataView(bytes.buffer);
    for (const at of f.time64At) v.setBigInt64(at, time);
    for (const at of f.time32At) v.setUint32(at, Number(time & 0xffffffffn));
    // Events move with their fragment, in their own timescale.
    const shift = time - f.time;
    for (const e of f.eventTimesAt)
      v.setBigUint64(e.at, v.getBigUint64(e.at) + (shift * BigInt(e.timescale)) / BigInt(t.timescale));
    return { bytes, trackId: f.trackId, time, duration: f.duration };
  }

  /** Starts a long POST and sends the header. */
  async open(): Promise<Push> {
    this.push = new Push(this.url, {
      method: this.o.method ?? 'POST',
      credentials: this.o.credentials,
      contentType: this.o.contentType,
    });
    await this.push.write(this.header());
    return this.push;
  }

  /** Sends fragments [from, to) on the open POST. */
  async send(from: number, to: number = from + 1): Promise<void> {
    for (let g = from; g < to; g++) {
      const f = this.fragment(g);
      await this.push!.write(f.bytes);
      const list = this.sent.get(f.trackId) ?? [];
      list.push(g);
      this.sent.set(f.trackId, list);
    }
  }

  /** Ends the open POST: with an empty mfra first when `eos`. */
  async close(eos = false): Promise<IngestAnswer> {
    if (eos) await this.push!.write(EMPTY_MFRA);
    return this.push!.end();
  }

  /** Sends nothing for `ms` with the connection open (an encoder that stalls). */
  stall(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms));
  }

  /** The connection drops (no end of the chunked body). */
  drop(): void {
    this.push?.abort();
  }

  /** Reconnects (Azure §4 req. 7): a new POST, the same header, the last two fragments of every track again. */
  async reconnect(): Promise<Push> {
    const push = await this.open();
    const again = [...this.sent.values()].flatMap((l) => l.slice(-2)).sort((a, b) => a - b);
    for (const g of again) await push.write(this.fragment(g).bytes);
    return push;
  }

  /** One request with exactly these bytes (one segment per request, DASH-IF ingest interface 1). */
  async postOnce(bytes: Uint8Array): Promise<IngestAnswer> {
    const p = new Push(this.url, { method: this.o.method ?? 'PUT', credentials: this.o.credentials });
    await p.write(bytes);
    return p.end();
  }
}

/** GET a URL's status and text body. */
export async function httpGet(
  url: string,
): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }> {
  const r = await getBytes(url);
  return { status: r.status, body: r.body.toString(), headers: r.headers };
}
