// The edge-config description: the plugin configuration itself (YAML or JSON), in which a
// location's rewrite maps may name map files; read with every map file it names.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { EdgeConfigFileError } from './file-error';
import { MapEntry, parseMapFile } from './map-file';

/** A map file that went into the configuration: where its keys came from. */
export interface LoadedMap {
  /** JSON member path of the map, e.g. `locations[0].rewrite.maps.filter`. */
  member: string;
  file: string;
  entries: MapEntry[];
}

export interface BuiltConfiguration {
  /** The plugin configuration with the map files read in. */
  value: unknown;
  /** Pretty JSON, as written. */
  json: string;
  maps: LoadedMap[];
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Reads the description (YAML or JSON) and every map file it names. */
export async function buildConfiguration(descriptionFile: string): Promise<BuiltConfiguration> {
  let text: string;
  try {
    text = await fs.readFile(descriptionFile, 'utf8');
  } catch (e) {
    throw new EdgeConfigFileError(
      `${descriptionFile}: cannot read the description: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
  const value = parseDescription(text, descriptionFile);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new EdgeConfigFileError(`${descriptionFile}: the description must be an object (the plugin configuration)`);
  }
  const maps: LoadedMap[] = [];
  await readMapFiles(value, '', path.dirname(descriptionFile), descriptionFile, maps);
  return { value, json: JSON.stringify(value, null, 2), maps };
}

function parseDescription(text: string, file: string): Json {
  if (/\.json$/i.test(file)) {
    try {
      return JSON.parse(text) as Json;
    } catch (e) {
      const at = /position (\d+)/.exec((e as Error).message);
      const line = at !== null ? text.slice(0, Number(at[1])).split('\n').length : undefined;
      throw new EdgeConfigFileError(
        `${file}${line !== undefined ? `:${line}` : ''}: not valid JSON: ${(e as Error).message}`,
      );
    }
  }
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true });
  const first = doc.errors[0];
  if (first !== undefined) {
    const line = first.linePos?.[0].line;
    throw new EdgeConfigFileError(
      `${file}${line !== undefined ? `:${line}` : ''}: not valid YAML: ${first.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`,
    );
  }
  return doc.toJS() as Json;
}

/** Replaces every `rewrite.maps.<name>` that is a string by the map file it names. */
async function readMapFiles(
  node: Json,
  member: string,
  dir: string,
  description: string,
  out: LoadedMap[],
): Promise<void> {
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) await readMapFiles(node[i]!, `${member}[${i}]`, dir, description, out);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  for (const [key, child] of Object.entries(node)) {
    const here = member === '' ? key : `${member}.${key}`;
    if (key === 'rewrite' && child !== null && typeof child === 'object' && !Array.isArray(child)) {
      const maps = child.maps;
      if (maps !== undefined && maps !== null && typeof maps === 'object' && !Array.isArray(maps)) {
        for (const [name, source] of Object.entries(maps)) {
          if (typeof source !== 'string') continue; // an inline map: the plugin checks it
          const file = path.isAbsolute(source) ? source : path.join(dir, source);
          let text: string;
          try {
            text = await fs.readFile(file, 'utf8');
          } catch (e) {
            throw new EdgeConfigFileError(
              `${description}: ${here}.maps.${name}: cannot read the map file ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
            );
          }
          const entries = parseMapFile(text, file);
          maps[name] = Object.fromEntries(entries.map((e) => [e.key, e.value]));
          out.push({ member: `${here}.maps.${name}`, file, entries });
        }
      }
    }
    await readMapFiles(child, here, dir, description, out);
  }
}
