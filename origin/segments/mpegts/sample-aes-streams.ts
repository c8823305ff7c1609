// The SAMPLE-AES form of a TS segment's streams (Apple, "MPEG-2 Stream Encryption Format for HTTP
// Live Streaming"): the samples encrypted by origin/drm/sample-aes-ts.ts before the segment is
// planned (an encrypted H.264 sample can change size), and each stream's PMT entry as §3.0 asks:
// - H.264: stream_type 0xDB and a private_data_indicator_descriptor (ISO/IEC 13818-1 §2.6.28,
//   tag 0x0F) 'zavc';
// - AAC 0xCF 'aacd', AC-3 0xC1 'ac3d', E-AC-3 0xC2 'ec3d', each with a registration_descriptor
//   (§2.6.8) whose format_identifier is 'apad' followed by the audio setup information (§2.3.4);
//   the ISO 639 language descriptor stays. ffmpeg (libavformat/mpegts.c HLS_SAMPLE_ENC_types) and
//   hls.js (src/demux/tsdemuxer.ts parsePMT) go by these stream types.
// The writer (mpegts.ts) is the clear one: nothing in it knows about encryption.
//
// Continuity counters (ts-continuity.ts) run on across segments, derived from the clear sample
// sizes. An encrypted H.264 sample can be a few bytes longer (emulation prevention), and its PES
// a packet longer: keepContinuity then spreads the stream's last PES over up to 15 more packets,
// so that the stream's packet count stays the clear one modulo 16 and the next segment's counter
// follows on (measured: one segment in three of a fixture gained a packet).

import { audioSetupInformation, encryptAudioFrames, encryptAvcSample, SampleAesKey } from '../../drm/sample-aes-ts';
import { TsPlan, TsSample, TsStream } from './mpegts';
import { TS_PACKET_SIZE } from './ts-packets';
import type { PmtStream } from './ts-packets';

/** One stream of a segment as writeTsSegment takes it. */
export interface TsStreamInput {
  stream: TsStream;
  samples: readonly TsSample[];
  cc: number;
}

/** §3.0 stream types and private data indicators. */
const SIGNALLING = {
  avc: { streamType: 0xdb, indicator: 'zavc' },
  aac: { streamType: 0xcf, indicator: 'aacd' },
  ac3: { streamType: 0xc1, indicator: 'ac3d' },
  ec3: { streamType: 0xc2, indicator: 'ec3d' },
} as const;

/** ISO 639 language descriptor tag (ISO/IEC 13818-1 §2.6.18), the one clear-stream descriptor kept. */
const LANGUAGE_TAG = 0x0a;

/** `input` with its samples encrypted and its PMT entry signalling it; `what` names the track in errors. */
export function sampleAesStreamInput(input: TsStreamInput, k: SampleAesKey, what: string): TsStreamInput {
  const { stream, samples } = input;
  const codec = stream.codec;
  let sealed: TsSample[];
  let setup: Uint8Array | undefined;
  if (codec.kind === 'avc') {
    sealed = samples.map((s) => {
      const data = encryptAvcSample(s.data!, codec.lengthSize, k, s);
      return data === s.data ? s : { ...s, data, size: data.byteLength };
    });
  } else {
    const frames = encryptAudioFrames(
      codec.kind,
      samples.map((s) => s.data!),
      k,
      samples,
    );
    sealed = samples.map((s, i) => ({ ...s, data: frames[i]! }));
    setup = audioSetupInformation(codec, samples[0]?.data, what);
  }
  const pmt = sampleAesPmt(stream.pmt, SIGNALLING[codec.kind], setup);
  return { stream: { ...stream, pmt }, samples: sealed, cc: input.cc };
}

function sampleAesPmt(
  clear: PmtStream,
  signal: { streamType: number; indicator: string },
  setup: Uint8Array | undefined,
): PmtStream {
  const descriptors = [0x0f, 4, ...ascii(signal.indicator)];
  if (setup !== undefined) descriptors.push(0x05, 4 + setup.byteLength, ...ascii('apad'), ...setup);
  descriptors.push(...languageDescriptors(clear.descriptors));
  return { streamType: signal.streamType, pid: clear.pid, descriptors: Uint8Array.from(descriptors) };
}

/** The language descriptors among serialised ES descriptors (tag, length, body). */
function languageDescriptors(bytes: Uint8Array): number[] {
  const out: number[] = [];
  for (let i = 0; i + 2 <= bytes.byteLength; i += 2 + bytes[i + 1]!) {
    if (bytes[i] === LANGUAGE_TAG) out.push(...bytes.subarray(i, i + 2 + bytes[i + 1]!));
  }
  return out;
}

const ascii = (s: string): number[] => [...s].map((c) => c.charCodeAt(0));

/**
 * Pads `plan` (of the encrypted streams) so that each stream takes as many packets as in `clear`
 * (the same segment's clear plan) modulo 16: the missing ones go to the stream's last PES
 * (ts-packets.ts packetizePes spreads a PES over more packets than it needs).
 */
export function keepContinuity(plan: TsPlan, clear: TsPlan): void {
  plan.streamPackets.forEach((packets, stream) => {
    const pad = (16 - ((packets - clear.streamPackets[stream]!) & 15)) & 15;
    if (pad === 0) return;
    for (let i = plan.items.length - 1; i >= 0; i--) {
      const item = plan.items[i]!;
      if (item.kind === 'pes' && item.stream === stream) {
        item.unit.packets += pad;
        plan.streamPackets[stream] = packets + pad;
        plan.size += pad * TS_PACKET_SIZE;
        return;
      }
    }
  });
}
