// CRC_32 of MPEG-2 sections (ISO/IEC 13818-1 §2.4.4, Annex A; also ANSI/SCTE 35 §9.6):
// polynomial 0x04C11DB7, initial 0xFFFFFFFF, most significant bit first, no reflection, no final
// XOR. Run over a whole section with its CRC_32 field it gives 0 when the section is intact; the
// writers of PAT and PMT (segments/mpegts/ts-packets.ts) and the readers of PSI and SCTE 35
// sections share this one table.

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i << 24;
    for (let k = 0; k < 8; k++) c = c & 0x80000000 ? (c << 1) ^ 0x04c11db7 : c << 1;
    t[i] = c >>> 0;
  }
  return t;
})();

/** CRC-32/MPEG-2 of `bytes` (check value of "123456789": 0x0376E6E7). */
export function crc32Mpeg2(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const b of bytes) crc = ((crc << 8) ^ CRC_TABLE[((crc >>> 24) ^ b) & 0xff]!) >>> 0;
  return crc;
}
