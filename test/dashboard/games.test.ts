// The dashboard with two games (issue 17): the version picker is grouped by game, and each server shows its
// game and, for Luanti, that its address is UDP. In Debian's Chromium; no game is started.
import { dashboardPerTest, signInThroughUi } from './helpers';

const ctx = dashboardPerTest({});

test('the version picker groups versions by game; a Luanti server shows its game and a UDP address', async () => {
  const { page } = ctx.browser;
  await signInThroughUi(page, ctx.service.origin);
  await page.getByRole('heading', { name: 'Servers', level: 1 }).waitFor();

  const picker = page.getByLabel('Version');
  const groups = await picker.locator('optgroup').evaluateAll((els) => els.map((g) => [g.getAttribute('label'), g.children.length]));
  expect(groups.map(([label]) => label)).toEqual(['Minecraft Java Edition', 'Luanti']);
  expect(groups.every(([, n]) => Number(n) > 0)).toBe(true);
  expect(await picker.inputValue()).toMatch(/^flying-squid-/); // the newest Minecraft version is the default

  await page.getByLabel('Name').fill('Blocks');
  await page.getByLabel('Plan').selectOption('micro');
  await picker.selectOption('luanti-5.6.1');
  await page.getByRole('button', { name: 'Create server' }).click();
  const row = page.locator('tr', { hasText: 'Blocks' });
  await row.waitFor();
  await expect(row.textContent()).resolves.toMatch(/Luanti/);
  await expect(row.textContent()).resolves.toMatch(/:\d+ \(UDP\)/);

  await row.getByRole('link', { name: 'Blocks' }).click();
  await page.getByRole('heading', { name: 'Blocks', level: 1 }).waitFor();
  await expect(page.locator('dl.facts').textContent()).resolves.toMatch(/GameLuanti/);
  await ctx.browser.screenshot('luanti-server');
  expect(ctx.browser.consoleErrors).toEqual([]);
}, 120_000);
