// Headless Chromium for the player tests, launched as test/e2e/players/README.md says (Debian
// chromium through playwright-core, persistent context in a fresh temporary profile).
//
// One browser per test file: jest gives each test file its own module registry, so the browser
// below is per file; it starts on the first playAndCheck and the file closes it with
// closeBrowser() in afterAll.

import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--autoplay-policy=no-user-gesture-required',
  // HTMLMediaElement.audioTracks (native HLS audio switching) is behind this Blink feature.
  '--enable-blink-features=AudioVideoTracks',
];
export const SCREENSHOT_DIR = path.resolve(__dirname, '..', '..', 'test-artifacts', 'players');

/** Whether the player tests run. ORIGIN_SKIP_PLAYERS=1 skips them (with a warning); otherwise a
 * missing Chromium is an error, not a silent skip, so CI cannot pass without the players. */
export function playerTestsEnabled(): boolean {
  if (process.env.ORIGIN_SKIP_PLAYERS === '1') {
    console.warn('ORIGIN_SKIP_PLAYERS=1: player tests skipped');
    return false;
  }
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `player tests need Chromium at ${CHROMIUM}: install it with \`apt-get install -y chromium\` ` +
        '(Debian), or set ORIGIN_SKIP_PLAYERS=1 to skip the player tests',
    );
  }
  return true;
}

let context: Promise<{ ctx: BrowserContext; profile: string }> | undefined;

function browser(): Promise<{ ctx: BrowserContext; profile: string }> {
  context ??= (async () => {
    const profile = mkdtempSync(path.join(tmpdir(), 'chrome-'));
    const ctx = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
    });
    return { ctx, profile };
  })();
  return context;
}

/** A new page of the file's browser (the caller closes it, e.g. with screenshotAndClose). */
export async function newPage(): Promise<Page> {
  const { ctx } = await browser();
  return ctx.newPage();
}

export async function closeBrowser(): Promise<void> {
  if (context === undefined) return;
  const { ctx, profile } = await context;
  context = undefined;
  await ctx.close();
  rmSync(profile, { recursive: true, force: true });
}

export interface PlayOptions {
  /** Success: video.currentTime passes this many seconds. */
  untilSeconds: number;
  /** Give up after this long (page load included). */
  timeoutMs: number;
  /** Screenshot name: test-artifacts/players/<screenshot>.png, saved on success and failure. */
  screenshot: string;
  /**
   * Switch the audio language through the player's API once the video passes `atSeconds`
   * (language codes accepted as equal, e.g. ['nl', 'nld', 'dut']); playback must then go on
   * to `untilSeconds`, and the result reports the language the player says is active.
   */
  switchAudio?: { to: string[]; atSeconds: number };
  /**
   * Turn subtitles on (first text track) as soon as the player lists text tracks (or, at the
   * latest, when playback starts), as a viewer who wants subtitles would; the result counts the
   * cues. Not later: shaka 5 gives a TextEngine created after the last video append no timestamp
   * offset for HLS (media_source_engine.js passes it only from video appends; text_engine.js
   * appendBuffer defers the cues until it has one), so on 10 s of fully buffered fMP4 a late
   * choice never shows a cue, a shaka limitation rather than an origin defect.
   */
  subtitles?: boolean;
  /**
   * The page errors that count (default: all). An error it leaves out does not stop the polling,
   * and is still returned in `errors` for the test to judge. For a player's documented notices
   * about its own behaviour (see test/e2e/players/hls-players.test.ts), never a blanket filter.
   */
  counted?: (r: { errors: string[]; errorTimes: number[]; switchedAt?: number }) => string[];
  /** Reads the page once polling stopped, before the screenshot (the result's `inspected`). */
  inspect?: (page: Page) => Promise<unknown>;
}

export interface PlayResult {
  /** video.currentTime when polling stopped, in seconds. */
  currentTime: number;
  /** window.__test.errors, then console errors and uncaught page errors. */
  errors: string[];
  /** video.currentTime when each of the page's own errors (the first entries of `errors`) was
   * reported. */
  errorTimes: number[];
  /** window.__test.events (player and <video> events, each with the currentTime it happened at). */
  events: string[];
  /** With switchAudio: the active audio language at the end, and the time the switch was made. */
  audioLanguage?: string;
  switchedAt?: number;
  /** With subtitles: the most cues any text track of the <video> held. */
  cues?: number;
  /** What `inspect` returned. */
  inspected?: unknown;
}

