// What a CPIX document (the `cpix` option: the document itself, Base64, as `origin package --cpix`
// stores it) means for a presentation: every audio and video track encrypted with the key its
// usage rules select (drm/cpix-rules.ts), so SD, HD and audio can each have their own.
//
// - DASH: one CencProtection per key, shared by the tracks it encrypts (the MPD gives each key its
//   own AdaptationSets). Each key's init segments and descriptors carry the W3C Common PSSH listing
//   every key of the presentation, as shaka-packager writes it for several keys, so one license
//   request can ask for all of them; then one element per DRMSystem the document gives for that
//   key: drm_a (its PSSH, or the data the origin writes for every KID), PlayReady (its PSSH, whose
//   data is the PlayReady Object, or one written for the key), ClearKey (`dashif:Laurl` from
//   `--clearkey.license_server_url`), any other system with its PSSH. FairPlay signals HLS only.
//   The scheme is `--mpd.protection_scheme`, else the keys' commonEncryptionScheme, else cenc.
// - Smooth Streaming has one ProtectionHeader for the whole presentation (MS-SSTR §2.2.2.2): it is
//   encrypted only when one cenc key covers every track, with the PlayReady header of that key.
// - HLS is not encrypted from a CPIX document in this version (403 protected-format, drm/refusals.ts).
// Key rotation is out of scope: one key per track for the whole presentation (drm/cpix.ts refuses
// key periods). IVs are derived per track and key (drm/ivs.ts), never taken from the document.

import * as path from 'node:path';
import { originError } from '../errors';
import type { StreamOptions } from '../options/registry';
import type { PresentationTrack } from '../model/presentation';
import type { CencProtection, CencScheme, DrmSystem, ProtectedFormat, Protection } from '../model/protection';
import { CpixDocument, CpixKey, parseCpix } from './cpix';
import { keysOfTracks, RuleTrack } from './cpix-rules';
import { isEncryptedTrack } from './encrypted-tracks';
import { drmAPsshData, playReadyObject, psshBox, psshData } from './pssh';
import { CLEARKEY, COMMON, DRM_A, FAIRPLAY, PLAYREADY, uuidString } from './systems';

/** The protection the CPIX document of the `cpix` option gives `tracks`. */
export function cpixProtection(
  options: StreamOptions,
  tracks: readonly PresentationTrack[],
  subject: string,
): Protection {
  const doc = parseCpix(cpixText(options.str('cpix')!, subject), `${subject}: cpix`);
  const plan = cpixPlan(
    doc,
    tracks.map((t) => ({
      properties: t.properties,
      describe: `track ${t.properties.trackName}=${t.properties.systemBitrate} (${path.basename(t.src)})`,
      encrypted: isEncryptedTrack(t),
    })),
    options,
    `${subject}: cpix`,
  );
  const dash = new Map(tracks.flatMap((t, i) => (plan.tracks[i] === undefined ? [] : [[t.index, plan.tracks[i]!]])));
  const formats = new Set<ProtectedFormat>(plan.smooth === undefined ? ['dash'] : ['dash', 'smooth']);
  return {
    formats,
    dash,
    smooth: plan.smooth,
    hls: undefined,
    clearKeyLicense: options.str('clearkey_license_server_url'),
  };
}

/** The stored option's document text (the option holds it Base64). */
function cpixText(stored: string, subject: string): string {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(stored) || stored.length % 4 !== 0) {
    throw originError(
      'bad-option',
      'the cpix option is not a Base64 CPIX document (origin package --cpix stores one)',
      {
        subject,
      },
    );
  }
  return Buffer.from(stored, 'base64').toString('utf8');
}

export interface CpixTrack extends RuleTrack {
  /** Whether the origin encrypts it (audio and video it can read; drm/encrypted-tracks.ts). */
  encrypted: boolean;
}

export interface CpixPlan {
  /** Each track's common encryption (one object per key), undefined for a track left clear. */
  tracks: Array<CencProtection | undefined>;
  /** Smooth's, when one cenc key covers every encrypted track. */
  smooth: CencProtection | undefined;
}

/**
 * Which key and signalling each track gets, checked against the options. Also run by `origin
 * package --cpix`, so that a document that cannot work is refused before a server manifest exists.
 */
