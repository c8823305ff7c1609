// The event-box reader (origin/media/event-boxes.ts) against the fixture script's boxes and the
// origin's own emsg writer (round trip), and the SCTE-35 section reader against the fixture's
// sections; bad input named by box and offset.

import { OriginError } from '../../../origin/errors';
import { parseEmib, parseEmsg, parseEventSample } from '../../../origin/media/event-boxes';
import { crc32Mpeg2 } from '../../../origin/media/mpegts/crc32-mpeg';
import { parseSpliceInfoSection, SPLICE_INSERT, TIME_SIGNAL } from '../../../origin/media/scte35';
import { writeEmsg } from '../../../origin/segments/fmp4/emsg';
import { EVENTS, ID3_SCHEME, SCTE35_SCHEME } from '../../helpers/timed-metadata';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const at = { path: 'test', offset: 100 };

function box(type: string, payload: Buffer): Buffer {
  const h = Buffer.alloc(8);
  h.writeUInt32BE(8 + payload.length);
  h.write(type, 4, 'latin1');
  return Buffer.concat([h, payload]);
}

function emsgV0Payload(e: (typeof EVENTS)[number], delta: number): Buffer {
  const f = Buffer.alloc(16);
  f.writeUInt32BE(e.timescale, 0);
  f.writeUInt32BE(delta, 4);
  f.writeUInt32BE(e.duration, 8);
  f.writeUInt32BE(e.id, 12);
  return Buffer.concat([Buffer.alloc(4), Buffer.from(`${e.scheme}\0${e.value}\0`), f, Buffer.from(e.data, 'hex')]);
}

function thrown(f: () => unknown): OriginError {
  try {
    f();
  } catch (e) {
    if (e instanceof OriginError) return e;
    throw e;
  }
  throw new Error('did not throw');
}

describe('emsg', () => {
  it('version 1 round-trips through the writer, every field', () => {
    for (const e of EVENTS) {
      const event = {
        schemeIdUri: e.scheme,
        value: e.value,
        id: e.id,
        timescale: e.timescale,
        time: BigInt(e.time),
        duration: e.duration,
        data: Buffer.from(e.data, 'hex'),
      };
      const bytes = writeEmsg({ event, time: BigInt(e.time) + 7n, timescale: e.timescale });
      expect(bytes.subarray(4, 8).toString()).toBe('101,109,115,103');
      const back = parseEmsg(bytes.subarray(8), at, undefined);
      expect({ ...back, data: hex(back.data) }).toEqual({ ...event, time: event.time + 7n, data: e.data });
    }
  });

  it('version 0 counts from the segment time, converted to its timescale', () => {
    const e = EVENTS.find((x) => x.scheme === ID3_SCHEME)!;
    const back = parseEmsg(emsgV0Payload(e, 250), at, { time: 20_000_000n, timescale: 10_000_000 });
    expect([back.time, back.timescale, back.id, hex(back.data)]).toEqual([2250n, 1000, e.id, e.data]);
  });

  it('refuses a version 0 box with nothing to count from, an unknown version, a zero timescale, a missing NUL', () => {
    const e = EVENTS[0]!;
    expect(thrown(() => parseEmsg(emsgV0Payload(e, 0), at, undefined)).message).toMatch(/version 0 outside a segment/);
    const v2 = emsgV0Payload(e, 0);
    v2[0] = 2;
    expect(thrown(() => parseEmsg(v2, at, undefined)).message).toMatch(/emsg version 2/);
    const noNul = Buffer.concat([Buffer.alloc(4), Buffer.from('urn:x')]);
    const err = thrown(() => parseEmsg(noNul, at, { time: 0n, timescale: 1 }));
    expect([err.code, err.subject, err.message]).toEqual([
      'corrupt-media',
      'test',
      expect.stringMatching(/NUL.*offset 104/),
    ]);
    const zero = emsgV0Payload({ ...e, timescale: 0 }, 0);
    expect(thrown(() => parseEmsg(zero, at, { time: 0n, timescale: 1 })).message).toMatch(/timescale is 0/);
    const short = writeEmsg({
      event: { schemeIdUri: 'a', value: '', id: 1, timescale: 1, time: 0n, duration: 0, data: new Uint8Array() },
      time: 0n,
      timescale: 1,
    });
    expect(thrown(() => parseEmsg(short.subarray(8, 20), at, undefined)).code).toBe('corrupt-media');
  });
});

