// Corrupt server manifests (.ism, SMIL 2.0 as the reference product writes them): the text cut
// short, bad XML, hostile XML (entity expansion, deep nesting, huge attributes), and well-formed
// files whose tracks name sources that are not there, not files, not media, or the wrong track.

import { Variant } from './media-variants';

/** `ism` is the packager's .ism of the clean presentation; `dir` names siblings the variants may point at. */
export function ismVariants(ism: string, names: { video: string; audio: string; text: string }): Variant[] {
  const out: Variant[] = [];
  const add = (what: string, text: string | Buffer): void => {
    out.push({
      name: `ism:${what}`,
      family: 'server-manifest',
      bytes: Buffer.isBuffer(text) ? text : Buffer.from(text),
    });
  };
  for (let i = 0; i < 24; i++) {
    const n = Math.floor((ism.length * i) / 24);
    add(`truncated-at-${n}`, ism.slice(0, n));
  }
  const srcOf = (role: 'video' | 'audio' | 'text', to: string): string => ism.replace(names[role], to);
  for (const [what, to] of [
    ['missing', 'no-such-file.ismv'],
    ['directory', '.'],
    ['itself', 'VARIANT.ism'],
    ['empty-file', 'empty.ismv'],
    ['text-file', 'notes.txt'],
    ['dev-zero', '/dev/zero'],
    ['dev-null', '/dev/null'],
    ['audio-as-video', names.audio],
    ['text-as-video', names.text],
    ['absolute-missing', '/nonexistent/dir/x.ismv'],
    ['percent-encoded', names.video.replace('.', '%2e')],
    ['empty-src', ''],
  ] as const)
    add(`video-src-${what}`, srcOf('video', to));
  const param = (name: string, value: string): string =>
    ism.replace(new RegExp(`(<param name="${name}" value=")[^"]*(")`), `$1${value}$2`);
  for (const [name, values] of [
    ['trackID', ['2', '0', '-1', 'abc', '99999999999999999999', '']],
    ['TimeScale', ['0', '-1', 'x', '18446744073709551616']],
    ['CodecPrivateData', ['0', 'zz', '00000001', '']],
    ['FourCC', ['XXXX', '', 'AVC1AVC1']],
    ['trackName', ['a/b', 'a=b', 'a"b', '<x>', '', 'x'.repeat(5000)]],
    ['MaxWidth', ['-1', '0', '99999999999']],
  ] as const) {
    for (const v of values) add(`param-${name}=${v.slice(0, 24)}`, param(name, v));
  }
  for (const v of ['0', '-1', 'abc', '1e400', '99999999999999999999999'])
    add(`systemBitrate=${v}`, ism.replace(/systemBitrate="\d+"/, `systemBitrate="${v}"`));
  add('no-tracks', ism.replace(/<switch>[\s\S]*<\/switch>/, '<switch></switch>'));
  add('duplicate-video', ism.replace(/(<video[\s\S]*?<\/video>)/, '$1$1'));
  add('not-xml', 'this is not a server manifest\n');
  add('empty', '');
  add('binary', Buffer.from([0, 1, 2, 3, 0xff, 0xfe, 0x00, 0x3c]));
  add('utf16-bom', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(ism, 'utf16le')]));
  add('unclosed-root', ism.replace('</smil>', ''));
  add('wrong-root', ism.replace(/<smil/g, '<html').replace(/<\/smil>/g, '</html>'));
  add('meta-junk-option', ism.replace('<head>', '<head><meta name="hls_client_manifest_version" content="abc" />'));
  add('meta-unknown-option', ism.replace('<head>', '<head><meta name="no_such_option" content="1" />'));
  add('meta-bad-filter', ism.replace('<head>', '<head><meta name="track_filter" content="((((" />'));
  // XML hazards: entity expansion (a "billion laughs"), an external entity, deep nesting, a huge attribute.
  const lol = [
    '<!ENTITY a0 "lol">',
    ...Array.from({ length: 9 }, (_, i) => `<!ENTITY a${i + 1} "${`&a${i};`.repeat(10)}">`),
  ];
  add(
    'entity-expansion',
    ism
      .replace('<smil', `<!DOCTYPE smil [${lol.join('')}]>\n<smil`)
      .replace('<head>', '<head><meta name="x" content="&a9;" />'),
  );
  add(
    'external-entity',
    ism
      .replace('<smil', '<!DOCTYPE smil [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n<smil')
      .replace('<head>', '<head><meta name="x" content="&x;" />'),
  );
  add('deep-nesting', ism.replace('<head>', `<head>${'<a>'.repeat(20000)}${'</a>'.repeat(20000)}`));
  add('huge-attribute', ism.replace('<head>', `<head><meta name="x" content="${'y'.repeat(1 << 20)}" />`));
  add(
    'many-tracks',
    ism.replace(/(<video[\s\S]*?<\/video>)/, (v) => v.repeat(300)),
  );
  return out;
}
