// The first sample entry of a track's `stsd`, read once with the moov (media/moov.ts): the H.264
// decoder configuration (avcC: NAL length size, SPS, PPS), the AAC AudioSpecificConfig (esds), the
// AC-3 / E-AC-3 configuration (dac3, dec3) and an audio entry's fields. The track properties, the
// MPEG-TS, packed-audio and FLV writers all take them from here. Pure: bytes in, values out; every
// length is checked and errors name the box path and file offset.
//
// Layouts: ISO/IEC 14496-12 §8.5.2 stsd, §12.1.3 VisualSampleEntry, §12.2.3 AudioSampleEntry (and
// the QuickTime sound description versions 1 and 2 some muxers still write); ISO/IEC 14496-15
// §5.3.3.1 AVCDecoderConfigurationRecord; ISO/IEC 14496-1 §7.2.6.5 ES_Descriptor, §7.2.6.6
// DecoderConfigDescriptor, §7.2.6.7 DecoderSpecificInfo; ETSI TS 102 366 Annex F.4 / F.6.

import { originError } from '../errors';
import type { AvcConfig, CodecConfig, DolbyConfig } from '../model/media';
import { childBoxes } from './boxes';
import { ByteReader } from './byte-reader';
import { BitReader } from './bit-reader';

/** The first sample entry of an `stsd`, read once when the moov is (media/moov.ts). */
export interface SampleEntry {
  /** avc1, avc3, mp4a, ac-3, ec-3, stpp, wvtt, ... */
  type: string;
  /** The decoder configuration of H.264, AAC, AC-3 and E-AC-3 entries; undefined for the others. */
  codec: CodecConfig | undefined;
  /** channelcount and samplesize of an audio entry (§12.2.3). */
  audio: { channelCount: number; sampleSize: number } | undefined;
  /** A `urim` entry's URI (§12.3.3.2 URIBox). */
  uri?: string;
}

const VISUAL_ENTRY_FIELDS = 78; // §12.1.3: bytes between the entry header and its child boxes
const AUDIO_ENTRY_FIELDS = 28; // §12.2.3 (version 0)
const QT_SOUND_V1_EXTRA = 16; // QuickTime sound description v1: four more 32-bit fields
const QT_SOUND_V2_EXTRA = 36; // v2

/**
 * Reads the first sample entry of an `stsd` box (header included) whose first byte is at absolute
 * file offset `base`; `path` is the stsd's box path. Checks entry_count against the entries.
 */
export function readSampleEntry(stsd: Uint8Array, path: string, base = 0): SampleEntry {
  const r = new ByteReader(stsd, path, base);
  r.skip(8 + 4); // box header, version + flags
  const count = r.u32();
  if (count === 0) r.fail('entry_count is 0: no sample entry');
  const entries = [...childBoxes(stsd.subarray(16), base + 16, path)];
  if (entries.length !== count) r.fail(`entry_count ${count} but ${entries.length} sample entries follow`);
  const { type, payload, start, headerSize } = entries[0]!;
  const at = start + headerSize;
  const entryPath = `${path}/${type}`;
  switch (type) {
    case 'avc1':
    case 'avc3':
      return {
        type,
        codec: readAvcC(child(payload, VISUAL_ENTRY_FIELDS, at, entryPath, 'avcC'), `${entryPath}/avcC`, at),
        audio: undefined,
      };
    case 'mp4a':
    case 'ac-3':
    case 'ec-3': {
      const fields = audioFields(payload, entryPath, at);
      const config = (box: string): Uint8Array => child(payload, fields.size, at, entryPath, box);
      const codec =
        type === 'mp4a'
          ? ({ kind: 'aac', asc: readEsds(config('esds'), `${entryPath}/esds`) } as const)
          : type === 'ac-3'
            ? parseDac3(config('dac3'), `${entryPath}/dac3`)
            : parseDec3(config('dec3'), `${entryPath}/dec3`);
      return { type, codec, audio: { channelCount: fields.channelCount, sampleSize: fields.sampleSize } };
    }
    case 'urim':
      return { type, codec: undefined, audio: undefined, uri: readUri(payload, entryPath, at) };
    default:
      return { type, codec: undefined, audio: undefined };
  }
}

/** §12.3.3.2 URIMetaSampleEntry: SampleEntry fields (8 bytes), then the URIBox `uri ` (FullBox, a NUL-terminated string). */
function readUri(payload: Uint8Array, path: string, base: number): string {
  const box = child(payload, 8, base, path, 'uri ');
  const r = new ByteReader(box, `${path}/uri `, base);
  r.skip(4); // version + flags
  const rest = box.subarray(4);
  const end = rest.indexOf(0);
  return Buffer.from(end < 0 ? rest : rest.subarray(0, end)).toString('utf8');
}

