// AMF0 values as Flash reads them from an FLV script tag or an F4M `<metadata>` element (Action
// Message Format AMF0, Adobe 2007: §2.2 Number, §2.3 Boolean, §2.4 String, §2.10 ECMA Array,
// §2.11 Object End; Adobe Flash Video File Format Specification 10.1 (FLV), Annex E.4.4.1
// SCRIPTDATA and E.5 onMetaData). Pure: values in, bytes out. Only the types the origin writes.

import { originError } from '../../errors';
import { field, serialize, Writable } from '../box-writer';

/** AMF0 type markers (AMF0 §2.1). */
export const AMF0 = { number: 0x00, boolean: 0x01, string: 0x02, ecmaArray: 0x08, objectEnd: 0x09 } as const;

export type Amf0Value = number | boolean | string | Amf0Property[];
/** One property of an ECMA array, in the order written. */
export type Amf0Property = [name: string, value: Amf0Value];

/** A UTF-8 string of at most 65535 bytes (a 16-bit length, AMF0 §1.3 UTF-8). */
function utf8(text: string, what: string): Writable {
  const bytes = new TextEncoder().encode(text);
  if (bytes.byteLength > 0xffff) {
    throw originError('internal', `${what} of ${bytes.byteLength} bytes does not fit an AMF0 string (65535 at most)`, {
      subject: 'amf0',
    });
  }
  return field.group(field.u16(bytes.byteLength), field.bytes(bytes));
}

/** A double, big-endian IEEE 754 (AMF0 §2.2). */
function float64(v: number): Writable {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setFloat64(0, v);
  return field.bytes(b);
}

/** One value with its type marker. */
export function amf0Value(v: Amf0Value): Writable {
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw originError('internal', `AMF0 number ${v} is not finite`, { subject: 'amf0' });
    return field.group(field.u8(AMF0.number), float64(v));
  }
  if (typeof v === 'boolean') return field.group(field.u8(AMF0.boolean), field.u8(v ? 1 : 0));
  if (typeof v === 'string') return field.group(field.u8(AMF0.string), utf8(v, 'string'));
  // ECMA array (§2.10): an associative count (a hint; we write the exact count), the properties,
  // then an empty name and the object-end marker (§2.11).
  return field.group(
    field.u8(AMF0.ecmaArray),
    field.u32(v.length),
    ...v.map(([name, value]) => field.group(utf8(name, 'property name'), amf0Value(value))),
    field.u16(0),
    field.u8(AMF0.objectEnd),
  );
}

/**
 * The body of an FLV `onMetaData` script tag (FLV E.4.4.1: the method name as an AMF0 string,
 * then its argument, an ECMA array), which is also what the `<metadata>` child of an F4M
 * `<media>` element holds, in base64.
 */
export function onMetaData(properties: Amf0Property[]): Uint8Array {
  return serialize(amf0Value('onMetaData'), amf0Value(properties));
}
