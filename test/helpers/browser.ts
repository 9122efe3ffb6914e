import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';

/**
 * Debian's Chromium, headless, driven by playwright-core (never a downloaded browser). Flags from the machine
 * notes: without the background-networking ones Chromium tries to reach Google at every start.
 */
export const CHROMIUM = {
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
  ],
};

/**
 * One Chromium for a whole test file (it is slow to launch); each test opens its own context (a fresh profile in
 * memory: cookies, storage), which is cheap.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch(CHROMIUM);
}

/** A Chromium with a profile folder of its own, for tests that want one persistent context. */
export async function launchBrowser(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  // A fresh profile folder per launch (playwright passes it as --user-data-dir).
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'gsh-chromium-'));
  const context = await chromium.launchPersistentContext(profile, CHROMIUM);
  return {
    context,
    async close() {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

export const artifactsDir = path.join(__dirname, '..', '..', 'test-artifacts');
