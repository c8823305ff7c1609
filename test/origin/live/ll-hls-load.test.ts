// LL-HLS blocking reload under load (issue 23): bench/ll-hls-load.ts against the built CLI
// (`origin serve --workers 1`), the clients in their own process, the test encoder pushing 0.32 s
// parts at real time. CI runs 200 clients for 8 s; ORIGIN_LL_LOAD=1 runs 2 000 for 20 s (the
// acceptance run; figures in bench/README.md). Checked: every blocking request is answered 200
// with a part the encoder sent, nearly all clients wait at once, and the worker's memory stays
// bounded. Latencies are printed, never asserted (a shared machine's timing is noise).

import { runLlLoad } from '../../../bench/ll-hls-load';

const LONG = process.env.ORIGIN_LL_LOAD === '1';
const CLIENTS = LONG ? 2000 : 200;
const SECONDS = LONG ? 20 : 8;

test(
  `${CLIENTS} clients looping on blocking reloads: all answered, all waiting at once, bounded memory`,
  async () => {
    const r = await runLlLoad(CLIENTS, SECONDS);
    console.log(`LL-HLS blocking-reload load: ${JSON.stringify(r)}`);
    expect(r.non200).toBe(0);
    expect(r.answers).toBeGreaterThan(CLIENTS);
    // Every answer is for a part the encoder sent (none invented, none from before the run).
    expect(r.matched).toBe(r.answers);
    expect(r.maxInFlight).toBeGreaterThanOrEqual(Math.floor(CLIENTS * 0.9));
    expect(r.workerRssMaxMb - r.workerRssStartMb).toBeLessThan(LONG ? 400 : 150);
  },
  (SECONDS + 150) * 1000,
);
