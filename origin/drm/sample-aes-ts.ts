// Apple's SAMPLE-AES for MPEG-TS and packed audio (Apple, "MPEG-2 Stream Encryption Format for
// HTTP Live Streaming", §2 Encryption, §2.3.4 Audio Setup Information; RFC 8216 §4.3.2.4
// METHOD=SAMPLE-AES): AES-128-CBC without padding over parts of each elementary stream frame, the
// IV reset to the key line's IV at the start of every protected block (a NAL unit body, an audio
// frame). Pure: frames in, new frames out; the inputs are never written to.
//
// - H.264 (§2.2): NAL units of type 1 and 5 only. The NAL header byte and the 31 bytes after it
//   stay clear; then, while more than 16 bytes remain, one 16-byte block is encrypted and up to
//   144 bytes follow clear (1 block in 10); a NAL unit of 48 bytes or fewer stays clear. §2.2
//   takes the NAL unit "with start code emulation prevention applied", as it is in the sample,
//   and the encrypted NAL unit gets emulation prevention again (ITU-T H.264 §7.4.1), which the
//   readers undo before they decrypt: ffmpeg (libavformat/hls_sample_encryption.c) and hls.js
//   (src/demux/sample-aes.ts) strip every 00 00 03 of the whole NAL unit, decrypt, and hand the
//   result to the decoder as it is, so it must be the escaped NAL unit. (Encrypting the unescaped
//   bytes instead breaks every frame whose slice data holds an emulation prevention byte: measured,
//   ffmpeg 5.1 decoded 26 of 240 frames of a fixture wrong.) shaka-packager escapes its encrypted
//   NAL units the same way. An encrypted NAL unit is as long as the clear one plus one byte for
//   each 00 00 0x (x ≤ 3) in it: every emulation prevention byte it had, and any the cipher made.
// - AAC (§2.3.2), raw frames (the ADTS header is written after this, clear): 16 bytes clear, then
//   every whole 16-byte block, the rest (under 16 bytes) clear.
// - AC-3 and E-AC-3 (§2.3.3): the same per syncframe. An MP4 AC-3 sample is one syncframe; an
//   E-AC-3 sample may hold several (ETSI TS 102 366 Annex F), each its own protected block, found
//   by its frmsiz (§E.1.3.1.3).
// - Audio setup information (§2.3.4): audio_type ('zaac' AAC-LC, 'zach' HE-AAC, 'zacp' HE-AACv2,
//   'zac3', 'zec3'), priming (16 bits, 0: we know of none), version 1, setup_data_length and the
//   setup data: the AudioSpecificConfig, the first 10 bytes of an AC-3 syncframe (here with crc1
//   zeroed and frmsizecod's padding bit cleared, so that every segment of a stream, each taking a
//   syncframe of its own, says the same), or the dec3 payload. It goes into the PMT's registration
//   descriptor ('apad') and into packed audio's ID3 tag.

import { createCipheriv } from 'node:crypto';
import { originError } from '../errors';
import type { CodecConfig } from '../model/media';

/** The content key and the IV of the key line in force (16 bytes each). */
export interface SampleAesKey {
  key: Uint8Array;
  iv: Uint8Array;
}

/** §2.2: the NAL header byte and 31 more bytes stay clear. */
const NAL_CLEAR_LEAD = 32;
/** §2.2: one encrypted block, then up to 144 bytes clear. */
const NAL_STRIDE = 160;
/** §2.3.2, §2.3.3: the first 16 bytes of a frame (after its ADTS header) stay clear. */
const AUDIO_CLEAR_LEAD = 16;
const BLOCK = 16;

const THREE = Buffer.from([3]);
const TWO_ZEROS = Buffer.from([0, 0]);

/**
 * H.264 §7.4.1: 0x03 inserted wherever 00 00 is followed by a byte of 3 or less or ends the bytes
 * (the input itself when nothing is needed). Removing every 03 after 00 00 (§7.3.1) gives the
 * input back.
 */
export function addEmulationPrevention(bytes: Buffer): Buffer {
  const n = bytes.byteLength;
  const needs = (from: number): number => {
    for (let at = bytes.indexOf(TWO_ZEROS, from); at >= 0; at = bytes.indexOf(TWO_ZEROS, at + 1)) {
      if (at + 2 >= n || bytes[at + 2]! <= 3) return at + 2;
    }
    return -1;
  };
  let at = needs(0);
  if (at < 0) return bytes;
  const parts: Buffer[] = [];
  let from = 0;
  while (at >= 0) {
    parts.push(bytes.subarray(from, at), THREE);
    from = at;
    at = at >= n ? -1 : needs(at);
  }
  parts.push(bytes.subarray(from));
  return Buffer.concat(parts);
}

