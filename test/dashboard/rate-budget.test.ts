// The dashboard lives within the rate limit it enforces (issue 38, docs/dashboard-budget.md), in Debian's Chromium
// against a real flying-squid server at the default RATE_LIMIT_PER_MINUTE (120) and STREAMS_PER_USER (10): a server
// page left open for three minutes, while a player joins and leaves, a backup is made and another tab restarts the
// game, sends at most 20 /v1 requests a minute after it loaded; a second tab of the same server and a tab of the
// server list beside it never see a 429; the three tabs hold one events stream between them (live.js), and the
// page that does not hold it still hears the events.
import mineflayer from 'mineflayer';
import type { Page } from 'playwright-core';
import { DESKTOP_LIGHT, EMAIL, dashboardPerTest, showSection, waitForButtons, waitForText, waitOnPage } from './helpers';
import { until } from '../helpers/wait';

const ctx = dashboardPerTest({
  boot: true,
  env: { RATE_LIMIT_PER_MINUTE: '120', METRICS_INTERVAL_S: '2' },
  runtime: { stopTimeoutMs: 10_000, reconcileMs: 500 },
});
const bots: mineflayer.Bot[] = [];
afterEach(() => {
  for (const b of bots.splice(0)) b.end();
});

const WINDOW_MS = 180_000;
const BUDGET_PER_MINUTE = 20;

/** Every /v1 request a tab sends, with when, and every answer of 429. */
function record(page: Page) {
  const sent: Array<{ at: number; what: string }> = [];
  const refused: string[] = [];
  page.on('request', (r) => {
    const url = new URL(r.url());
    if (url.pathname.startsWith('/v1/')) sent.push({ at: Date.now(), what: `${r.method()} ${url.pathname}` });
  });
  page.on('response', (r) => void (r.status() === 429 && refused.push(`${r.request().method()} ${r.url()}`)));
  page.on('dialog', (d) => void d.accept());
  return { sent, refused, between: (from: number, to: number) => sent.filter((s) => s.at >= from && s.at < to) };
}

/** What was sent, most frequent first: the failure message says where the budget went. */
const tally = (sent: Array<{ what: string }>) => Object.entries(sent.reduce<Record<string, number>>((n, s) => ({ ...n, [s.what]: (n[s.what] ?? 0) + 1 }), {}))
  .sort((a, b) => b[1] - a[1]).map(([what, n]) => `${n} × ${what}`);

