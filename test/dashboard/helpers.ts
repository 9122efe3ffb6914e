/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import fs from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { createTestApp, type TestAppOptions } from '../helpers/app';
import { launchChromium } from '../helpers/browser';
import { createUsersRepo } from '../../src/store/users-repo';
import { hashPasswordSync } from '../../src/dashboard/passwords';
import type { Db } from '../../src/store/db';

export const EMAIL = 'owner@example.com';
export const PASSWORD = 'correct horse battery';
export const ARTIFACTS = path.join(__dirname, '..', '..', 'test-artifacts');
/** How long a message stays in the page (dom.js TOAST_MS). */
export const TOAST_MS = 6000;
/** A real scrypt hash at a low cost: these tests sign in often; test/dashboard/cli-user.test.ts checks the real cost. */
const CHEAP = { N: 2 ** 10, r: 8, p: 1 };

/** A dashboard account with PASSWORD (EMAIL's is made by startDashboard); returns its user id. */
export function addAccount(db: Db, email: string): string {
  const users = createUsersRepo(db, { now: () => Date.now() });
  const id = users.ensure(email).id;
  users.setPasswordHash(id, hashPasswordSync(PASSWORD, CHEAP));
  return id;
}

/** A real listening service (built like `npm start`) with one dashboard account. */
export async function startDashboard(options: TestAppOptions = {}) {
  const app = await createTestApp(options);
  addAccount(app.db, EMAIL);
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

/** How the page is looked at (issue 29): a desktop and a phone, each in the light and the dark scheme. */
export interface Look {
  name: string;
  viewport: { width: number; height: number };
  colorScheme: 'light' | 'dark';
  phone: boolean;
}
export const DESKTOP_LIGHT: Look = { name: 'desktop, light', viewport: { width: 1280, height: 900 }, colorScheme: 'light', phone: false };
export const DESKTOP_DARK: Look = { ...DESKTOP_LIGHT, name: 'desktop, dark', colorScheme: 'dark' };
export const PHONE_LIGHT: Look = { name: 'phone, light', viewport: { width: 390, height: 844 }, colorScheme: 'light', phone: true };
export const PHONE_DARK: Look = { ...PHONE_LIGHT, name: 'phone, dark', colorScheme: 'dark' };
export const LOOKS: Look[] = [DESKTOP_LIGHT, DESKTOP_DARK, PHONE_LIGHT, PHONE_DARK];
/** Not UTC, so a time without its zone would be wrong to the reader and the tests would see it. */
export const TIME_ZONE = 'Europe/Berlin';

/**
 * A page in a fresh browser context (its own cookies) with `look`. Every request the page makes and every console
 * error is recorded, so tests can assert the page talked to nobody but the service and logged no errors (a CSP
 * violation is a console error too). Dialogs (confirm) are recorded and answered with `answer.yes`. Signed in
 * through the session endpoint unless `signedIn: false` (tests about signing in use the form).
 */
export async function openPage(browser: Browser, service: Dashboard, look: Look = DESKTOP_LIGHT, { signedIn = true, email = EMAIL } = {}) {
  const context: BrowserContext = await browser.newContext({
    viewport: look.viewport, colorScheme: look.colorScheme, isMobile: look.phone, hasTouch: look.phone,
    locale: 'en-US', timezoneId: TIME_ZONE, acceptDownloads: true,
  });
  if (signedIn) {
    // The context's request client shares its cookie jar: the session cookie lands where the page will send it.
    const res = await context.request.post(`${service.origin}/dashboard/sign-in`, { headers: { Origin: service.origin }, data: { email, password: PASSWORD } });
    if (res.status() !== 200) throw new Error(`sign-in answered ${res.status()}`);
  }
  const page: Page = await context.newPage();
  const requests: string[] = [];
  const consoleErrors: string[] = [];
  const dialogs: string[] = [];
  const answer = { yes: true };
  page.on('request', (r) => requests.push(r.url()));
  // What went wrong on the wire, for a failure's message (waitOnPage): requests that failed, answers of 400 and up.
  const trouble: string[] = [];
  // When Chromium dropped a request because the host's network changed (see the console filter below): showDashboard.
  const drops: number[] = [];
  page.on('requestfailed', (r) => {
    trouble.push(`${r.method()} ${r.url()} failed: ${r.failure()?.errorText}`);
    if (r.failure()?.errorText === 'net::ERR_NETWORK_CHANGED') drops.push(Date.now());
  });
  page.on('response', (r) => void (r.status() >= 400 && trouble.push(`${r.request().method()} ${r.url()} answered ${r.status()}`)));
  // A page that crashed or was reloaded (boot.js reloads after a dropped module) shows nothing by itself either.
  page.on('crash', () => trouble.push('the page crashed'));
  page.on('framenavigated', (f) => void (f === page.mainFrame() && trouble.push(`navigated to ${f.url()}`)));
  page.on('console', (m) => {
    // Not the page's doing: Chromium aborts requests in flight when the host's network interfaces change, which the
    // Docker tests running beside these do (each container's veth). The page asks a dropped read again
    // (fetchAgain in src/dashboard/public/js/api.js; settings.test.ts drops requests on purpose).
    if (m.type() === 'error' && !m.text().includes('net::ERR_NETWORK_CHANGED')) consoleErrors.push(`${m.text()} @ ${m.location().url}`);
  });
  page.on('pageerror', (e) => consoleErrors.push(`uncaught: ${e.message}`));
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void (answer.yes ? d.accept() : d.dismiss());
  });
  return {
    page, context, requests, consoleErrors, dialogs, answer, look, trouble, drops, signedIn,
    /**
     * Shows `url` (the dashboard at a hash route): the first time loads the document and waits until the dashboard
     * started in it, loading it again if the network dropped its start (showDashboard); later, a move within it.
     */
    async show(url: string): Promise<void> {
      await showDashboard(this, url);
    },
    /** Hosts other than the service that the page tried to reach. */
    foreignRequests() {
      return requests.filter((u) => !u.startsWith(`${service.origin}/`) && !u.startsWith('data:') && !u.startsWith('blob:'));
    },
    async screenshot(name: string) {
      fs.mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: path.join(ARTIFACTS, `dashboard-${name}.png`), fullPage: true });
    },
    async close() {
      await page.goto('about:blank').catch(() => undefined); // nothing in it keeps calling a service about to close
      await context.close();
    },
  };
}

