// Readers the origin did not write, as the timed-metadata tests use them: codem-isoboxer (DASH-IF's
// box parser) for emsg boxes and m3u8-parser (the video.js reader) for EXT-X-DATERANGE, its
// warnings kept.

/** The fields of the boxes the tests read (emsg, mdhd, tkhd ...), as codem-isoboxer names them. */
export interface IsoBox {
  type: string;
  id?: number;
  version?: number;
  timescale?: number;
  presentation_time?: number;
  scheme_id_uri?: string;
  value?: string;
  message_data?: DataView;
}

const ISOBoxer = require('codem-isoboxer') as {
  parseBuffer(b: ArrayBuffer): { boxes: IsoBox[]; fetchAll(type: string): IsoBox[] };
};

/** The boxes of `b` (a copy of its bytes: codem-isoboxer reads the whole ArrayBuffer). */
export function isoBoxes(b: Buffer): { boxes: IsoBox[]; fetchAll(type: string): IsoBox[] } {
  return ISOBoxer.parseBuffer(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer);
}

/** An EXT-X-DATERANGE as m3u8-parser gives it (RFC 8216bis §4.4.5.1). */
export interface DateRange {
  id: string;
  startDate: Date;
  duration?: number;
  plannedDuration?: number;
  scte35Out?: string;
  scte35In?: string;
  scte35Cmd?: string;
}

export interface DateRangePlaylist {
  dateRanges?: DateRange[];
  segments: Array<{ uri: string; programDateTime?: number }>;
}

const m3u8Parser = require('m3u8-parser') as {
  Parser: new () => {
    on(event: 'warn', f: (w: { message: string }) => void): void;
    push(text: string): void;
    end(): void;
    manifest: DateRangePlaylist;
  };
};

/** The playlist as m3u8-parser reads it, with every warning it raised. */
export function readDateRanges(text: string): { manifest: DateRangePlaylist; warnings: string[] } {
  const parser = new m3u8Parser.Parser();
  const warnings: string[] = [];
  parser.on('warn', (w) => warnings.push(w.message));
  parser.push(text);
  parser.end();
  return { manifest: parser.manifest, warnings };
}
