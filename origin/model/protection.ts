// How a presentation is protected, per output format: decided once from the server manifest's
// DRM options (origin/drm/protection.ts) and read by the writers. Formats without an entry are
// refused for a protected presentation (no accidental clear playout), never served clear.

/** A content key: 16-byte key id and 16-byte content encryption key (ISO/IEC 23001-7 §3). */
export interface ContentKey {
  kid: Uint8Array;
  key: Uint8Array;
}

/** Common-encryption schemes we write (ISO/IEC 23001-7 §10.1 cenc, §10.4 cbcs). */
export type CencScheme = 'cenc' | 'cbcs';

/** A DRM system signalled next to the common encryption: its `pssh` box and manifest elements. */
export interface DrmSystem {
  /** Lower-case UUID with dashes (origin/drm/systems.ts). */
  systemId: string;
  /** The whole `pssh` box (ISO/IEC 23001-7 §8.1); undefined: none (ClearKey's MPD-only element). */
  pssh: Uint8Array | undefined;
  /** PlayReady only: the PlayReady Object (the pssh data, also the MPD's `mspr:pro`). */
  playReadyObject: Uint8Array | undefined;
  /** License server advertised in the manifest, when the DRM's signalling has a place for it. */
  licenseUrl: string | undefined;
}

/** Common encryption of fMP4 output (DASH, HLS fMP4, Smooth's PIFF). */
export interface CencProtection {
  scheme: CencScheme;
  key: ContentKey;
  /** 8-byte base of per-sample IVs (cenc); undefined: derived per track (origin/drm/ivs.ts). */
  ivBase: Uint8Array | undefined;
  /** 16-byte constant IV (cbcs); undefined: derived per track. */
  constantIv: Uint8Array | undefined;
  /** DRM systems signalled, in the order their elements are written (the common pssh first). */
  systems: DrmSystem[];
  /** Seconds at the start left clear, rounded up to whole segments by the writers. */
  clearLeadSeconds: number;
}

/** The output formats, as Protection and the refusals name them. */
export type ProtectedFormat = 'smooth' | 'dash' | 'hls' | 'hds';

/** One EXT-X-KEY / EXT-X-SESSION-KEY line (RFC 8216 §4.3.2.4, §4.3.4.5). */
export interface HlsKeyLine {
  /** SAMPLE-AES for cbcs, SAMPLE-AES-CTR for cenc (fMP4). */
  method: 'SAMPLE-AES' | 'SAMPLE-AES-CTR';
  uri: string;
  /** Absent: identity (a key file at `uri`). */
  keyFormat: string | undefined;
  keyId: Uint8Array | undefined;
}

/**
 * SAMPLE-AES of MPEG-TS and packed-audio segments (Apple's MPEG-2 stream encryption,
 * origin/drm/sample-aes-ts.ts) with the HLS key: the key lines of the DRMs whose players decrypt
 * it themselves, each written with an IV.
 */
export interface SampleAesTs {
  key: Uint8Array;
  /** The IV of every segment, on every key line: `--hls.key_iv`, else derived from the key (drm/ivs.ts). */
  iv: Uint8Array;
  keys: HlsKeyLine[];
}

/**
 * HLS: either AES-128 whole-segment encryption (RFC 8216 §4.3.2.4, the default of `--hls.key`)
 * of every segment kind, or SAMPLE-AES (`--hls.playout`): common encryption of fMP4 segments
 * with the key lines of each DRM, and Apple's SAMPLE-AES of MPEG-TS and packed audio when a DRM
 * signalled has a key line for it (else `tsRefusal` says why not).
 */
export type HlsProtection =
  | { method: 'AES-128'; key: Uint8Array; iv: Uint8Array | undefined; uri: string }
  | {
      method: 'SAMPLE-AES';
      fmp4: CencProtection;
      keys: HlsKeyLine[];
      ts: SampleAesTs | undefined;
      tsRefusal: string | undefined;
    };

export interface Protection {
  /** The formats the DRM options encrypt; a protected presentation refuses every other format. */
  formats: ReadonlySet<ProtectedFormat>;
  /**
   * DASH: the common encryption of each encrypted track, by PresentationTrack.index. One object
   * per content key, shared by the tracks it encrypts: the same one for every track with the key
   * options, one per key with a CPIX document (drm/cpix-protection.ts). Tracks left clear (text)
   * have no entry.
   */
  dash: ReadonlyMap<number, CencProtection> | undefined;
  /** Smooth Streaming (PIFF, always cenc) with the PlayReady header: `--iss.key`. */
  smooth: CencProtection | undefined;
  hls: HlsProtection | undefined;
  /**
   * The W3C ClearKey license server the manifests signal (`--clearkey.license_server_url`), for
   * pages that offer it: known from the options alone, as the index page reads them.
   */
  clearKeyLicense: string | undefined;
}
