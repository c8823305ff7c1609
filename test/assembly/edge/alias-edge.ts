// The whole alias chain for the end-to-end tests: the demo's map files and description copied
// to a scratch directory, `origin edge-config` writing them into a copy of envoy-config/envoy.yaml,
// `origin edge` started from that file (the real host with build/edge.wasm) in front of the real
// origin serving the fixture presentation at /vod/tos.ism.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { PLAYABLE } from '../../helpers/presentations';
import { ROOT, runOrigin, tempDir } from '../../helpers/fixtures';
import { startTestOrigin, TestOrigin } from '../../origin/server/server-helpers';
import { EdgeUnderTest, startTestEdge } from '../../host-glue/envoy/edge-helpers';

export interface AliasSetup {
  origin: TestOrigin;
  edge: EdgeUnderTest;
  /** The envoy.yaml with the alias maps written in (for an edge in the origin's process too). */
  yaml: string;
  close(): Promise<void>;
}

export async function startAliasEdge(): Promise<AliasSetup> {
  const origin = await startTestOrigin({ 'vod/tos': PLAYABLE });
  const dir = tempDir('alias-edge-');
  for (const f of ['filter.map', 'timeline.map', 'alter.map', 'edge-config.yaml'])
    await fs.copyFile(path.join(ROOT, 'envoy-config', 'maps', f), path.join(dir, f));
  // One more bundle, written as a user would: one video and one audio rendition, nothing for an
  // ABR controller to switch (hls.js's up-switch on this small ladder aborts an audio load and
  // reports it, direct or through the edge alike: test/e2e/edge/edge-players.test.ts).
  await fs.appendFile(path.join(dir, 'filter.map'), `\n# added by the test\none     ${ONE}\n`);
  const yaml = path.join(dir, 'envoy.yaml');
  await fs.copyFile(path.join(ROOT, 'envoy-config', 'envoy.yaml'), yaml);
  const r = await runOrigin(['edge-config', path.join(dir, 'edge-config.yaml'), '--config', yaml]);
  if (r.code !== 0) throw new Error(`origin edge-config failed: ${r.stderr}`);
  const edge = await startTestEdge(origin.url, { config: yaml });
  return {
    origin,
    edge,
    yaml,
    close: async () => {
      await edge.close();
      await origin.server.close();
    },
  };
}

const ONE = 'filter=(FourCC=="AVC1"%26%26systemBitrate<500000)||(FourCC=="AACL"%26%26systemBitrate<100000)';

/** The demo maps as the origin reads them (independent of the engine: written out here). */
export const DIRECT = {
  alter: {
    fmp4: 'hls_fmp4=true&hls_client_manifest_version=7',
    ts: 'hls_fmp4=false&hls_client_manifest_version=4',
  } as Record<string, string>,
  filter: {
    avc: `filter=${encodeURIComponent('FourCC=="AVC1"||FourCC=="AACL"')}`,
    sd: `filter=${encodeURIComponent('(type=="video"&&systemBitrate<1000000)||FourCC=="AACL"||type=="textstream"')}`,
    audio: `filter=${encodeURIComponent('type!="video"&&(systemLanguage=="en"||systemLanguage=="eng")')}`,
    one: `filter=${encodeURIComponent('(FourCC=="AVC1"&&systemBitrate<500000)||(FourCC=="AACL"&&systemBitrate<100000)')}`,
  } as Record<string, string>,
  timeline: { intro: 't=0-0:00:06', late: 'vbegin=0:00:04' } as Record<string, string>,
};

const join = (...parts: Array<string | undefined>): string =>
  parts.filter((p) => p !== undefined && p !== '').join('&');

/**
 * The query URL an alias stands for, straight from the reference's table
 * (docs/reference/edge-config.md#rewrite), written with regular expressions here so that the
 * engine is checked, not repeated.
 * `target` is the alias as requested (path decoded, with its query).
 */
export function directFor(target: string): string {
  const q = target.indexOf('?');
  const p = q < 0 ? target : target.slice(0, q);
  const query = q < 0 ? '' : target.slice(q + 1);
  const a = DIRECT.alter;
  const f = DIRECT.filter;
  const t = DIRECT.timeline;
  let m: RegExpExecArray | null;
  if ((m = /^(.*?\.ism)\/(fmp4|ts)\/(keyframes\/)?([^-@/]+)-([^/]+)\.m3u8$/.exec(p))) {
    return `${m[1]}/${m[3] ?? ''}${m[5]}.m3u8?${join(a[m[2]!], t[m[4]!], 'suppress_query_parameters')}`;
  }
  if ((m = /^(.*?\.ism)\/(fmp4|ts)\/([^-@/]+)@([^-@/]+)\.m3u8$/.exec(p))) {
    return `${m[1]}/.m3u8?${join(a[m[2]!], f[m[3]!], `presentation_name=${m[4]}`, 'suppress_query_parameters')}`;
  }
  if ((m = /^(.*?\.ism)\/(fmp4|ts)\/([^-@/]+)\.m3u8$/.exec(p))) {
    return `${m[1]}/.m3u8?${join(a[m[2]!], f[m[3]!], 'suppress_query_parameters')}`;
  }
  if (
    (m =
      /^(.*?\.ism)\/(fmp4|ts)\/((?:hls\/[^/]+\.m4s)|(?:keyframes\/[^/]+\.(?:ts|m4s))|(?:[^/]+\.(?:ts|aac|ac3|ec3|webvtt)))$/.exec(
        p,
      ))
  ) {
    return `${m[1]}/${m[3]}?${join(a[m[2]!], query)}`;
  }
  if ((m = /^(.*?\.ism)\/(avc|sd|audio|one)\/(Manifest)$/.exec(p))) {
    return `${m[1]}/${m[3]}?${join(f[m[2]!], query, 'suppress_query_parameters')}`;
  }
  if ((m = /^(.*?\.ism)\/(avc|sd|audio|one)\/(QualityLevels\(\d+\)\/Fragments\([^/]+\))$/.exec(p))) {
    return `${m[1]}/${m[3]}?${join(f[m[2]!], query)}`;
  }
  throw new Error(`no alias shape: ${target}`);
}
