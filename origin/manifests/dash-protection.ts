// ContentProtection descriptors of a protected MPD (ISO/IEC 23009-1 §5.8.4.1; ISO/IEC 23001-7
// §11.2 for `urn:mpeg:dash:mp4protection:2011` and `cenc:default_KID`, §11.3 for `cenc:pssh`):
// first the common-encryption descriptor with the scheme and the key id, then one per DRM system
// in the order the protection lists them. PlayReady adds `mspr:pro` (value "MSPR 2.0"), ClearKey
// (DASH-IF IOP) its license URL as `dashif:Laurl`, which shaka and dash.js read. Pure.

import type { CencProtection, DrmSystem } from '../model/protection';
import { CLEARKEY, DRM_A, PLAYREADY } from '../drm/systems';
import { uuidString } from '../drm/systems';
import { xmlAttr } from './xml';

export const CENC_NS = 'urn:mpeg:cenc:2013';
export const MSPR_NS = 'urn:microsoft:playready';
export const DASHIF_NS = 'https://dashif.org/CPS';

/** The namespace declarations the descriptors of `ps` (one per content key) use, for the MPD element. */
export function protectionNamespaces(ps: readonly CencProtection[]): Array<[string, string]> {
  const systems = ps.flatMap((p) => p.systems);
  const out: Array<[string, string]> = [['xmlns:cenc', CENC_NS]];
  if (systems.some((s) => s.systemId === PLAYREADY)) out.push(['xmlns:mspr', MSPR_NS]);
  if (systems.some((s) => s.licenseUrl !== undefined && s.systemId !== PLAYREADY))
    out.push(['xmlns:dashif', DASHIF_NS]);
  return out;
}

/** The ContentProtection elements of an encrypted AdaptationSet, indented by `indent`. */
export function contentProtection(p: CencProtection, indent: string): string[] {
  const kid = uuidString(p.key.kid);
  const out = [
    `${indent}<ContentProtection schemeIdUri="urn:mpeg:dash:mp4protection:2011" value="${p.scheme}" cenc:default_KID="${kid}" />`,
  ];
  for (const s of p.systems) out.push(...descriptor(s, indent));
  return out;
}

function descriptor(s: DrmSystem, indent: string): string[] {
  // The service description writes drm_a's id upper case; players compare case-insensitively.
  const id = s.systemId === DRM_A ? s.systemId.toUpperCase() : s.systemId;
  const value = s.systemId === PLAYREADY ? ' value="MSPR 2.0"' : s.systemId === CLEARKEY ? ' value="ClearKey1.0"' : '';
  const children: string[] = [];
  if (s.pssh !== undefined) children.push(`<cenc:pssh>${Buffer.from(s.pssh).toString('base64')}</cenc:pssh>`);
  if (s.playReadyObject !== undefined) {
    children.push(`<mspr:pro>${Buffer.from(s.playReadyObject).toString('base64')}</mspr:pro>`);
  }
  // PlayReady's license URL travels inside its header (LA_URL).
  if (s.licenseUrl !== undefined && s.systemId !== PLAYREADY) {
    children.push(`<dashif:Laurl>${xmlAttr(s.licenseUrl)}</dashif:Laurl>`);
  }
  const open = `${indent}<ContentProtection schemeIdUri="urn:uuid:${id}"${value}`;
  if (children.length === 0) return [`${open} />`];
  return [`${open}>`, ...children.map((c) => `${indent}  ${c}`), `${indent}</ContentProtection>`];
}
