// The LL-DASH chunked-segment load generator, in its own process (bench/ll-dash-load.ts spawns it):
// `node dist/bench/ll-dash-clients.js <MPD URL> <segment URL with $Time$> --clients N --seconds S`.
// Each client holds its own connection and reads as a low-latency player does: from the MPD it
// takes the segment being ingested (the video timeline's last, predicted `<S>`), reads it as it grows, then the next one, and so on. On stdout, one JSON line at
// the end: every answer's (segment time, status, bytes, first byte and end in ms since 1970), and
// the most requests in flight at once.

import * as http from 'node:http';

interface Answer {
  t: number;
  status: number;
  bytes: number;
  firstAt: number;
  at: number;
}

function get(url: string, agent: http.Agent): Promise<{ status: number; body: Buffer; firstAt: number }> {
  return new Promise((resolve) => {
    http
      .get(url, { agent }, (res) => {
        const chunks: Buffer[] = [];
        let firstAt = 0;
        res.on('data', (c: Buffer) => {
          if (firstAt === 0) firstAt = Date.now();
          chunks.push(c);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), firstAt }));
        res.on('error', () => resolve({ status: 0, body: Buffer.alloc(0), firstAt }));
      })
      .on('error', () => resolve({ status: 0, body: Buffer.alloc(0), firstAt: 0 }));
  });
}

/** The start of the video timeline's last segment: `t + d × r` of its single `<S>` run. */
function lastStart(mpd: string): { t: number; d: number } | undefined {
  const video = mpd.slice(mpd.indexOf('contentType="video"'));
  const m = /<S t="(\d+)" d="(\d+)"(?: r="(\d+)")? \/>/.exec(video);
  if (m === null) return undefined;
  const d = Number(m[2]);
  return { t: Number(m[1]) + d * Number(m[3] ?? 0), d };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const flag = (name: string): number => Number(args[args.indexOf(name) + 1]);
  const clients = flag('--clients');
  const seconds = flag('--seconds');
  const [mpdUrl, template] = args;
  const answers: Answer[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const end = Date.now() + seconds * 1000;
  const client = async (): Promise<void> => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const at = lastStart((await get(mpdUrl!, agent)).body.toString());
    for (let t = at?.t; t !== undefined && Date.now() < end; t += at!.d) {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const r = await get(template!.replace('$Time$', String(t)), agent);
      inFlight--;
      answers.push({ t, status: r.status, bytes: r.body.byteLength, firstAt: r.firstAt, at: Date.now() });
      if (r.status !== 200) break;
    }
    agent.destroy();
  };
  await Promise.all(Array.from({ length: clients }, () => client()));
  process.stdout.write(`${JSON.stringify({ answers, maxInFlight })}\n`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