/**
 * One NAL unit (header byte first, emulation prevention applied) encrypted per §2.2; the input
 * itself when it stays clear (not type 1 or 5, or 48 bytes or fewer).
 */
export function encryptNalUnit(nal: Uint8Array, k: SampleAesKey): Uint8Array {
  const type = nal[0]! & 0x1f;
  if ((type !== 1 && type !== 5) || nal.byteLength <= 48) return nal;
  const n = nal.byteLength;
  // Blocks start at 32, 192, 352, … while more than 16 bytes remain from there.
  const blocks = Math.floor((n - NAL_CLEAR_LEAD - BLOCK - 1) / NAL_STRIDE) + 1;
  const out = Buffer.from(nal); // a copy: the input is never written to
  // Gathered into one buffer, one update(): the encrypted blocks of a NAL unit are one CBC chain.
  const gathered = Buffer.allocUnsafe(blocks * BLOCK);
  for (let b = 0; b < blocks; b++) out.copy(gathered, b * BLOCK, NAL_CLEAR_LEAD + b * NAL_STRIDE);
  const sealed = cbc(k, gathered);
  for (let b = 0; b < blocks; b++) sealed.copy(out, NAL_CLEAR_LEAD + b * NAL_STRIDE, b * BLOCK, (b + 1) * BLOCK);
  return addEmulationPrevention(out);
}

/** A sample's place, for error messages. */
export interface SampleWhere {
  file: string;
  offset: number;
}

/**
 * An MP4 H.264 sample (NAL units behind `lengthSize`-byte lengths, ISO/IEC 14496-15 §5.3.2) with
 * its NAL units encrypted per §2.2 and their lengths rewritten; the input when none changed.
 */
export function encryptAvcSample(
  sample: Uint8Array,
  lengthSize: number,
  k: SampleAesKey,
  where: SampleWhere,
): Uint8Array {
  const nals: Uint8Array[] = [];
  let changed = false;
  for (let i = 0; i < sample.byteLength;) {
    if (i + lengthSize > sample.byteLength) throw corrupt(where, i, 'a NAL length field runs past the sample');
    let length = 0;
    for (let b = 0; b < lengthSize; b++) length = length * 256 + sample[i + b]!;
    const start = i + lengthSize;
    if (length === 0 || start + length > sample.byteLength)
      throw corrupt(where, i, `NAL unit of ${length} bytes does not fit the sample`);
    const nal = sample.subarray(start, start + length);
    const sealed = encryptNalUnit(nal, k);
    if (sealed !== nal) changed = true;
    nals.push(sealed);
    i = start + length;
  }
  if (!changed) return sample;
  const out = new Uint8Array(nals.reduce((s, n) => s + lengthSize + n.byteLength, 0));
  let at = 0;
  for (const nal of nals) {
    if (nal.byteLength >= 2 ** (8 * lengthSize))
      throw corrupt(where, 0, `an encrypted NAL unit of ${nal.byteLength} bytes outgrows ${lengthSize}-byte lengths`);
    for (let b = lengthSize - 1, v = nal.byteLength; b >= 0; b--, v = Math.floor(v / 256)) out[at + b] = v & 0xff;
    out.set(nal, at + lengthSize);
    at += lengthSize + nal.byteLength;
  }
  return out;
}

export type SampleAesAudio = 'aac' | 'ac3' | 'ec3';

/**
 * Audio frames (raw AAC frames, AC-3 or E-AC-3 samples) encrypted per §2.3, as new buffers of the
 * same sizes, in one allocation.
 */
export function encryptAudioFrames(
  codec: SampleAesAudio,
  frames: readonly Uint8Array[],
  k: SampleAesKey,
  where: readonly SampleWhere[],
): Uint8Array[] {
  const all = new Uint8Array(frames.reduce((s, f) => s + f.byteLength, 0));
  const out: Uint8Array[] = [];
  let at = 0;
  frames.forEach((f, i) => {
    const copy = all.subarray(at, at + f.byteLength);
    copy.set(f);
    if (codec === 'ec3') for (const [a, b] of ec3Syncframes(f, where[i]!)) encryptFrame(copy.subarray(a, b), k);
    else encryptFrame(copy, k);
    out.push(copy);
    at += f.byteLength;
  });
  return out;
}

