// Everything the API does to a server itself, from the dashboard in Debian's Chromium (issue 38 §3), on a phone in
// the dark scheme and a laptop in the light one, axe-clean: rename it, change its plan (offered only while the game
// is stopped, saying why otherwise: a real flying-squid runs meanwhile), its idle stop and its automatic backups
// (every N hours or a cron, how many to keep, a refused value at its field), all checked through the API.
import { DESKTOP_LIGHT, EMAIL, PHONE_DARK, dashboardPerTest, expectAccessible, expectFits, expectScheme, waitForText, waitOnPage, type Look } from './helpers';
import { until } from '../helpers/wait';

const LAPTOP_LIGHT: Look = { ...DESKTOP_LIGHT, name: 'laptop, light', viewport: { width: 1280, height: 800 } };
const ctx = dashboardPerTest({ boot: true, runtime: { stopTimeoutMs: 10_000 } });

test('rename, change the plan only while stopped, set the idle stop and the automatic backups', async () => {
  const auth = { Authorization: `Bearer ${ctx.service.token(EMAIL)}` };
  const get = async (path: string) => (await ctx.service.http.get(path).set(auth)).body;
  const { id } = (await ctx.service.http.post('/v1/servers').set(auth).send({ name: 'Handled', plan: 'micro', version: 'flying-squid-1.20' })).body;
  await until('installed', async () => (await get(`/v1/servers/${id}`)).state === 'stopped', 60_000);

  for (const [i, look] of [PHONE_DARK, LAPTOP_LIGHT].entries()) {
    const p = await ctx.open(look);
    const { page } = p;
    await p.show(`${ctx.service.origin}/#/servers/${id}/manage`); // its section (sections.js)
    const manage = page.locator('section[aria-labelledby="manage-title"]');
    await waitOnPage(p, manage.getByLabel('Server name'));
    const plan = manage.getByLabel('Plan', { exact: true });

    if (i === 1) {
      // The game runs (started at the end of the phone's turn): the plan is shown, not offered, and the page says why.
      expect(await plan.isDisabled()).toBe(true);
      expect(await manage.locator('#manage-plan-help').textContent())
        .toBe('The plan can change only while the server is stopped or crashed: a running game keeps the memory it started with. It is running now; stop it first.');
      await expectAccessible(page, `manage, running (${look.name})`);
      expect((await ctx.service.http.post(`/v1/servers/${id}/actions`).set(auth).send({ type: 'stop' })).status).toBe(202);
      // The stop reaches the page through its events: the plan is offered again.
      await until('the plan offered', async () => !(await plan.isDisabled()), 60_000);
      expect(await manage.locator('#manage-plan-help').textContent()).toMatch(/^A larger plan counts against/);
    }

    // Rename and change the plan in one save.
    await manage.getByLabel('Server name').fill(`Handled ${i + 2}`);
    await plan.selectOption(i === 0 ? 'small' : 'micro');
    await manage.getByRole('button', { name: 'Save name and plan' }).click();
    const planName = i === 0 ? 'Small' : 'Micro';
    await waitForText(manage.locator('.outcome').first(), new RegExp(`^Renamed to Handled ${i + 2}\\. The plan is now ${planName}\\.$`));
    await waitForText(page.locator('h1'), new RegExp(`^Handled ${i + 2}$`));
    // The facts (in the Overview section, hidden meanwhile) say the new plan at once.
    await until('the plan in the facts', async () => (await page.locator('#server-plan').textContent())?.startsWith(`${planName}: `), 20_000);
    expect(await get(`/v1/servers/${id}`)).toMatchObject({ name: `Handled ${i + 2}`, plan: i === 0 ? 'small' : 'micro' });

    // An empty name is refused at its field, in words.
    await manage.getByLabel('Server name').fill('');
    await manage.getByRole('button', { name: 'Save name and plan' }).click();
    await waitForText(page.locator('#manage-name-error'), /^Give the server a name\.$/);
    await manage.getByLabel('Server name').fill(`Handled ${i + 2}`);

    // Idle stop and automatic backups: 0 hours is refused at its field; then every 12 hours keeping 1.
    const auto = page.locator('form[aria-labelledby="automatic-title"]');
    await auto.getByLabel('Stop the server when nobody has played for a while').check();
    await auto.getByLabel('Minutes without players').fill(String(15 + i));
    await auto.getByLabel('Automatic backups', { exact: true }).selectOption('every');
    await auto.getByLabel('Hours between backups').fill('0');
    await auto.getByRole('button', { name: 'Save idle stop and backups' }).click();
    await waitForText(page.locator('#backup-every-hours-error'), /^The hours between backups must be 1 or more\.$/);
    expect((await get(`/v1/servers/${id}`)).idle_stop_minutes).toBeNull(); // nothing saved
    const where = `manage with an error (${look.name})`;
    await expectFits(page, where);
    await expectAccessible(page, where);
    await expectScheme(page, look);

    await auto.getByLabel('Hours between backups').fill('12');
    await auto.getByLabel('Automatic backups to keep').fill('1');
    await auto.getByRole('button', { name: 'Save idle stop and backups' }).click();
    await waitForText(auto.locator('.outcome'), new RegExp(`^Saved\\. It stops after ${15 + i} minutes without players\\. Automatic backups every 12 hours, keeping the last 1\\.$`));
    expect(await get(`/v1/servers/${id}`)).toMatchObject({ idle_stop_minutes: 15 + i, backup_schedule: { every_hours: 12, keep: 1 } });

    // At set times: the cron is said in words (UTC) as it is typed.
    await auto.getByLabel('Automatic backups', { exact: true }).selectOption('cron');
    await auto.getByLabel('When (cron, in UTC)').fill('30 4 * * *');
    await waitForText(page.locator('#backup-cron-help'), /^Every day at 04:30, UTC\.$/);
    await auto.getByRole('button', { name: 'Save idle stop and backups' }).click();
    await waitForText(auto.locator('.outcome'), /Automatic backups: Every day at 04:30 \(UTC\), keeping the last 1\.$/);
    expect((await get(`/v1/servers/${id}`)).backup_schedule).toEqual({ cron: '30 4 * * *', keep: 1 });
    await p.screenshot(`manage-${i === 0 ? 'phone-dark' : 'laptop-light'}`);

    // Turned off again: no idle stop, no automatic backups.
    await auto.getByLabel('Stop the server when nobody has played for a while').uncheck();
    await auto.getByLabel('Automatic backups', { exact: true }).selectOption('off');
    await auto.getByRole('button', { name: 'Save idle stop and backups' }).click();
    await waitForText(auto.locator('.outcome'), /^Saved\. It is never stopped for being idle\. No automatic backups\.$/);
    expect(await get(`/v1/servers/${id}`)).toMatchObject({ idle_stop_minutes: null, backup_schedule: null });

    // Chromium's lines for the refused PATCHes (the empty name and 0 hours went to the service) are the only ones.
    expect(p.consoleErrors.filter((e) => !/status of 400 .*\/v1\/servers\/srv_\w+$/.test(e))).toEqual([]);
    expect(p.foreignRequests()).toEqual([]);
    if (i === 0) {
      expect((await ctx.service.http.post(`/v1/servers/${id}/actions`).set(auth).send({ type: 'start' })).status).toBe(202);
      await until('running', async () => (await get(`/v1/servers/${id}`)).state === 'running', 90_000);
    }
    await p.close();
  }
}, 300_000);
