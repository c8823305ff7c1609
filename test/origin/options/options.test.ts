import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { OriginError } from '../../../origin/errors';
import { parseServerManifest, writeServerManifest } from '../../../origin/ism/server-manifest';
import {
  applyCliOption,
  applyQuery,
  optionByCli,
  optionByName,
  OPTIONS,
  optionsFromManifest,
  OptionSpec,
  optionsToMeta,
  StreamOptions,
} from '../../../origin/options/registry';
import { parseQuery } from '../../../origin/options/query';
import { KEY_SERVER_OPTIONS } from '../../../origin/options/key-server-options';
import { parsePackageArgs } from '../../../origin/cli/package-command';

const REQUIRED = [
  'hls_fmp4',
  'hls_client_manifest_version',
  'iss_minimum_fragment_length',
  'hls_minimum_fragment_length',
  'mpd_minimum_fragment_length',
  'hds_minimum_fragment_length',
  'hls_no_audio_only',
  'hls_no_multiplex',
  'variant_set',
  'track_filter',
  'timed_metadata',
  'hds_multi_level',
  'hds_client_manifest_version',
  'mpd_segment_template',
  'presentation_name',
  'suppress_query_parameters',
];

test('the registry holds every option the foundation requires, each documented', () => {
  for (const name of REQUIRED) expect(optionByName(name)).toBeDefined();
  for (const o of OPTIONS) {
    expect(o.description.length).toBeGreaterThan(10);
    // the dot → underscore rule of the reference
    expect(o.cli.replace(/\./g, '_')).toBe(o.name);
  }
});

test('--hls.client_manifest_version=4 ↔ <meta hls_client_manifest_version> ↔ ?hls_client_manifest_version=4', () => {
  const cli = parsePackageArgs(['-o', 'x.ism', 'in.ismv', '--hls.client_manifest_version=4']);
  const meta = optionsToMeta(cli.options);
  expect(meta).toEqual([{ name: 'hls_client_manifest_version', content: '4' }]);
  // through the written file and back
  const text = writeServerManifest({ meta, paramGroups: [], tracks: [] }, 'test');
  const fromManifest = optionsFromManifest(parseServerManifest(text).meta, 'x.ism');
  expect(fromManifest.int('hls_client_manifest_version')).toBe(4);
  // query overrides manifest
  expect(applyQuery(fromManifest, parseQuery('hls_client_manifest_version=7')).int('hls_client_manifest_version')).toBe(
    7,
  );
  // and the manifest overrides the default
  expect(new StreamOptions().int('hls_client_manifest_version')).toBe(1);
});

test('the separated CLI form and the underscore spelling work too', () => {
  const a = parsePackageArgs(['-o', 'x.ism', '--hls.client_manifest_version', '5', 'in.ismv']);
  expect(a.options.int('hls_client_manifest_version')).toBe(5);
  expect(a.inputs.map((i) => i.path)).toEqual(['in.ismv']);
  expect(parsePackageArgs(['-o', 'x.ism', '--hls_fmp4']).options.bool('hls_fmp4')).toBe(true);
});

test('booleans: bare flag form on the CLI and in the query', () => {
  expect(parsePackageArgs(['-o', 'x.ism', '--hls.fmp4']).options.bool('hls_fmp4')).toBe(true);
  expect(parsePackageArgs(['-o', 'x.ism', '--hls.fmp4=false']).options.bool('hls_fmp4')).toBe(false);
  const base = new StreamOptions();
  expect(applyQuery(base, parseQuery('hls_fmp4')).bool('hls_fmp4')).toBe(true);
  expect(applyQuery(base, parseQuery('hls_fmp4=0')).bool('hls_fmp4')).toBe(false);
  expect(applyQuery(base, parseQuery('hls_fmp4=true')).bool('hls_fmp4')).toBe(true);
});

test('rationals like 48/25 are kept exact', () => {
  const o = parsePackageArgs(['-o', 'x.ism', '--hls.minimum_fragment_length=48/25']).options;
  expect(o.rational('hls_minimum_fragment_length')).toEqual({ num: 48, den: 25 });
  expect(optionsToMeta(o)).toEqual([{ name: 'hls_minimum_fragment_length', content: '48/25' }]);
  expect(new StreamOptions().rational('hls_minimum_fragment_length')).toEqual({ num: 4, den: 1 });
});

