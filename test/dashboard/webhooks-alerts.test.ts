// Webhooks, alert rules and the event timeline from the dashboard in Debian's Chromium: a webhook made in
// Settings delivers to a real HTTP receiver on loopback (its signature checked with the secret the page showed
// once, by the standardwebhooks package), its test event and deliveries show, it can be switched off; a server's
// alert rule added on its page fires on a crash, and the timeline shows both events.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { DESKTOP_DARK, PHONE_LIGHT, dashboardPerTest, EMAIL, showSection, waitOnPage } from './helpers';
import { until } from '../helpers/wait';

const ctx = dashboardPerTest({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' }, webhooks: { pollMs: 50 } });

test('create a webhook, keep its secret, send a test, see the delivery, switch it off', async () => {
  const got: Array<{ headers: http.IncomingHttpHeaders; body: string }> = [];
  const receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      got.push({ headers: req.headers, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  ctx.service.dispatcher.start();
  try {
    const p = await ctx.open(PHONE_LIGHT);
    const { page } = p;
    await p.show(`${ctx.service.origin}/#/servers`);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
    await page.getByText('No webhooks.').waitFor();
    await page.getByLabel('URL').fill(url);
    await page.getByLabel('webhook.disabled').check(); // beside the defaults
    await page.getByRole('button', { name: 'Create webhook' }).click();
    const secret = (await page.locator('#new-webhook-secret').textContent())!;
    expect(secret).toMatch(/^whsec_/);
    await p.screenshot('webhook-created');
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await page.locator('#new-webhook-secret').count()).toBe(0); // shown once, then gone

    const token = ctx.service.token(EMAIL);
    const [hook] = (await ctx.service.http.get('/v1/webhooks').set({ Authorization: `Bearer ${token}` })).body.data;
    expect(hook).toMatchObject({ url, enabled: true });
    expect(hook.event_types).toEqual(expect.arrayContaining(['server.crashed', 'alert.triggered', 'webhook.disabled']));

    await page.getByRole('button', { name: `Send test event to ${url}` }).click();
    await until('the test delivery', async () => got.length === 1, 15_000);
    const verified = new Webhook(secret.slice('whsec_'.length)).verify(got[0].body, got[0].headers as Record<string, string>) as { type: string };
    expect(verified.type).toBe('webhook.test');
    await until('the delivery to show as succeeded', async () => {
      await page.getByRole('button', { name: `Deliveries to ${url}` }).click();
      return (await page.locator('.delivery-status').first().textContent()) === 'succeeded';
    }, 15_000);
    await page.getByRole('row', { name: /webhook\.test/ }).getByText('204').waitFor();

    await page.getByRole('button', { name: `Disable the webhook to ${url}` }).click();
    await page.getByText('disabled', { exact: true }).waitFor();
    expect((await ctx.service.http.get(`/v1/webhooks/${hook.id}`).set({ Authorization: `Bearer ${token}` })).body.enabled).toBe(false);
    expect(p.consoleErrors).toEqual([]);
  } finally {
    receiver.closeAllConnections();
    await new Promise<void>((r) => receiver.close(() => r()));
  }
}, 120_000);

test('an alert rule added on the server page fires on a crash; the timeline shows what happened', async () => {
  const p = await ctx.open(DESKTOP_DARK);
  const { page } = p;
  const token = ctx.service.token(EMAIL);
  const auth = { Authorization: `Bearer ${token}` };
  const { id } = (await ctx.service.http.post('/v1/servers').set(auth).send({ name: 'Watched', plan: 'micro', version: 'flying-squid-1.20' })).body;
  await until('installed', async () => (await ctx.service.http.get(`/v1/servers/${id}`).set(auth)).body.state === 'stopped');

  await p.show(`${ctx.service.origin}/#/servers`);
  await waitOnPage(p, page.getByRole('link', { name: 'Watched' }));
  await page.getByRole('link', { name: 'Watched' }).click();
  await showSection(page, 'Alerts'); // a section of the page (sections.js)
  await waitOnPage(p, page.getByRole('heading', { name: 'Alerts', level: 2 }));
  await page.getByText('No alert rules.').waitFor();

  // A metric rule, then a crash rule.
  await page.getByLabel('Rule name (optional)').fill('Lag');
  await page.getByLabel('Threshold').fill('15');
  await page.getByLabel('For (seconds)').fill('120');
  await page.getByRole('button', { name: 'Add rule' }).click();
  await page.getByRole('row', { name: /“Lag” \(tps below 15 for 120 s\)/ }).waitFor();
  await page.getByLabel('When', { exact: true }).selectOption('crash');
  await page.getByRole('button', { name: 'Add rule' }).click();
  const crashRow = page.getByRole('row', { name: /^any crash/ });
  await crashRow.waitFor();
  const rules = (await ctx.service.http.get(`/v1/servers/${id}/alerts`).set(auth)).body.data;
  expect(rules.map((r: { kind: string; metric?: string; threshold?: number; duration_seconds: number }) => [r.kind, r.metric, r.threshold, r.duration_seconds]))
    .toEqual([['metric', 'tps', 15, 120], ['crash', undefined, undefined, 0]]);

  ctx.service.store.crashes.record(id, { exit_code: 1, signal: null, reason: 'exited', last_lines: [] });
  await until('the crash rule firing on the page', async () => (await crashRow.locator('.alert-state').textContent()) === 'firing', 15_000);
  await page.locator('#timeline li[data-event-type="alert.triggered"]').waitFor({ timeout: 15_000, state: 'attached' }); // the Activity section
  const timeline = await page.locator('#timeline li').evaluateAll((lis) => lis.map((li) => li.getAttribute('data-event-type')));
  expect(timeline.slice(0, 2)).toEqual(['alert.triggered', 'server.crashed']); // newest first
  await p.screenshot('alerts-timeline');

  await page.getByRole('button', { name: 'Delete the rule “Lag” (tps below 15 for 120 s)' }).click();
  await until('the rule gone', async () => (await ctx.service.http.get(`/v1/servers/${id}/alerts`).set(auth)).body.data.length === 1, 15_000);
  expect(p.consoleErrors).toEqual([]);
}, 120_000);
