// A running server's page with a real flying-squid game and a real Minecraft client (mineflayer) on it, from the
// dashboard in Debian's Chromium (issue 38 §3), on a phone in the dark scheme and a laptop in the light one: the
// server-list preview from the game's own status ping (its MOTD, its players), the address copied with a click, a
// new MOTD offered a "Restart now" that really restarts the game and shows in the preview, and a crash (the game
// killed) listed with its console lines. axe-clean and fitting at both.
import { DESKTOP_LIGHT, EMAIL, PHONE_DARK, dashboardPerTest, expectAccessible, expectFits, expectScheme, showSection, waitForText, waitOnPage, type Look } from './helpers';
import { playerBots } from './players';
import { until } from '../helpers/wait';

const LAPTOP_LIGHT: Look = { ...DESKTOP_LIGHT, name: 'laptop, light', viewport: { width: 1280, height: 800 } };
const ctx = dashboardPerTest({ boot: true, runtime: { stopTimeoutMs: 10_000, reconcileMs: 500, backoffMs: 500 } });
const { join } = playerBots();

test('the server-list preview, the address copied, Restart now after a new MOTD, and a crash with its console lines', async () => {
  const auth = { Authorization: `Bearer ${ctx.service.token(EMAIL)}` };
  const get = async (path: string) => (await ctx.service.http.get(path).set(auth)).body;
  const { id } = (await ctx.service.http.post('/v1/servers').set(auth).send({ name: 'Lively', plan: 'micro', version: 'flying-squid-1.20' })).body;
  await until('installed', async () => (await get(`/v1/servers/${id}`)).state === 'stopped', 60_000);
  expect((await ctx.service.http.post(`/v1/servers/${id}/actions`).set(auth).send({ type: 'start' })).status).toBe(202);
  await until('running', async () => (await get(`/v1/servers/${id}`)).state === 'running', 90_000);
  const { address } = await get(`/v1/servers/${id}`);
  await join(address.port, 'Alex');

  const p = await ctx.open(PHONE_DARK);
  const { page } = p;
  await p.show(`${ctx.service.origin}/#/servers/${id}`);
  // The preview is the game's own answer: its default MOTD, and Alex online.
  await waitOnPage(p, page.locator('#server-motd'));
  await waitForText(page.locator('#server-motd'), /^A flying-squid server$/);
  await waitForText(page.locator('#server-preview .meta'), /1\/5 players/);
  expect(await page.getByRole('img', { name: 'No server icon' }).isVisible()).toBe(true);

  // The address, copied with its button.
  const text = `${address.host}:${address.port}`;
  expect(await page.locator('#server-address').inputValue()).toBe(text);
  await p.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: ctx.service.origin });
  await page.getByRole('button', { name: `Copy ${text}` }).click();
  await until('copied', async () => (await page.evaluate(() => navigator.clipboard.readText())) === text, 10_000);

  // A new MOTD reaches the game at its next start: the page offers the restart, which asks first (Alex is online).
  await showSection(page, 'Settings');
  await page.getByLabel(/^Message of the day/).fill('Fresh from the dashboard');
  await page.getByRole('button', { name: 'Save settings' }).click();
  await waitForText(page.locator('#restart-pending'), /^Message of the day waits for the next start\.$/);
  await expectFits(page, 'restart offered (phone, dark)');
  await expectAccessible(page, 'restart offered (phone, dark)');
  await expectScheme(page, PHONE_DARK);
  await p.screenshot('restart-offered');
  const pidBefore = ctx.service.runtime.doors.of(id).live?.pid;
  await page.getByRole('button', { name: 'Restart now' }).click();
  await until('the offer gone', async () => (await page.locator('#restart-now').count()) === 0, 120_000);
  expect(p.dialogs).toEqual(['Restart Lively? 1 player is online (Alex); they are disconnected until it is back.']);
  expect(ctx.service.runtime.doors.of(id).live?.pid).not.toBe(pidBefore);
  expect((await get(`/v1/servers/${id}/settings`)).restart_pending).toEqual([]);
  // Running again, the game answers with the new MOTD.
  await showSection(page, 'Overview');
  await waitForText(page.locator('#server-motd'), /^Fresh from the dashboard$/, 60_000);

  // A crash: the game killed by nobody here. The page lists it when its event comes, with the lines before it.
  await showSection(page, 'Crashes');
  await page.getByRole('heading', { name: 'Crashes', level: 2 }).waitFor();
  await waitOnPage(p, page.getByText('No crashes: the game never stopped without being asked to.'), { also: async () => [await page.locator('#section-crashes').innerText()] });
  const pid = ctx.service.runtime.doors.of(id).live?.pid;
  expect(pid).toBeGreaterThan(0);
  process.kill(pid!, 'SIGKILL');
  const crash = page.locator('.crashes li').first();
  await waitOnPage(p, crash, { timeout: 60_000 });
  const crashes = (await get(`/v1/servers/${id}/crashes`)).data;
  expect(crashes).toHaveLength(1);
  expect(await crash.locator('.crash-reason').textContent()).toBe(`The game exited by itself (${crashes[0].signal ? `signal ${crashes[0].signal}` : `exit code ${crashes[0].exit_code}`}).`);
  await crash.locator('summary').click();
  const lines = await crash.locator('.crash-lines').innerText();
  expect(lines.length).toBeGreaterThan(0);
  expect(crashes[0].last_lines.at(-1)).toContain(lines.split('\n').at(-1)!.trim());
  await expectFits(page, 'a crash opened (phone, dark)');
  await expectAccessible(page, 'a crash opened (phone, dark)');
  await p.screenshot('crash-history');
  // No refusal on the way but, as in server-live.test.ts, a read of who is online that a state change overtook.
  expect(p.consoleErrors.filter((e) => !/status of 409 .*\/players$/.test(e))).toEqual([]);
  expect(p.foreignRequests()).toEqual([]);
  await p.close();

  // On a laptop, light: the crash and the preview (the crash policy started the game again).
  await until('running again', async () => (await get(`/v1/servers/${id}`)).state === 'running', 90_000);
  const q = await ctx.open(LAPTOP_LIGHT);
  await q.show(`${ctx.service.origin}/#/servers/${id}`);
  await waitForText(q.page.locator('#server-motd'), /^Fresh from the dashboard$/, 30_000);
  await expectFits(q.page, 'the preview (laptop, light)');
  await expectAccessible(q.page, 'the preview (laptop, light)');
  await showSection(q.page, 'Crashes');
  await waitOnPage(q, q.page.locator('.crashes li'));
  await expectFits(q.page, 'the crashes (laptop, light)');
  await expectAccessible(q.page, 'the crashes (laptop, light)');
  await expectScheme(q.page, LAPTOP_LIGHT);
  expect(q.consoleErrors.filter((e) => !/status of 409 .*\/players$/.test(e))).toEqual([]);
}, 400_000);
