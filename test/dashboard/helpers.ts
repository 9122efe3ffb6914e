import fs from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { createTestApp, tempDir, type TestAppOptions } from '../helpers/app';
import { createUsersRepo } from '../../src/store/users-repo';
import { hashPasswordSync } from '../../src/dashboard/passwords';

export const EMAIL = 'owner@example.com';
export const PASSWORD = 'correct horse battery';
export const ARTIFACTS = path.join(__dirname, '..', '..', 'test-artifacts');

/** A real listening service (built like `npm start`) with one dashboard account. */
export async function startDashboard(options: TestAppOptions = {}) {
  const app = await createTestApp(options);
  const users = createUsersRepo(app.db, { now: () => Date.now() });
  users.setPasswordHash(users.ensure(EMAIL).id, hashPasswordSync(PASSWORD));
  const server: Server = app.app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await app.close();
  };
  return {
    ...app,
    origin,
    // TestApp.finish (the contract check, then close whatever happened) calls this close through `this`.
    close,
  };
}

export type Dashboard = Awaited<ReturnType<typeof startDashboard>>;

/**
 * Debian's Chromium, headless, with a fresh profile. Every request the page makes and every console error is
 * recorded, so tests can assert the page talked to nobody but the service and logged no errors.
 */
export async function openBrowser() {
  const profile = tempDir('chromium');
  // Playwright refuses --user-data-dir in `args`; launchPersistentContext passes the fresh profile folder itself.
  const context: BrowserContext = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run',
    ],
    viewport: { width: 1280, height: 900 },
  });
  const page: Page = context.pages()[0] ?? (await context.newPage());
  const requests: string[] = [];
  const consoleErrors: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(`${m.text()} @ ${m.location().url}`);
  });
  page.on('pageerror', (e) => consoleErrors.push(`uncaught: ${e.message}`));
  // Delete and revoke ask for confirmation with confirm(); the tests always mean it.
  page.on('dialog', (d) => void d.accept());
  return {
    page,
    requests,
    consoleErrors,
    /** Hosts other than the service that the page tried to reach. */
    foreignRequests(origin: string) {
      return requests.filter((u) => !u.startsWith(`${origin}/`) && !u.startsWith('data:'));
    },
    async screenshot(name: string) {
      fs.mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: path.join(ARTIFACTS, `dashboard-${name}.png`), fullPage: true });
    },
    async close() {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

export type TestBrowser = Awaited<ReturnType<typeof openBrowser>>;

export async function signInThroughUi(page: Page, origin: string, password = PASSWORD) {
  await page.goto(`${origin}/`);
  await page.getByLabel('Email').fill(EMAIL);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/**
 * One Chromium for the file (it is slow to launch) and a service and database of its own for every test
 * (docs/conventions.md "Tests"). Each test starts signed out (cookies are per host, not per port, so the previous
 * test's session cookie is dropped) with an empty record of the page's requests and console errors; after it, the
 * page leaves (so nothing in it keeps calling a service about to close) and the contract is checked.
 */
export function dashboardPerTest(options: TestAppOptions): { browser: TestBrowser; service: Dashboard } {
  const current = {} as { browser: TestBrowser; service: Dashboard };
  beforeAll(async () => {
    current.browser = await openBrowser();
  }, 60_000);
  afterAll(async () => {
    await current.browser?.close();
  }, 60_000);
  beforeEach(async () => {
    current.service = await startDashboard(options);
    await current.browser.page.context().clearCookies();
    current.browser.requests.length = 0;
    current.browser.consoleErrors.length = 0;
  }, 60_000);
  afterEach(async () => {
    await current.browser.page.goto('about:blank').finally(() => current.service.finish());
  }, 90_000);
  return current;
}
