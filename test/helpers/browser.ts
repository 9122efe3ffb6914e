import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type LaunchOptions } from 'playwright-core';

// Flags from the machine notes: without the background-networking ones Chromium tries to reach Google at every start.
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/**
 * Debian's Chromium (package `chromium`), headless, driven by playwright-core (never a downloaded browser): the
 * browser customers have. The published docs are checked in it, and every dashboard page at one look, the phone
 * in the dark (looks.test.ts).
 */
export const CHROMIUM: LaunchOptions = { executablePath: '/usr/bin/chromium', headless: true, args: FLAGS };

/**
 * Debian's Chromium headless shell (package `chromium-headless-shell`, built from the same Chromium source and
 * version as `chromium`: the same Blink, V8 and network stack, without the desktop browser around them). It is
 * what Playwright itself runs headless tests in, and it takes about 0.6 of the CPU of the full browser for the
 * dashboard's page flows (docs/conventions.md "Tests"), so the flows, the CORS check and three of the four looks
 * run in it.
 */
export const HEADLESS_SHELL: LaunchOptions = { executablePath: '/usr/bin/chromium-headless-shell', headless: true, args: FLAGS };

/**
 * One browser for a whole test file (it is slow to launch); each test opens its own context (a fresh profile in
 * memory: cookies, storage), which is cheap.
 */
export function launchChromium(options: LaunchOptions = HEADLESS_SHELL): Promise<Browser> {
  return chromium.launch(options);
}

/** A browser with a profile folder of its own, for tests that want one persistent context. */
export async function launchBrowser(options: LaunchOptions = HEADLESS_SHELL): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  // A fresh profile folder per launch (playwright passes it as --user-data-dir).
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'gsh-chromium-'));
  const context = await chromium.launchPersistentContext(profile, options);
  return {
    context,
    async close() {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

export const artifactsDir = path.join(__dirname, '..', '..', 'test-artifacts');
