// What the MPEG-TS and packed-audio writers need from a track's sample entry (the source's own
// `stsd`, TrackHeader.stsd): the H.264 decoder configuration (avcC: NAL length size, SPS, PPS),
// the AAC AudioSpecificConfig (esds), and the AC-3 / E-AC-3 configuration (dac3, dec3). Pure: bytes
// in, values out; every length is checked and errors name the box path.
//
// Layouts: ISO/IEC 14496-12 §8.5.2 stsd, §12.1.3 VisualSampleEntry, §12.2.3 AudioSampleEntry (and
// the QuickTime sound description versions 1 and 2 some muxers still write); ISO/IEC 14496-15
// §5.3.3.1 AVCDecoderConfigurationRecord; ISO/IEC 14496-1 §7.2.6.5 ES_Descriptor, §7.2.6.6
// DecoderConfigDescriptor, §7.2.6.7 DecoderSpecificInfo; ETSI TS 102 366 Annex F.4 / F.6.

import { originError } from '../errors';
import { childBoxes } from './boxes';
import { ByteReader } from './byte-reader';
import { BitReader } from './bit-reader';

export interface AvcConfig {
  kind: 'avc';
  /** Bytes of each NAL unit's length field in the samples (lengthSizeMinusOne + 1). */
  lengthSize: 1 | 2 | 3 | 4;
  /** SPS then PPS NAL units, without length or start code. */
  parameterSets: Uint8Array[];
}

export interface AacConfig {
  kind: 'aac';
  /** The AudioSpecificConfig bytes. */
  asc: Uint8Array;
}

export interface DolbyConfig {
  kind: 'ac3' | 'ec3';
  /** Full channel count (LFE included). */
  channels: number;
  /** Bit stream id of the (first independent sub)stream: 8 or less for AC-3, 16 for E-AC-3. */
  bsid: number;
}

export type CodecConfig = AvcConfig | AacConfig | DolbyConfig;

const VISUAL_ENTRY_FIELDS = 78; // §12.1.3: bytes between the entry header and its child boxes
const AUDIO_ENTRY_FIELDS = 28; // §12.2.3 (version 0)
const QT_SOUND_V1_EXTRA = 16; // QuickTime sound description v1: four more 32-bit fields
const QT_SOUND_V2_EXTRA = 36; // v2

/** The first sample entry of an `stsd` box (header included): its type, payload, and where it is. */
function firstEntry(stsd: Uint8Array, what: string): { type: string; payload: Uint8Array; base: number; path: string } {
  const path = `${what}: stsd`;
  const r = new ByteReader(stsd, path);
  r.skip(8 + 4); // box header, version + flags
  const count = r.u32();
  if (count === 0) r.fail('entry_count is 0');
  const entry = childBoxes(stsd.subarray(16), 16, path).next();
  if (entry.done === true) r.fail('no sample entry');
  const { type, payload, start, headerSize } = entry.value;
  return { type, payload, base: start + headerSize, path };
}

/** The avcC payload of an H.264 sample entry (codecConfigOf checks the entry is one). */
function avcC(payload: Uint8Array, base: number, entryPath: string): Uint8Array {
  return child(payload, VISUAL_ENTRY_FIELDS, base, entryPath, 'avcC');
}

/**
 * The AVCDecoderConfigurationRecord of an H.264 `stsd`'s first sample entry, byte for byte: the
 * avcC payload (ISO/IEC 14496-15 §5.3.3.1), which FLV's AVC sequence header carries as it is.
 * For an `stsd` that codecConfigOf has read as 'avc' (which checked the entry and its avcC).
 */
export function avcDecoderConfigurationRecord(stsd: Uint8Array, what: string): Uint8Array {
  const { type, payload, base, path } = firstEntry(stsd, what);
  return avcC(payload, base, `${path}/${type}`);
}

/** The configuration of the first sample entry of an `stsd` box (header included). */
export function codecConfigOf(stsd: Uint8Array, what: string): CodecConfig {
  const { type, payload, base, path } = firstEntry(stsd, what);
  const entryPath = `${path}/${type}`;
  switch (type) {
    case 'avc1':
    case 'avc3':
      return readAvcC(avcC(payload, base, entryPath), `${entryPath}/avcC`);
    case 'mp4a':
      return {
        kind: 'aac',
        asc: readEsds(
          child(payload, audioFields(payload, entryPath, base), base, entryPath, 'esds'),
          `${entryPath}/esds`,
        ),
      };
    case 'ac-3':
      return readDac3(
        child(payload, audioFields(payload, entryPath, base), base, entryPath, 'dac3'),
        `${entryPath}/dac3`,
      );
    case 'ec-3':
      return readDec3(
        child(payload, audioFields(payload, entryPath, base), base, entryPath, 'dec3'),
        `${entryPath}/dec3`,
      );
    default:
      throw originError(
        'unsupported-media',
        `sample entry '${type}' cannot be carried in MPEG-TS or packed audio (H.264, AAC, AC-3 and E-AC-3 can)`,
        { subject: path },
      );
  }
}

