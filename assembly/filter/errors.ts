// A filter error: what went wrong, where (offset in UTF-16 code units of the expression text,
// i.e. a JavaScript string index), and a hint. Formatted as
//   unexpected "=" at 12: did you mean "=="?
// Nothing in the filter code throws (a trap would kill the module): functions return null and
// leave the first error here.

export class FilterError {
  constructor(
    public message: string,
    public offset: i32,
    public hint: string,
  ) {}

  format(): string {
    const at = this.message + ' at ' + this.offset.toString();
    return this.hint.length > 0 ? at + ': ' + this.hint : at;
  }
}

/** A piece of the text for a message, quoted; long pieces are cut, odd characters spelled U+XXXX. */
export function quote(text: string): string {
  if (text.length == 1) {
    const c = text.charCodeAt(0);
    if (c < 0x20 || c > 0x7e) return 'character U+' + hex4(c);
  }
  const cut = text.length > 32 ? text.substring(0, 32) + '...' : text;
  return '"' + cut + '"';
}

function hex4(c: i32): string {
  const digits = '0123456789ABCDEF';
  let out = '';
  for (let shift = 12; shift >= 0; shift -= 4) out += digits.charAt((c >> shift) & 15);
  return out;
}
