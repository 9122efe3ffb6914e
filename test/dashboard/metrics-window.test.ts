// Two windows picked in a row on a server's charts (metrics.js load), in Debian's Chromium: the first window's read
// answering after the second's is dropped, so it neither says the second window a second time (a CI run of
// layout.test.ts saw two "Showing the last 1 hour." at once) nor draws (one guard, metrics.js `reads`).
import type { Route } from 'playwright-core';
import { until } from '../helpers/wait';
import { DESKTOP_LIGHT, EMAIL, dashboardPerTest, waitOnPage } from './helpers';

const ctx = dashboardPerTest({});

test('a window picked while the one before is still read: only the newest read draws and is announced', async () => {
  const auth = { Authorization: `Bearer ${ctx.service.token(EMAIL)}` };
  const { id } = (await ctx.service.http.post('/v1/servers').set(auth).send({ name: 'Windows', plan: 'micro', version: 'flying-squid-1.20' }).expect(201)).body;
  const p = await ctx.open(DESKTOP_LIGHT);
  const { page } = p;
  await p.show(`${ctx.service.origin}/#/servers/${id}`);
  const ram = page.locator('svg[data-chart="ram_bytes"]');
  await waitOnPage(p, ram);
  const toasts = (text: string) => page.locator('.toast', { hasText: text });

  // The 15-minute read is held until the 1-hour one has answered and been drawn.
  const held: Route[] = [];
  await page.route('**/metrics?range=15m', (route) => void held.push(route));
  await page.getByLabel('Last 15 minutes').check();
  await until('the 15-minute read asked', async () => held.length === 1, 10_000);
  await page.getByLabel('Last 1 hour').check();
  await toasts('Showing the last 1 hour.').waitFor();

  // Now the older read answers.
  const answered = page.waitForResponse((r) => r.url().includes('/metrics?range=15m'));
  await held[0].continue();
  await answered;
  await page.evaluate(() => new Promise((r) => setTimeout(r, 500))); // the page's handling of that answer
  expect(await toasts('Showing the last 1 hour.').count()).toBe(1);
  expect(await toasts('Showing the last 15 minutes.').count()).toBe(0);
  expect(await page.getByLabel('Last 1 hour').isChecked()).toBe(true);
  expect(p.consoleErrors).toEqual([]);
}, 60_000);