/** Size of an audio sample entry's fields: version 0 per ISO, 1 and 2 per QuickTime. */
function audioFields(payload: Uint8Array, path: string, base: number): number {
  const r = new ByteReader(payload, path, base);
  r.skip(8);
  const version = r.u16();
  return AUDIO_ENTRY_FIELDS + (version === 1 ? QT_SOUND_V1_EXTRA : version === 2 ? QT_SOUND_V2_EXTRA : 0);
}

/** The payload of the first child box of `type` after `skip` bytes of sample-entry fields. */
function child(payload: Uint8Array, skip: number, base: number, path: string, type: string): Uint8Array {
  if (payload.byteLength < skip)
    throw originError(
      'corrupt-media',
      `sample entry of ${payload.byteLength} bytes is shorter than its ${skip} bytes of fields`,
      { subject: path },
    );
  for (const c of childBoxes(payload.subarray(skip), base + skip, path)) if (c.type === type) return c.payload;
  throw originError('corrupt-media', `sample entry without its ${type} box`, { subject: path });
}

/** ISO/IEC 14496-15 §5.3.3.1 AVCDecoderConfigurationRecord. */
function readAvcC(b: Uint8Array, path: string): AvcConfig {
  const r = new ByteReader(b, path);
  const version = r.u8();
  if (version !== 1) r.fail(`configurationVersion ${version} is not 1`);
  r.skip(3); // profile, compatibility, level
  const lengthSize = ((r.u8() & 3) + 1) as AvcConfig['lengthSize'];
  const parameterSets: Uint8Array[] = [];
  const sps = r.u8() & 0x1f;
  for (let i = 0; i < sps; i++) parameterSets.push(r.slice(r.u16()));
  const pps = r.u8();
  for (let i = 0; i < pps; i++) parameterSets.push(r.slice(r.u16()));
  for (const nal of parameterSets) if (nal.byteLength === 0) r.fail('empty parameter set');
  return { kind: 'avc', lengthSize, parameterSets };
}

/** §7.2.2.1 expandable size: up to four bytes of 7 bits. */
function descriptorSize(r: ByteReader): number {
  let size = 0;
  for (let i = 0; i < 4; i++) {
    const b = r.u8();
    size = size * 128 + (b & 0x7f);
    if ((b & 0x80) === 0) return size;
  }
  return size;
}

/** esds → ES_Descriptor (tag 3) → DecoderConfigDescriptor (4) → DecoderSpecificInfo (5). */
function readEsds(b: Uint8Array, path: string): Uint8Array {
  const r = new ByteReader(b, path);
  r.skip(4); // version + flags
  if (r.u8() !== 0x03) r.fail('expected an ES_Descriptor (tag 3)');
  descriptorSize(r);
  r.skip(2); // ES_ID
  const flags = r.u8();
  if (flags & 0x80) r.skip(2); // dependsOn_ES_ID
  if (flags & 0x40) r.skip(r.u8()); // URL
  if (flags & 0x20) r.skip(2); // OCR_ES_Id
  if (r.u8() !== 0x04) r.fail('expected a DecoderConfigDescriptor (tag 4)');
  descriptorSize(r);
  r.skip(13); // objectTypeIndication, streamType, bufferSizeDB, maxBitrate, avgBitrate
  if (r.u8() !== 0x05) r.fail('expected a DecoderSpecificInfo (tag 5)');
  const asc = r.slice(descriptorSize(r));
  if (asc.byteLength < 2) r.fail(`AudioSpecificConfig of ${asc.byteLength} bytes`);
  return asc;
}

const ACMOD_CHANNELS = [2, 1, 2, 3, 3, 4, 4, 5];

/** TS 102 366 Annex F.4: fscod, bsid, bsmod, acmod, lfeon. */
function readDac3(b: Uint8Array, path: string): DolbyConfig {
  const r = new BitReader(b, path);
  r.u(2);
  const bsid = r.u(5);
  r.u(3);
  const acmod = r.u(3);
  return { kind: 'ac3', bsid, channels: ACMOD_CHANNELS[acmod]! + r.u(1) };
}

/** Annex F.6: data_rate, num_ind_sub, then the first independent substream's fields. */
function readDec3(b: Uint8Array, path: string): DolbyConfig {
  const r = new BitReader(b, path);
  r.u(13 + 3 + 2);
  const bsid = r.u(5);
  r.u(1 + 1 + 3);
  const acmod = r.u(3);
  return { kind: 'ec3', bsid, channels: ACMOD_CHANNELS[acmod]! + r.u(1) };
}
