/// <reference lib="dom" />
// Every page of the dashboard at a desktop's 1280×900 and a phone's 390×844, each in the light and the dark scheme
// (issue 29), in Debian's Chromium (which build for which look: below): no page scrolls sideways, axe-core finds no
// serious or critical violation, the scheme follows prefers-color-scheme, every time has the one format with its
// zone, and what the pages show reads as a customer expects: quota use, plans and versions by name with their
// figures, sizes in B/KiB/MiB/GiB, only the power buttons the state allows, settings by title with their limits,
// the tick rate titled per game, the plan's memory as the RAM chart's ceiling. The running game, its players and
// the actions are in server-live.test.ts; forms that change things in settings.test.ts and catalog-quota.test.ts.
import { CHROMIUM, HEADLESS_SHELL, launchChromium } from '../helpers/browser';
import { until } from '../helpers/wait';
import {
  EMAIL, LOOKS, PHONE_DARK, sizeText, expectAccessible, expectFits, expectOneTimeFormat, expectScheme, openPage, pageReport, showDashboard, startDashboard, waitForButtons, waitForText,
  type Dashboard, type Look, type TestPage,
} from './helpers';
import type { Browser } from 'playwright-core';

// Read-only: the tests below only look at what beforeAll made, so they share one service and two browsers: the
// headless shell for three looks, as the dashboard's other tests use, and for the phone in the dark the full
// Chromium customers have, so every page is checked in both builds (test/helpers/browser.ts). The shell took 0.6 of
// the full browser's CPU for this file (12.9 s against 21.4 s of the machine's, measured alone).
let shell: Browser;
let full: Browser;
const browserFor = (look: Look) => (look === PHONE_DARK ? full : shell);
let service: Dashboard;
const ids = { survival: '', blocks: '' };
let backupSize = 0;

beforeAll(async () => {
  [shell, full, service] = await Promise.all([
    launchChromium(HEADLESS_SHELL),
    launchChromium(CHROMIUM),
    // The page's files per address, raised out of the way as createTestApp does the API's limit (rate-limits.test.ts
    // checks it): the file's eight page loads take about 430 of the 600 a minute, and each reload of a start cut short
    // by a dropped request (boot.js, showDashboard) about 52 more.
    startDashboard({ boot: true, env: { WEBHOOK_ALLOW_PRIVATE: 'true', DASHBOARD_FILES_PER_MINUTE: '100000' } }),
  ]);
  const auth = { Authorization: `Bearer ${service.token(EMAIL)}` };
  const post = (path: string, body: object) => service.http.post(path).set(auth).send(body).expect((r) => expect(r.status).toBeLessThan(300));
  ids.survival = (await post('/v1/servers', { name: 'Survival', plan: 'micro', version: 'flying-squid-1.20' })).body.id;
  ids.blocks = (await post('/v1/servers', { name: 'Blocks', plan: 'small', version: 'luanti-5.6.1' })).body.id;
  await until('installed', async () => (await service.http.get(`/v1/servers/${ids.survival}`).set(auth)).body.state === 'stopped', 60_000);
  await post(`/v1/servers/${ids.survival}/backups`, { name: 'first' });
  await until('backed up', async () => {
    const [b] = (await service.http.get(`/v1/servers/${ids.survival}/backups`).set(auth)).body.data;
    backupSize = b.size_bytes ?? 0;
    return b.status === 'ready';
  }, 60_000);
  await post(`/v1/servers/${ids.survival}/alerts`, { kind: 'crash', name: 'Crashes' });
  await post('/v1/webhooks', { url: 'http://127.0.0.1:9/hook', event_types: ['server.crashed'] });
  await post('/v1/tokens', { name: 'ci deploy', scopes: ['servers:read'] });
}, 120_000);
afterAll(async () => {
  await Promise.all([shell?.close(), full?.close()]);
  await service?.finish();
}, 60_000);