/** One protected audio block in place: 16 bytes clear, the whole blocks after them encrypted. */
function encryptFrame(frame: Uint8Array, k: SampleAesKey): void {
  const blocks = Math.floor((frame.byteLength - AUDIO_CLEAR_LEAD) / BLOCK);
  if (blocks <= 0) return;
  const end = AUDIO_CLEAR_LEAD + blocks * BLOCK;
  frame.set(cbc(k, frame.subarray(AUDIO_CLEAR_LEAD, end)), AUDIO_CLEAR_LEAD);
}

/** [start, end) of each E-AC-3 syncframe of a sample: syncword 0x0B77, then frmsiz (ETSI TS 102 366 §E.1.2.1, §E.1.3.1.3). */
function ec3Syncframes(sample: Uint8Array, where: SampleWhere): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let i = 0; i < sample.byteLength;) {
    if (i + 4 > sample.byteLength || sample[i] !== 0x0b || sample[i + 1] !== 0x77)
      throw corrupt(where, i, 'no E-AC-3 syncword where a syncframe should start');
    const size = ((((sample[i + 2]! & 0x07) << 8) | sample[i + 3]!) + 1) * 2;
    if (i + size > sample.byteLength)
      throw corrupt(where, i, `an E-AC-3 syncframe of ${size} bytes runs past the sample`);
    out.push([i, i + size]);
    i += size;
  }
  return out;
}

/** AES-128-CBC without padding over whole blocks, from the key line's IV. */
function cbc(k: SampleAesKey, bytes: Uint8Array): Buffer {
  const cipher = createCipheriv('aes-128-cbc', k.key, k.iv).setAutoPadding(false);
  const out = cipher.update(bytes);
  cipher.final();
  return out;
}

/**
 * §2.3.4 audio setup information of an audio track; `firstFrame`: an AC-3 syncframe of the
 * stream (its first 10 bytes are AC-3's setup data).
 */
export function audioSetupInformation(
  codec: CodecConfig,
  firstFrame: Uint8Array | undefined,
  what: string,
): Uint8Array {
  let type: string;
  let setup: Uint8Array;
  switch (codec.kind) {
    case 'aac':
      type = aacAudioType(codec.asc, what);
      setup = codec.asc;
      break;
    case 'ac3':
      if (firstFrame === undefined || firstFrame.byteLength < 10)
        throw originError('corrupt-media', 'an AC-3 segment without a whole syncframe header', { subject: what });
      type = 'zac3';
      setup = Uint8Array.from(firstFrame.subarray(0, 10));
      setup[2] = 0; // crc1 (ETSI TS 102 366 §4.3.1)
      setup[3] = 0;
      setup[4]! &= 0xfe; // frmsizecod's low bit: 44.1 kHz padding (§4.4.1.4)
      break;
    case 'ec3':
      type = 'zec3';
      setup = codec.record;
      break;
    default:
      throw originError('unsupported-media', `SAMPLE-AES audio is AAC, AC-3 or E-AC-3, not ${codec.kind}`, {
        subject: what,
      });
  }
  if (setup.byteLength > 255)
    throw originError('unsupported-media', `audio setup data of ${setup.byteLength} bytes (255 fit)`, {
      subject: what,
    });
  const out = new Uint8Array(8 + setup.byteLength);
  for (let i = 0; i < 4; i++) out[i] = type.charCodeAt(i);
  // bytes 4-5: priming 0
  out[6] = 1; // version
  out[7] = setup.byteLength;
  out.set(setup, 8);
  return out;
}

/** §2.3.4: 'zaac' for AAC-LC, 'zach' for HE-AAC (SBR, object type 5), 'zacp' for HE-AACv2 (PS, 29). */
function aacAudioType(asc: Uint8Array, what: string): string {
  if (asc.byteLength < 1) throw originError('corrupt-media', 'an empty AudioSpecificConfig', { subject: what });
  const objectType = asc[0]! >> 3; // 5 bits (ISO/IEC 14496-3 §1.6.2.1); 31 escapes to 32+
  if (objectType === 2) return 'zaac';
  if (objectType === 5) return 'zach';
  if (objectType === 29) return 'zacp';
  throw originError(
    'unsupported-media',
    `SAMPLE-AES signals AAC-LC, HE-AAC and HE-AACv2 only, not audio object type ${objectType}`,
    { subject: what },
  );
}

function corrupt(where: SampleWhere, at: number, what: string) {
  return originError('corrupt-media', `sample at file offset ${where.offset}: ${what} (at ${where.offset + at})`, {
    subject: where.file,
  });
}
