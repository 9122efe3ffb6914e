// A server's backups from the dashboard in Debian's Chromium: back up a real flying-squid server's world, download
// the archive (its bytes match the backup's SHA-256), restore it (after the confirmation), delete it.
// Game ports 29410-29414.
import crypto from 'node:crypto';
import fs from 'node:fs';
import type { Locator } from 'playwright-core';
import { dashboardPerTest, EMAIL, signInThroughUi } from './helpers';
import { until } from '../helpers/wait';

const ctx = dashboardPerTest({ boot: true, env: { GAME_PORT_RANGE: '29410-29414' } });

test('back up, download, restore and delete a backup from the server page', async () => {
  const { page } = ctx.browser;
  const token = ctx.service.token(EMAIL);
  const auth = { Authorization: `Bearer ${token}` };
  const { id } = (await ctx.service.http.post('/v1/servers').set(auth).send({ name: 'Kept', plan: 'micro', version: 'flying-squid-1.20' })).body;
  await until('installed', async () => (await ctx.service.http.get(`/v1/servers/${id}`).set(auth)).body.state === 'stopped');

  await signInThroughUi(page, ctx.service.origin);
  await page.getByRole('heading', { name: 'Servers', level: 1 }).waitFor();
  await page.getByRole('link', { name: 'Kept' }).click();
  await page.getByRole('heading', { name: 'Backups', level: 2 }).waitFor();
  await page.getByText('No backups yet.').waitFor();
  // flying-squid backs up live (its VersionDetail.backup): said before the click.
  await page.getByText('Players stay connected while a backup is made.').waitFor();

  await page.getByLabel('Backup name (optional)').fill('first');
  await page.getByRole('button', { name: 'Back up now' }).click();
  const row = page.getByRole('row', { name: /first/ });
  await waitForText(row.locator('.backup-status'), /^ready$/, 60_000);
  const backup = (await ctx.service.http.get(`/v1/servers/${id}/backups`).set(auth)).body.data[0];
  expect(backup).toMatchObject({ name: 'first', status: 'ready' });
  await ctx.browser.screenshot('backups');

  // The download is the archive itself.
  const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download first' }).click()]);
  expect(file.suggestedFilename()).toBe(`${backup.id}.tar.gz`);
  const bytes = fs.readFileSync((await file.path())!);
  expect(bytes.length).toBe(backup.size_bytes);
  expect(crypto.createHash('sha256').update(bytes).digest('hex')).toBe(backup.sha256);

  // Restore asks first (the helper's dialog handler accepts), then runs as an action.
  await page.getByRole('button', { name: 'Restore first' }).click();
  await waitForText(page.getByText(/Restored first\.|Restoring first failed/), /Restored first\./, 60_000);
  const actions = (await ctx.service.http.get(`/v1/servers/${id}/actions`).set(auth)).body.data;
  expect(actions[0]).toMatchObject({ type: 'restore', status: 'succeeded' });

  await page.getByRole('button', { name: 'Delete first' }).click();
  await page.getByText('No backups yet.').waitFor();
  expect((await ctx.service.http.get(`/v1/servers/${id}/backups`).set(auth)).body.data).toEqual([]);

  expect(ctx.browser.foreignRequests(ctx.service.origin)).toEqual([]);
  expect(ctx.browser.consoleErrors).toEqual([]);
}, 180_000);

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
