// `origin demo` (what `npm start` runs): packages the sample content in fixtures/media into the
// device-class server manifests (docs/guide/packaging.md), serves them on loopback, starts the embedded edge in
// front of the origin (`origin edge --config envoy-config/envoy.yaml`, the plugin in the
// proxy-wasm host) and prints, per device class, its URLs through the edge (direct, aliases, a
// freshly signed one, the Basic-auth one: demo-examples.ts), each with its player page link, and
// the origin's own address. One presentation is encrypted (docs/guide/drm.md): a W3C ClearKey
// license server, demo-only, runs on its own port and hands its published key to the player page.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ismTrackToProperties } from '../ism/ism-tracks';
import { applyCliOption, optionByCli, StreamOptions } from '../options/registry';
import { buildServerManifest, writeServerManifestFile } from '../package/packager';
import { projectRoot } from '../../host-glue/filter/filter-module';
import { portArg, UsageError } from './args';
import { startClearKeyServer } from '../drm/clearkey-server';
import { PlayerName, playHref } from '../player/player-page';
import { BROWSER_FILTER } from '../server/static';
import { classUrls, DemoLocations, demoLocations, demoPlayHref, edgeExamples } from './demo-examples';
import { DEMO_CHANNEL, DemoLive, startDemoLive } from './demo-live';

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

/**
 * The encrypted presentation: the tablets' H.264 and AAC, DASH (cenc) and HLS fMP4 (SAMPLE-AES,
 * cbcs) with W3C ClearKey signalling. Smooth has no key: no browser player here gets ClearKey
 * keys for Smooth (docs/guide/drm.md), and a format without a key is refused, never served clear.
 */
export const DEMO_ENCRYPTED = {
  name: 'encrypted',
  files: ['video_baseline_400k.ismv', 'video_main_900k.ismv', 'audio_eng_128k.isma', 'text_eng.ismt'],
  /** Published here, so it protects nothing: ClearKey is for demos and tests. */
  kid: 'de305d5475b4431badb2eb6b9e546014',
  key: '1f2e3d4c5b6a79881f2e3d4c5b6a7988',
};

/** The DRM options of the encrypted presentation, its keys asked from the license server at `licenseUrl`. */
export function demoDrmOptions(licenseUrl: string): StreamOptions {
  const { kid, key } = DEMO_ENCRYPTED;
  const options = new StreamOptions();
  const flags: Array<[string, string]> = [
    ['drm_a.key', `${kid}:${key}`],
    ['hls.key', `${kid}:${key}`],
    ['hls.playout', 'sample_aes'],
    ['clearkey.license_server_url', licenseUrl],
  ];
  for (const [flag, value] of flags) applyCliOption(options, optionByCli(flag)!, value, `--${flag}`);
  return options;
}

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
  /** The demo ClearKey license server's port (the encrypted presentation's keys). */
  clearKeyPort: number;
  /** A live channel too (demo-live.ts), with its ingest listener on `ingestPort`. */
  live: boolean;
  ingestPort: number;
}

const DEMO_USAGE =
  'origin demo [--port N] [--edge-port N] [--clearkey-port N] [--host A] [--out DIR] [--no-edge] [--no-serve] [--live [--ingest-port N]]';

export function parseDemoArgs(argv: readonly string[]): DemoArgs {
  const a: DemoArgs = {
    outDir: path.join(ROOT, 'build', 'demo'),
    port: 8081,
    host: '127.0.0.1',
    noServe: false,
    edgePort: 8080,
    noEdge: false,
    clearKeyPort: 8082,
    live: false,
    ingestPort: 8083,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--no-serve') a.noServe = true;
    else if (arg === '--no-edge') a.noEdge = true;
    else if (arg === '--live') a.live = true;
    else if (['--port', '--edge-port', '--clearkey-port', '--ingest-port', '--host', '--out'].includes(arg)) {
      const v = argv[++i];
      if (v === undefined) throw new UsageError(`${arg} needs a value`);
      if (arg === '--port') a.port = portArg(arg, v);
      else if (arg === '--edge-port') a.edgePort = portArg(arg, v);
      else if (arg === '--clearkey-port') a.clearKeyPort = portArg(arg, v);
      else if (arg === '--ingest-port') a.ingestPort = portArg(arg, v);
      else if (arg === '--host') a.host = v;
      else a.outDir = v;
    } else throw new UsageError(`unknown argument "${arg}" (${DEMO_USAGE})`);
  }
  return a;
}