export type TestPage = Awaited<ReturnType<typeof openPage>>;

/** How long after the last dropped request a page that has not started is taken as given up (boot.js waits 2 s at most). */
const QUIET_AFTER_DROP_MS = 5_000;

/**
 * Shows `url` (the dashboard at a hash route) on `p`. The first time, the page's document is loaded and this waits
 * until the dashboard has started in it: signed in, its menu shown (app.js showChrome), or the sign-in form for a
 * page opened signed out. Later calls move within that document by the URL's fragment, as the page's own links do,
 * so a document that did not start would leave every later call on that page showing nothing.
 *
 * A start cut short by requests that Chromium dropped because the host's network changed (the Docker tests beside
 * these add and remove interfaces; see openPage) leaves the page at "Loading…" once boot.js has reloaded three times
 * or when boot.js itself was dropped, and at the sign-in form when api.js resume() could not reach the service: the
 * document is then loaded again, as the page itself tells its reader to ("reload to try again"), up to three loads.
 * A start that fails with no dropped request fails at once, saying what the page shows.
 *
 * `firstLoad` makes the first load instead of going to `url` (a link of the page that leads to `url`), for a test
 * about that way in; the loads after a drop go to `url`.
 */
export async function showDashboard(p: TestPage, url: string, { timeout = 30_000, firstLoad }: { timeout?: number; firstLoad?: () => Promise<unknown> } = {}) {
  if (p.page.url() !== 'about:blank' && !firstLoad) return void (await p.page.goto(url));
  const started = p.page.locator(p.signedIn ? '#nav:not([hidden])' : '#sign-in-title');
  for (let load = 1; ; load++) {
    const dropsBefore = p.drops.length;
    // From about:blank: the same URL again would be a move within the document that did not start.
    if (load > 1) await p.page.goto('about:blank');
    await (load === 1 && firstLoad ? firstLoad() : p.page.goto(url)).catch((e: Error) => {
      if (!e.message.includes('net::ERR_NETWORK_CHANGED')) throw e;
      p.drops.push(Date.now()); // the document itself was dropped
    });
    const deadline = Date.now() + timeout;
    let up = await started.isVisible();
    while (!up && Date.now() < deadline) {
      const lastDrop = p.drops.length > dropsBefore ? p.drops[p.drops.length - 1] : undefined;
      if (lastDrop !== undefined && Date.now() - lastDrop > QUIET_AFTER_DROP_MS) break;
      await new Promise((r) => setTimeout(r, 250));
      up = await started.isVisible();
    }
    if (up) return;
    if (p.drops.length === dropsBefore || load === 3) {
      const why = p.drops.length === dropsBefore ? `no request was dropped in load ${load}` : `requests were dropped in each of ${load} loads`;
      throw new Error([`the dashboard did not start at ${url} (${p.look.name}; ${why})`, ...(await pageReport(p))].join('\n'));
    }
  }
}

