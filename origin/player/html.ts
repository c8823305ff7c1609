// What every player page shares: escaping, JSON for a data block, the document frame with its
// Content-Security-Policy and the style sheet. Pure functions.

import { createHash } from 'node:crypto';

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** JSON that is safe inside a `<script>` element: no `<`, `>`, `&` or line separators survive. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

// One style sheet for both pages: system fonts, a light palette, tables and code readable at a
// glance; the play page is two columns (video and controls, manifest text) that stack when narrow.
const STYLE = `
:root{--fg:#1d2330;--muted:#5b6474;--line:#dde2ea;--accent:#2456c7;--keep:#e6f4ea;--drop:#f6f6f6;--bad:#b3261e}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);margin:0;background:#fafbfc}
header{background:#17233b;color:#fff;padding:.7em 1.2em}
header a{color:#cfe0ff}
header h1{font-size:1.3em;margin:0}
header p{margin:.2em 0 0;color:#c9d3e6}
main{padding:1em 1.2em;max-width:1400px}
a{color:var(--accent)}
code,pre,kbd{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
h2{font-size:1.15em;margin:1.4em 0 .4em}
section{background:#fff;border:1px solid var(--line);border-radius:6px;padding:.2em 1em 1em;margin:0 0 1em}
table{border-collapse:collapse;margin:.4em 0;font-size:13px}
th,td{border-bottom:1px solid var(--line);padding:.2em .6em;text-align:left;vertical-align:top}
th{color:var(--muted);font-weight:600}
td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.keep td{background:var(--keep)}
tr.drop td{background:var(--drop);color:#98a0ad}
ul.formats{padding-left:1.2em;margin:.3em 0}
table.examples td:first-child,table.examples td:last-child{white-space:nowrap}
form.filter{display:flex;gap:.5em;margin:.6em 0 .3em}
form.filter input{flex:1;font:13px ui-monospace,monospace;padding:.35em .5em;border:1px solid #b9c1ce;border-radius:4px}
button{padding:.35em .9em;border:1px solid var(--accent);background:var(--accent);color:#fff;border-radius:4px;cursor:pointer}
.result{margin:.3em 0}
.error{color:var(--bad)}
pre.caret{margin:.3em 0;color:var(--bad)}
.note{color:var(--muted)}
.play{display:grid;grid-template-columns:minmax(320px,640px) minmax(280px,1fr);gap:1.2em;align-items:start}
@media (max-width:900px){.play{grid-template-columns:1fr}}
.stage{position:relative;width:100%;aspect-ratio:16/9;background:#000}
.stage video{width:100%;height:100%;background:#000}
.stage #ttml{position:absolute;inset:0;pointer-events:none}
.controls{display:flex;flex-wrap:wrap;gap:.8em;margin:.6em 0}
.controls select{max-width:14em}
.figures td{min-width:6em}
pre#manifest{background:#fff;border:1px solid var(--line);border-radius:6px;padding:.6em;margin:0;max-height:80vh;overflow:auto;white-space:pre}
ol#errors{color:var(--bad);padding-left:1.4em}
`;

/**
 * An HTML document with a CSP that allows no script but the player files (`'self'`) and the
 * page's own inline script, pinned by its hash.
 */
export function htmlDocument(title: string, body: string, inlineScript: string): string {
  const scriptSrc =
    inlineScript === '' ? "'none'" : `'self' 'sha256-${createHash('sha256').update(inlineScript).digest('base64')}'`;
  // Manifests and segments may live on any origin (a CDN, another port), hence connect/media *.
  // hls.js transmuxes in a worker started from a blob: URL.
  const csp = [
    "default-src 'none'",
    `script-src ${scriptSrc}`,
    "worker-src 'self' blob:",
    'connect-src *',
    'media-src * blob: data:',
    "img-src 'self' data:",
    "style-src 'unsafe-inline'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}">`,
    '<link rel="icon" href="data:,">',
    `<title>${escapeHtml(title)}</title>`,
    `<style>${STYLE}</style>`,
    '</head>',
    '<body>',
    body,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
