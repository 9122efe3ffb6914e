// An upload in the file manager (src/dashboard/public/js/file-upload.js) waits out a 429 as every other request of
// the page does (api.js withToken → waitedOut; docs/dashboard-budget.md "Past the limits"), in Debian's Chromium over
// real HTTP: with the account's budget used up by a script, the upload's PUT is refused with 429 rate_limited, the
// page says it waits, and the same bytes are sent again once Retry-After has passed and land whole. SFTP is off
// here, which the page's SFTP panel says.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { DESKTOP_LIGHT, EMAIL, dashboardPerTest, waitForText, waitOnPage } from './helpers';
import { tempDirsOfFile } from '../helpers/app';
import { until } from '../helpers/wait';

// A small budget in a short window: the script below can use it up, and the wait is seconds.
const ctx = dashboardPerTest({ env: { RATE_LIMIT_PER_MINUTE: '30', RATE_LIMIT_WINDOW_S: '10' } });
const tmp = tempDirsOfFile('files-upload-wait');

test('an upload refused with 429 rate_limited is sent again after Retry-After and lands whole', async () => {
  const auth = { Authorization: `Bearer ${ctx.service.token(EMAIL)}` };
  const { id } = (await ctx.service.http.post('/v1/servers').set(auth).send({ name: 'Busy', plan: 'micro', version: 'flying-squid-1.20' })).body as { id: string };
  await until('installed', async () => (await ctx.service.http.get(`/v1/servers/${id}`).set(auth)).body.state === 'stopped', 60_000);
  const p = await ctx.open(DESKTOP_LIGHT);
  const { page } = p;
  const puts: number[] = [];
  page.on('response', (r) => void (r.request().method() === 'PUT' && new URL(r.url()).pathname.endsWith('/files/content') && puts.push(r.status())));
  await p.show(`${ctx.service.origin}/#/servers/${id}/files`);
  await waitOnPage(p, page.locator('.file-list tbody tr').first(), { timeout: 40_000 });
  // SFTP is off (jest's default): the panel says so, from getServerSftp's 404 sftp_disabled.
  await waitForText(page.locator('#sftp-off'), /^This service runs no SFTP server: its operator turned it off\./);

  // A script of the same account uses up what is left of the window.
  let refused = 0;
  for (let i = 0; i < 40 && !refused; i++) refused = (await ctx.service.http.get('/v1/quota').set(auth)).status === 429 ? 1 : 0;
  expect(refused).toBe(1);

  const dir = tmp();
  const bytes = crypto.randomBytes(64 * 1024);
  fs.writeFileSync(path.join(dir, 'plugin.jar'), bytes);
  const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.getByRole('button', { name: 'Upload files' }).click()]);
  await chooser.setFiles(path.join(dir, 'plugin.jar'));
  // Said while it waits, in the page's words for every 429 (a message that leaves by itself: read while it is there).
  const toast = page.locator('#status .toast', { hasText: 'too many requests' });
  await waitOnPage(p, toast, { timeout: 20_000 });
  expect(await toast.first().textContent()).toMatch(/^Your account has made too many requests just now \(at most 30 every 10 seconds, .*\)\. This page waits \d+ seconds and tries again\.$/);
  await waitForText(page.locator('.upload-progress'), /^Uploaded 1 file \(64 KiB\)\.$/, 40_000);
  expect(puts).toEqual([429, 201]);
  const stored = fs.readFileSync(path.join(ctx.service.config.dataDir, 'servers', id, 'plugin.jar'));
  expect(stored.equals(bytes)).toBe(true);
  expect(await page.locator('.outcome .error').count()).toBe(0);
  // Chromium logs every 4xx answer: the refused ones (the upload's and any read that waited with it) and the SFTP
  // panel's 404; nothing else went wrong.
  const expected = (e: string) => /status of 429/.test(e) || /status of 404 .*\/v1\/servers\/srv_\w+\/sftp$/.test(e);
  expect(p.consoleErrors.filter((e) => !expected(e))).toEqual([]);
}, 120_000);
