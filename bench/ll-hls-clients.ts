// The LL-HLS blocking-reload load generator, in its own process (bench/ll-hls-load.ts spawns it):
// `node dist/bench/ll-hls-clients.js <playlist URL …> --clients N --seconds S`. Each client holds
// its own connection and loops as a low-latency player does: it asks for the part after the
// newest one it has seen (`_HLS_msn`, `_HLS_part`), waits for the answer, and asks again. The
// clients are spread over the URLs given. On stdout, one JSON line at the end: every answer's
// (url index, msn, part, status, asked and answered at, ms since 1970), the most requests in
// flight at once, and how long the clients' first playlist reads took (ms).
//
// HTTP/1.1 is spoken on plain sockets (one request at a time on each, RFC 9112 §6.3 framing by
// Content-Length, which the origin always sends for a playlist), not through node:http's client:
// with 2 000 clients its per-request objects (ClientRequest, Agent, IncomingMessage) and a regular
// expression over each body took the generator's CPU to saturation, and an answer it read late
// counted as a late answer of the origin.

import * as net from 'node:net';

interface Answer {
  u: number;
  msn: number;
  part: number;
  status: number;
  /** When the request was written, ms since 1970. */
  asked: number;
  /** When the whole answer had been read, ms since 1970. */
  at: number;
}

interface Response {
  status: number;
  body: Buffer;
}

const CRLF2 = Buffer.from('\r\n\r\n');

/** One keep-alive connection: `get(path)` sends a request and resolves with the whole response. */
class Connection {
  private readonly socket: net.Socket;
  private pending: Buffer[] = [];
  private waiting: ((r: Response) => void) | undefined;
  readonly opened: Promise<void>;

  constructor(
    port: number,
    private readonly host: string,
  ) {
    this.socket = net.connect(port, host);
    this.socket.setNoDelay(true);
    this.opened = new Promise((resolve) => this.socket.once('connect', () => resolve()));
    this.socket.on('data', (d: Buffer) => this.onData(d));
    const fail = (): void => this.settle({ status: 0, body: Buffer.alloc(0) });
    this.socket.on('error', fail);
    this.socket.on('close', fail);
  }

  async get(path: string): Promise<Response> {
    await this.opened;
    return new Promise((resolve) => {
      this.waiting = resolve;
      this.pending = [];
      this.socket.write(`GET ${path} HTTP/1.1\r\nHost: ${this.host}\r\n\r\n`);
    });
  }

  close(): void {
    this.socket.destroy();
  }

  private onData(d: Buffer): void {
    this.pending.push(d);
    const all = this.pending.length === 1 ? d : Buffer.concat(this.pending);
    this.pending = [all];
    const end = all.indexOf(CRLF2);
    if (end < 0) return;
    const head = all.toString('latin1', 0, end);
    const length = /\r\ncontent-length: *(\d+)/i.exec(head);
    const bodyStart = end + 4;
    const total = bodyStart + (length === null ? 0 : Number(length[1]));
    if (all.byteLength < total) return;
    this.settle({ status: Number(head.slice(9, 12)), body: all.subarray(bodyStart, total) });
  }

  private settle(r: Response): void {
    const w = this.waiting;
    this.waiting = undefined;
    this.pending = [];
    w?.(r);
  }
}

/** Connections opened at once: under node:net's default listen backlog (511). */
const CONNECT_BATCH = 256;

const PART = Buffer.from('.part');
const HINT = Buffer.from('#EXT-X-PRELOAD-HINT');

/**
 * The newest part a playlist lists: the last EXT-X-PART URI's `-<msn>.part<i>.m4s`, searched from
 * the end, before the preload hint (whose part does not exist yet).
 */
export function newestPart(body: Buffer): { msn: number; part: number } | undefined {
  const hint = body.lastIndexOf(HINT);
  const at = body.lastIndexOf(PART, hint < 0 ? body.byteLength : hint);
  if (at < 0) return undefined;
  const dash = body.lastIndexOf(0x2d, at); // '-'
  const dot = body.indexOf(0x2e, at + PART.byteLength); // '.' of ".m4s"
  if (dash < 0 || dot < 0) return undefined;
  const msn = body.toString('latin1', dash + 1, at);
  const part = body.toString('latin1', at + PART.byteLength, dot);
  return /^\d{1,15}$/.test(msn) && /^\d{1,6}$/.test(part) ? { msn: Number(msn), part: Number(part) } : undefined;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const flag = (name: string): number => Number(args[args.indexOf(name) + 1]);
  const clients = flag('--clients');
  const seconds = flag('--seconds');
  const urls = args.filter((a, i) => a.startsWith('http') && !args[i - 1]?.startsWith('--')).map((a) => new URL(a));
  const answers: Answer[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  // Start-up first: every client connects and reads its playlist, then all begin their blocking
  // loops together. The connections are opened CONNECT_BATCH at a time: 2 000 SYNs at once
  // overflow the origin's listen queue (node:net's backlog, 511), and a dropped SYN is sent again
  // a second later, so the first playlists read by the last clients were a second and more old.
  // The 2 000 first reads (no _HLS_msn) reach a worker whose code is still cold; startMs reports
  // how long they took.
  const conns: Connection[] = [];
  for (let c = 0; c < clients; c += CONNECT_BATCH) {
    const batch = Array.from({ length: Math.min(CONNECT_BATCH, clients - c) }, (_, i) => {
      const url = urls[(c + i) % urls.length]!;
      return new Connection(Number(url.port), url.hostname);
    });
    await Promise.all(batch.map((conn) => conn.opened));
    conns.push(...batch);
  }
  const started = Date.now();
  const firsts = await Promise.all(conns.map((conn, c) => conn.get(urls[c % urls.length]!.pathname)));
  const startMs = Date.now() - started;
  const end = Date.now() + seconds * 1000;
  const client = async (c: number): Promise<void> => {
    const u = c % urls.length;
    const path = urls[u]!.pathname;
    const conn = conns[c]!;
    let at = newestPart(firsts[c]!.body);
    while (at !== undefined && Date.now() < end) {
      const target = { msn: at.msn, part: at.part + 1 };
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const asked = Date.now();
      const r = await conn.get(`${path}?_HLS_msn=${target.msn}&_HLS_part=${target.part}`);
      inFlight--;
      answers.push({ u, ...target, status: r.status, asked, at: Date.now() });
      at = newestPart(r.status === 200 ? r.body : (await conn.get(path)).body);
    }
    conn.close();
  };
  await Promise.all(Array.from({ length: clients }, (_, c) => client(c)));
  process.stdout.write(`${JSON.stringify({ answers, maxInFlight, startMs })}\n`);
}

if (require.main === module)
  main().catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
