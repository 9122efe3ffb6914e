// The server page's activity log (issue 38 §4; src/dashboard/public/js/activity.js) in Debian's Chromium, against a
// real flying-squid game: a member bans a real Minecraft client (mineflayer) who is online, the owner changes a
// setting, a schedule restarts the game; the log says each in words with who did it, never an event's type name,
// and its filter (a labelled select) shows one kind, re-reading it with listEvents' `type` filter. On a phone in the
// dark scheme and a desktop in the light one: it fits, axe finds nothing serious.
import mineflayer from 'mineflayer';
import type { Page } from 'playwright-core';
import { addAccount, dashboardPerTest, EMAIL, expectAccessible, expectFits, expectScheme, PHONE_DARK, DESKTOP_LIGHT, waitOnPage, type Look } from './helpers';
import { until } from '../helpers/wait';
import { loadSpec } from '../../src/spec';

jest.setTimeout(240_000);

const ctx = dashboardPerTest({ boot: true, runtime: { stopTimeoutMs: 10_000, reconcileMs: 500 } });
const DESKTOP_800: Look = { ...DESKTOP_LIGHT, name: 'desktop 1280×800, light', viewport: { width: 1280, height: 800 } };
const MOD = 'sam@example.com';
const eventTypes: string[] = (loadSpec().document as { components: { schemas: Record<string, { enum: string[] }> } }).components.schemas.EventType.enum;

const bots: mineflayer.Bot[] = [];
afterEach(() => {
  for (const b of bots.splice(0)) b.end();
});

/** The log's lines as the reader sees them (each a time, then its sentence), and their event types. */
async function lines(page: Page): Promise<Array<{ type: string | null; text: string }>> {
  return page.locator('#timeline li').evaluateAll((lis) => lis.map((li) => ({ type: li.getAttribute('data-event-type'), text: li.querySelector('.what')?.textContent ?? li.textContent ?? '' })));
}

/** Waits for a line of the log that reads `want`. */
async function line(page: Page, want: string, timeout = 60_000) {
  await until(`the activity says “${want}”`, async () => (await lines(page)).some((l) => l.text === want), timeout);
}

