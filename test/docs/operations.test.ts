// docs/guide/operations.md and docs/guide/grafana-dashboard.json against a running origin
// (`origin serve --workers 2`, the built CLI): the doc's metrics table names exactly the origin_
// families /metrics has, and the dashboard is a Grafana dashboard whose every query reads series
// and labels that /metrics has.

import { promises as fs, readFileSync } from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { Exposition, parseExposition } from '../helpers/prometheus';
import { Cli, linux, startCli, stopCli } from '../origin/server/cli-origin';
import { get, startTestOrigin, TestOrigin } from '../origin/server/server-helpers';

const ROOT = path.join(__dirname, '..', '..');
const DOC = readFileSync(path.join(ROOT, 'docs', 'guide', 'operations.md'), 'utf8');
const DASHBOARD_TEXT = readFileSync(path.join(ROOT, 'docs', 'guide', 'grafana-dashboard.json'), 'utf8');
/** Labels Prometheus adds to every series it scrapes. */
const TARGET_LABELS = new Set(['instance', 'job']);

const describeLinux = linux ? describe : describe.skip;

interface Target {
  expr: string;
  refId: string;
}
interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { h: number; w: number; x: number; y: number };
  datasource?: { type: string; uid: string };
  targets?: Target[];
}

let origin: TestOrigin;
let cli: Cli;
let exposition: Exposition;

beforeAll(async () => {
  origin = await startTestOrigin({ p: ['video_baseline_400k.ismv', 'audio_eng_64k.isma'] });
  await fs.writeFile(path.join(origin.root, 'big.bin'), Buffer.alloc(32 << 20));
  cli = await startCli(['--root', origin.root, '--port', '0', '--workers', '2', '--warm-up-rounds', '0', '-q']);
  // Requests of several kinds, so that the per-kind series (histograms included) exist, and one
  // that the client gives up on.
  for (const p of ['/p.ism/.mpd', '/p.ism/.mpd', '/p.ism/.m3u8', '/nothing.ism/.mpd', '/healthz'])
    await get(cli.url, p);
  await abandon(cli.url, '/big.bin');
  for (let i = 0; i < 100; i++) {
    exposition = parseExposition((await get(cli.url, '/metrics')).text);
    if (exposition.samples.some((s) => s.name === 'origin_http_aborted_total')) break;
    await new Promise((r) => setTimeout(r, 20));
  }
}, 60_000);

afterAll(async () => {
  if (cli !== undefined) await stopCli(cli);
  await origin?.server.close();
});

/** Requests a file and closes the connection after its first bytes. */
function abandon(url: string, p: string): Promise<void> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(u.port), u.hostname, () => socket.write(`GET ${p} HTTP/1.1\r\nHost: x\r\n\r\n`));
    socket.once('data', () => {
      socket.destroy();
      resolve();
    });
    socket.once('error', reject);
  });
}

/** Labels seen on the samples of a name (a histogram's `_bucket` also has `le`). */
function labelsOf(name: string): Set<string> | undefined {
  const samples = exposition.samples.filter((s) => s.name === name);
  if (samples.length === 0) return undefined;
  return new Set(samples.flatMap((s) => Object.keys(s.labels)));
}

describeLinux('operations.md and the Grafana dashboard', () => {
  test("the doc's metrics table names exactly the origin_ families of /metrics, with their types", () => {
    const rows = [...DOC.matchAll(/^\| `(origin_[a-z_]+)` \| (counter|gauge|histogram) \|/gm)].map((m) => [
      m[1]!,
      m[2]!,
    ]);
    const families = [...exposition.types].filter(([name]) => name.startsWith('origin_'));
    expect(rows.sort()).toEqual(families.sort());
  });

  test('the dashboard is a Grafana dashboard: panels with ids, positions, a Prometheus data source, queries', () => {
    const d = JSON.parse(DASHBOARD_TEXT) as {
      uid: string;
      title: string;
      schemaVersion: number;
      panels: Panel[];
      templating: { list: Array<{ name: string; type: string; query: unknown }> };
    };
    expect(d.uid).toMatch(/^[a-z0-9-]{1,40}$/);
    expect(d.schemaVersion).toBeGreaterThanOrEqual(30);
    expect(d.templating.list.map((v) => [v.name, v.type])).toEqual([
      ['datasource', 'datasource'],
      ['instance', 'query'],
    ]);
    const ids = d.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    const graphs = d.panels.filter((p) => p.type !== 'row');
    expect(graphs.length).toBeGreaterThanOrEqual(12);
    for (const p of graphs) {
      expect(p.datasource).toEqual({ type: 'prometheus', uid: '${datasource}' });
      expect(p.targets!.length).toBeGreaterThan(0);
      expect(p.gridPos.x + p.gridPos.w).toBeLessThanOrEqual(24);
      for (const t of p.targets!) expect(t.expr).toContain('instance=~"$instance"');
    }
  });

  test('every series the dashboard queries, and every label it selects or groups by, is on /metrics', () => {
    const d = JSON.parse(DASHBOARD_TEXT) as { panels: Panel[]; templating: { list: Array<{ definition?: string }> } };
    const exprs = [
      ...d.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr)),
      ...d.templating.list.flatMap((v) => (v.definition === undefined ? [] : [v.definition])),
    ];
    const problems: string[] = [];
    for (const expr of exprs) {
      const names = [...expr.matchAll(/\b((?:origin|process|nodejs)_[a-z_]+)\b/g)].map((m) => m[1]!);
      expect(names.length).toBeGreaterThan(0);
      const labels = new Set<string>(TARGET_LABELS);
      for (const name of names) {
        const seen = labelsOf(name);
        if (seen === undefined) problems.push(`${name} is not on /metrics`);
        else seen.forEach((l) => labels.add(l));
      }
      const selected = [...expr.matchAll(/\b([a-z_]+)\s*=~?\s*"/g)].map((m) => m[1]!);
      const grouped = [...expr.matchAll(/\bby \(([^)]*)\)/g)].flatMap((m) => m[1]!.split(',').map((s) => s.trim()));
      for (const l of [...selected, ...grouped]) if (!labels.has(l)) problems.push(`${expr}: no label ${l}`);
    }
    expect(problems).toEqual([]);
  });
});
