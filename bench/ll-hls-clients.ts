// The LL-HLS blocking-reload load generator, in its own process (bench/ll-hls-load.ts spawns it):
// `node dist/bench/ll-hls-clients.js <playlist URL …> --clients N --seconds S`. Each client holds
// its own connection and loops as a low-latency player does: it asks for the part after the
// newest one it has seen (`_HLS_msn`, `_HLS_part`), waits for the answer, and asks again. The
// clients are spread over the URLs given. On stdout, one JSON line at the end: every answer's
// (url index, msn, part, status, answered at ms since 1970), and the most requests in flight at once.

import * as http from 'node:http';

interface Answer {
  u: number;
  msn: number;
  part: number;
  status: number;
  at: number;
}

function get(url: string, agent: http.Agent): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    http
      .get(url, { agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
        res.on('error', () => resolve({ status: 0, body: '' }));
      })
      .on('error', () => resolve({ status: 0, body: '' }));
  });
}

/** The newest part a playlist lists: the last EXT-X-PART URI's `-<msn>.part<i>.m4s`. */
function newest(body: string): { msn: number; part: number } | undefined {
  const all = [...body.matchAll(/-(\d+)\.part(\d+)\.m4s/g)];
  const parts = all.filter((m) => !body.slice(Math.max(0, m.index - 40), m.index).includes('PRELOAD-HINT'));
  const m = parts.at(-1);
  return m === undefined ? undefined : { msn: Number(m[1]), part: Number(m[2]) };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const flag = (name: string): number => Number(args[args.indexOf(name) + 1]);
  const clients = flag('--clients');
  const seconds = flag('--seconds');
  const urls = args.filter((a, i) => a.startsWith('http') && !args[i - 1]?.startsWith('--'));
  const answers: Answer[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const end = Date.now() + seconds * 1000;
  const client = async (c: number): Promise<void> => {
    const u = c % urls.length;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    let at = newest((await get(urls[u]!, agent)).body);
    while (at !== undefined && Date.now() < end) {
      const target = { msn: at.msn, part: at.part + 1 };
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const r = await get(`${urls[u]}?_HLS_msn=${target.msn}&_HLS_part=${target.part}`, agent);
      inFlight--;
      answers.push({ u, ...target, status: r.status, at: Date.now() });
      at = r.status === 200 ? newest(r.body) : newest((await get(urls[u]!, agent)).body);
    }
    agent.destroy();
  };
  await Promise.all(Array.from({ length: clients }, (_, c) => client(c)));
  process.stdout.write(`${JSON.stringify({ answers, maxInFlight })}\n`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
