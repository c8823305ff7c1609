// A built configuration checked by the plugin itself (build/edge.wasm through the proxy-wasm
// host, as Envoy would load it), its refusals traced back to the map file lines.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { BuiltConfiguration, LoadedMap } from './description';
import { EdgeConfigFileError } from './file-error';

/**
 * Loads the module the bootstrap names with this configuration through the proxy-wasm host, as
 * Envoy would (canary VM + worker): the plugin's own checks decide. Throws EdgeConfigFileError
 * with the plugin's reason, a map entry's error pointing at its file and line.
 */
export async function checkWithPlugin(
  yamlText: string,
  file: string,
  cwd: string,
  built: BuiltConfiguration,
): Promise<void> {
  const { parseEnvoyConfig } =
    require('../../host-glue/envoy/envoy-config') as typeof import('../../host-glue/envoy/envoy-config');
  const { createProxyWasmPlugin } =
    require('../../host-glue/proxy-wasm/host') as typeof import('../../host-glue/proxy-wasm/host');
  const { PluginLoadError } =
    require('../../host-glue/proxy-wasm/http-filter') as typeof import('../../host-glue/proxy-wasm/http-filter');
  let config: ReturnType<typeof parseEnvoyConfig>;
  try {
    config = parseEnvoyConfig(yamlText, file);
  } catch (e) {
    throw new EdgeConfigFileError((e as Error).message);
  }
  const code = config.plugin.code;
  let wasm: Uint8Array;
  if (code.kind === 'inline') wasm = code.bytes;
  else {
    const module = path.resolve(cwd, code.filename);
    try {
      wasm = new Uint8Array(await fs.readFile(module));
    } catch (e) {
      throw new EdgeConfigFileError(
        `${file}: cannot check the configuration: the module ${module} does not read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}; \`npm run build:wasm\` builds build/edge.wasm, or pass --no-check)`,
      );
    }
  }
  const errors: string[] = [];
  try {
    const plugin = await createProxyWasmPlugin({
      wasm,
      name: config.plugin.name,
      rootId: config.plugin.rootId,
      vmId: config.plugin.vmId,
      vmConfiguration: config.plugin.vmConfiguration,
      pluginConfiguration: Buffer.from(built.json, 'utf8'),
      failurePolicy: config.plugin.failurePolicy,
      logLevel: 'warn',
      log: (level, line) => {
        if (level === 'error' || level === 'critical') errors.push(line);
      },
    });
    await plugin.shutdown();
  } catch (e) {
    if (!(e instanceof PluginLoadError)) throw e;
    // The plugin's own lines (proxy_log: `wasm log<prefix>: <message>`, the root context's prefix
    // ` <root_id> <vm_id>` in on_configure; host-glue/proxy-wasm/log.ts), not the host's summary.
    const own = /^wasm log(?: [^:]*)?: /;
    const reasons = errors.filter((l) => own.test(l)).map((l) => l.replace(own, ''));
    throw new EdgeConfigFileError(
      `the plugin refuses the configuration: ${[...new Set(reasons.map((r) => withMapLine(r, built.maps)))].join('; ') || e.message}`,
    );
  }
}

/** Adds `(<file>:<line>)` to a plugin message that names a key of a map read from a file. */
export function withMapLine(message: string, maps: readonly LoadedMap[]): string {
  for (const m of maps) {
    const tail = /\.maps\.[A-Za-z0-9_]+$/.exec(m.member)![0];
    for (const e of m.entries) {
      if (message.includes(`${tail}.${e.key}:`)) return `${message} (${m.file}:${e.line})`;
    }
    if (message.includes(`${tail}:`)) return `${message} (${m.file})`;
  }
  return message;
}
