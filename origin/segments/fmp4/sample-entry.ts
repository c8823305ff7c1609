// An `stsd` with one sample entry written from a decoder configuration, for tracks that come
// without an init segment (MPEG-TS input of origin capture): `avc1` with its `avcC` (ISO/IEC
// 14496-15 §5.4.2.1), `mp4a` with its `esds` (ISO/IEC 14496-14 §5.6, ISO/IEC 14496-1 §7.2.6.5
// ES_Descriptor holding the AudioSpecificConfig). media/codec-config.ts reads exactly these back.
// Pure: configuration in, bytes out.

import type { AacConfig, AvcConfig } from '../../model/media';
import { box, field, fullBox, serialize, Writable } from '../box-writer';

/** §8.5.2 SampleDescriptionBox with one entry. */
function stsd(entry: Writable): Uint8Array {
  return serialize(fullBox('stsd', 0, 0, field.u32(1), entry));
}

/** §8.5.2.2 SampleEntry fields: six reserved bytes and data_reference_index 1. */
const SAMPLE_ENTRY = field.group(field.zeros(6), field.u16(1));

/** §12.1.3 VisualSampleEntry `avc1` of `width` × `height` pixels with the configuration's avcC. */
export function avcStsd(config: AvcConfig, width: number, height: number): Uint8Array {
  return stsd(
    box(
      'avc1',
      SAMPLE_ENTRY,
      field.zeros(16), // pre_defined, reserved, pre_defined[3]
      field.u16(width),
      field.u16(height),
      field.u32(0x00480000), // horizresolution 72 dpi
      field.u32(0x00480000), // vertresolution
      field.u32(0), // reserved
      field.u16(1), // frame_count
      field.zeros(32), // compressorname
      field.u16(0x0018), // depth
      field.i16(-1), // pre_defined
      box('avcC', field.bytes(config.record)),
    ),
  );
}

/** §12.2.3 AudioSampleEntry `mp4a` with an esds carrying the AudioSpecificConfig (objectTypeIndication 0x40). */
export function aacStsd(config: AacConfig, channels: number, sampleRate: number): Uint8Array {
  const asc = config.asc;
  // ISO/IEC 14496-1 §7.2.6.7 DecoderSpecificInfo (tag 5), §7.2.6.6 DecoderConfigDescriptor (tag 4:
  // objectTypeIndication 0x40 Audio ISO/IEC 14496-3, streamType 5 audio, upStream 0, reserved 1),
  // §7.3.2.3 SLConfigDescriptor (tag 6, predefined 2 for MP4 files).
  const specific = [0x05, asc.byteLength, ...asc];
  const decoder = [0x04, 13 + specific.length, 0x40, 0x15, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, ...specific];
  const es = [0x03, 3 + decoder.length + 3, 0, 0, 0, ...decoder, 0x06, 1, 0x02];
  return stsd(
    box(
      'mp4a',
      SAMPLE_ENTRY,
      field.zeros(8), // reserved
      field.u16(channels),
      field.u16(16), // samplesize
      field.zeros(4), // pre_defined, reserved
      field.u32(sampleRate < 0x10000 ? sampleRate * 0x10000 : 0), // 16.16; the esds states the rate
      fullBox('esds', 0, 0, field.bytes(Uint8Array.from(es))),
    ),
  );
}
