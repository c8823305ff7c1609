// Which content key of a CPIX document (drm/cpix.ts) encrypts each track: its usage rules
// evaluated against the track's properties, the ones track filters see (model/media.ts). Pure.
//
// CPIX 2.3 "Usage Rules Filters": filters of one type are ORed, the types ANDed, a type a rule
// does not name does not constrain it; VideoFilter matches video only and AudioFilter audio only.
// What each filter compares here:
// - VideoFilter pixels: MaxWidth × MaxHeight (the coded size before the sample aspect ratio, as
//   the filter defines it), [minPixels, maxPixels]; frame rate: FrameRate, (minFps, maxFps];
// - AudioFilter: Channels, [minChannels, maxChannels];
// - BitrateFilter: systemBitrate (the nominal bit rate of the server manifest, bit/s);
// - LabelFilter: the track's name as the server manifest and every URL give it (video_eng).
// Every audio and video track needs exactly one key: a track no rule matches is an error naming
// it (never left clear), and so is a track two rules give different keys ("a CPIX document must
// always match exactly zero or one Content Keys to any Content Key Context"). Text tracks are
// never encrypted (drm/encrypted-tracks.ts) and take no key. Without a ContentKeyUsageRuleList a
// document with a single key gives it to every track; with several keys it says nothing.

import { originError } from '../errors';
import type { TrackProperties } from '../model/media';
import type { CpixDocument, CpixKey, CpixRule } from './cpix';
import { uuidString } from './systems';

export interface RuleTrack {
  properties: TrackProperties;
  /** How messages name the track: its file and id, or its name and bitrate. */
  describe: string;
}

/** The key of each track (undefined: a text or data track, which stays clear). */
export function keysOfTracks(
  doc: CpixDocument,
  tracks: readonly RuleTrack[],
  subject: string,
): Array<CpixKey | undefined> {
  const bad = (message: string): never => {
    throw originError('bad-option', message, { subject });
  };
  const byKid = new Map(doc.keys.map((k) => [uuidString(k.kid), k]));
  return tracks.map((t) => {
    const p = t.properties;
    if (p.type !== 'video' && p.type !== 'audio') return undefined;
    let key: CpixKey | undefined;
    if (doc.rules === undefined) {
      if (doc.keys.length !== 1) {
        bad(
          `${doc.keys.length} content keys and no <ContentKeyUsageRuleList>: the document does not say which track takes which key`,
        );
      }
      key = doc.keys[0]!;
    } else {
      const matching = doc.rules.filter((r) => matches(r, p));
      if (matching.length === 0) {
        bad(`no <ContentKeyUsageRule> matches ${t.describe} (${facts(p)}): every audio and video track needs a key`);
      }
      const other = matching.find((r) => uuidString(r.kid) !== uuidString(matching[0]!.kid));
      if (other !== undefined) {
        bad(
          `<ContentKeyUsageRule> #${matching[0]!.position} (kid ${uuidString(matching[0]!.kid)}) and #${other.position} ` +
            `(kid ${uuidString(other.kid)}) both match ${t.describe} (${facts(p)}): a track takes one key`,
        );
      }
      key = byKid.get(uuidString(matching[0]!.kid))!;
    }
    if (key.cek === undefined) {
      bad(`<ContentKey kid="${uuidString(key.kid)}">, the key of ${t.describe}, has no <pskc:PlainValue>`);
    }
    return key;
  });
}

export function matches(rule: CpixRule, p: TrackProperties): boolean {
  // A bound the track has no value for cannot match (the value is unknown, not out of range).
  const within = (v: number | undefined, min: number | undefined, max: number | undefined): boolean =>
    (min === undefined && max === undefined) ||
    (v !== undefined && (min === undefined || v >= min) && (max === undefined || v <= max));
  const any = <T>(filters: readonly T[], test: (f: T) => boolean): boolean =>
    filters.length === 0 || filters.some(test);
  const pixels = p.MaxWidth === undefined || p.MaxHeight === undefined ? undefined : p.MaxWidth * p.MaxHeight;
  const fps = p.FrameRate === undefined ? undefined : p.FrameRate.num / p.FrameRate.den;
  return (
    any(rule.labels, (label) => label === p.trackName) &&
    any(
      rule.video,
      (f) =>
        p.type === 'video' &&
        within(pixels, f.minPixels, f.maxPixels) &&
        (f.minFps === undefined || (fps !== undefined && fps > f.minFps)) &&
        (f.maxFps === undefined || (fps !== undefined && fps <= f.maxFps)),
    ) &&
    any(rule.audio, (f) => p.type === 'audio' && within(p.Channels, f.minChannels, f.maxChannels)) &&
    any(rule.bitrate, (f) => within(p.systemBitrate, f.minBitrate, f.maxBitrate))
  );
}

/** What the filters compare, for messages. */
function facts(p: TrackProperties): string {
  const out: string[] = [p.type, `name ${p.trackName}`, `${p.systemBitrate} bit/s`];
  if (p.type === 'video' && p.MaxWidth !== undefined && p.MaxHeight !== undefined) {
    out.push(`${p.MaxWidth}x${p.MaxHeight} = ${p.MaxWidth * p.MaxHeight} pixels`);
  }
  if (p.type === 'video' && p.FrameRate !== undefined)
    out.push(`${+(p.FrameRate.num / p.FrameRate.den).toFixed(3)} fps`);
  if (p.type === 'audio' && p.Channels !== undefined) out.push(`${p.Channels} channels`);
  return out.join(', ');
}
