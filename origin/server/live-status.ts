// The channel endpoints of the serving port: `<ch>.isml/state` and `<ch>.isml/archive`
// (origin/live/live-routes.ts). Any worker answers them from what the ingest process wrote, read
// through the storage seam (origin/live/channel-reader.ts); nothing here writes.

import * as http from 'node:http';
import { originError } from '../errors';
import { Storage } from '../io/storage';
import { readChannelStatus, readTrackRecords } from '../live/channel-reader';
import { LiveRequest } from '../live/live-routes';
import { archiveJson, stateJson, stateSmil, timeRanges } from '../live/status';

export async function serveLiveStatus(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  live: LiveRequest,
  rawQuery: string,
  o: { root: string; storage: Storage },
): Promise<void> {
  if (live.route.kind === 'ingest') {
    res.setHeader('Allow', 'POST, PUT');
    throw originError('method-not-allowed', 'ingest is taken on the ingest listener (origin serve --ingest-port)');
  }
  const status = await readChannelStatus(o.storage, o.root, live.isml);
  let body: string;
  let type: string;
  if (live.route.kind === 'state') {
    const json = new URLSearchParams(rawQuery).get('format') === 'json';
    body = json ? stateJson(live.isml, status) : stateSmil(status);
    type = json ? 'application/json' : 'application/smil+xml; charset=utf-8';
  } else {
    const tracks = [];
    for (const t of status.tracks)
      tracks.push({ status: t, ranges: timeRanges(await readTrackRecords(o.storage, o.root, live.isml, t)) });
    body = archiveJson(live.isml, tracks);
    type = 'application/json';
  }
  const bytes = Buffer.from(body, 'utf8');
  res.statusCode = 200;
  res.setHeader('Content-Type', type);
  res.setHeader('Content-Length', bytes.byteLength);
  // The state changes with every fragment: never cached.
  res.setHeader('Cache-Control', 'no-store');
  res.end(req.method === 'HEAD' ? undefined : bytes);
}
