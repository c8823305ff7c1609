// Shared by the rewrite engine tests: the demo's maps and what the origin receives for them, and
// one engine per test file (jest loads this module once per file; the hook below runs in it).

import * as path from 'node:path';
import { RewriteEngine } from './rewrite-probe';

export const ROOT = path.resolve(__dirname, '..', '..', '..');

/** The demo's maps (envoy-config/maps/*.map), written out here so that a change shows. */
export const MAPS = {
  filter: {
    avc: 'filter=FourCC=="AVC1"||FourCC=="AACL"',
    sd: 'filter=(type=="video"%26%26systemBitrate<1000000)||FourCC=="AACL"||type=="textstream"',
  },
  timeline: { intro: 't=0-0:00:06', late: 'vbegin=0:00:04' },
  alter: { fmp4: 'hls_fmp4=true&hls_client_manifest_version=7', ts: 'hls_fmp4=false&hls_client_manifest_version=4' },
};

/** What the origin receives for the filter values: the characters a URL cannot hold raw encoded. */
export const AVC = 'filter=FourCC==%22AVC1%22%7C%7CFourCC==%22AACL%22';

export const SD =
  'filter=(type==%22video%22%26%26systemBitrate%3C1000000)%7C%7CFourCC==%22AACL%22%7C%7Ctype==%22textstream%22';

export const FMP4 = 'hls_fmp4=true&hls_client_manifest_version=7';

export const TS = 'hls_fmp4=false&hls_client_manifest_version=4';

export let engine: RewriteEngine;

beforeAll(() => {
  engine = new RewriteEngine();
});

export function configured(rewrite: unknown): RewriteEngine {
  expect(engine.configure(rewrite)).toBe('');
  return engine;
}
