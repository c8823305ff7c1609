// The server manifest (.ism, SMIL 2.0) as data: what ism/server-manifest.ts reads and writes and
// what a presentation keeps (model/presentation.ts). Element and attribute names follow the
// reference product's files, which load unchanged.

export const SMIL_NAMESPACE = 'http://www.w3.org/2001/SMIL20/Language';
export const TRACK_ELEMENTS = ['video', 'audio', 'textstream'] as const;
export type TrackElement = (typeof TRACK_ELEMENTS)[number];

export interface MetaEntry {
  name: string;
  content: string;
}

export interface ParamGroup {
  id: string;
  meta: MetaEntry[];
}

export interface IsmParam {
  name: string;
  value: string;
  /** As written in the source (`data` in practice); kept for the round trip. */
  valueType: string | undefined;
}

export interface IsmTrack {
  element: TrackElement;
  src: string;
  systemBitrate: number;
  systemLanguage: string | undefined;
  /** Attributes other than src/systemBitrate/systemLanguage, in document order. */
  extraAttributes: Array<[string, string]>;
  params: IsmParam[];
}

export interface ServerManifest {
  meta: MetaEntry[];
  paramGroups: ParamGroup[];
  tracks: IsmTrack[];
}