test('variant_set repeats in order; a query list replaces the manifest list', () => {
  const o = parsePackageArgs([
    '-o',
    'x.ism',
    '--variant_set=systemBitrate==2000000 || type!="video"',
    '--variant_set=systemBitrate!=2000000 || type!="video"',
  ]).options;
  expect(o.list('variant_set')).toEqual([
    'systemBitrate==2000000 || type!="video"',
    'systemBitrate!=2000000 || type!="video"',
  ]);
  const meta = optionsToMeta(o);
  expect(meta.map((m) => m.name)).toEqual(['variant_set', 'variant_set']);
  const back = optionsFromManifest(meta, 'x.ism');
  expect(back.list('variant_set')).toEqual(o.list('variant_set'));
  expect(applyQuery(back, parseQuery('variant_set=true')).list('variant_set')).toEqual(['true']);
});

test('query values are percent-decoded exactly once', () => {
  expect(parseQuery('filter=type%3D%3D%22video%22%26%26systemBitrate%3C800000&x=%2526')).toEqual([
    ['filter', 'type=="video"&&systemBitrate<800000'],
    ['x', '%26'],
  ]);
  expect(() => parseQuery('filter=%E0%A4%A')).toThrow(/malformed percent-encoding/);
  expect(() => parseQuery('a='.padEnd(20000, 'x'))).toThrow(/longer than/);
});

test('unknown query parameters are ignored (CDNs add their own)', () => {
  const o = applyQuery(new StreamOptions(), parseQuery('utm_source=cdn&token=abc&hls_fmp4=true'));
  expect(o.entries()).toEqual([['hls_fmp4', true]]);
});

