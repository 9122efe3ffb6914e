// The catalog and the account's quotas on the Servers page, in Debian's Chromium at both sizes in both schemes
// (issue 29): versions grouped by game and named by game version (newest first), plans with their RAM, CPU, slots,
// disk and backups, the world (creation-only settings) chosen in the form, servers listed by game and plan name,
// quota use (servers, running, memory) that follows each create, and a create past the memory quota refused with
// the service's reason. No game is started.
import { EMAIL, LOOKS, dashboardPerTest, expectAccessible, expectFits, expectScheme, waitForText, waitOnPage } from './helpers';

const ctx = dashboardPerTest({ env: { QUOTA_SERVERS: '10', QUOTA_RUNNING_SERVERS: '2', QUOTA_MEMORY_MB: '2048' } });
const MEMORY = ['512 MiB', '1 GiB', '1.5 GiB', '2 GiB'];
const WORLDS = ['grass_field', 'nether', 'empty'];

test('create by name at every size and scheme; quota use follows; past the memory quota it is refused', async () => {
  for (const [i, look] of LOOKS.entries()) {
    const p = await ctx.open(look);
    const { page, consoleErrors } = p;
    await p.show(`${ctx.service.origin}/#/servers`);
    const picker = page.getByLabel('Version');
    await waitOnPage(p, picker.locator('option'), { state: 'attached' });
    const groups = await picker.locator('optgroup').evaluateAll((els) => els.map((g) => [g.getAttribute('label'), g.children.length]));
    expect(groups.map(([label]) => label)).toEqual(['Minecraft Java Edition', 'Luanti']);
    expect(groups.every(([, n]) => Number(n) > 0)).toBe(true);
    expect(await picker.inputValue()).toBe('flying-squid-1.21.4'); // the newest Minecraft version is the default
    expect(await page.getByLabel('Plan').locator('option').allTextContents()).toEqual([
      'Micro: 512 MiB RAM · 0.5 CPU cores · 5 players · 2 GiB disk · 2 backups',
      'Small: 1 GiB RAM · 1 CPU core · 10 players · 5 GiB disk · 5 backups',
      'Medium: 2 GiB RAM · 2 CPU cores · 25 players · 10 GiB disk · 10 backups',
      'Large: 4 GiB RAM · 4 CPU cores · 60 players · 20 GiB disk · 20 backups',
    ]);

    // The last one is a Luanti server, whose software has no creation-only settings: the form hides the world.
    const luanti = i === LOOKS.length - 1;
    await page.getByLabel('Name', { exact: true }).fill(`World ${i}`);
    await page.getByLabel('Plan').selectOption('micro');
    const world = page.locator('#creation-settings');
    if (luanti) {
      await picker.selectOption('luanti-5.6.1');
      await world.waitFor({ state: 'hidden' });
    } else {
      // The world is chosen while the picked version's settings are still on their way (held here until then):
      // their answer redraws the fields and must keep the choice (it used to put the default back).
      await world.waitFor();
      let release = (): void => undefined;
      const held = new Promise<void>((resolve) => (release = resolve));
      await page.route('**/v1/versions/flying-squid-1.20', async (route) => { await held; await route.continue(); });
      await picker.selectOption('flying-squid-1.20');
      const before = await page.getByLabel('World type').elementHandle();
      await page.getByLabel('World type').selectOption(WORLDS[i]);
      release();
      await before!.waitForElementState('hidden'); // redrawn for 1.20
      expect(await page.getByLabel('World type').inputValue()).toBe(WORLDS[i]);
      expect(await world.locator('legend').textContent()).toBe('World: chosen now, it cannot change later');
      expect(await page.locator('[data-field="create-seed"] .limit').textContent()).toBe('1 to 2147483647');
    }
    await page.getByRole('button', { name: 'Create server' }).click();
    const row = page.getByRole('row', { name: new RegExp(`World ${i}`) });
    await row.waitFor();
    expect(await row.innerText()).toMatch(luanti ? /:\d+ \(UDP\)[\s\S]*Luanti 5\.6\.1[\s\S]*Micro/ : /Minecraft Java Edition 1\.20[\s\S]*Micro/);
    await waitForText(page.locator('[data-quota="servers"]'), new RegExp(`${i + 1} of 10$`));
    await waitForText(page.locator('[data-quota="memory"]'), new RegExp(`^Memory.*${MEMORY[i].replace('.', '\\.')} of 2 GiB$`));
    expect(await page.locator('[data-quota="running"]').innerText()).toMatch(/0 of 2$/);
    expect(Number(await page.locator('#quota-memory').getAttribute('value'))).toBe((i + 1) * 512);

    if (i === LOOKS.length - 1) {
      // The account's memory is all taken: the service refuses, and the form says why.
      await page.getByLabel('Name', { exact: true }).fill('One too many');
      await page.getByRole('button', { name: 'Create server' }).click();
      await waitForText(page.locator('form').getByRole('alert'), /^Could not create the server: .*take 2048 of your 2048 MiB/);
      await expectAccessible(page, `servers with a refused create (${look.name})`);
      expect(consoleErrors).toEqual([expect.stringMatching(/status of 403 .*\/v1\/servers$/)]);
    } else {
      expect(consoleErrors).toEqual([]);
    }
    // axe over the page with servers: looks.test.ts; with the form's error: above.
    await expectFits(page, `servers after a create (${look.name})`);
    await expectScheme(page, look);
  }
  const auth = { Authorization: `Bearer ${ctx.service.token(EMAIL)}` };
  const servers = (await ctx.service.http.get('/v1/servers').set(auth)).body.data as { id: string; name: string }[];
  expect(servers.map((s) => s.name)).toEqual(['World 0', 'World 1', 'World 2', 'World 3']);
  for (const [i, world] of WORLDS.entries()) {
    expect((await ctx.service.http.get(`/v1/servers/${servers[i].id}/settings`).set(auth)).body.values.world_type).toBe(world);
  }
}, 120_000);
