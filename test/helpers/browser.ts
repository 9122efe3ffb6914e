import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

/**
 * Debian's Chromium, headless, driven by playwright-core (never a downloaded browser). Flags from the machine
 * notes: without the background-networking ones Chromium tries to reach Google at every start.
 */
export async function launchBrowser(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  // A fresh profile folder per launch (playwright passes it as --user-data-dir).
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'gsh-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
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
  });
  return {
    context,
    async close() {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

export const artifactsDir = path.join(__dirname, '..', '..', 'test-artifacts');
