// A member's page of a shared server, from the dashboard in Debian's Chromium (issue 38 §3), on a phone in the dark
// scheme (touch: no hover, so nothing may hide in a `title`) and a laptop in the light one: who owns the server
// (ServerAccess.owner_email) and what the member may and may not do, as visible text; a missing control explained
// with whom to ask ("Ask … for the power permission to start it"), also after a setting that waits for a restart
// on a real flying-squid game, which they may not restart. axe-clean and fitting at both.
import { DESKTOP_LIGHT, EMAIL, PHONE_DARK, addAccount, dashboardPerTest, expectAccessible, expectFits, expectScheme, waitForText, waitOnPage, type Look } from './helpers';
import { until } from '../helpers/wait';

const LAPTOP_LIGHT: Look = { ...DESKTOP_LIGHT, name: 'laptop, light', viewport: { width: 1280, height: 800 } };
const ctx = dashboardPerTest({ boot: true, runtime: { stopTimeoutMs: 10_000 } });
const MEMBER = 'friend@example.com';

test('a member reads whose server it is, what they may do, and whom to ask for what they may not', async () => {
  const auth = { Authorization: `Bearer ${ctx.service.token(EMAIL)}` };
  const get = async (path: string) => (await ctx.service.http.get(path).set(auth)).body;
  const { id } = (await ctx.service.http.post('/v1/servers').set(auth).send({ name: 'Together', plan: 'micro', version: 'flying-squid-1.20' })).body;
  await until('installed', async () => (await get(`/v1/servers/${id}`)).state === 'stopped', 60_000);
  addAccount(ctx.service.db, MEMBER);
  expect((await ctx.service.http.post(`/v1/servers/${id}/members`).set(auth).send({ email: MEMBER, permissions: ['console', 'settings'] })).status).toBe(201);

  for (const look of [PHONE_DARK, LAPTOP_LIGHT]) {
    const p = await ctx.open(look, { email: MEMBER });
    const { page } = p;
    await p.show(`${ctx.service.origin}/#/servers/${id}`);
    const access = page.locator('#member-access');
    await waitOnPage(p, access);
    expect(await page.locator('#shared-note').innerText()).toBe('Shared with you by owner@example.com. Every member may see the server, its metrics, its schedules and its activity.');
    // Each permission in words, visible (not a tooltip): held or not, and whom to ask.
    const items = await access.locator('li').allInnerTexts();
    expect(items).toEqual([
      '✓ Console: you may read the console and send commands.',
      '✗ Power: not given: ask owner@example.com for it to start, stop, restart and kill the server.',
      '✓ Settings: you may change its game settings.',
      '✗ Players: not given: ask owner@example.com for it to see who is online, kick players and keep the player lists.',
      '✗ Backups: not given: ask owner@example.com for it to make, download and restore backups.',
      '✗ Alerts: not given: ask owner@example.com for it to set its alert rules.',
      '✗ Files: not given: ask owner@example.com for it to browse, upload, edit and delete its files.',
    ]);
    for (const li of await access.locator('li').all()) expect(await li.isVisible()).toBe(true);
    expect(await access.locator('[title]').count()).toBe(0);
    // No power buttons, and why, where they would be.
    await waitForText(page.locator('#missing-power'), /^Ask owner@example\.com for the power permission to start it\.$/);
    expect(await page.getByRole('button', { name: 'Start Together' }).count()).toBe(0);
    expect(await page.getByRole('heading', { name: 'Manage', level: 2 }).count()).toBe(0);
    await expectFits(page, `member (${look.name})`);
    await expectAccessible(page, `member (${look.name})`);
    await expectScheme(page, look);
    await p.screenshot(`member-access-${look.phone ? 'phone-dark' : 'laptop-light'}`);
    expect(p.consoleErrors).toEqual([]);
    await p.close();
  }

  // The game runs; the member changes a setting that waits for the next start, and may not restart it themselves.
  expect((await ctx.service.http.post(`/v1/servers/${id}/actions`).set(auth).send({ type: 'start' })).status).toBe(202);
  await until('running', async () => (await get(`/v1/servers/${id}`)).state === 'running', 90_000);
  const p = await ctx.open(PHONE_DARK, { email: MEMBER });
  const { page } = p;
  await p.show(`${ctx.service.origin}/#/servers/${id}`);
  await waitForText(page.locator('#missing-power'), /^Ask owner@example\.com for the power permission to stop or restart it\.$/);
  await page.getByRole('navigation', { name: 'Sections of this server' }).getByRole('link', { name: 'Settings' }).click();
  await waitOnPage(p, page.getByLabel(/^Message of the day/));
  await page.getByLabel(/^Message of the day/).fill('Set by a friend');
  await page.getByRole('button', { name: 'Save settings' }).click();
  await waitForText(page.locator('section[aria-labelledby="settings-title"] .restart-offer'),
    /^Message of the day waits for the next start\.\s*Ask owner@example\.com to restart it, or for the power permission to restart it yourself\.$/);
  expect(await page.getByRole('button', { name: 'Restart now' }).count()).toBe(0);
  await expectAccessible(page, 'member after a setting change (phone, dark)');
  expect((await get(`/v1/servers/${id}/settings`)).restart_pending).toEqual(['motd']);
  expect(p.consoleErrors).toEqual([]);
}, 240_000);