describe('emib / emeb samples', () => {
  it('places emib by the sample time plus the signed delta; emeb carries nothing', () => {
    const e = EVENTS[1]!;
    const payload = Buffer.alloc(24);
    payload.writeBigInt64BE(-250n, 8);
    payload.writeUInt32BE(e.duration, 16);
    payload.writeUInt32BE(e.id, 20);
    const emib = Buffer.concat([payload, Buffer.from(`${e.scheme}\0\0`), Buffer.from(e.data, 'hex')]);
    const back = parseEmib(emib, at, { time: 4250n, timescale: 1000 });
    expect([back.time, back.id, back.schemeIdUri, hex(back.data)]).toEqual([4000n, e.id, SCTE35_SCHEME, e.data]);
    const sample = Buffer.concat([box('emib', emib), box('emib', emib)]);
    expect(parseEventSample(sample, 'evte', { ...at, time: 4250n, timescale: 1000 })).toHaveLength(2);
    expect(parseEventSample(box('emeb', Buffer.alloc(0)), 'urim', { ...at, time: 0n, timescale: 1000 })).toEqual([]);
  });

  it('refuses a box the sample entry does not announce, naming it and its offset', () => {
    const err = thrown(() => parseEventSample(box('free', Buffer.alloc(0)), 'evte', { ...at, time: 0n, timescale: 1 }));
    expect(err.message).toMatch(/'free' in a evte sample \(expected emib or emeb\).*offset 100/);
    expect(
      thrown(() => parseEventSample(Buffer.from([0, 0, 0, 9, 1]), 'urim', { ...at, time: 0n, timescale: 1 })).code,
    ).toBe('corrupt-media');
  });
});

describe('SCTE-35 splice_info_section', () => {
  const sections = EVENTS.filter((e) => e.scheme === SCTE35_SCHEME).map((e) => Buffer.from(e.data, 'hex'));

  it('reads the fixture cues: splice_insert out and in of event 1001, a time_signal', () => {
    const [out, back, signal] = sections.map((s) => parseSpliceInfoSection(s, at));
    expect(out).toEqual({
      commandType: SPLICE_INSERT,
      ptsAdjustment: 0,
      spliceEventId: 1001,
      cancelled: false,
      outOfNetwork: true,
      ptsTime: 360000,
      breakDuration: 180000,
    });
    expect(back).toMatchObject({
      commandType: SPLICE_INSERT,
      spliceEventId: 1001,
      outOfNetwork: false,
      ptsTime: 540000,
    });
    expect(back!.breakDuration).toBeUndefined();
    expect(signal).toEqual({ commandType: TIME_SIGNAL, ptsAdjustment: 0, ptsTime: 765000 });
  });

  it('checks the CRC: the catalogue check value, and any flipped bit is refused', () => {
    expect(crc32Mpeg2(Buffer.from('123456789'))).toBe(0x0376e6e7);
    const s = sections[0]!;
    for (const i of [0, 5, s.length - 1]) {
      const bad = Buffer.from(s);
      bad[i]! ^= 0x10;
      expect(thrown(() => parseSpliceInfoSection(bad, at)).message).toMatch(/table_id|CRC_32|section_length/);
    }
    const flipped = Buffer.from(s);
    flipped[10]! ^= 1;
    expect(thrown(() => parseSpliceInfoSection(flipped, at)).message).toMatch(/CRC_32 does not match/);
  });

  it('refuses a wrong table_id, a length that disagrees, a short section', () => {
    const s = Buffer.from(sections[0]!);
    s[0] = 0xfd;
    expect(thrown(() => parseSpliceInfoSection(s, at)).message).toMatch(/table_id 0xfd/);
    expect(thrown(() => parseSpliceInfoSection(sections[0]!.subarray(0, 30), at)).message).toMatch(/section_length/);
    expect(thrown(() => parseSpliceInfoSection(Buffer.from([0xfc, 0, 1, 0]), at)).message).toMatch(/shorter/);
  });
});