/** Packages one demo presentation and prints its tracks. */
async function packageDemo(
  p: { name: string; files: readonly string[]; options: StreamOptions },
  mediaDir: string,
  outDir: string,
  out: NodeJS.WritableStream,
): Promise<void> {
  const target = path.join(outDir, `${p.name}.ism`);
  const manifest = await buildServerManifest({
    output: target,
    inputs: p.files.map((f) => ({ path: path.join(mediaDir, f), trackType: undefined })),
    options: p.options,
  });
  await writeServerManifestFile(target, manifest);
  out.write(`${target}\n`);
  manifest.tracks.forEach((t, i) => {
    const q = ismTrackToProperties(t, i);
    const detail =
      q.type === 'video'
        ? `${q.DisplayWidth}x${q.DisplayHeight} ${q.codecs}`
        : q.type === 'audio'
          ? `${q.Channels} ch ${q.codecs}`
          : q.codecs;
    out.write(`  ${q.trackName}=${q.systemBitrate}  ${q.type} ${detail} ${q.systemLanguage}\n`);
  });
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
    await packageDemo({ name, files, options: new StreamOptions() }, mediaDir, a.outDir, out);
  }
  // The license server first: its address goes into the encrypted presentation's manifests.
  const licenses = a.noServe
    ? undefined
    : await startClearKeyServer({
        keys: new Map([[DEMO_ENCRYPTED.kid, DEMO_ENCRYPTED.key]]),
        host: a.host,
        port: a.clearKeyPort,
        log: (line) => err.write(`${line}\n`),
      }).catch((e: unknown) => {
        throw new UsageError(
          `the ClearKey license server cannot listen on ${a.host}:${a.clearKeyPort}: ${(e as Error).message} (--clearkey-port <n> picks another port)`,
        );
      });
  const licenseUrl = licenses?.url ?? `http://${a.host}:${a.clearKeyPort}/license`;
  const encrypted = { ...DEMO_ENCRYPTED, options: demoDrmOptions(licenseUrl) };
  await packageDemo(encrypted, mediaDir, a.outDir, out);
  if (a.noServe) return 0;
  // Known once the edge runs; the index page asks for its examples on each request (fresh tokens).
  let locations: DemoLocations | undefined;
  const classes = Object.entries(DEMO_CLASSES).map(([name, files]) => ({
    name,
    browserQuery: files.some((f) => /ac3|eac3/.test(f)) ? `filter=${encodeURIComponent(BROWSER_FILTER)}` : '',
  }));
  const now = (): number => Math.floor(Date.now() / 1000);
  const { serve, untilSignal } = require('./serve-command') as typeof import('./serve-command');
  const server = await serve(
    {
      root: a.outDir,
      host: a.host,
      port: a.port,
      manifestCacheControl: 'no-cache',
      segmentCacheControl: 'no-cache',
      playerPage: true,
      playerExamples: () => (locations === undefined ? [] : edgeExamples(classes, locations, now())),
      quiet: true,
      help: false,
    },
    (line) => err.write(`${line}\n`),
  ).catch(async (e: unknown) => {
    await licenses?.close();
    throw e;
  });
  const direct = server.url;
  const live = a.live
    ? await startDemoLive({
        outDir: a.outDir,
        host: a.host,
        port: a.ingestPort,
        onPublish: (m) => server.live.apply(m),
        log: (line) => err.write(`${line}\n`),
      }).catch(async (e: unknown) => {
        await server.close();
        await licenses?.close();
        throw new UsageError(
          `the live demo's ingest cannot listen on ${a.host}:${a.ingestPort}: ${(e as Error).message} (--ingest-port <n> picks another port)`,
        );
      })
    : undefined;
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
      await live?.close();
      await server.close();
      await licenses?.close();
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
  if (edge !== undefined) {
    locations = demoLocations(Buffer.from(edge.config.plugin.pluginConfiguration).toString('utf8'));
    out.write(
      '  (the signed and Basic-auth URLs use the demo-only secret and user of envoy-config/maps/edge-config.yaml)\n',
    );
  }
  const signedAt = now();
  for (const c of classes) {
    out.write(`\n  ${c.name}\n`);
    for (const u of classUrls(c.name, c.browserQuery, locations, signedAt)) {
      const shown = u.auth === undefined ? `${base}${u.url}` : `${base.replace('://', `://${u.auth}@`)}${u.url}`;
      out.write(`    ${u.label.padEnd(31)} ${shown}\n`);
      out.write(`    ${''.padEnd(31)} play: ${base}${demoPlayHref(u)}\n`);
    }
  }
  const play = (player: PlayerName, url: string): string => `${base}${playHref(player, url, licenseUrl)}`;
  const dash = `/${DEMO_ENCRYPTED.name}.ism/.mpd`;
  const hls = `/${DEMO_ENCRYPTED.name}.ism/.m3u8?hls_fmp4=true`;
  out.write(`\n  ${DEMO_ENCRYPTED.name} (ClearKey, demo only: license server ${licenseUrl})\n`);
  out.write(`    DASH cenc, shaka       ${play('shaka', dash)}\n`);
  out.write(`    HLS fMP4 cbcs, hls.js  ${play('hlsjs', hls)}\n`);
  out.write(`    (EME needs a secure context: open these on this machine, or serve them over HTTPS)\n`);
  out.write(
    `\n  Try a filter: ${base}/tablets.ism/.mpd?filter=${encodeURIComponent('type!="video"||systemBitrate<800000')}\n`,
  );
  if (live !== undefined) writeLive(out, live, base);
  out.write(`\nCtrl-C stops ${edge !== undefined ? 'the edge and the origin' : 'the server'}.\n`);
  await untilSignal();
  await live?.close();
  await edge?.close();
  await server.close();
  await licenses?.close();
  return 0;
}

/** The live channel's lines: its ingest, state and archive, and what feeds it. */
function writeLive(out: NodeJS.WritableStream, live: DemoLive, base: string): void {
  out.write(`\n  live channel ${DEMO_CHANNEL} (docs/guide/live.md)\n`);
  out.write(`    ingest                 ${live.channelUrl}/Streams(<name>)\n`);
  out.write(`    state                  ${base}${DEMO_CHANNEL}/state?format=json\n`);
  out.write(`    archive                ${base}${DEMO_CHANNEL}/archive\n`);
  if (live.feeder !== undefined) out.write('    fed by ffmpeg (a test pattern, Smooth ingest)\n');
  else out.write(`    no ffmpeg here: feed it with\n      ${live.command.join(' ')}\n`);
  out.write(`    HLS, hls.js            ${base}${playHref('hlsjs', `${DEMO_CHANNEL}/.m3u8`, undefined)}\n`);
  out.write(`    Smooth, dash.js MSS    ${base}${playHref('dashjs-mss', `${DEMO_CHANNEL}/Manifest`, undefined)}\n`);
}