export async function signInThroughUi(page: Page, origin: string, password = PASSWORD) {
  await page.goto(`${origin}/`);
  await page.getByLabel('Email').fill(EMAIL);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/**
 * One Chromium for the file and a service and database of its own for every test (docs/conventions.md "Tests").
 * `open(look)` gives a signed-in page in a fresh context; every page opened is closed after the test, then the
 * contract is checked.
 */
export function dashboardPerTest(options: TestAppOptions) {
  const current = { pages: [] as TestPage[] } as { browser: Browser; service: Dashboard; pages: TestPage[]; open: (look?: Look, o?: { signedIn?: boolean; email?: string }) => Promise<TestPage> };
  current.open = async (look = DESKTOP_LIGHT, o = {}) => {
    const p = await openPage(current.browser, current.service, look, o);
    current.pages.push(p);
    return p;
  };
  beforeAll(async () => {
    current.browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await current.browser?.close();
  }, 60_000);
  beforeEach(async () => {
    current.service = await startDashboard(options);
  }, 60_000);
  afterEach(async () => {
    try {
      for (const p of current.pages.splice(0)) await p.close();
    } finally {
      await current.service.finish();
    }
  }, 90_000);
  return current;
}

/** Shows one section of a server's page (src/dashboard/public/js/sections.js, issue 38 §6) by its link in the page's menu. */
export async function showSection(page: Page, title: string) {
  await page.getByRole('navigation', { name: 'Sections of this server' }).getByRole('link', { name: title, exact: true }).click();
}

/** Every page must fit the viewport: no horizontal scrolling (issue 29; tables become cards on a phone). */
export async function expectFits(page: Page, where: string) {
  const { scroll, width, wide } = await page.evaluate(() => {
    const w = document.documentElement.clientWidth;
    const offenders = [...document.querySelectorAll('body *')]
      .filter((el) => el.getBoundingClientRect().right > w + 1 && !el.closest('.console, .sr-only, [hidden]'))
      .slice(0, 5).map((el) => `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}.${el.className}`);
    return { scroll: document.documentElement.scrollWidth, width: w, wide: offenders };
  });
  expect({ where, scroll, wide }).toEqual({ where, scroll: width, wide: [] });
}

const AXE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/**
 * axe-core's rules over the page as it is now: no serious or critical violation. Evaluated through the DevTools
 * protocol, which the page's CSP does not govern, so the page runs under its real CSP.
 */
export async function expectAccessible(page: Page, where: string) {
  // Once per document: the dashboard moves between its pages by the URL's fragment, within one document.
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(ctx: Document, o: object): Promise<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: unknown }> }> }> } }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => JSON.stringify(n.target)).join(', ')}`);
  });
  expect({ where, violations }).toEqual({ where, violations: [] });
}

/** The page is drawn in the look's scheme: a dark page background in dark mode, a light one otherwise. */
export async function expectScheme(page: Page, look: Look) {
  const lightness = await page.evaluate(() => {
    const [r, g, b] = getComputedStyle(document.body).backgroundColor.match(/\d+/g)!.map(Number);
    return (r + g + b) / 3;
  });
  if (look.colorScheme === 'dark') expect(lightness).toBeLessThan(60);
  else expect(lightness).toBeGreaterThan(200);
}

/** One time format everywhere (issue 29): a 24-hour clock naming its zone, the date when it is not today's. */
export const TIME_TEXT = /^(?:[A-Z][a-z]{2} \d{1,2}, \d{4}, )?\d{2}:\d{2}:\d{2} (?:GMT[+-]\d{1,2}|UTC|CES?T)$/;
export async function expectOneTimeFormat(page: Page, where: string) {
  const times = await page.locator('time').allTextContents();
  const bad = times.filter((t) => !TIME_TEXT.test(t));
  const twelveHour = /\b\d{1,2}:\d{2}(:\d{2})?\s?[AP]M\b/.test(await page.locator('main').innerText());
  expect({ where, bad, twelveHour }).toEqual({ where, bad: [], twelveHour: false });
}

/** What the page writes for `n` bytes (format.js fmtBytes: B, KiB, MiB, GiB), to compare with. */
export function sizeText(n: number) {
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let i = 0;
  while (i < 3 && n >= 1024 ** (i + 1)) i++;
  return i === 0 ? `${n} B` : `${(n / 1024 ** i).toFixed(i >= 3 ? 2 : 1).replace(/\.?0+$/, '')} ${units[i]}`;
}

export async function waitForText(locator: Locator, want: RegExp, timeout = 20_000) {
  await locator.first().waitFor({ timeout });
  const deadline = Date.now() + timeout;
  let text = '';
  while (Date.now() < deadline) {
    text = (await locator.first().textContent()) ?? '';
    if (want.test(text)) return text;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`expected ${want} in "${text}"`);
}

export async function waitForAttribute(locator: Locator, name: string, ok: (value: string | null) => boolean, timeout = 30_000) {
  const deadline = Date.now() + timeout;
  let value: string | null = null;
  while (Date.now() < deadline) {
    value = await locator.getAttribute(name);
    if (ok(value)) return value;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${name} stayed "${value}"`);
}

