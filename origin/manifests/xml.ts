// XML escaping shared by the XML writers (Smooth, DASH, HDS).

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };
const SPECIAL = /[&<>"']/;

/** Escapes text for a double-quoted attribute or element content (XML 1.0 §2.4, §3.1). */
export function xmlAttr(text: string): string {
  // Most values (numbers, codecs, URLs) have nothing to escape: a test is cheaper than a replace
  // with a callback, and manifests write dozens of attributes per request.
  return SPECIAL.test(text) ? text.replace(/[&<>"']/g, (c) => ESCAPES[c]!) : text;
}
