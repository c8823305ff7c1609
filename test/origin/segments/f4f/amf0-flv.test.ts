// AMF0 and FLV tag writers: exact bytes where the specifications fix them (AMF0 §2, FLV 10.1
// Annex E), round trips through the tests' own readers, and the values they refuse.

import { OriginError } from '../../../../origin/errors';
import { serialize } from '../../../../origin/segments/box-writer';
import { amf0Value, onMetaData } from '../../../../origin/segments/f4f/amf0';
import {
  AAC_PACKET,
  AAC_SOUND_BYTE,
  audioTag,
  audioTagSize,
  AVC_PACKET,
  videoTag,
  videoTagSize,
} from '../../../../origin/segments/f4f/flv';
import { parseAmf0, parseFlvTags } from './f4f-reader';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

describe('AMF0', () => {
  test('numbers, booleans and strings have the bytes of AMF0 §2.2–2.4', () => {
    expect(hex(serialize(amf0Value(1)))).toBe('003ff0000000000000'); // marker 0, IEEE 754 big-endian
    expect(hex(serialize(amf0Value(true)))).toBe('0101');
    expect(hex(serialize(amf0Value(false)))).toBe('0100');
    expect(hex(serialize(amf0Value('ab')))).toBe('0200026162');
  });

  test('an ECMA array: count, properties, empty name and object-end (§2.10, §2.11)', () => {
    expect(hex(serialize(amf0Value([['x', 2]])))).toBe(
      '08' + '00000001' + '0001' + '78' + '004000000000000000' + '0000' + '09',
    );
  });

  test('onMetaData is the method name then its ECMA array, and reads back', () => {
    const props: Array<[string, number | boolean | string]> = [
      ['duration', 10.021],
      ['width', 640],
      ['stereo', true],
      ['encoder', 'Streaming Origin ✓'],
    ];
    expect(parseAmf0(onMetaData(props))).toEqual(['onMetaData', props]);
  });

  test('refuses what AMF0 cannot say', () => {
    expect(() => amf0Value(NaN)).toThrow(OriginError);
    expect(() => amf0Value(Infinity)).toThrow(OriginError);
    expect(() => amf0Value('x'.repeat(65536))).toThrow(/65535/);
    expect(() => amf0Value([['y'.repeat(70000), 1]])).toThrow(/65535/);
  });
});

describe('FLV tags', () => {
  const data = new Uint8Array([1, 2, 3, 4, 5]);

  test('a video tag: header, VIDEODATA, AVCVIDEOPACKET, payload, PreviousTagSize (E.4.1, E.4.3)', () => {
    const bytes = serialize(
      videoTag({ timestampMs: 0x12345678, keyframe: true, packetType: AVC_PACKET.nalu, compositionMs: 83, data }),
    );
    expect(bytes.byteLength).toBe(videoTagSize(data.byteLength));
    expect(hex(bytes)).toBe(
      '09' + // TagType 9, Filter 0, Reserved 0
        '00000a' + // DataSize: 5 header bytes + 5
        '345678' + // Timestamp: low 24 bits
        '12' + // TimestampExtended: high 8 bits
        '000000' + // StreamID
        '17' + // FrameType 1 (key) | CodecID 7 (AVC)
        '01' + // AVCPacketType 1 (NAL units)
        '000053' + // CompositionTime 83
        '0102030405' +
        '00000015', // PreviousTagSize 11 + 10
    );
  });

  test("an inter frame with a negative composition time (SI24, two's complement)", () => {
    const [tag] = parseFlvTags(
      serialize(videoTag({ timestampMs: 5, keyframe: false, packetType: AVC_PACKET.nalu, compositionMs: -42, data })),
    );
    expect(tag).toMatchObject({
      tagType: 9,
      frameType: 2,
      codecId: 7,
      avcPacketType: 1,
      compositionTime: -42,
      timestamp: 5,
      streamId: 0,
    });
  });

  test('an AAC tag: SoundFormat 10, rate 3, 16-bit, stereo, whatever the audio (E.4.2.1)', () => {
    expect(AAC_SOUND_BYTE).toBe(0xaf);
    const bytes = serialize(
      audioTag({ timestampMs: 1000, packetType: AAC_PACKET.sequenceHeader, data: new Uint8Array([0x11, 0x90]) }),
    );
    expect(bytes.byteLength).toBe(audioTagSize(2));
    expect(hex(bytes)).toBe('08' + '000004' + '0003e8' + '00' + '000000' + 'af' + '00' + '1190' + '0000000f');
    const [tag] = parseFlvTags(bytes);
    expect(tag).toMatchObject({
      soundFormat: 10,
      soundRate: 3,
      soundSize: 1,
      soundType: 1,
      aacPacketType: 0,
      timestamp: 1000,
    });
  });

  test.each([
    ['a negative timestamp', () => audioTag({ timestampMs: -1, packetType: AAC_PACKET.raw, data })],
    ['a timestamp past 32 bits of ms', () => audioTag({ timestampMs: 2 ** 32, packetType: AAC_PACKET.raw, data })],
    ['a fractional timestamp', () => audioTag({ timestampMs: 1.5, packetType: AAC_PACKET.raw, data })],
    [
      'a composition time past SI24',
      () => videoTag({ timestampMs: 0, keyframe: true, packetType: AVC_PACKET.nalu, compositionMs: 2 ** 23, data }),
    ],
    [
      'a composition time below SI24',
      () =>
        videoTag({ timestampMs: 0, keyframe: true, packetType: AVC_PACKET.nalu, compositionMs: -(2 ** 23) - 1, data }),
    ],
    [
      "a payload past DataSize's 24 bits",
      () => audioTag({ timestampMs: 0, packetType: AAC_PACKET.raw, data: new Uint8Array(0xffffff) }),
    ],
  ])('refuses %s', (_what, make) => {
    expect(make).toThrow(OriginError);
  });

  test('the largest values that fit are written', () => {
    const [a] = parseFlvTags(serialize(audioTag({ timestampMs: 2 ** 32 - 1, packetType: AAC_PACKET.raw, data })));
    expect(a!.timestamp).toBe(2 ** 32 - 1);
    const [v] = parseFlvTags(
      serialize(
        videoTag({ timestampMs: 0, keyframe: true, packetType: AVC_PACKET.nalu, compositionMs: -(2 ** 23), data }),
      ),
    );
    expect(v!.compositionTime).toBe(-(2 ** 23));
  });
});