test('an open server page sends at most 20 requests a minute; two tabs and the server list see no 429', async () => {
  const auth = { Authorization: `Bearer ${ctx.service.token(EMAIL)}` };
  // The test's own few requests count against the same account's budget: its waits read the database instead.
  const state = (id: string) => ctx.service.db.prepare('SELECT state FROM servers WHERE id = ?').pluck().get(id);
  const made = await ctx.service.http.post('/v1/servers').set(auth).send({ name: 'Budget', plan: 'micro', version: 'flying-squid-1.20' }).expect(201);
  const { id } = made.body as { id: string };
  await until('installed', () => state(id) === 'stopped', 120_000);
  await ctx.service.http.post(`/v1/servers/${id}/actions`).set(auth).send({ type: 'start' }).expect(202);
  await until('running', () => state(id) === 'running', 120_000);
  const port = ((await ctx.service.http.get(`/v1/servers/${id}`).set(auth)).body as { address: { port: number } }).address.port;

  // Tab A: the server page, loaded (its sections have read what they show, its streams are open).
  const a = await ctx.open(DESKTOP_LIGHT);
  const tabA = record(a.page);
  await a.show(`${ctx.service.origin}/#/servers/${id}`);
  await waitOnPage(a, a.page.locator('#players-count'), { timeout: 60_000 });
  await waitForText(a.page.locator('#now-tps'), /^\d+(\.\d)?$/, 30_000);
  await waitOnPage(a, a.page.locator('#timeline li'), { state: 'attached' }); // in the Activity section, hidden (sections.js)
  await new Promise((r) => setTimeout(r, 5000)); // the last of the loading reads
  const loaded = Date.now();
  const onLoad = tabA.between(0, loaded);

  // Tab B, the same server, and tab C, the server list: the same browser, so they share tab A's events stream.
  const b = await a.context.newPage();
  const tabB = record(b);
  await b.goto(`${ctx.service.origin}/#/servers/${id}`);
  await b.locator('#players-count').waitFor({ timeout: 60_000 });
  const c = await a.context.newPage();
  const tabC = record(c);
  await c.goto(`${ctx.service.origin}/#/servers`);
  await waitForText(c.getByRole('row', { name: /Budget/ }), /running/);
  const cLoaded = Date.now() + 5000;

  // A player joins and leaves: both server tabs list them from the events (B is relayed them by A).
  const bot = mineflayer.createBot({ host: '127.0.0.1', port, username: 'Steve', auth: 'offline', version: '1.20' });
  bots.push(bot);
  await new Promise<void>((resolve, reject) => {
    bot.once('spawn', () => resolve());
    bot.once('error', reject);
  });
  await a.page.locator('[data-player="Steve"]').waitFor({ timeout: 30_000 });
  await b.locator('[data-player="Steve"]').waitFor({ timeout: 30_000 });
  bot.end();
  bots.splice(0);
  await a.page.getByText('Nobody is playing right now.').waitFor({ timeout: 30_000 });

  // A backup made by a script: both pages show it ready, from its events (in their Backups section: a jump there
  // and back reads nothing, sections.js).
  await ctx.service.http.post(`/v1/servers/${id}/backups`).set(auth).send({ name: 'scripted' }).expect(202);
  await showSection(a.page, 'Backups');
  await showSection(b, 'Backups');
  await waitForText(a.page.getByRole('row', { name: /scripted/ }).locator('.backup-status'), /^ready$/, 60_000);
  await waitForText(b.getByRole('row', { name: /scripted/ }).locator('.backup-status'), /^ready$/, 60_000);
  await showSection(a.page, 'Overview');
  await showSection(b, 'Overview');

  // Tab B restarts the game: every tab follows its states; B says how it ended.
  await waitForButtons(b.getByRole('group', { name: 'Actions for Budget' }), ['Stop', 'Restart', 'Kill', 'Delete']);
  await b.getByRole('button', { name: 'Restart Budget', exact: true }).click();
  await waitForText(b.locator('.outcome').first(), /^Restarted Budget\.$/, 120_000);
  await waitForText(a.page.locator('#server-state'), /running/, 60_000);

  // The rest of the three minutes, left open.
  const left = loaded + WINDOW_MS - Date.now();
  if (left > 0) await new Promise((r) => setTimeout(r, left));
  const end = Date.now();
  const after = tabA.between(loaded, end);
  // Within the budget, or the failure says where the requests went.
  const within = (sent: Array<{ what: string }>, from: number) => {
    const perMinute = (sent.length * 60_000) / (end - from);
    return perMinute <= BUDGET_PER_MINUTE ? 'within' : { perMinute, sent: tally(sent) };
  };
  expect(within(after, loaded)).toBe('within');
  // The list beside them, after its own load, keeps within the same budget.
  expect(within(tabC.between(cLoaded, end), cLoaded)).toBe('within');

  // Nobody was refused, and the three tabs held one events stream between them (a second only after an outage).
  expect([...tabA.refused, ...tabB.refused, ...tabC.refused]).toEqual([]);
  const streams = [...tabA.sent, ...tabB.sent, ...tabC.sent].filter((s) => s.what === 'GET /v1/events/stream');
  expect(streams.length).toBeGreaterThanOrEqual(1);
  expect(streams.length).toBeLessThanOrEqual(2);
  expect(onLoad.length).toBeGreaterThan(0);
  expect(a.consoleErrors).toEqual([]);
  await b.close();
  await c.close();
}, 420_000);
