// The channel endpoints of the serving port: `<ch>.isml/state` and `<ch>.isml/archive`
// (origin/live/live-routes.ts). Any worker answers them from what the ingest process wrote, read
// through the storage seam (origin/live/channel-reader.ts); nothing here writes. Both read the
// channel's status file (one small file, the only place its state and encoders are); the archive's
// ranges come from the process's fragment table (origin/live/fragment-table.ts), which the
// ingest process's messages keep current, instead of every index file on every request.

import * as http from 'node:http';
import { originError } from '../errors';
import { Storage } from '../io/storage';
import { readChannelStatus } from '../live/channel-reader';
import { LiveFragmentTable } from '../live/fragment-table';
import { LiveRequest } from '../live/live-routes';
import { archiveJson, stateJson, stateSmil, timeRanges } from '../live/status';

export async function serveLiveStatus(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  live: LiveRequest,
  rawQuery: string,
  o: { root: string; storage: Storage; fragments: LiveFragmentTable },
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
      tracks.push({ status: t, ranges: timeRanges(await o.fragments.fragments(live.isml, t)) });
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
