// A server's backups from the dashboard in Debian's Chromium, on a phone in the dark scheme (the other sizes and
// schemes: looks.test.ts): back up a real flying-squid server's world, hear how it ended with its size in the unit
// that reads best, download the archive (its bytes match the backup's SHA-256), restore it (after the
// confirmation), delete it.
import crypto from 'node:crypto';
import fs from 'node:fs';
import { PHONE_DARK, dashboardPerTest, EMAIL, showSection, sizeText, waitForText } from './helpers';
import { until } from '../helpers/wait';

const ctx = dashboardPerTest({ boot: true });

test('back up, download, restore and delete a backup from the server page', async () => {
  const p = await ctx.open(PHONE_DARK);
  const { page } = p;
  const token = ctx.service.token(EMAIL);
  const auth = { Authorization: `Bearer ${token}` };
  const { id } = (await ctx.service.http.post('/v1/servers').set(auth).send({ name: 'Kept', plan: 'micro', version: 'flying-squid-1.20' })).body;
  await until('installed', async () => (await ctx.service.http.get(`/v1/servers/${id}`).set(auth)).body.state === 'stopped');

  await p.show(`${ctx.service.origin}/#/servers`);
  await page.getByRole('link', { name: 'Kept' }).click();
  await showSection(page, 'Backups'); // a section of the page (sections.js)
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
  // How it ended, with its size in the unit that reads best (a fresh world's archive is bytes, not "0 MiB").
  const size = sizeText(backup.size_bytes);
  expect(size).toMatch(/^\d+ B$|^[\d.]+ KiB$/);
  await waitForText(page.locator('section[aria-labelledby="backups-title"] .outcome'), /^The backup “first” of Kept is ready/);
  expect(await page.locator('section[aria-labelledby="backups-title"] .outcome').textContent()).toBe(`The backup “first” of Kept is ready (${size}).`);
  expect(await row.locator('.backup-size').textContent()).toBe(size);
  await p.screenshot('backups');

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

  expect(p.foreignRequests()).toEqual([]);
  expect(p.consoleErrors).toEqual([]);
}, 180_000);