/** The configuration MPEG-TS, packed audio and FLV carry, or unsupported-media naming the entry. */
export function carriedConfig(h: { sampleEntry: string; codec: CodecConfig | undefined }, what: string): CodecConfig {
  if (h.codec !== undefined) return h.codec;
  throw originError(
    'unsupported-media',
    `sample entry '${h.sampleEntry}' cannot be carried in MPEG-TS or packed audio (H.264, AAC, AC-3 and E-AC-3 can)`,
    { subject: `${what}: stsd` },
  );
}

/** The configuration of the first sample entry of an `stsd` box (header included). */
export function codecConfigOf(stsd: Uint8Array, what: string): CodecConfig {
  const entry = readSampleEntry(stsd, `${what}: stsd`);
  return carriedConfig({ sampleEntry: entry.type, codec: entry.codec }, what);
}

/** An audio sample entry's fields: their size (version 0 per ISO, 1 and 2 per QuickTime), channelcount, samplesize. */
function audioFields(
  payload: Uint8Array,
  path: string,
  base: number,
): { size: number; channelCount: number; sampleSize: number } {
  const r = new ByteReader(payload, path, base);
  r.skip(8); // SampleEntry: reserved, data_reference_index
  const version = r.u16(); // reserved in ISO BMFF; the sound description version in QuickTime
  r.skip(6);
  const channelCount = r.u16();
  const sampleSize = r.u16();
  const extra = version === 1 ? QT_SOUND_V1_EXTRA : version === 2 ? QT_SOUND_V2_EXTRA : 0;
  return { size: AUDIO_ENTRY_FIELDS + extra, channelCount, sampleSize };
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
function readAvcC(b: Uint8Array, path: string, base: number): AvcConfig {
  const r = new ByteReader(b, path, base);
  const version = r.u8();
  if (version !== 1) r.fail(`configurationVersion ${version} is not 1`);
  r.skip(3); // profile, compatibility, level
  const lengthSize = ((r.u8() & 3) + 1) as AvcConfig['lengthSize'];
  const parameterSets: Uint8Array[] = [];
  const sps = r.u8() & 0x1f;
  if (sps === 0) r.fail('no SPS');
  for (let i = 0; i < sps; i++) parameterSets.push(r.slice(r.u16()));
  const pps = r.u8();
  for (let i = 0; i < pps; i++) parameterSets.push(r.slice(r.u16()));
  for (const nal of parameterSets) if (nal.byteLength === 0) r.fail('empty parameter set');
  return { kind: 'avc', lengthSize, parameterSets, spsCount: sps, record: b };
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

/** Channels of an AC-3 acmod (TS 102 366 Table 4.3), without the LFE. */
const ACMOD_CHANNELS = [2, 1, 2, 3, 3, 4, 4, 5];
/** fscod (Table 4.1). */
const AC3_RATES = [48000, 44100, 32000];

/** TS 102 366 Annex F.4 AC3SpecificBox payload: fscod, bsid, bsmod, acmod, lfeon. */
export function parseDac3(b: Uint8Array, path = 'dac3'): DolbyConfig {
  const r = new BitReader(b, path);
  const fscod = r.u(2);
  const bsid = r.u(5);
  r.u(3); // bsmod
  return dolby('ac3', { fscod, bsid, acmod: r.u(3), lfeon: r.u(1) }, b, path);
}

/** Annex F.6 EC3SpecificBox payload: data_rate, num_ind_sub, then the first independent substream's fields. */
export function parseDec3(b: Uint8Array, path = 'dec3'): DolbyConfig {
  const r = new BitReader(b, path);
  r.u(13 + 3); // data_rate, num_ind_sub
  const fscod = r.u(2);
  const bsid = r.u(5);
  r.u(1 + 1 + 3); // reserved, asvc, bsmod
  return dolby('ec3', { fscod, bsid, acmod: r.u(3), lfeon: r.u(1) }, b, path);
}

function dolby(
  kind: 'ac3' | 'ec3',
  f: { fscod: number; bsid: number; acmod: number; lfeon: number },
  record: Uint8Array,
  path: string,
): DolbyConfig {
  const sampleRate = AC3_RATES[f.fscod];
  if (sampleRate === undefined) throw originError('corrupt-media', `reserved fscod ${f.fscod}`, { subject: path });
  return { kind, bsid: f.bsid, channels: ACMOD_CHANNELS[f.acmod]! + f.lfeon, sampleRate, record };
}