/**
 * The buttons' names under `locator` once they read `want`. The page draws a server's buttons when its state
 * arrives, so a read right after a click can see none yet; this waits, then fails with what was there.
 */
export async function waitForButtons(locator: Locator, want: string[], timeout = 30_000) {
  const deadline = Date.now() + timeout;
  let names: string[] = [];
  while (Date.now() < deadline) {
    names = await locator.getByRole('button').allTextContents();
    if (names.join('\n') === want.join('\n')) return names;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`expected the buttons ${JSON.stringify(want)}, saw ${JSON.stringify(names)}`);
}

/**
 * Waits for `locator` on the page; when it does not come, fails saying what the page shows and what went wrong on
 * the wire and in its console meanwhile (a page that stays empty says nothing by itself).
 */
export async function waitOnPage(
  p: TestPage,
  locator: Locator,
  { timeout = 30_000, state = 'visible' as 'visible' | 'attached', also = async (): Promise<string[]> => [] } = {},
) {
  try {
    await locator.first().waitFor({ timeout, state });
  } catch (err) {
    throw new Error([
      (err as Error).message.split('\n')[0],
      ...(await pageReport(p)),
      ...(await also().catch((e: Error) => [`(could not say more: ${e.message})`])),
    ].join('\n'));
  }
}

/** What the page shows and what went wrong on the wire and in its console: the lines of a failure's message. */
export async function pageReport(p: TestPage): Promise<string[]> {
  const shown = await p.page.locator('main').innerText({ timeout: 2_000 }).catch(() => '(no main)');
  return [
    `page: ${p.page.url()}`,
    `shown: ${shown.replace(/\s+/g, ' ').slice(0, 800)}`,
    `console: ${JSON.stringify(p.consoleErrors)}`,
    `wire: ${JSON.stringify(p.trouble.slice(-20))}`,
  ];
}
