// What the encrypted-segment tests share (encrypted-segment.test.ts: the build against the plain
// one-sample-at-a-time version; encrypted-layout.test.ts: the kept layouts against the build):
// the key, how each format's protection is picked from a presentation, the packaging options of
// each case, and a source opener that counts its reads.

import type { ByteSource, SourceOpener } from '../../../origin/io/source';
import type { Format } from '../../../origin/options/registry';
import type { Presentation } from '../../../origin/model/presentation';
import type { CencProtection } from '../../../origin/model/protection';
import type { EncryptedAs } from '../../../origin/segments/fmp4/encrypted-segment';

export const KID = '00112233445566778899aabbccddeeff';
export const KEY = '3a2a1b68dd2bd9b2eeb25e84c4776668';

/** DASH's protection of a single-key presentation: every track maps to the same one. */
export const oneKey = (p: Presentation): CencProtection => [...p.protection!.dash!.values()][0]!;

function hlsFmp4(p: Presentation): CencProtection {
  const hls = p.protection!.hls!;
  if (hls.method !== 'SAMPLE-AES') throw new Error('not SAMPLE-AES');
  return hls.fmp4;
}

/** A format, its query, and how its segments are encrypted. */
export type EncryptedFormat = [Format, string, (p: Presentation) => EncryptedAs];

export const DASH: EncryptedFormat = ['dash', '', (p) => ({ protection: oneKey(p), mode: 'fmp4' })];
export const SMOOTH: EncryptedFormat = ['smooth', '', (p) => ({ protection: p.protection!.smooth!, mode: 'smooth' })];
export const HLS_FMP4: EncryptedFormat = ['hls', 'hls_fmp4=true', (p) => ({ protection: hlsFmp4(p), mode: 'fmp4' })];

const LICENSE = '--hls.license_server_url=https://k.example/k';

/** The packaging options of each case, and the formats it is read in. */
export const ENCRYPTED_CASES = {
  cenc: { options: [`--drm_a.key=${KID}:${KEY}`, `--iss.key=${KID}:${KEY}`], formats: [DASH, SMOOTH] },
  cbcs: { options: [`--drm_a.key=${KID}:${KEY}`, '--mpd.protection_scheme=cbcs'], formats: [DASH] },
  clearLead: {
    options: [`--iss.key=${KID}:${KEY}`, '--iss.key_iv=fffffffffffff000', '--clear_lead=4'],
    formats: [DASH, SMOOTH],
  },
  hlsCbcs: { options: [`--hls.key=${KID}:${KEY}`, '--hls.playout=sample_aes', LICENSE], formats: [HLS_FMP4] },
  hlsCenc: { options: [`--hls.key=${KID}:${KEY}`, '--hls.protection_scheme=cenc', LICENSE], formats: [HLS_FMP4] },
} satisfies Record<string, { options: string[]; formats: EncryptedFormat[] }>;

/** Counts the reads a source is asked for (read and, where the source has it, readInto). */
export function metered(open: SourceOpener, count: { reads: number }): SourceOpener {
  return async (path) => {
    const inner = await open(path);
    const s = inner as ByteSource & { readInto?: (t: Uint8Array, o: number, l: number) => Promise<void> };
    const out: ByteSource & { readInto?: typeof s.readInto } = {
      name: inner.name,
      size: inner.size,
      read: (o, l) => {
        count.reads++;
        return inner.read(o, l);
      },
      close: () => inner.close(),
    };
    if (s.readInto !== undefined) {
      const readInto = s.readInto.bind(inner);
      out.readInto = (t, o, l) => {
        count.reads++;
        return readInto(t, o, l);
      };
    }
    return out;
  };
}
