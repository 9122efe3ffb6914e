// Deleting a server with "keep backups", and the account's kept backups (#/backups: listKeptBackups,
// getKeptBackupArchive, deleteKeptBackup, a restore into a new server), from the dashboard in Debian's Chromium
// (issue 38 §3): on a phone in the dark scheme the delete dialog keeps a real flying-squid server's backup, the
// Backups page lists it, downloads it (its bytes match its SHA-256) and restores it into a new server of the same
// version; on a laptop in the light scheme it is deleted. axe-clean and fitting at both.
import crypto from 'node:crypto';
import fs from 'node:fs';
import { DESKTOP_LIGHT, EMAIL, PHONE_DARK, dashboardPerTest, expectAccessible, expectFits, expectScheme, waitForText, waitOnPage, type Look } from './helpers';
import { until } from '../helpers/wait';

const LAPTOP_LIGHT: Look = { ...DESKTOP_LIGHT, name: 'laptop, light', viewport: { width: 1280, height: 800 } };
const ctx = dashboardPerTest({ boot: true });

test('delete a server keeping its backup, then download, restore into a new server and delete the kept backup', async () => {
  const auth = { Authorization: `Bearer ${ctx.service.token(EMAIL)}` };
  const get = async (path: string) => ctx.service.http.get(path).set(auth);
  const { id } = (await ctx.service.http.post('/v1/servers').set(auth).send({ name: 'Old world', plan: 'micro', version: 'flying-squid-1.20' })).body;
  await until('installed', async () => (await get(`/v1/servers/${id}`)).body.state === 'stopped', 60_000);
  const made = (await ctx.service.http.post(`/v1/servers/${id}/backups`).set(auth).send({ name: 'before the flood' })).body;
  await until('the backup ready', async () => (await get(`/v1/servers/${id}/backups/${made.id}`)).body.status === 'ready', 60_000);

  const p = await ctx.open(PHONE_DARK);
  const { page } = p;
  await p.show(`${ctx.service.origin}/#/servers/${id}`);
  await waitOnPage(p, page.getByRole('button', { name: 'Delete Old world', exact: true }));
  await page.getByRole('button', { name: 'Delete Old world', exact: true }).click();
  const dialog = page.getByRole('dialog', { name: 'Delete Old world?' });
  await dialog.waitFor();
  // The safe choice has the focus, as confirm() gives it; the choice to keep is said in words.
  expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel');
  await expectAccessible(page, 'the delete dialog (phone, dark)');
  await dialog.getByLabel('Keep its backups in my account').check();
  await p.screenshot('delete-keep-backups');
  await dialog.getByRole('button', { name: 'Delete for good' }).click();
  await page.getByRole('heading', { name: 'Servers', level: 1 }).waitFor({ timeout: 30_000 });
  await page.locator('.toast', { hasText: 'Deleting Old world… Its backups are kept under Backups.' }).waitFor();
  await until('the server gone', async () => (await get(`/v1/servers/${id}`)).status === 404, 60_000);
  const kept = (await get('/v1/backups')).body.data;
  expect(kept).toEqual([expect.objectContaining({ id: made.id, server_name: 'Old world', name: 'before the flood', version: 'flying-squid-1.20' })]);

  // The Backups page, from the navigation.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Backups' }).click();
  await page.getByRole('heading', { name: 'Kept backups', level: 1 }).waitFor();
  const row = page.getByRole('row', { name: /before the flood/ });
  await waitForText(row, /Old world/);
  expect(await row.innerText()).toMatch(/Minecraft Java Edition 1\.20/);
  await expectFits(page, 'kept backups (phone, dark)');
  await expectAccessible(page, 'kept backups (phone, dark)');
  await expectScheme(page, PHONE_DARK);

  const [file] = await Promise.all([page.waitForEvent('download'), row.getByRole('button', { name: 'Download before the flood' }).click()]);
  expect(file.suggestedFilename()).toBe(`${made.id}.tar.gz`);
  const bytes = fs.readFileSync((await file.path())!);
  expect(crypto.createHash('sha256').update(bytes).digest('hex')).toBe(kept[0].sha256);

  // Restore into a new server: it is made, installed, and the backup restored into it.
  await row.getByRole('button', { name: 'Restore before the flood…' }).click();
  const form = page.locator('form[aria-labelledby="restore-title"]');
  expect(await form.getByLabel('Restore into').inputValue()).toBe('');
  expect(await form.getByLabel('Name of the new server').inputValue()).toBe('Old world (restored)');
  await expectAccessible(page, 'the restore form (phone, dark)');
  await form.getByLabel('Name of the new server').fill('New world');
  await form.getByLabel('Plan').selectOption('micro');
  await form.getByRole('button', { name: 'Restore' }).click();
  await waitForText(page.locator('main .outcome'), /^Restored “before the flood” into New world\. Open New world$/, 120_000);
  const servers = (await get('/v1/servers')).body.data;
  expect(servers).toEqual([expect.objectContaining({ name: 'New world', version: 'flying-squid-1.20', state: 'stopped' })]);
  const actions = (await get(`/v1/servers/${servers[0].id}/actions`)).body.data;
  expect(actions[0]).toMatchObject({ type: 'restore', status: 'succeeded' });
  await page.getByRole('link', { name: 'Open New world' }).click();
  await page.getByRole('heading', { name: 'New world', level: 1 }).waitFor();
  expect(p.consoleErrors).toEqual([]);
  expect(p.foreignRequests()).toEqual([]);
  await p.close();

  // On a laptop, light: the kept backup is still listed (a restore keeps it); delete it.
  const q = await ctx.open(LAPTOP_LIGHT);
  await q.show(`${ctx.service.origin}/#/backups`);
  await waitOnPage(q, q.page.getByRole('row', { name: /before the flood/ }));
  await expectFits(q.page, 'kept backups (laptop, light)');
  await expectAccessible(q.page, 'kept backups (laptop, light)');
  await expectScheme(q.page, LAPTOP_LIGHT);
  await q.page.getByRole('button', { name: 'Delete before the flood' }).click();
  expect(q.dialogs).toEqual(['Delete the kept backup “before the flood” of Old world? Its archive is gone for good.']);
  await q.page.getByText('No kept backups. When you delete a server you can keep its backups here.').waitFor();
  expect((await get('/v1/backups')).body.data).toEqual([]);
  expect(q.consoleErrors).toEqual([]);
}, 300_000);
