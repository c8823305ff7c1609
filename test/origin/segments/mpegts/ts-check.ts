// A small MPEG-TS checker of the tests' own (ISO/IEC 13818-1), independent of the origin's
// writer: it reads the segments of one rendition in playlist order, as a player reading the
// playlist as one stream would, and lists every rule broken:
// - 188-byte packets with sync byte 0x47;
// - each segment starts with a PAT (PID 0) naming the PMT PID, then that PMT (both CRC-checked);
// - continuity counters continue per PID across packets and segments (§2.4.3.3: +1 on packets
//   with payload, unchanged on adaptation-only packets);
// - PCR on the PMT's PCR_PID: present before the first PES of every segment, never decreasing,
//   at most 100 ms (9000 at 90 kHz) apart (also across segment boundaries), never after the DTS of
//   a PES that starts after it;
// - PES: start code, PTS present, PTS ≥ DTS, PES_packet_length (when not 0) equal to the bytes
//   that arrive before the next PES of that PID.
// It also returns what it saw, for tests that check timestamps and contents.

export interface TsPes {
  segment: number;
  pid: number;
  streamId: number;
  pts: bigint;
  dts: bigint;
  /** The PES payload (after its header). */
  payload: Buffer;
}

export interface TsStreamInfo {
  streamType: number;
  pid: number;
  descriptors: Buffer;
}

export interface TsCheck {
  problems: string[];
  pes: TsPes[];
  /** PMT streams of the first segment. */
  streams: TsStreamInfo[];
  pcrPid: number | undefined;
  pcrs: bigint[];
  /** Packets per segment. */
  packets: number[];
}

const MAX_PCR_GAP = 9000n;

/** CRC_32 of the PSI sections (§2.4.4.10): MSB-first, polynomial 0x04C11DB7, init all ones. */
export function crc32(bytes: Buffer): number {
  let crc = 0xffffffff;
  for (const b of bytes) {
    crc ^= b << 24;
    for (let k = 0; k < 8; k++) crc = crc & 0x80000000 ? (crc << 1) ^ 0x04c11db7 : crc << 1;
    crc >>>= 0;
  }
  return crc >>> 0;
}

function readTimestamp(b: Buffer, at: number): bigint {
  return (
    (BigInt((b[at]! >> 1) & 7) << 30n) |
    (BigInt(b.readUInt16BE(at + 1) >> 1) << 15n) |
    BigInt(b.readUInt16BE(at + 3) >> 1)
  );
}

interface Open {
  segment: number;
  streamId: number;
  pts: bigint;
  dts: bigint;
  declared: number;
  chunks: Buffer[];
}

