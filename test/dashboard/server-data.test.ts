// A server's settings form (built from the software's setting schemas) and its player lists, from the dashboard in
// Debian's Chromium, checked through the API. Game ports 29415-29419.
import { dashboardPerTest, EMAIL, signInThroughUi } from './helpers';
import { until } from '../helpers/wait';

const ctx = dashboardPerTest({ boot: true, env: { GAME_PORT_RANGE: '29415-29419' } });

test('change settings through the generated form, and keep a whitelist', async () => {
  const { page } = ctx.browser;
  const auth = { Authorization: `Bearer ${ctx.service.token(EMAIL)}` };
  const get = (path: string) => ctx.service.http.get(path).set(auth);
  const { id } = (await ctx.service.http.post('/v1/servers').set(auth).send({ name: 'Tuned', plan: 'micro', version: 'flying-squid-1.20' })).body;
  await until('installed', async () => (await get(`/v1/servers/${id}`)).body.state === 'stopped');
  const before = (await get(`/v1/servers/${id}/settings`)).body.values;

  await signInThroughUi(page, ctx.service.origin);
  await page.getByRole('link', { name: 'Tuned' }).click();
  await page.getByRole('heading', { name: 'Settings', level: 2 }).waitFor();

  // One control per setting the software defines, of the kind its schema says.
  const settings = (await get('/v1/versions/flying-squid-1.20')).body.settings as Array<{ name: string; schema: { type: string; enum?: unknown[] } }>;
  for (const d of settings) await page.locator(`#setting-${d.name}`).waitFor();
  expect(await page.locator('#setting-difficulty').evaluate((el) => el.tagName)).toBe('SELECT');
  expect(await page.locator('#setting-pvp').getAttribute('type')).toBe('checkbox');

  await page.locator('#setting-motd').fill('Made in the dashboard');
  await page.locator('#setting-difficulty').selectOption('peaceful');
  await page.locator('#setting-pvp').setChecked(!before.pvp);
  await page.getByRole('button', { name: 'Save settings' }).click();
  await page.locator('section[aria-labelledby="settings-title"]').getByText(/^Settings saved\./).waitFor();
  expect((await get(`/v1/servers/${id}/settings`)).body.values).toMatchObject({ motd: 'Made in the dashboard', difficulty: 'peaceful', pvp: !before.pvp });

  // Player lists: add, switch the whitelist on, remove.
  await page.getByRole('heading', { name: 'Whitelist', level: 3 }).waitFor();
  await page.getByLabel('Player to add to whitelist').fill('Steve');
  await page.locator('[data-list="whitelist"]').getByRole('button', { name: 'Add' }).click();
  await page.getByRole('button', { name: 'Remove Steve from whitelist' }).waitFor();
  await page.getByLabel('Whitelist on').check();
  await until('the whitelist on', async () => (await get(`/v1/servers/${id}/players/whitelist`)).body.enabled === true);
  expect((await get(`/v1/servers/${id}/players/whitelist`)).body.data.map((e: { name: string }) => e.name)).toEqual(['Steve']);
  await ctx.browser.screenshot('server-data');
  await page.getByRole('button', { name: 'Remove Steve from whitelist' }).click();
  await until('Steve gone', async () => (await get(`/v1/servers/${id}/players/whitelist`)).body.data.length === 0);

  expect(ctx.browser.foreignRequests(ctx.service.origin)).toEqual([]);
  expect(ctx.browser.consoleErrors).toEqual([]);
}, 180_000);