test('bans, settings and a schedule run in words with who did them; the filter shows one kind', async () => {
  const owner = { Authorization: `Bearer ${ctx.service.token(EMAIL)}` };
  const api = ctx.service.http;
  const made = await api.post('/v1/servers').set(owner).send({ name: 'Activity', plan: 'micro', version: 'flying-squid-1.20' });
  expect(made.status).toBe(201);
  const id: string = made.body.id;
  const state = async () => (await api.get(`/v1/servers/${id}`).set(owner)).body.state as string;
  await until('installed', async () => (await state()) === 'stopped', 120_000);
  // Sam moderates: a member with `players` (an account, active once they use the server).
  addAccount(ctx.service.db, MOD);
  expect((await api.post(`/v1/servers/${id}/members`).set(owner).send({ email: MOD, permissions: ['players'] })).status).toBe(201);
  const mod = { Authorization: `Bearer ${ctx.service.token(MOD)}` };
  expect((await api.post(`/v1/servers/${id}/actions`).set(owner).send({ type: 'start' })).status).toBe(202);
  await until('running', async () => (await state()) === 'running', 120_000);

  // Alex joins for real; Sam bans them while they play (the game kicks them).
  const port = (await api.get(`/v1/servers/${id}`).set(owner)).body.address.port;
  const bot = mineflayer.createBot({ host: '127.0.0.1', port, username: 'Alex', auth: 'offline', version: '1.20', hideErrors: true });
  bots.push(bot);
  bot.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    bot.once('spawn', () => resolve());
    bot.once('kicked', (reason) => reject(new Error(`kicked: ${reason}`)));
  });
  const gone = new Promise<void>((resolve) => bot.once('end', () => resolve()));
  expect((await api.put(`/v1/servers/${id}/players/bans/Alex`).set(mod)).status).toBe(200);
  await gone;
  expect((await api.patch(`/v1/servers/${id}/settings`).set(owner).send({ difficulty: 'hard' })).status).toBe(200);

  // The phone, dark: each change in words, who did it named, no type name anywhere in the log.
  const p = await ctx.open(PHONE_DARK);
  const { page } = p;
  await p.show(`${ctx.service.origin}/#/servers/${id}/activity`); // a section of the page (sections.js)
  await waitOnPage(p, page.getByRole('heading', { name: 'Activity', level: 2 }), { timeout: 60_000 });
  await line(page, `Alex was banned by ${MOD}`);
  await line(page, 'You changed the setting difficulty to "hard"');
  await line(page, 'Alex joined');
  await line(page, 'You started the server');
  const all = await lines(page);
  expect(all.filter((l) => eventTypes.some((type) => l.text.includes(type)))).toEqual([]);
  expect(all.filter((l) => /cannot describe/.test(l.text))).toEqual([]);
  await p.page.locator('#timeline').scrollIntoViewIfNeeded();
  await expectScheme(page, PHONE_DARK);
  await expectFits(page, 'activity, phone');
  await expectAccessible(page, 'activity, phone');
  await p.screenshot('activity-phone-dark');

  // The filter: a labelled select; Players re-reads the players' types (listEvents `type`), Settings its one.
  const show = page.getByLabel('Kind of activity');
  await show.selectOption({ label: 'Players' });
  await until('only players', async () => {
    const shown = await lines(page);
    return shown.length > 0 && shown.every((l) => ['player.joined', 'player.left', 'player_list.changed'].includes(l.type ?? ''));
  }, 20_000);
  await line(page, `Alex was banned by ${MOD}`);
  expect(p.requests.some((u) => u.includes(`server_id=${id}`) && u.includes('type=player_list.changed'))).toBe(true);
  await show.selectOption({ label: 'Settings' });
  await until('only settings', async () => {
    const shown = await lines(page);
    return shown.length === 1 && shown[0].text === 'You changed the setting difficulty to "hard"';
  }, 20_000);
  expect(p.requests.some((u) => u.includes('type=settings.changed'))).toBe(true);
  // By the keyboard: the select takes focus by Tab order and arrow keys change the kind.
  await show.focus();
  await page.keyboard.press('ArrowDown'); // Backups
  await until('backups chosen', async () => (await show.inputValue()) === 'backups', 10_000);
  await page.getByText('Nothing of this kind yet.').waitFor({ timeout: 20_000 });
  await expectAccessible(page, 'activity filtered, phone');
  expect(p.consoleErrors).toEqual([]);

  // A schedule restarts the game: the desktop, light, names the schedule as who did it, live and filtered.
  const desk = await ctx.open(DESKTOP_800);
  await desk.show(`${ctx.service.origin}/#/servers/${id}/activity`);
  await waitOnPage(desk, desk.page.getByRole('heading', { name: 'Activity', level: 2 }), { timeout: 60_000 });
  await line(desk.page, `Alex was banned by ${MOD}`);
  const schedule = await api.post(`/v1/servers/${id}/schedules`).set(owner).send({ name: 'Nightly restart', cron: '0 4 * * *', tasks: [{ type: 'power', action: 'restart' }] });
  expect(schedule.status).toBe(201);
  await desk.page.reload(); // the page knows schedules' names from its read (a schedule made elsewhere is named after it)
  await waitOnPage(desk, desk.page.getByRole('heading', { name: 'Activity', level: 2 }), { timeout: 60_000 });
  expect((await api.post(`/v1/servers/${id}/schedules/${schedule.body.id}/run`).set(owner)).status).toBe(202);
  await line(desk.page, 'The schedule Nightly restart restarted the server', 120_000);
  await line(desk.page, 'The schedule Nightly restart ran', 60_000);
  await desk.page.getByLabel('Kind of activity').selectOption({ label: 'Schedules' });
  await until('only the schedule', async () => {
    const shown = await lines(desk.page);
    return shown.length === 1 && shown[0].text === 'The schedule Nightly restart ran';
  }, 20_000);
  await expectScheme(desk.page, DESKTOP_800);
  await expectFits(desk.page, 'activity, desktop');
  await expectAccessible(desk.page, 'activity, desktop');
  await desk.screenshot('activity-desktop-light');
  expect(desk.consoleErrors).toEqual([]);
});