export function checkTs(segments: readonly Buffer[]): TsCheck {
  const problems: string[] = [];
  const pes: TsPes[] = [];
  const lastCc = new Map<number, number>();
  const open = new Map<number, Open>();
  const pcrs: bigint[] = [];
  const packets: number[] = [];
  let streams: TsStreamInfo[] = [];
  let pcrPid: number | undefined;
  let lastPcr: bigint | undefined;
  const problem = (seg: number, at: number, what: string): void => {
    if (problems.length < 50) problems.push(`segment ${seg + 1}, packet ${at / 188}: ${what}`);
  };
  const close = (pid: number): void => {
    const o = open.get(pid);
    if (o === undefined) return;
    const payload = Buffer.concat(o.chunks);
    if (o.declared !== 0 && o.declared !== payload.byteLength)
      problem(
        o.segment,
        0,
        `PID ${pid}: PES_packet_length says ${o.declared} payload bytes, ${payload.byteLength} arrived`,
      );
    pes.push({ segment: o.segment, pid, streamId: o.streamId, pts: o.pts, dts: o.dts, payload });
    open.delete(pid);
  };

  segments.forEach((seg, s) => {
    if (seg.byteLength % 188 !== 0 || seg.byteLength === 0)
      problem(s, 0, `${seg.byteLength} bytes is not a whole number of packets`);
    packets.push(Math.floor(seg.byteLength / 188));
    let pmtPid: number | undefined;
    let sawPmt = false;
    let sawPcrThisSegment = false;
    for (let at = 0; at + 188 <= seg.byteLength; at += 188) {
      const p = seg.subarray(at, at + 188);
      if (p[0] !== 0x47) {
        problem(s, at, `sync byte 0x${p[0]!.toString(16)}`);
        continue;
      }
      const unitStart = (p[1]! & 0x40) !== 0;
      const pid = ((p[1]! & 0x1f) << 8) | p[2]!;
      const afc = (p[3]! >> 4) & 3;
      const cc = p[3]! & 0x0f;
      const hasPayload = (afc & 1) !== 0;
      if (afc === 0) problem(s, at, 'adaptation_field_control 00');
      // Continuity.
      const last = lastCc.get(pid);
      if (last !== undefined) {
        const expected = hasPayload ? (last + 1) & 0x0f : last;
        if (cc !== expected) problem(s, at, `PID ${pid}: continuity counter ${cc}, expected ${expected}`);
      }
      lastCc.set(pid, cc);
      let body = 4;
      if (afc & 2) {
        const length = p[4]!;
        if (length > (hasPayload ? 182 : 183)) problem(s, at, `adaptation_field_length ${length}`);
        if (length > 0 && p[5]! & 0x10) {
          const base = (BigInt(p.readUInt32BE(6)) << 1n) | BigInt(p[10]! >> 7);
          if (pid !== pcrPid) problem(s, at, `PCR on PID ${pid}, the PMT says ${pcrPid}`);
          if (lastPcr !== undefined && base < lastPcr) problem(s, at, `PCR ${base} goes back from ${lastPcr}`);
          if (lastPcr !== undefined && base - lastPcr > MAX_PCR_GAP)
            problem(s, at, `PCR gap ${base - lastPcr} (> 100 ms)`);
          lastPcr = base;
          pcrs.push(base);
          sawPcrThisSegment = true;
        }
        body = 5 + length;
      }
      if (!hasPayload) continue;
      const payload = p.subarray(body);
      // PSI.
      if (pid === 0 || pid === pmtPid) {
        if (!unitStart) {
          problem(s, at, `PSI on PID ${pid} without payload_unit_start`);
          continue;
        }
        const section = payload.subarray(1 + payload[0]!);
        const length = ((section[1]! & 0x0f) << 8) | section[2]!;
        const whole = section.subarray(0, 3 + length);
        if (crc32(whole.subarray(0, whole.byteLength - 4)) !== whole.readUInt32BE(whole.byteLength - 4))
          problem(s, at, `PID ${pid}: CRC_32 mismatch`);
        if (pid === 0) {
          if (at !== 0) problem(s, at, 'the PAT is not the first packet');
          if (section[0] !== 0) problem(s, at, `table_id ${section[0]} on PID 0`);
          pmtPid = ((section[10]! & 0x1f) << 8) | section[11]!;
        } else {
          if (at !== 188) problem(s, at, 'the PMT is not the second packet');
          if (section[0] !== 2) problem(s, at, `table_id ${section[0]} on the PMT PID`);
          pcrPid = ((section[8]! & 0x1f) << 8) | section[9]!;
          const infoLength = ((section[10]! & 0x0f) << 8) | section[11]!;
          const found: TsStreamInfo[] = [];
          for (let i = 12 + infoLength; i < 3 + length - 4;) {
            const esLength = ((section[i + 3]! & 0x0f) << 8) | section[i + 4]!;
            found.push({
              streamType: section[i]!,
              pid: ((section[i + 1]! & 0x1f) << 8) | section[i + 2]!,
              descriptors: Buffer.from(section.subarray(i + 5, i + 5 + esLength)),
            });
            i += 5 + esLength;
          }
          if (s === 0) streams = found;
          else if (JSON.stringify(found) !== JSON.stringify(streams))
            problem(s, at, "the PMT differs from the first segment's");
          sawPmt = true;
        }
        continue;
      }
      if (pmtPid === undefined || !sawPmt) problem(s, at, 'elementary stream data before the PAT and PMT');
      if (!streams.some((x) => x.pid === pid)) {
        problem(s, at, `payload on PID ${pid}, which the PMT does not list`);
        continue;
      }
      if (unitStart) {
        close(pid);
        if (payload[0] !== 0 || payload[1] !== 0 || payload[2] !== 1) {
          problem(s, at, `PID ${pid}: no PES start code`);
          continue;
        }
        const flags = payload[7]!;
        if ((flags & 0x80) === 0) problem(s, at, `PID ${pid}: PES without PTS`);
        const pts = readTimestamp(payload, 9);
        const dts = (flags & 0xc0) === 0xc0 ? readTimestamp(payload, 14) : pts;
        if (pts < dts) problem(s, at, `PID ${pid}: PTS ${pts} < DTS ${dts}`);
        if (!sawPcrThisSegment) problem(s, at, `PID ${pid}: a PES before the segment's first PCR`);
        else if (lastPcr! > dts)
          problem(s, at, `PID ${pid}: PCR ${lastPcr} is after the DTS ${dts} of the PES that follows it`);
        const headerEnd = 9 + payload[8]!;
        const declared = payload.readUInt16BE(4);
        open.set(pid, {
          segment: s,
          streamId: payload[3]!,
          pts,
          dts,
          declared: declared === 0 ? 0 : declared - 3 - payload[8]!,
          chunks: [Buffer.from(payload.subarray(headerEnd))],
        });
      } else {
        const o = open.get(pid);
        if (o === undefined) problem(s, at, `PID ${pid}: payload without a PES start`);
        else o.chunks.push(Buffer.from(payload));
      }
    }
    if (!sawPmt) problem(s, 0, 'no PAT and PMT');
    // A PES never spans a segment boundary (each segment decodes on its own).
    for (const pid of [...open.keys()]) close(pid);
  });
  return { problems, pes, streams, pcrPid, pcrs, packets };
}

/** Splits an ADTS stream into frames (ISO/IEC 13818-7 §6.2), checking each header. */
export function adtsFrames(b: Buffer): { frames: Buffer[]; problems: string[] } {
  const frames: Buffer[] = [];
  const problems: string[] = [];
  for (let at = 0; at < b.byteLength;) {
    if (b[at] !== 0xff || (b[at + 1]! & 0xf6) !== 0xf0) {
      problems.push(`no ADTS syncword at ${at}`);
      break;
    }
    const length = ((b[at + 3]! & 3) << 11) | (b[at + 4]! << 3) | (b[at + 5]! >> 5);
    if (length < 7 || at + length > b.byteLength) {
      problems.push(`ADTS frame_length ${length} at ${at}`);
      break;
    }
    frames.push(b.subarray(at, at + length));
    at += length;
  }
  return { frames, problems };
}
