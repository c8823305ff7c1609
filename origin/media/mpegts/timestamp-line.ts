// PTS and DTS are 33-bit counters of a 90 kHz clock (ISO/IEC 13818-1 §2.4.3.7): they wrap every
// 2^33 / 90 000 s (26.5 h). A demuxer unwraps them onto one monotonic 64-bit line: each value is
// placed on the lap that puts it nearest to the last value placed, so a stream that wraps keeps
// counting up and a B-frame's PTS a little behind its predecessor's stays behind it. One line is
// shared by every stream of a capture (video and audio of one program clock must agree on the
// lap). The first value placed sits on lap 0. Pure.

export const TIMESTAMP_BITS = 33n;
const WRAP = 1n << TIMESTAMP_BITS;
const HALF = WRAP >> 1n;

export class TimestampLine {
  private last: bigint | undefined;

  /** `raw` (0 .. 2^33 − 1) on the line: the lap nearest the last value placed. */
  place(raw: number): bigint {
    const v = BigInt(raw);
    if (this.last === undefined) {
      this.last = v;
      return v;
    }
    const lap = this.last - (((this.last % WRAP) + WRAP) % WRAP);
    let at = lap + v;
    if (at - this.last > HALF) at -= WRAP;
    else if (this.last - at > HALF) at += WRAP;
    this.last = at;
    return at;
  }
}