/** Shows `hash`, waits for `ready`, then the checks every page gets. */
async function visit(p: TestPage, hash: string, ready: () => Promise<unknown>) {
  // The first visit of a page starts the dashboard in it; the others move within that document (showDashboard).
  await showDashboard(p, `${service.origin}/${hash}`);
  try {
    await ready();
  } catch (err) {
    throw new Error([(err as Error).message.split('\n')[0], `at ${hash} (${p.look.name})`, ...(await pageReport(p))].join('\n'));
  }
  const where = `${hash} (${p.look.name})`;
  await expectFits(p.page, where);
  await expectAccessible(p.page, where);
  await expectOneTimeFormat(p.page, where);
  await expectScheme(p.page, p.look);
}

describe.each(LOOKS.map((l) => [l.name, l] as [string, Look]))('%s', (_name, look) => {
  // One signed-in page per look, reused by the read-only tests below (the sign-in page gets its own).
  let signedIn: TestPage;
  beforeAll(async () => {
    signedIn = await openPage(browserFor(look), service, look);
  });
  afterAll(() => signedIn?.close());

  test('sign-in: fits, accessible, in the scheme', async () => {
    const p = await openPage(browserFor(look), service, look, { signedIn: false });
    try {
      await visit(p, '', () => p.page.getByRole('heading', { name: 'Sign in' }).waitFor());
      expect(p.consoleErrors).toEqual([]);
    } finally {
      await p.close();
    }
  });

  test('servers: quota use, plans and versions by name, buttons by state', async () => {
    const p = signedIn;
    const { page } = p;
    await visit(p, '#/servers', () => page.getByRole('row', { name: /Survival/ }).waitFor());
    // Quotas: servers, running and memory, with what is used.
    await waitForText(page.locator('[data-quota="servers"]'), /^Servers.*2 of 100000$/);
    await waitForText(page.locator('[data-quota="running"]'), /0 of 100000/);
    await waitForText(page.locator('[data-quota="memory"]'), /1\.5 GiB of /);
    // Names, never ids: the game and version, the plan.
    const row = page.getByRole('row', { name: /Survival/ });
    expect(await row.innerText()).toMatch(/Minecraft Java Edition 1\.20[\s\S]*Micro/);
    expect(await row.innerText()).not.toMatch(/flying-squid|micro/);
    expect(await page.getByRole('row', { name: /Blocks/ }).innerText()).toMatch(/Luanti 5\.6\.1[\s\S]*Small/);
    const options = await page.getByLabel('Version').locator('option').allTextContents();
    expect(options.filter((o) => /flying-squid|luanti-/.test(o))).toEqual([]);
    expect(options[0]).toBe('Minecraft Java Edition 1.21.4'); // newest first
    expect(await page.getByLabel('Plan').locator('option').first().textContent()).toBe('Micro: 512 MiB RAM · 0.5 CPU cores · 5 players · 2 GiB disk · 2 backups');
    // A stopped server offers Start and Delete, nothing that needs a running game.
    await waitForButtons(row, ['Start', 'Delete']);
    // Messages never take a click meant for what is under them.
    expect(await page.locator('#status').evaluate((el) => getComputedStyle(el).pointerEvents)).toBe('none');
    expect(p.consoleErrors).toEqual([]);
    expect(p.foreignRequests()).toEqual([]);
  });

  test("a stopped Minecraft server's page: facts by name, sizes, settings with their limits, RAM up to the plan", async () => {
    const p = signedIn;
    const { page } = p;
    await visit(p, `#/servers/${ids.survival}`, () => page.locator('#players-online').getByText(/Nobody/).waitFor());
    expect(await page.locator('#server-game').textContent()).toBe('Minecraft Java Edition 1.20');
    expect(await page.locator('#server-plan').textContent()).toBe('Micro: 512 MiB RAM · 0.5 CPU cores · 5 players · 2 GiB disk · 2 backups');
    expect(await page.locator('#server-disk').textContent()).toMatch(/^(not measured yet|[\d.]+ (B|KiB|MiB) used of 2 GiB)$/);
    expect(await page.locator('#players-online').textContent()).toBe('Nobody: the server is stopped.');
    await waitForButtons(page.getByRole('group', { name: 'Actions for Survival' }), ['Start', 'Delete']);
    // Charts: the game's own tick title; the plan's memory is the RAM ceiling.
    await page.getByRole('img', { name: /^TPS \(ticks per second; 20 is full speed\)/ }).waitFor();
    const ram = page.locator('svg[data-chart="ram_bytes"]');
    expect(await ram.getAttribute('data-ceiling')).toBe(String(512 * 1024 * 1024));
    expect(await ram.locator('[data-tick="max"]').textContent()).toBe('512 MiB');
    // The page's other sections, each at its own address (sections.js), looked at as a page of their own.
    await visit(p, `#/servers/${ids.survival}/backups`, () => page.locator('.backup-size').first().waitFor());
    expect(await page.locator('.backup-size').first().textContent()).toBe(sizeText(backupSize));
    await visit(p, `#/servers/${ids.survival}/activity`, () => page.locator('#timeline li').first().waitFor());
    await visit(p, `#/servers/${ids.survival}/settings`, () => page.locator('#setting-max_players').waitFor());
    // Settings: titles, descriptions and limits beside each field; the creation-only ones say why they are locked.
    const field = (name: string) => page.locator(`[data-field="setting-${name}"]`);
    expect(await field('view_distance').locator('label').textContent()).toBe('View distance (applies at the next start)');
    expect(await field('view_distance').locator('.limit').textContent()).toBe('2 to 10');
    expect(await field('view_distance').locator('.help').textContent()).toBe('How many chunks around a player the server sends.');
    expect(await field('max_players').locator('.limit').textContent()).toBe('1 to 5: your plan Micro has 5 player slots');
    expect(await field('motd').locator('label').textContent()).toMatch(/^Message of the day/);
    expect(await page.locator('#setting-world_type').isDisabled()).toBe(true);
    expect(await field('world_type').locator('.help').textContent()).toMatch(/cannot change now/);
    expect(await page.getByLabel(/^View distance/).getAttribute('aria-describedby')).toContain('setting-view_distance-limit');
    expect(p.consoleErrors).toEqual([]);
  });

  test("a Luanti server's page: its own tick title and a UDP address", async () => {
    const p = signedIn;
    await visit(p, `#/servers/${ids.blocks}`, () => p.page.getByRole('img', { name: /^Server steps per second/ }).waitFor());
    // The address is in a read-only field with its Copy button (dns-name.js addressFact), the transport beside it.
    expect(await p.page.locator('#server-address').inputValue()).toMatch(/:\d+$/);
    expect(await p.page.locator('dl.facts').innerText()).toContain('(UDP)');
    expect(await p.page.locator('#server-game').textContent()).toBe('Luanti 5.6.1');
    expect(await p.page.locator('svg[data-chart="ram_bytes"] [data-tick="max"]').textContent()).toBe('1 GiB');
    expect(p.consoleErrors).toEqual([]);
  });

  test('settings pages: tokens (without the page’s own), webhooks, password', async () => {
    const p = signedIn;
    const { page } = p;
    await visit(p, '#/settings/tokens', () => page.getByRole('row', { name: /ci deploy/ }).waitFor());
    // The customer's tokens (one made by the test helper), none of the dashboard's own session tokens.
    expect(await page.locator('tr[data-token-id] th').allTextContents()).toEqual(['test', 'ci deploy']);
    await visit(p, '#/settings/webhooks', () => page.getByRole('heading', { name: 'http://127.0.0.1:9/hook' }).waitFor());
    await visit(p, '#/settings/password', () => page.getByLabel('Current password').waitFor());
    expect(p.consoleErrors).toEqual([]);
  });
});