interface TestHook {
  currentTime: number;
  errors: string[];
  errorTimes: number[];
  events: string[];
  audioLanguage: string;
  cues: number;
  textReady: boolean;
}

const POLL_MS = 100;
/** After the page's first error, wait this long for the ones that follow it, then stop. Console
 * errors alone do not stop the polling: a failed request is logged before the player gives up. */
const ERROR_GRACE_MS = 1000;

async function readHook(page: Page): Promise<TestHook> {
  return page.evaluate(() => {
    const video = document.getElementById('video') as HTMLVideoElement | null;
    const t = (window as unknown as { __test?: { errors: string[]; errorTimes?: number[]; events: string[] } }).__test;
    const hook = t as unknown as
      { audioLanguage?: () => string; cues?: () => number; textReady?: () => boolean } | undefined;
    return {
      currentTime: video?.currentTime ?? 0,
      errors: t ? [...t.errors] : ['window.__test is missing: the player page did not run'],
      errorTimes: t ? [...(t.errorTimes ?? [])] : [],
      events: t ? [...t.events] : [],
      audioLanguage: hook?.audioLanguage?.() ?? '',
      cues: hook?.cues?.() ?? 0,
      textReady: hook?.textReady?.() ?? false,
    };
  });
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Saves test-artifacts/players/<name>.png (a failure to is one more page error) and closes the page. */
export async function screenshotAndClose(page: Page, name: string, pageErrors: string[]): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`) }).catch((e: Error) => {
    pageErrors.push(`screenshot: ${e.message}`);
  });
  await page.close();
}

/** Opens a player page and polls until the video passes `untilSeconds`, the page reports an error
 * (plus a short grace for the errors that follow it) or the timeout. */
export async function playAndCheck(pageUrl: string, opts: PlayOptions): Promise<PlayResult> {
  const { ctx } = await browser();
  const page = await ctx.newPage();
  const pageErrors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') pageErrors.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => pageErrors.push(`uncaught: ${e.message}`));
  const deadline = Date.now() + opts.timeoutMs;
  let hook: TestHook = {
    currentTime: 0,
    errors: [],
    errorTimes: [],
    events: [],
    audioLanguage: '',
    cues: 0,
    textReady: false,
  };
  let switchedAt: number | undefined;
  let maxCues = 0;
  let textShown = false;
  let inspected: unknown;
  try {
    await page.goto(pageUrl, { waitUntil: 'load', timeout: opts.timeoutMs });
    let firstErrorAt: number | undefined;
    for (;;) {
      hook = await readHook(page);
      maxCues = Math.max(maxCues, hook.cues);
      const now = Date.now();
      const counted = opts.counted
        ? opts.counted({
            errors: hook.errors,
            errorTimes: hook.errorTimes,
            ...(switchedAt !== undefined ? { switchedAt } : {}),
          })
        : hook.errors;
      if (counted.length > 0) firstErrorAt ??= now;
      if (opts.subtitles === true && !textShown && (hook.textReady || hook.currentTime > 0)) {
        textShown = true;
        await page.evaluate(() => (window as unknown as { __test: { showText(): void } }).__test.showText());
      }
      if (opts.switchAudio !== undefined && switchedAt === undefined && hook.currentTime > opts.switchAudio.atSeconds) {
        switchedAt = hook.currentTime;
        const to = opts.switchAudio.to;
        await page.evaluate(
          (w) => (window as unknown as { __test: { setAudioLanguage(w: string[]): void } }).__test.setAudioLanguage(w),
          to,
        );
      }
      const switched = opts.switchAudio === undefined || switchedAt !== undefined;
      const cued = opts.subtitles !== true || maxCues > 0;
      if ((hook.currentTime > opts.untilSeconds && switched && cued) || now >= deadline) break;
      if (firstErrorAt !== undefined && now - firstErrorAt >= ERROR_GRACE_MS) break;
      await sleep(POLL_MS);
    }
    if (opts.inspect !== undefined) inspected = await opts.inspect(page);
  } catch (e) {
    pageErrors.push(`harness: ${(e as Error).message}`);
  } finally {
    await screenshotAndClose(page, opts.screenshot, pageErrors);
  }
  return {
    ...(opts.inspect !== undefined ? { inspected } : {}),
    currentTime: hook.currentTime,
    errors: [...hook.errors, ...pageErrors],
    errorTimes: hook.errorTimes,
    events: hook.events,
    ...(opts.switchAudio !== undefined
      ? { audioLanguage: hook.audioLanguage, ...(switchedAt !== undefined ? { switchedAt } : {}) }
      : {}),
    ...(opts.subtitles === true ? { cues: maxCues } : {}),
  };
}

export interface FrameOptions {
  /** The frame shown at this time (seconds) is hashed. */
  atSeconds: number;
  /** Give up after this long (page load included). */
  timeoutMs: number;
  /** Screenshot name: test-artifacts/players/<screenshot>.png, saved once the frame is hashed or given up. */
  screenshot: string;
  /** As PlayOptions's: the page errors that stop the wait (default: all). */
  counted?: PlayOptions['counted'];
}

export interface FrameResult {
  /** SHA-256 (hex) of the RGBA pixels of the frame at `atSeconds`; undefined: never got there. */
  hash: string | undefined;
  /** When it never got there: the hash of the picture the <video> shows when the page is left (undefined: none). */
  shown: string | undefined;
  /** video.currentTime when the page was left. */
  currentTime: number;
  /** As PlayResult's: the page's own errors, then console errors and uncaught page errors. */
  errors: string[];
  errorTimes: number[];
}

/**
 * The picture a player shows at `atSeconds`, as a hash: plays until half a second past it (or an
 * error, or the timeout), pauses, seeks to exactly `atSeconds`, waits for the seek and a composited
 * frame, draws the <video> into a canvas of its intrinsic size and hashes the pixels. The same
 * stream decoded by the same browser gives the same hash, so two pages can be compared (a
 * decrypted stream against its clear source).
 */
export async function frameHash(pageUrl: string, opts: FrameOptions): Promise<FrameResult> {
  const { ctx } = await browser();
  const page = await ctx.newPage();
  const pageErrors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') pageErrors.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => pageErrors.push(`uncaught: ${e.message}`));
  const deadline = Date.now() + opts.timeoutMs;
  let hook: TestHook | undefined;
  let hash: string | undefined;
  let shown: string | undefined;
  try {
    await page.goto(pageUrl, { waitUntil: 'load', timeout: opts.timeoutMs });
    // The shown picture's pixels, hashed (undefined: no picture yet).
    await page.evaluate(() => {
      (window as unknown as { __frameHash: () => Promise<string | undefined> }).__frameHash = async () => {
        const video = document.getElementById('video') as HTMLVideoElement;
        if (video.videoWidth === 0) return undefined;
        const canvas = document.createElement('canvas');
        canvas.width = video.videoWidth;
        canvas.height = video.videoHeight;
        const g = canvas.getContext('2d')!;
        g.drawImage(video, 0, 0);
        const pixels = g.getImageData(0, 0, canvas.width, canvas.height).data;
        const digest = await crypto.subtle.digest('SHA-256', pixels);
        return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
      };
    });
    for (;;) {
      hook = await readHook(page);
      const counted = opts.counted ? opts.counted({ errors: hook.errors, errorTimes: hook.errorTimes }) : hook.errors;
      if (hook.currentTime > opts.atSeconds + 0.5 || counted.length > 0 || Date.now() >= deadline) break;
      await sleep(POLL_MS);
    }
    if (hook.currentTime > opts.atSeconds + 0.5) {
      hash = await page.evaluate(async (at) => {
        const video = document.getElementById('video') as HTMLVideoElement;
        video.pause();
        await new Promise<void>((resolve) => {
          video.addEventListener('seeked', () => resolve(), { once: true });
          video.currentTime = at;
        });
        // The seeked frame reaches the compositor a moment later: wait for it to be presented.
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 1000);
          video.requestVideoFrameCallback(() => {
            clearTimeout(timer);
            resolve();
          });
        });
        return (window as unknown as { __frameHash: () => Promise<string> }).__frameHash();
      }, opts.atSeconds);
      hook = await readHook(page);
    } else
      shown = await page.evaluate(() => (window as unknown as { __frameHash: () => Promise<string> }).__frameHash());
  } catch (e) {
    pageErrors.push(`harness: ${(e as Error).message}`);
  } finally {
    await screenshotAndClose(page, opts.screenshot, pageErrors);
  }
  return {
    hash,
    shown,
    currentTime: hook?.currentTime ?? 0,
    errors: [...(hook?.errors ?? []), ...pageErrors],
    errorTimes: hook?.errorTimes ?? [],
  };
}
