import { OriginError } from '../../../origin/errors';
import { parseAudioSpecificConfig } from '../../../origin/media/audio-config';
import { parseDac3, parseDec3 } from '../../../origin/media/codec-config';
import { parseSps, unescapeRbsp } from '../../../origin/media/h264-sps';

const hex = (s: string) => Uint8Array.from(Buffer.from(s, 'hex'));

describe('AudioSpecificConfig (ISO/IEC 14496-3 §1.6.2.1)', () => {
  test('AAC-LC 48 kHz stereo, the reference\u2019s 1190', () => {
    expect(parseAudioSpecificConfig(hex('1190'))).toEqual({ objectType: 2, sampleRate: 48000, channels: 2 });
  });
  test('AAC-LC 44.1 kHz mono', () => {
    expect(parseAudioSpecificConfig(hex('1208'))).toEqual({ objectType: 2, sampleRate: 44100, channels: 1 });
  });
  test('explicit HE-AAC: SBR object type, output rate from the extension', () => {
    // aot 5, 24 kHz core (index 6), stereo, extension rate 48 kHz (index 3), then aot 2.
    expect(parseAudioSpecificConfig(hex('2B118800'))).toEqual({ objectType: 5, sampleRate: 48000, channels: 2 });
  });
  test('escape rate index 15 carries 24 bits', () => {
    // aot 2, index 15, rate 0x00BB80 (48000), channel config 2
    const bits = '00010' + '1111' + (48000).toString(2).padStart(24, '0') + '0010' + '000';
    const bytes = Uint8Array.from(
      bits
        .padEnd(40, '0')
        .match(/.{8}/g)!
        .map((b) => parseInt(b, 2)),
    );
    expect(parseAudioSpecificConfig(bytes)).toEqual({ objectType: 2, sampleRate: 48000, channels: 2 });
  });
  test('too short is corrupt, not a crash', () => {
    expect(() => parseAudioSpecificConfig(hex('11'))).toThrow(OriginError);
  });
  test('a reserved rate index is named', () => {
    expect(() => parseAudioSpecificConfig(hex('1680'))).toThrow(/reserved samplingFrequencyIndex 13/);
  });
});

describe('dac3 / dec3 (ETSI TS 102 366 Annex F)', () => {
  test('AC-3 5.1 at 48 kHz (the fixture\u2019s 103DC0)', () => {
    expect(parseDac3(hex('103DC0'))).toMatchObject({ kind: 'ac3', bsid: 8, sampleRate: 48000, channels: 6 });
  });
  test('AC-3 stereo without LFE at 44.1 kHz', () => {
    // fscod 01, bsid 01000, bsmod 000, acmod 010, lfeon 0
    const bits = '01' + '01000' + '000' + '010' + '0' + '00000' + '00000';
    expect(parseDac3(Uint8Array.from(bits.match(/.{8}/g)!.map((b) => parseInt(b, 2))))).toMatchObject({
      kind: 'ac3',
      bsid: 8,
      sampleRate: 44100,
      channels: 2,
    });
  });
  test('reserved fscod is corrupt', () => {
    expect(() => parseDac3(hex('D03DC0'))).toThrow(/reserved fscod 3/);
  });
  test('E-AC-3: channels of the first independent substream', () => {
    // data_rate 256, num_ind_sub 0, fscod 00, bsid 16, reserved, asvc 0, bsmod 0, acmod 7, lfeon 1
    const bits =
      (256).toString(2).padStart(13, '0') +
      '000' +
      '00' +
      '10000' +
      '0' +
      '0' +
      '000' +
      '111' +
      '1' +
      '000' +
      '0000' +
      '0';
    const bytes = Uint8Array.from(
      bits
        .padEnd(40, '0')
        .match(/.{8}/g)!
        .map((b) => parseInt(b, 2)),
    );
    expect(parseDec3(bytes)).toMatchObject({ kind: 'ec3', bsid: 16, sampleRate: 48000, channels: 6 });
  });
});

describe('H.264 SPS (ITU-T H.264 §7.3.2.1.1)', () => {
  // The fixture video_sar_500k.ismv: Main@3.0, 480x360, SAR 4:3 (aspect_ratio_idc 14), 24 fps.
  const SAR_SPS = hex('674D401EECA0F05FF2E1C200000300020000030061C04003D08000F427251803C58B6580');
  test('size, SAR, frame rate from the VUI', () => {
    const s = parseSps(SAR_SPS);
    expect(s).toMatchObject({
      profileIdc: 77,
      levelIdc: 30,
      width: 480,
      height: 360,
      interlaced: false,
      sar: { num: 4, den: 3 },
      frameRate: { num: 24, den: 1 },
    });
  });
  test('interlaced (frame_mbs_only_flag = 0): field-pair height', () => {
    const s = parseSps(hex('6764001EACD940B424D80880000003008000001972400186A0030D7251807C50A658'));
    expect(s).toMatchObject({
      profileIdc: 100,
      width: 720,
      height: 576,
      interlaced: true,
      frameRate: { num: 25, den: 1 },
    });
  });
  test('emulation prevention bytes are removed', () => {
    expect([...unescapeRbsp(hex('0000030100000302'))]).toEqual([0, 0, 1, 0, 0, 2]);
  });
  test('a truncated SPS is corrupt media naming the SPS', () => {
    expect(() => parseSps(SAR_SPS.subarray(0, 6))).toThrow(/avcC\/SPS: SPS ends early|avcC\/SPS/);
  });
  test('a NAL that is not an SPS is refused', () => {
    expect(() => parseSps(hex('68EFBC80'))).toThrow(/not a sequence parameter set/);
  });
});
