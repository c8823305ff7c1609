// MSB-first bit reader for codec configuration records (H.264 SPS, AAC AudioSpecificConfig,
// dac3/dec3). Reading past the end is a corrupt-media error naming `what`, never a RangeError.

import { originError } from '../errors';

export class BitReader {
  private bit = 0;

  constructor(
    private readonly bytes: Uint8Array,
    private readonly what: string,
  ) {}

  u(count: number): number {
    let v = 0;
    for (let i = 0; i < count; i++) {
      const byte = this.bytes[this.bit >> 3];
      if (byte === undefined) throw originError('corrupt-media', `${this.what} ends early`, { subject: this.what });
      v = v * 2 + ((byte >> (7 - (this.bit & 7))) & 1);
      this.bit++;
    }
    return v;
  }

  /** Bits read so far. */
  get position(): number {
    return this.bit;
  }

  /** Bits not read yet. */
  get bitsLeft(): number {
    return this.bytes.byteLength * 8 - this.bit;
  }

  flag(): boolean {
    return this.u(1) === 1;
  }

  /** H.264 §9.1 Exp-Golomb ue(v). */
  ue(): number {
    let zeros = 0;
    while (this.u(1) === 0) {
      if (++zeros > 31)
        throw originError('corrupt-media', 'Exp-Golomb code longer than 32 bits', { subject: this.what });
    }
    return zeros === 0 ? 0 : 2 ** zeros - 1 + this.u(zeros);
  }

  /** H.264 §9.1.1 se(v). */
  se(): number {
    const k = this.ue();
    return k % 2 === 1 ? (k + 1) / 2 : -(k / 2);
  }
}
