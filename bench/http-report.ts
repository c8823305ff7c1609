// The HTTP bench's table: every figure of a result next to its reference, as printed at the end
// of a run.

import { WrkResult } from './wrk';

export function printTable(r: Record<string, unknown>, log: (line: string) => void): void {
  const runs = r['runs'] as Record<string, Record<string, WrkResult>>;
  type Long = { median: number; readyMs: { median: number } };
  const cold = r['cold'] as {
    manifests: Record<string, { median: number }>;
    longMpd2h: Long;
    longMpd2hWithoutWarmUp: Long;
  };
  const mb = (x: number): string => (x / 1048576).toFixed(0);
  log('');
  log('| what | target | req/s | p50 ms | p99 ms | MB/s | errors + non-2xx | reference req/s (MB/s) | ratio |');
  log('|---|---|--:|--:|--:|--:|--:|--:|--:|');
  for (const [what, targets] of Object.entries(runs)) {
    const seg = what.startsWith('segment/');
    for (const [t, x] of Object.entries(targets)) {
      if (t.startsWith('nginx') || t === 'node-fixed-body') continue;
      const w = t.replace('origin-', '');
      const ref = seg ? targets[`nginx-${w}`] : targets['node-fixed-body'];
      const ratio = ref === undefined ? '' : seg ? (x.mbps / ref.mbps).toFixed(2) : (x.rps / ref.rps).toFixed(2);
      const errs = Object.values(x.errors).reduce((a, b) => a + b, 0);
      log(
        `| ${what} | ${t} | ${x.rps} | ${x.latencyMs.p50.toFixed(2)} | ${x.latencyMs.p99.toFixed(2)} | ${x.mbps} | ${errs} | ${ref === undefined ? '' : `${ref.rps} (${ref.mbps})`} | ${ratio} |`,
      );
    }
  }
  log('');
  log(
    `cold (first request after start, median of 3): ${Object.entries(cold.manifests)
      .map(([k, v]) => `${k} ${v.median} ms`)
      .join(
        ', ',
      )}; 2-hour MPD ${cold.longMpd2h.median} ms (ready ${cold.longMpd2h.readyMs.median} ms after spawn); without the warm-up ${cold.longMpd2hWithoutWarmUp.median} ms (ready after ${cold.longMpd2hWithoutWarmUp.readyMs.median} ms)`,
  );
  const unc = r['uncached'] as Record<string, WrkResult> | undefined;
  if (unc !== undefined)
    log(
      `uncached manifests (--manifest-cache-bytes 0, 1 connection): ${Object.entries(unc)
        .map(([k, v]) => `${k} ${v.rps} req/s p50 ${v.latencyMs.p50.toFixed(2)} ms`)
        .join(', ')}`,
    );
  const uncLoaded = r['uncachedLoaded'] as Record<string, WrkResult> | undefined;
  if (uncLoaded !== undefined)
    log(
      `uncached manifests (--manifest-cache-bytes 0, ${(r['settings'] as { connections: number }).connections} connections, one worker): ${Object.entries(
        uncLoaded,
      )
        .map(([k, v]) => `${k} ${v.rps} req/s p50 ${v.latencyMs.p50.toFixed(2)} ms`)
        .join(', ')}`,
    );
  const inProcess = r['edgeInProcess'] as { runs: Record<string, Record<string, WrkResult[]>> } | undefined;
  const lowerMedian = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
  if (inProcess !== undefined) {
    for (const [k, v] of Object.entries(inProcess.runs)) {
      const d = v['direct']!.map((x) => x.rps);
      const e = v['edge']!.map((x) => x.rps);
      const ratios = d.map((x, i) => e[i]! / x);
      log(
        `edge in the origin process ${k}: direct ${d.join('/')} req/s, through the filter ${e.join('/')} req/s (rounds ${ratios.map((x) => x.toFixed(2)).join('/')}×, median ${lowerMedian(ratios).toFixed(2)}×)`,
      );
    }
  }
  const edge = r['edge'] as { runs: Record<string, Record<string, WrkResult>> };
  for (const [k, v] of Object.entries(edge.runs))
    log(
      `edge as a second process ${k}: direct ${v['direct']!.rps} req/s, through \`origin edge\` ${v['edge']!.rps} req/s (${(v['edge']!.rps / v['direct']!.rps).toFixed(2)}×)`,
    );
  const every = r['everyUrl'] as {
    requests: number;
    bad: number;
    seconds: number;
    rssBefore: { rss: number }[];
    rssAfter: { rss: number }[];
    rssAfterRuns?: number[];
  };
  const walks =
    every.rssAfterRuns === undefined ? '' : `; the three walks ${every.rssAfterRuns.map(mb).join(' / ')} MB`;
  log(
    `every URL (${every.requests}, ${every.bad} not 200 in all walks, ${every.seconds} s): RSS ${mb(every.rssBefore[0]!.rss)} → ${mb(every.rssAfter[0]!.rss)} MB (one worker, median walk${walks})`,
  );
  const rounds = (
    r['manifestRounds'] as { rounds: Record<string, { origin: number[]; reference: number[] }> } | undefined
  )?.rounds;
  if (rounds !== undefined)
    log(
      `warm manifests, one worker, alternate runs origin/reference req/s: ${Object.entries(rounds)
        .map(([k, v]) => `${k} ${v.origin.map((x, i) => `${x}/${v.reference[i]}`).join(', ')}`)
        .join('; ')}`,
    );
  const soak = r['soak'] as {
    wrk: WrkResult;
    rssStart: { pid: number; rss: number }[];
    rssEnd: { pid: number; rss: number }[];
    workers: number;
    seconds: number;
  };
  const se = soak.wrk.errors;
  log(
    `soak (${soak.workers} workers, 256 connections, ${soak.seconds} s): ${soak.wrk.requests} requests, ${soak.wrk.rps} req/s, ${soak.wrk.mbps} MB/s, errors connect ${se.connect} read ${se.read} write ${se.write} timeout ${se.timeout}, non-2xx ${se.status}; RSS MB start ${soak.rssStart.map((x) => mb(x.rss)).join('/')} end ${soak.rssEnd.map((x) => mb(x.rss)).join('/')}`,
  );
  const series = (r['soak'] as { rssSeries?: { afterSeconds: number; rss: { rss: number }[] }[] }).rssSeries;
  if (series !== undefined)
    log(
      `soak RSS MB by time (primary/workers): ${series.map((x) => `${x.afterSeconds} s ${x.rss.map((y) => mb(y.rss)).join('/')}`).join(', ')}`,
    );
}
