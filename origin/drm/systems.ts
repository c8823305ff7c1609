// DRM system ids (ISO/IEC 23001-7 §8.1 SystemID, `urn:uuid:` in MPDs, Smooth's SystemID), as
// the DASH-IF registry lists them. Lower case with dashes; `drm_a` keeps the upper-case form the
// service description gives for its MPD element (players compare UUIDs case-insensitively).

/** `drm_a` (the reference's Widevine options). */
export const DRM_A = 'edef8ba9-79d6-4ace-a3c8-27dcd51d21ed';
export const PLAYREADY = '9a04f079-9840-4286-ab92-e65be0885f95';
export const FAIRPLAY = '94ce86fb-07ff-4f43-adb8-93d2fa968ca2';
/** W3C Common PSSH format: the KIDs a ClearKey CDM reads from `cenc` init data (W3C EME §"cenc" format). */
export const COMMON = '1077efec-c0b2-4d02-ace3-3c1e52e2fb4b';
/** DASH-IF ClearKey, MPD only: carries the license URL (`dashif:Laurl`). */
export const CLEARKEY = 'e2719d58-a985-b3c9-781a-b030af78d30e';

/** The 16 bytes of a UUID string. */
export function uuidBytes(uuid: string): Uint8Array {
  return Uint8Array.from(Buffer.from(uuid.replace(/-/g, ''), 'hex'));
}

/** 16 bytes as a UUID string (8-4-4-4-12), lower case. */
export function uuidString(bytes: Uint8Array): string {
  const h = Buffer.from(bytes).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
