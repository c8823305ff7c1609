// `origin demo` (what `npm start` runs): packages the sample content in fixtures/media into the
// device-class server manifests (docs/guide/packaging.md), serves them on loopback, starts the embedded edge in
// front of the origin (`origin edge --config envoy-config/envoy.yaml`, the plugin in the
// proxy-wasm host) and prints one URL per format through the edge, the player page, and the
// origin's own address.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ismTrackToProperties } from '../ism/ism-tracks';
import { StreamOptions } from '../options/registry';
import { buildServerManifest, writeServerManifestFile } from '../package/packager';
import { projectRoot } from '../../host-glue/filter/filter-module';
import { UsageError } from './args';

/** The repository (fixtures/media, envoy-config/), from dist/origin/cli or from the sources. */
const ROOT = projectRoot(__dirname);

/** The device classes of docs/guide/packaging.md over the sample content. */
export const DEMO_CLASSES: Record<string, string[]> = {
  phones: [
    'video_baseline_400k.ismv',
    'audio_eng_64k.isma',
    'audio_eng_128k.isma',
    'audio_nld_128k.isma',
    'text_eng.ismt',
    'text_nld.ismt',
  ],
  tablets: [
    'video_baseline_400k.ismv',
    'video_sar_500k.ismv',
    'video_2997_600k.ismv',
    'video_main_900k.ismv',
    'audio_eng_64k.isma',
    'audio_eng_128k.isma',
    'audio_nld_128k.isma',
    'text_eng.ismt',
    'text_nld.ismt',
  ],
  consoles: [
    'video_baseline_400k.ismv',
    'video_sar_500k.ismv',
    'video_2997_600k.ismv',
    'video_main_900k.ismv',
    'video_high_1600k.ismv',
    'audio_eng_64k.isma',
    'audio_eng_128k.isma',
    'audio_nld_128k.isma',
    'audio_ac3_384k.isma',
    'text_eng.ismt',
    'text_nld.ismt',
  ],
  settop: [
    'video_baseline_400k.ismv',
    'video_main_900k.ismv',
    'video_high_1600k.ismv',
    'video_sar_500k.ismv',
    'video_2997_600k.ismv',
    'video_interlaced_800k.ismv',
    'audio_eng_64k.isma',
    'audio_eng_128k.isma',
    'audio_nld_128k.isma',
    'audio_ac3_384k.isma',
    'audio_eac3_256k.isma',
    'text_eng.ismt',
    'text_nld.ismt',
  ],
};

export interface DemoArgs {
  outDir: string;
  port: number;
  host: string;
  /** Package only, do not serve (tests, and people who only want the .ism files). */
  noServe: boolean;
  /** The embedded edge's port (envoy-config/envoy.yaml's listener is 8080). */
  edgePort: number;
  /** Serve the origin only, without the edge in front. */
  noEdge: boolean;
}

const DEMO_USAGE = 'origin demo [--port N] [--edge-port N] [--host A] [--out DIR] [--no-edge] [--no-serve]';

export function parseDemoArgs(argv: readonly string[]): DemoArgs {
  const a: DemoArgs = {
    outDir: path.join(ROOT, 'build', 'demo'),
    port: 8081,
    host: '127.0.0.1',
    noServe: false,
    edgePort: 8080,
    noEdge: false,
  };
  const port = (flag: string, v: string): number => {
    if (!/^\d{1,5}$/.test(v) || Number(v) > 65535) throw new UsageError(`${flag} must be 0..65535, not "${v}"`);
    return Number(v);
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--no-serve') a.noServe = true;
    else if (arg === '--no-edge') a.noEdge = true;
    else if (arg === '--port' || arg === '--edge-port' || arg === '--host' || arg === '--out') {
      const v = argv[++i];
      if (v === undefined) throw new UsageError(`${arg} needs a value`);
      if (arg === '--port') a.port = port(arg, v);
      else if (arg === '--edge-port') a.edgePort = port(arg, v);
      else if (arg === '--host') a.host = v;
      else a.outDir = v;
    } else throw new UsageError(`unknown argument "${arg}" (${DEMO_USAGE})`);
  }
  return a;
}