describe('invalid values are errors naming the option', () => {
  const cases: Array<[string, RegExp]> = [
    ['hls_client_manifest_version=10', /query parameter hls_client_manifest_version: 10 is out of range 1\.\.9/],
    ['hls_client_manifest_version=four', /"four" is not an integer/],
    ['hls_fmp4=maybe', /hls_fmp4: "maybe" is not a boolean/],
    [
      'mpd_segment_template=number_timeline',
      /mpd_segment_template: "number_timeline" is not allowed; use one of: time, number/,
    ],
    ['presentation_name=a-b', /presentation_name: "a-b" is not valid: 1 to 128 letters and digits/],
    ['hls_minimum_fragment_length=-1', /must not be negative/],
    ['hls_minimum_fragment_length=1/0', /not a number or rational/],
    ['archive_length=30', /archive_length: this option cannot be given as a query parameter/],
    ['dvr_window_length=-5', /query parameter dvr_window_length: -5 is out of range 0\.\./],
    ['dvr_window_length=ten', /query parameter dvr_window_length: "ten" is not an integer/],
    ['time_shift=-1', /query parameter time_shift: -1 is out of range 0\.\./],
    ['time_shift=1.5', /query parameter time_shift: "1.5" is not an integer/],
    ['track_filter=true', /track_filter: this option cannot be given as a query parameter/],
  ];
  test.each(cases)('?%s', (query, message) => {
    let error: unknown;
    try {
      applyQuery(new StreamOptions(), parseQuery(query));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(OriginError);
    expect((error as OriginError).kind).toBe('bad-request');
    expect((error as Error).message).toMatch(message);
  });

  test('in a server manifest head', () => {
    expect(() => optionsFromManifest([{ name: 'hls_fmp4', content: 'yes' }], 'x.ism')).toThrow(
      'x.ism: <meta name="hls_fmp4">: "yes" is not a boolean',
    );
  });

  test('on the command line', () => {
    expect(() => parsePackageArgs(['-o', 'x.ism', '--mpd.segment_template=frame'])).toThrow(
      /--mpd\.segment_template: "frame" is not allowed/,
    );
    expect(() => parsePackageArgs(['-o', 'x.ism', '--hls.fmp44'])).toThrow(
      'unknown option --hls.fmp44; did you mean --hls.fmp4?',
    );
    expect(() => parsePackageArgs(['-o', 'x.ism', '--filter=true'])).toThrow(
      /request parameter, not a packaging option/,
    );
    expect(() => parsePackageArgs(['--track_type=video', 'a.ismv'])).toThrow(/must follow the input/);
    expect(() => parsePackageArgs(['-o', 'x.ism', 'a.ismv', '--track_type=subtitles'])).toThrow(
      /use one of video, audio, text/,
    );
    expect(() => parsePackageArgs(['-x'])).toThrow(/unknown option -x/);
  });
});

test('every stored option has a CLI spelling that round-trips through the registry', () => {
  for (const o of OPTIONS.filter((x) => x.stored)) {
    expect(optionByCli(o.cli)).toBe(o);
    expect(optionByCli(o.name)).toBe(o);
  }
  const into = new StreamOptions();
  applyCliOption(into, optionByCli('hls.no_audio_only')!, undefined, '--hls.no_audio_only');
  expect(into.bool('hls_no_audio_only')).toBe(true);
});

const OPTIONS_DOC = path.join(__dirname, '..', '..', '..', 'docs', 'reference', 'options.md');

test('docs/reference/options.md documents every option in the registry', () => {
  const readme = readFileSync(OPTIONS_DOC, 'utf8');
  for (const o of OPTIONS) {
    expect(readme).toContain(`\`${o.name}\``);
    if (o.stored) expect(readme).toContain(`\`--${o.cli}\``);
  }
  for (const o of KEY_SERVER_OPTIONS) expect(readme).toContain(`| \`--${o.cli}\` |`);
});

test('key acquisition options are neither stream options nor stored', () => {
  for (const o of KEY_SERVER_OPTIONS) {
    expect([o.cli, o.stored, o.query, optionByName(o.name), optionByCli(o.cli)]).toEqual([
      o.cli,
      false,
      false,
      undefined,
      undefined,
    ]);
  }
});

/** An option's value column. */
function valueOf(o: OptionSpec): string {
  switch (o.type) {
    case 'boolean':
      return 'boolean';
    case 'integer':
      return o.min !== undefined && o.max !== undefined ? `integer ${o.min}–${o.max}` : 'integer';
    case 'rational':
      return 'seconds (integer or rational)';
    case 'enum':
      return (o.values ?? []).join(' \\| ');
    case 'string':
      return 'text';
  }
}

const defaultOf = (o: OptionSpec): string =>
  o.default === undefined ? 'unset' : o.default === '' ? 'empty' : `\`${String(o.default)}\``;

/** The option table as docs/reference/options.md prints it, rendered from the registry. */
function optionsMarkdown(): string {
  const rows = OPTIONS.map(
    (o) =>
      `| ${o.stored ? `\`--${o.cli}\`` : '—'} | \`${o.name}\` | ${valueOf(o)} | ` +
      `${o.default === undefined ? 'unset' : `\`${String(o.default)}\``} | ${o.query ? 'yes' : '**no**'} | ` +
      `${o.description} |`,
  );
  return [
    '| CLI | meta / query name | value | default | query | what it does |',
    '|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

/** The key acquisition table: CLI only, never stored or queried. */
function keyServerMarkdown(): string {
  const rows = KEY_SERVER_OPTIONS.map((o) => `| \`--${o.cli}\` | ${valueOf(o)} | ${defaultOf(o)} | ${o.description} |`);
  return ['| CLI | value | default | what it does |', '|---|---|---|---|', ...rows].join('\n');
}

test.each([
  ['option-table', optionsMarkdown],
  ['key-server-table', keyServerMarkdown],
])('docs/reference/options.md prints the %s of the registry (UPDATE_GOLDEN=1 rewrites it)', (marker, render) => {
  let doc = readFileSync(OPTIONS_DOC, 'utf8');
  const table = new RegExp(`(<!-- ${marker} -->\\n)([\\s\\S]*?)(\\n<!-- \\/${marker} -->)`);
  if (process.env.UPDATE_GOLDEN === '1') {
    doc = doc.replace(table, (_, open: string, _old: string, close: string) => open + render() + close);
    writeFileSync(OPTIONS_DOC, doc);
  }
  expect(table.exec(doc)?.[2]).toBe(render());
});
