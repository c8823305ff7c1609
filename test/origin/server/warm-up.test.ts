// The start-up warm-up (origin/server/warm-up.ts): its synthetic sources are consistent fragmented
// MP4 (the mfra fast path and the moof walk build the same tables), it answers every manifest it
// asks for, it changes nothing a client is served, and a failing warm-up never stops the server.

import { parseServeArgs } from '../../../origin/cli/serve-command';
import { UsageError } from '../../../origin/cli/args';
import { readMediaFile } from '../../../origin/media/media-file';
import { parseServerManifest } from '../../../origin/ism/server-manifest';
import { startServer } from '../../../origin/server/server';
import { wasmTrackSelector } from '../../../origin/server/select';
import { syntheticFiles, warmUp, WARM_UP_ROUNDS } from '../../../origin/server/warm-up';
import { PLAYABLE } from '../../helpers/presentations';
import { get, startTestOrigin, testServerOptions, TestOrigin } from './server-helpers';

let origin: TestOrigin;

beforeAll(async () => {
  origin = await startTestOrigin({ p: PLAYABLE });
}, 60_000);

afterAll(async () => {
  await origin?.server.close();
});

describe('synthetic sources', () => {
  test('each is a fragmented MP4 whose mfra index equals the moof walk, with the size, offsets and times of a 2-hour source', async () => {
    const files = await syntheticFiles();
    const ism = parseServerManifest(
      Buffer.from(await files.get('warm-up.ism')!.read(0, files.get('warm-up.ism')!.size)).toString('utf8'),
      'warm-up.ism',
    );
    expect(ism.tracks.map((t) => [t.element, t.src])).toEqual([
      ['video', 'warm-up-video-1.ismv'],
      ['video', 'warm-up-video-2.ismv'],
      ['audio', 'warm-up-audio.isma'],
    ]);
    for (const t of ism.tracks) {
      const source = files.get(t.src)!;
      const fast = await readMediaFile(source, 'fast');
      const exact = await readMediaFile(source, 'exact');
      expect([fast.indexedBy, exact.indexedBy]).toEqual(['mfra', 'moof-walk']);
      const a = fast.tracks[0]!.fragments;
      const b = exact.tracks[0]!.fragments;
      expect(a.count).toBe(3600);
      expect(b.count).toBe(3600);
      for (const k of ['times', 'durations', 'offsets', 'sizes'] as const)
        expect(Array.from(a[k] as ArrayLike<number | bigint>)).toEqual(Array.from(b[k] as ArrayLike<number | bigint>));
      // Two hours at 10 MHz (3 600 AAC fragments of 2.0053 s run 19 s over), and the properties the .ism states come from the source.
      const end = (Number(a.times[3599]!) + a.durations[3599]!) / 10_000_000;
      expect(end).toBeGreaterThanOrEqual(7200);
      expect(end).toBeLessThan(7220);
      expect(fast.tracks[0]!.properties.TimeScale).toBe(10_000_000);
      expect(t.systemBitrate).toBe(fast.tracks[0]!.properties.systemBitrate);
    }
    // The 1.5 Mbit/s track spans more than 2^30 bytes, as a real one does.
    expect(files.get('warm-up-video-1.ismv')!.size).toBeGreaterThan(2 ** 30);
  });

  test('reads outside the file are refused; reads inside are fresh buffers of the requested length', async () => {
    const files = await syntheticFiles();
    const v = files.get('warm-up-video-2.ismv')!;
    await expect(v.read(v.size - 4, 8)).rejects.toThrow(/past the end/);
    await expect(v.read(-1, 4)).rejects.toThrow(/past the end/);
    const a = await v.read(0, 16);
    const b = await v.read(0, 16);
    expect(a).not.toBe(b);
    expect(Buffer.from(a).subarray(4, 8).toString('latin1')).toBe('ftyp');
  });
});

describe('warmUp', () => {
  test('answers Smooth, DASH, the HLS master and each media playlist, and HDS, per round', async () => {
    const r = await warmUp(wasmTrackSelector, 2);
    // 2 rounds × (Smooth, MPD, master, 3 media playlists, f4m).
    expect(r.requests).toBe(14);
    expect(r.ms).toBeGreaterThan(0);
  }, 60_000);

  test('a failing manifest fails the warm-up with its error', async () => {
    const failing = (): number[] => {
      throw new Error('selector broke');
    };
    await expect(warmUp(failing, 1)).rejects.toThrow(/selector broke/);
  });
});

describe('a server with a warm-up', () => {
  test('logs the warm-up and serves byte-identical manifests with the same validators', async () => {
    const logs: string[] = [];
    const warmed = await startServer({ ...testServerOptions(origin.root, logs), warmUpRounds: 1 });
    try {
      expect(logs.filter((l) => l.startsWith('warm-up'))).toEqual([
        expect.stringMatching(/^warm-up: 7 manifests of 1 synthetic 2-hour presentations in \d+ ms$/),
      ]);
      for (const p of ['/p.ism/.mpd', '/p.ism/Manifest', '/p.ism/.m3u8', '/p.ism/.f4m']) {
        const [a, b] = [await get(warmed.url, p), await get(origin.url, p)];
        expect([p, a.status]).toEqual([p, 200]);
        expect([p, a.body.equals(b.body), a.headers.etag]).toEqual([p, true, b.headers.etag]);
      }
    } finally {
      await warmed.close();
    }
  }, 60_000);

  test('a failed warm-up is logged, even without a request log, and the server serves anyway', async () => {
    const select = (...args: Parameters<typeof wasmTrackSelector>): number[] => {
      if (args[0].some((t) => t.src.includes('warm-up'))) throw new Error('selector broke in the warm-up');
      return wasmTrackSelector(...args);
    };
    const written: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string | Uint8Array): boolean => {
      written.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    let server;
    try {
      server = await startServer({ ...testServerOptions(origin.root, []), log: undefined, select, warmUpRounds: 1 });
    } finally {
      process.stderr.write = write;
    }
    try {
      expect(written.join('')).toMatch(/^warm-up failed \(serving anyway\): Error: selector broke in the warm-up/);
      expect((await get(server.url, '/p.ism/.mpd')).status).toBe(200);
    } finally {
      await server.close();
    }
  }, 60_000);
});

describe('origin serve --warm-up-rounds', () => {
  test(`defaults to ${WARM_UP_ROUNDS}; takes 0..100; refuses anything else`, () => {
    expect(parseServeArgs(['--root', '.']).warmUpRounds).toBe(WARM_UP_ROUNDS);
    expect(parseServeArgs(['--root', '.', '--warm-up-rounds', '0']).warmUpRounds).toBe(0);
    expect(parseServeArgs(['--root', '.', '--warm-up-rounds', '100']).warmUpRounds).toBe(100);
    for (const bad of ['101', '-1', '1.5', 'x', '']) {
      expect(() => parseServeArgs(['--root', '.', '--warm-up-rounds', bad])).toThrow(UsageError);
    }
    expect(() => parseServeArgs(['--root', '.', '--warm-up-rounds'])).toThrow(UsageError);
  });
});
