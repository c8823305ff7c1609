// XML escaping shared by the XML writers (Smooth, DASH, HDS).

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

/** Escapes text for a double-quoted attribute or element content (XML 1.0 §2.4, §3.1). */
export function xmlAttr(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}