/** Packages the device classes, then serves them and prints one URL per format and the player page. */
export async function runDemo(
  argv: readonly string[],
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
): Promise<number> {
  const a = parseDemoArgs(argv);
  const mediaDir = path.join(ROOT, 'fixtures', 'media');
  await fs.mkdir(a.outDir, { recursive: true });
  out.write(`Sample content: ${mediaDir}\n\n`);
  for (const [name, files] of Object.entries(DEMO_CLASSES)) {
    const target = path.join(a.outDir, `${name}.ism`);
    const manifest = await buildServerManifest({
      output: target,
      inputs: files.map((f) => ({ path: path.join(mediaDir, f), trackType: undefined })),
      options: new StreamOptions(),
    });
    await writeServerManifestFile(target, manifest);
    out.write(`${target}\n`);
    manifest.tracks.forEach((t, i) => {
      const p = ismTrackToProperties(t, i);
      const detail =
        p.type === 'video'
          ? `${p.DisplayWidth}x${p.DisplayHeight} ${p.codecs}`
          : p.type === 'audio'
            ? `${p.Channels} ch ${p.codecs}`
            : p.codecs;
      out.write(`  ${p.trackName}=${p.systemBitrate}  ${p.type} ${detail} ${p.systemLanguage}\n`);
    });
  }
  if (a.noServe) return 0;
  const { serve, untilSignal } = require('./serve-command') as typeof import('./serve-command');
  const server = await serve(
    {
      root: a.outDir,
      host: a.host,
      port: a.port,
      manifestCacheControl: 'no-cache',
      segmentCacheControl: 'no-cache',
      playerPage: true,
      quiet: true,
      help: false,
    },
    (line) => err.write(`${line}\n`),
  );
  const direct = server.url;
  let edge: import('./edge-command').StartedEdge | undefined;
  if (!a.noEdge) {
    // The edge of `npm start`: the same envoy.yaml a user gives Envoy, in front of this origin.
    const { startEdge } = require('./edge-command') as typeof import('./edge-command');
    const config = path.join(ROOT, 'envoy-config', 'envoy.yaml');
    try {
      edge = await startEdge(
        {
          config,
          port: a.edgePort,
          host: a.host,
          upstream: new URL(direct),
          logLevel: 'info',
          quiet: true,
          help: false,
        },
        { cwd: ROOT, pluginLog: (_level, line) => err.write(`${line}\n`) },
      );
    } catch (e) {
      await server.close();
      const { EdgeConfigError } =
        require('../../host-glue/envoy/envoy-config') as typeof import('../../host-glue/envoy/envoy-config');
      const { PluginLoadError } =
        require('../../host-glue/proxy-wasm/http-filter') as typeof import('../../host-glue/proxy-wasm/http-filter');
      if (!(e instanceof EdgeConfigError) && !(e instanceof PluginLoadError)) throw e;
      err.write(
        `origin demo: error: the edge did not start: ${e.message}\n(--edge-port <n> picks another port; --no-edge serves the origin alone)\n`,
      );
      return 1;
    }
  }
  const base = edge?.edge.url ?? direct;
  out.write(`\nServing ${a.outDir}\n`);
  if (edge !== undefined) {
    out.write(
      `  through the edge  ${base}/   (build/edge.wasm as envoy-config/envoy.yaml runs it, ${edge.config.plugin.failurePolicy})\n`,
    );
    out.write(`  origin, direct    ${direct}/\n\n`);
  } else out.write(`  origin            ${direct}/   (no edge: --no-edge)\n\n`);
  out.write(`  player page (every presentation, every format):  ${base}/\n`);
  for (const name of Object.keys(DEMO_CLASSES)) {
    out.write(`\n  ${name}\n`);
    out.write(`    Smooth Streaming  ${base}/${name}.ism/Manifest\n`);
    out.write(`    DASH              ${base}/${name}.ism/.mpd\n`);
    out.write(`    HLS (fMP4)        ${base}/${name}.ism/.m3u8?hls_fmp4=true\n`);
  }
  out.write(
    `\n  Try a filter: ${base}/tablets.ism/.mpd?filter=${encodeURIComponent('type!="video"||systemBitrate<800000')}\n`,
  );
  out.write(`\nCtrl-C stops ${edge !== undefined ? 'the edge and the origin' : 'the server'}.\n`);
  await untilSignal();
  await edge?.close();
  await server.close();
  return 0;
}
