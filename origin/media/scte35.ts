// SCTE 35 splice_info_section (ANSI/SCTE 35 §9.6), read without I/O: what the outputs need to
// name and place a cue (the command, splice_insert's splice_event_id and out_of_network_indicator,
// the splice time and break duration) and the CRC check. The section itself is passed on byte
// for byte (HLS SCTE35-OUT/IN/CMD, DASH scte35:Binary, emsg message_data); nothing is rewritten.

import { SPLICE_INSERT, SpliceInfo, TIME_SIGNAL } from '../model/timed-metadata';
import { BitReader } from './bit-reader';
import { corruptAt } from './byte-reader';
import { crc32Mpeg2 } from './mpegts/crc32-mpeg';

export { SPLICE_INSERT, TIME_SIGNAL };

/** table_id to section_length (3), the fixed fields to splice_command_type (11), descriptor_loop_length (2), CRC_32 (4). */
const MIN_SECTION = 3 + 11 + 2 + 4;

/**
 * Parses one section. `at` names it in errors (the event it came in). Refused: a table_id other
 * than 0xFC, a section_length that disagrees with the bytes, an encrypted section (its command
 * cannot be read), a bad CRC_32.
 */
export function parseSpliceInfoSection(section: Uint8Array, at: { path: string; offset: number }): SpliceInfo {
  const fail = (message: string): never => {
    throw corruptAt(at.path, at.offset, `splice_info_section: ${message}`);
  };
  if (section.byteLength < MIN_SECTION) fail(`${section.byteLength} bytes is shorter than the smallest section`);
  if (section[0] !== 0xfc) fail(`table_id 0x${section[0]!.toString(16)} (expected 0xfc)`);
  const sectionLength = ((section[1]! & 0x0f) << 8) | section[2]!;
  if (sectionLength + 3 !== section.byteLength)
    fail(`section_length ${sectionLength} + 3 but ${section.byteLength} bytes`);
  // The CRC covers the whole section, CRC_32 included, to 0 (§9.6: the register after the last byte).
  if (crc32Mpeg2(section) !== 0) fail('CRC_32 does not match');
  const r = new BitReader(section.subarray(3, section.byteLength - 4), `${at.path}: splice_info_section`);
  r.u(8); // protocol_version
  if (r.u(1) === 1) fail('encrypted_packet is set: the command cannot be read');
  r.u(6); // encryption_algorithm
  const ptsAdjustment = r.u(1) * 2 ** 32 + r.u(32);
  r.u(8 + 12); // cw_index, tier
  const commandLength = r.u(12);
  const commandType = r.u(8);
  const info: SpliceInfo = { commandType, ptsAdjustment };
  // 0xFFF: the length is left unsaid (§9.6.1, older encoders).
  if (commandLength !== 0xfff && MIN_SECTION + commandLength > section.byteLength)
    fail(`splice_command_length ${commandLength} runs past the section`);
  if (commandType === SPLICE_INSERT) readSpliceInsert(r, info);
  else if (commandType === TIME_SIGNAL) {
    const t = spliceTime(r);
    if (t !== undefined) info.ptsTime = t;
  }
  return info;
}

/** §9.7.3.1 splice_insert(): the fields up to break_duration. */
function readSpliceInsert(r: BitReader, info: SpliceInfo): void {
  info.spliceEventId = r.u(32);
  info.cancelled = r.u(1) === 1;
  r.u(7);
  if (info.cancelled) return;
  info.outOfNetwork = r.u(1) === 1;
  const programSplice = r.u(1) === 1;
  const durationFlag = r.u(1) === 1;
  const immediate = r.u(1) === 1;
  r.u(4); // event_id_compliance_flag, reserved
  if (programSplice && !immediate) {
    const t = spliceTime(r);
    if (t !== undefined) info.ptsTime = t;
  }
  if (!programSplice) {
    // Component splices: component_count, then a component_tag (and a splice_time) each.
    const count = r.u(8);
    for (let i = 0; i < count; i++) {
      r.u(8);
      if (!immediate) spliceTime(r);
    }
  }
  if (durationFlag) {
    r.u(1 + 6); // auto_return, reserved
    info.breakDuration = r.u(1) * 2 ** 32 + r.u(32);
  }
}

/** §9.8.1 splice_time(): pts_time when time_specified_flag is set. */
function spliceTime(r: BitReader): number | undefined {
  if (r.u(1) === 0) {
    r.u(7);
    return undefined;
  }
  r.u(6);
  return r.u(1) * 2 ** 32 + r.u(32);
}