export function cpixPlan(
  doc: CpixDocument,
  tracks: readonly CpixTrack[],
  options: StreamOptions,
  subject: string,
): CpixPlan {
  const bad = (message: string): never => {
    throw originError('bad-option', message, { subject });
  };
  const keys = keysOfTracks(doc, tracks, subject);
  const used = [...new Set(tracks.flatMap((t, i) => (t.encrypted ? [keys[i]!] : [])))];
  const scheme = schemeOf(options, used, bad);
  const lead = options.rational('clear_lead');
  const ctx = { allKids: used.map((k) => k.kid), scheme, clearKeyUrl: options.str('clearkey_license_server_url') };
  const byKey = new Map(
    used.map((key): [CpixKey, CencProtection] => [
      key,
      {
        scheme,
        key: { kid: key.kid, key: key.cek! },
        ivBase: undefined,
        constantIv: undefined,
        systems: systemsOf(doc, key, ctx, bad),
        clearLeadSeconds: lead === undefined ? 0 : lead.num / lead.den,
      },
    ]),
  );
  return {
    tracks: tracks.map((t, i) => (t.encrypted ? byKey.get(keys[i]!) : undefined)),
    smooth: used.length === 1 && scheme === 'cenc' ? smoothProtection(doc, used[0]!) : undefined,
  };
}

/** `--mpd.protection_scheme` when given, else the scheme the keys ask for (one for all), else cenc. */
function schemeOf(options: StreamOptions, keys: readonly CpixKey[], bad: (m: string) => never): CencScheme {
  const asked = [...new Set(keys.flatMap((k) => (k.scheme === undefined ? [] : [k.scheme])))];
  if (asked.length > 1) bad(`the keys ask for ${asked.join(' and ')}: a presentation is written with one scheme`);
  const given = options.isSet('mpd_protection_scheme')
    ? (options.str('mpd_protection_scheme') as CencScheme)
    : undefined;
  if (given !== undefined && asked.length === 1 && asked[0] !== given) {
    bad(`--mpd.protection_scheme=${given}, but the CPIX keys are for ${asked[0]} (commonEncryptionScheme)`);
  }
  return given ?? asked[0] ?? 'cenc';
}

interface SystemsContext {
  /** Every key of the presentation, for the Common PSSH (and drm_a's, when the origin writes it). */
  allKids: readonly Uint8Array[];
  scheme: CencScheme;
  clearKeyUrl: string | undefined;
}

function systemsOf(doc: CpixDocument, key: CpixKey, ctx: SystemsContext, bad: (m: string) => never): DrmSystem[] {
  const system = (systemId: string, pssh: Uint8Array | undefined, pro?: Uint8Array): DrmSystem => ({
    systemId,
    pssh,
    playReadyObject: pro,
    licenseUrl: undefined,
  });
  // The W3C Common PSSH first: the one a ClearKey CDM reads.
  const out = [system(COMMON, psshBox(COMMON, new Uint8Array(0), ctx.allKids))];
  let clearKey = ctx.clearKeyUrl !== undefined;
  for (const s of doc.systems.filter((x) => uuidString(x.kid) === uuidString(key.kid))) {
    if (s.systemId === COMMON || s.systemId === FAIRPLAY) continue;
    if (s.systemId === CLEARKEY) {
      clearKey = true;
    } else if (s.systemId === DRM_A) {
      out.push(system(DRM_A, s.pssh ?? psshBox(DRM_A, drmAPsshData(ctx.allKids, ctx.scheme))));
    } else if (s.systemId === PLAYREADY) {
      const pro = s.pssh === undefined ? playReadyObject(key.kid, key.cek!, ctx.scheme) : psshData(s.pssh)!;
      out.push(system(PLAYREADY, s.pssh ?? psshBox(PLAYREADY, pro), pro));
    } else if (s.pssh !== undefined) {
      out.push(system(s.systemId, s.pssh));
    } else {
      bad(
        `<DRMSystem systemId="${s.systemId}" kid="${uuidString(s.kid)}"> has no <PSSH>: this origin signals a system it does not know from its PSSH only`,
      );
    }
  }
  if (clearKey) out.push({ ...system(CLEARKEY, undefined), licenseUrl: ctx.clearKeyUrl });
  return out;
}

/** Smooth (PIFF, cenc): the PlayReady header of the one key, the document's when it gives one. */
function smoothProtection(doc: CpixDocument, key: CpixKey): CencProtection {
  const given = doc.systems.find((s) => s.systemId === PLAYREADY && uuidString(s.kid) === uuidString(key.kid))?.pssh;
  const pro = given === undefined ? playReadyObject(key.kid, key.cek!, 'cenc') : psshData(given)!;
  return {
    scheme: 'cenc',
    key: { kid: key.kid, key: key.cek! },
    ivBase: undefined,
    constantIv: undefined,
    systems: [{ systemId: PLAYREADY, pssh: psshBox(PLAYREADY, pro), playReadyObject: pro, licenseUrl: undefined }],
    clearLeadSeconds: 0,
  };
}
