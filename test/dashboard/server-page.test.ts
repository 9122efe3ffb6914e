// A real flying-squid server driven from the dashboard in Debian's Chromium: created from the catalog, started
// with the Start button, then its page shows live TPS/RAM/CPU/players charts fed by the SSE stream, and its
// console answers a command. Game ports 27400-27420.
import { dashboardPerTest, signInThroughUi } from './helpers';
import type { Locator } from 'playwright-core';

const ctx = dashboardPerTest({ boot: true, env: { METRICS_INTERVAL_S: '1', GAME_PORT_RANGE: '27400-27420' } });

test('create a server from the catalog, start it, and watch its charts and console live', async () => {
  const { page } = ctx.browser;
  await signInThroughUi(page, ctx.service.origin);
  await page.getByRole('heading', { name: 'Servers', level: 1 }).waitFor();

  await page.getByLabel('Name').fill('Survival');
  await page.getByLabel('Plan').selectOption('micro');
  await page.getByLabel('Version').selectOption('flying-squid-1.20');
  await page.getByRole('button', { name: 'Create server' }).click();
  const row = page.locator('tr', { hasText: 'Survival' });
  await waitForText(row, /stopped/, 60_000);
  await ctx.browser.screenshot('servers');

  await row.getByRole('link', { name: 'Survival' }).click();
  await page.getByRole('heading', { name: 'Survival', level: 1 }).waitFor();
  await page.getByRole('button', { name: 'Start Survival', exact: true }).click();
  await waitForText(page.locator('#server-state'), /running/, 120_000);
  await waitForText(page.locator('.outcome'), /Start Survival: done/, 30_000);

  // The "now" figures come from the stream: a TPS value appears and the sample behind it keeps changing.
  const now = page.locator('#metrics-now');
  await waitForText(page.locator('#now-tps'), /^\d+\.\d$/, 30_000);
  const firstSample = await now.getAttribute('data-sample-id');
  const tpsChart = page.getByRole('img', { name: /^TPS/ });
  const firstPoints = Number(await tpsChart.getAttribute('data-points'));
  await waitForAttribute(now, 'data-sample-id', (id) => id !== firstSample, 30_000);
  await waitForAttribute(tpsChart, 'data-points', (n) => Number(n) > firstPoints, 30_000);
  for (const name of [/^TPS/, /^RAM/, /^CPU/, /^Players online/]) {
    expect(Number(await page.getByRole('img', { name }).getAttribute('data-points'))).toBeGreaterThan(0);
  }

  // Another range reloads the history; the live stream keeps adding to it.
  await page.getByLabel('15 minutes').check();
  await waitForText(page.locator('#status'), /last 15 minutes/, 10_000);
  expect(Number(await tpsChart.getAttribute('data-points'))).toBeGreaterThan(0);

  // The console: recent lines, a command, its answer arriving over the console stream.
  const consoleLog = page.getByRole('log', { name: 'Console output' });
  await waitForText(consoleLog, /\S/, 30_000);
  await page.getByLabel('Command').fill('ping 4');
  await page.getByRole('button', { name: 'Send' }).click();
  await waitForText(consoleLog, /pong \[5\]!/, 30_000); // flying-squid answers 'pong [n+1]!'
  await ctx.browser.screenshot('server');

  // A command to a stopped server fails with the service's explanation (409), shown in the page.
  await page.getByRole('button', { name: 'Stop Survival', exact: true }).click();
  await waitForText(page.locator('#server-state'), /stopped/, 60_000);
  await page.getByLabel('Command').fill('ping 1');
  await page.getByRole('button', { name: 'Send' }).click();
  await waitForText(page.getByRole('alert'), /Not sent: /, 10_000);
  await ctx.browser.screenshot('server-stopped');

  await page.getByRole('button', { name: 'Delete Survival', exact: true }).click();
  await page.getByRole('heading', { name: 'Servers', level: 1 }).waitFor({ timeout: 60_000 });

  // The page talked only to the service and logged no errors (afterEach checks the contract). The one expected
  // error is Chromium's log line for the 409 of the command sent to a stopped server.
  expect(ctx.browser.foreignRequests(ctx.service.origin)).toEqual([]);
  expect(ctx.browser.consoleErrors).toEqual([
    expect.stringMatching(/^Failed to load resource: the server responded with a status of 409 .*\/console$/),
  ]);
}, 300_000);

async function waitForText(locator: Locator, want: RegExp, timeout: number) {
  await locator.first().waitFor({ timeout });
  const deadline = Date.now() + timeout;
  let text = '';
  while (Date.now() < deadline) {
    text = (await locator.first().textContent()) ?? '';
    if (want.test(text)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`expected ${want} in "${text}"`);
}

async function waitForAttribute(locator: Locator, name: string, ok: (value: string | null) => boolean, timeout: number) {
  const deadline = Date.now() + timeout;
  let value: string | null = null;
  while (Date.now() < deadline) {
    value = await locator.getAttribute(name);
    if (ok(value)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${name} stayed "${value}"`);
}
