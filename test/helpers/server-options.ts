// The serving port most tests start: loopback on a free port, no Cache-Control (tests read the
// answers, not caching advice), the real .wasm track selector, no player page.

import { ServerOptions } from '../../origin/server/server';
import { wasmTrackSelector } from '../../origin/server/select';

export function plainServerOptions(root: string): ServerOptions {
  return {
    root,
    host: '127.0.0.1',
    port: 0,
    manifestCacheControl: '',
    segmentCacheControl: '',
    select: wasmTrackSelector,
    playerPage: false,
  };
}
