// Issue 38 §2 "Say what is true", in Debian's Chromium at 390×844 dark and 1280×800 light, axe-core clean: the
// backup question follows the version's backup.consistency (a real flying-squid backs up live; a copy of it
// declared `stop` asks); chart axis labels are whole and inside the chart; a refused form says one sentence per
// field about the input, counted right; a kicked player leaves the list; world types by name, a seed left out picked by the
// service and shown (the one the game says it uses), one clock per console line; a removed member is told they no longer have access.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  addAccount, dashboardPerTest, EMAIL, expectAccessible, expectFits, PHONE_DARK, showSection, waitForText, waitOnPage, type Look, type TestPage,
} from './helpers';
import { playerBots } from './players';
import { until } from '../helpers/wait';

const LAPTOP_LIGHT: Look = { name: 'laptop, light', viewport: { width: 1280, height: 800 }, colorScheme: 'light', phone: false };
const LOOKS = [PHONE_DARK, LAPTOP_LIGHT];
const MEMBER = 'friend@example.com';

/** flying-squid as an operator's software that declares its backups `stop` (src/runtime/software/backup-definitions.ts). */
function stopSoftware(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsh-stop-software-'));
  const builtin = path.join(__dirname, '..', '..', 'src', 'runtime', 'software');
  const def = JSON.parse(fs.readFileSync(path.join(builtin, 'flying-squid.json'), 'utf8'));
  Object.assign(def, {
    id: 'squid-stop', game_versions: ['1.20'], launcher: path.join(builtin, 'flying-squid-launcher.cjs'),
    backup: { paths: ['world'], consistency: 'stop' },
  });
  fs.writeFileSync(path.join(dir, 'squid-stop.json'), JSON.stringify(def));
  return dir;
}

const STOP_SOFTWARE = stopSoftware();
afterAll(() => fs.rmSync(STOP_SOFTWARE, { recursive: true, force: true }));
const ctx = dashboardPerTest({ boot: true, software: STOP_SOFTWARE, env: { METRICS_INTERVAL_S: '1' }, runtime: { stopTimeoutMs: 10_000, reconcileMs: 500 } });
const { join } = playerBots();

const api = (email = EMAIL) => {
  const auth = { Authorization: `Bearer ${ctx.service.token(email)}` };
  return {
    auth,
    get: async (p: string) => (await ctx.service.http.get(p).set(auth)).body,
    post: async (p: string, body: object) => ctx.service.http.post(p).set(auth).send(body),
  };
};

/** A server made through the API, installed, and started when `run`; its id and game port. */
async function server(name: string, version: string, run: boolean) {
  const a = api();
  const { id } = (await a.post('/v1/servers', { name, plan: 'micro', version })).body;
  await until('installed', async () => (await a.get(`/v1/servers/${id}`)).state === 'stopped');
  if (run) {
    await a.post(`/v1/servers/${id}/actions`, { type: 'start' });
    await until('running', async () => (await a.get(`/v1/servers/${id}`)).state === 'running', 120_000);
  }
  return { id, port: (await a.get(`/v1/servers/${id}`)).address.port as number };
}

/** Every axis label of every chart: its whole text inside its chart's box and inside the viewport. */
async function expectWholeLabels(p: TestPage, where: string) {
  const labels = await p.page.evaluate(() => [...document.querySelectorAll('svg.chart')].flatMap((svg) => {
    const box = svg.getBoundingClientRect();
    return [...svg.querySelectorAll('text.tick')].map((t) => {
      const r = t.getBoundingClientRect();
      return { chart: svg.getAttribute('data-chart'), text: t.textContent, inside: r.left >= box.left - 0.5 && r.right <= box.right + 0.5 && r.top >= box.top - 0.5 && r.bottom <= box.bottom + 0.5 && r.left >= 0 && r.right <= document.documentElement.clientWidth, width: r.width };
    });
  }));
  expect(labels.length).toBeGreaterThanOrEqual(16);
  expect({ where, clipped: labels.filter((l) => !l.inside || l.width === 0) }).toEqual({ where, clipped: [] });
  return labels;
}

test('a refused create says one sentence per field about the input, counted right; world types by name', async () => {
  // The problem document carries what the page words (the spec's FieldError rule and limit).
  const refused = await api().post('/v1/servers', { name: '', plan: 'micro', version: 'flying-squid-1.20', settings: { seed: 0 } });
  expect(refused.status).toBe(400);
  expect(refused.body.errors).toEqual(expect.arrayContaining([
    expect.objectContaining({ pointer: '/body/name', rule: 'minLength', limit: 1 }),
    expect.objectContaining({ pointer: '/body/name', rule: 'pattern' }),
  ]));

  for (const look of LOOKS) {
    const p = await ctx.open(look);
    const { page } = p;
    await p.show(`${ctx.service.origin}/#/servers`);
    await page.getByLabel('Version').selectOption('flying-squid-1.20');
    const worldType = page.getByLabel('World type');
    await worldType.waitFor();
    expect(await worldType.locator('option').allTextContents()).toEqual(['Diamond square', 'Grass field', 'Superflat', 'All the blocks', 'Nether', 'Empty']);

    // An empty name: one field, one sentence, no regular expression.
    const create = page.getByRole('button', { name: 'Create server' });
    const summary = page.locator('form[aria-labelledby="create-server"] [role="alert"]');
    await create.click();
    await waitForText(page.locator('#server-name-error'), /\S/);
    expect(await page.locator('#server-name-error').textContent()).toBe('Give the server a name.');
    await waitForText(summary, /^Not created/);
    expect(await summary.textContent()).toBe('Not created: 1 field needs a change.');
    await expectAccessible(page, `empty name (${look.name})`);
    await expectFits(page, `empty name (${look.name})`);

    // A world setting the service refuses after the schema: its sentence at its field, the name's gone.
    await page.getByLabel('Name', { exact: true }).fill('Survival');
    await page.getByLabel('Seed').fill('0');
    await create.click();
    await waitForText(page.locator('#create-seed-error'), /\S/);
    expect(await page.locator('#create-seed-error').textContent()).toBe('World seed must be 1 or more.');
    expect(await page.locator('#server-name-error').isHidden()).toBe(true);
    expect(await summary.textContent()).toBe('Not created: 1 field needs a change.');

    // A control character in the name: said as what it is about, not as the pattern.
    await page.getByLabel('Seed').fill('');
    await page.getByLabel('Name', { exact: true }).fill('Sur\tvival');
    await create.click();
    await waitForText(page.locator('#server-name-error'), /control/);
    expect(await page.locator('#server-name-error').textContent()).toBe('A server name cannot hold control characters, such as a tab or a line break.');
    expect(await page.locator('main').innerText()).not.toMatch(/\\x|\^\[|must NOT|must match|must be >=/);
    expect((await api().get('/v1/servers')).data).toEqual([]);
    expect(p.foreignRequests()).toEqual([]);
  }

  // Two wrong settings: a sentence at each, counted two (the plan's 5 slots bound the player slots).
  const { id } = await server('Kept', 'flying-squid-1.20', false);
  for (const look of LOOKS) {
    const p = await ctx.open(look);
    const { page } = p;
    await p.show(`${ctx.service.origin}/#/servers/${id}/settings`); // a section of the page (sections.js)
    await waitOnPage(p, page.locator('#setting-view_distance'));
    await page.locator('#setting-view_distance').fill('11');
    await page.locator('#setting-max_players').fill('6');
    await page.getByRole('button', { name: 'Save settings' }).click();
    const settings = page.locator('section[aria-labelledby="settings-title"]');
    await waitForText(settings.getByRole('alert'), /Not saved/);
    expect(await settings.getByRole('alert').textContent()).toBe('Not saved: 2 settings need a change, shown at their fields.');
    expect(await page.locator('#setting-view_distance-error').textContent()).toBe('View distance must be 10 or less.');
    expect(await page.locator('#setting-max_players-error').textContent()).toBe('Player slots must be 5 or less.');
    await expectAccessible(page, `refused settings (${look.name})`);
    await expectFits(page, `refused settings (${look.name})`);
  }
}, 180_000);

test('a running flying-squid: live backup asks nothing, whole axis labels, one clock, names, a kicked player leaves', async () => {
  const { id, port } = await server('Survival', 'flying-squid-1.20', true);
  const steve = await join(port, 'Steve');
  let steveEnded = false;
  steve.once('end', () => {
    steveEnded = true;
  });

  for (const look of LOOKS) {
    const p = await ctx.open(look);
    const { page } = p;
    await p.show(`${ctx.service.origin}/#/servers/${id}`);
    await waitOnPage(p, page.locator('[data-player="Steve"]'), { timeout: 60_000 });
    await waitOnPage(p, page.locator('svg[data-chart="ram_bytes"] [data-tick="max"]'));
    // The RAM chart's ceiling is the micro plan's 512 MiB, whole, at both widths.
    await until('samples drawn', async () => Number(await page.locator('svg[data-chart="ram_bytes"]').getAttribute('data-points')) > 0, 30_000);
    const labels = await expectWholeLabels(p, look.name);
    expect(labels.find((l) => l.chart === 'ram_bytes' && /MiB/.test(l.text ?? ''))?.text).toBe('512 MiB');

    // One clock per console line: the page's; the game's own ("November 27th 2026, 14:03:07") is left out.
    await showSection(page, 'Console');
    const log = page.getByRole('log', { name: 'Console output' });
    await waitForText(log, /World seed: \d+/, 30_000);
    const seedLine = (await log.locator('.line .text', { hasText: 'World seed:' }).first().textContent()) ?? '';
    expect(seedLine).toMatch(/^\[INFO\]: World seed: \d+$/);
    const texts = await log.locator('.line .text').allTextContents();
    expect(texts.filter((t) => /\d{2}:\d{2}:\d{2}/.test(t))).toEqual([]);

    // Settings: world types by name; the seed left out at create was picked by the service, and the field shows the
    // one the game says it uses.
    await showSection(page, 'Settings');
    const worldType = page.locator('#setting-world_type');
    await worldType.waitFor();
    expect(await worldType.locator('option:checked').textContent()).toBe('Diamond square');
    expect(await page.locator('#setting-seed').inputValue()).toBe(/World seed: (\d+)/.exec(seedLine)?.[1]);
    await expectAccessible(page, `running server (${look.name})`);
    await expectFits(page, `running server (${look.name})`);
    if (look !== LOOKS[LOOKS.length - 1]) await p.close();
  }
  const p = ctx.pages[ctx.pages.length - 1];
  const { page } = p;

  // flying-squid backs up live: the page says players stay connected, and the button asks nothing.
  await showSection(page, 'Backups');
  await page.getByText('Players stay connected while a backup is made.').waitFor();
  await page.getByRole('button', { name: 'Back up now' }).click();
  await waitForText(page.locator('section[aria-labelledby="backups-title"] .outcome'), /is ready/, 60_000);
  expect(p.dialogs).toEqual([]);
  expect(steveEnded).toBe(false);
  await showSection(page, 'Overview');
  await page.locator('[data-player="Steve"]').waitFor();

  // A kick: the player leaves the list once the game says he left (the player.left event, faa4ffd).
  const ended = new Promise<void>((resolve) => steve.once('end', () => resolve()));
  await page.getByRole('button', { name: 'Kick Steve' }).click();
  await ended;
  await page.getByText('Nobody is playing right now.').waitFor({ timeout: 20_000 });
  expect(await page.locator('[data-player="Steve"]').count()).toBe(0);
  expect((await api().get(`/v1/servers/${id}/players`)).players).toEqual([]);
  expect(p.foreignRequests()).toEqual([]);
  expect(p.consoleErrors).toEqual([]);
}, 300_000);

test('software that stops for a backup: the question says players are disconnected', async () => {
  const { id, port } = await server('Careful', 'squid-stop-1.20', true);
  const alex = await join(port, 'Alex');
  const p = await ctx.open(PHONE_DARK);
  const { page } = p;
  await p.show(`${ctx.service.origin}/#/servers/${id}`);
  await waitOnPage(p, page.locator('[data-player="Alex"]'), { timeout: 60_000 });
  await showSection(page, 'Backups');
  await page.getByText('A running server is stopped while a backup is made: its players are disconnected.').waitFor();
  p.answer.yes = false;
  await page.getByRole('button', { name: 'Back up now' }).click();
  await until('the question', async () => p.dialogs.length === 1);
  expect(p.dialogs).toEqual(['Back up Careful now? The game stops while the archive is made: 1 player is online (Alex); they are disconnected until it is back.']);
  expect((await api().get(`/v1/servers/${id}/backups`)).data).toEqual([]);
  await expectAccessible(page, 'stop backup');
  alex.end();
  expect(p.consoleErrors).toEqual([]);
}, 240_000);

test('a removed member is told they no longer have access, on the open page and by the link', async () => {
  addAccount(ctx.service.db, MEMBER);
  const { id } = await server('Together', 'flying-squid-1.20', false);
  const added = await api().post(`/v1/servers/${id}/members`, { email: MEMBER, permissions: ['console', 'power'] });
  expect(added.status).toBe(201);

  const open = await ctx.open(PHONE_DARK, { email: MEMBER });
  await open.show(`${ctx.service.origin}/#/servers/${id}/console`);
  await waitOnPage(open, open.page.getByRole('heading', { name: 'Together', level: 1 }));
  await open.page.getByRole('log', { name: 'Console output' }).waitFor();

  // The owner removes them: their open page's streams end, and the page says why instead of an error.
  const removed = await ctx.service.http.delete(`/v1/servers/${id}/members/${added.body.id}`).set(api().auth);
  expect(removed.status).toBe(204);
  const gone = 'This server is not shared with you (any more), or it was deleted.';
  await waitOnPage(open, open.page.getByRole('heading', { name: 'No access to this server', level: 1 }), { timeout: 30_000 });
  expect(await open.page.locator('#gone-text').textContent()).toBe(gone);
  await expectAccessible(open.page, 'removed member, open page');
  await expectFits(open.page, 'removed member, open page');

  // The link later: the same words, never "There is no server srv_…".
  for (const look of LOOKS) {
    const q = await ctx.open(look, { email: MEMBER });
    await q.show(`${ctx.service.origin}/#/servers/${id}`);
    await waitOnPage(q, q.page.getByRole('heading', { name: 'No access to this server', level: 1 }));
    expect(await q.page.locator('main').innerText()).not.toContain('srv_');
    expect(await q.page.locator('#gone-text').textContent()).toBe(gone);
    await expectAccessible(q.page, `removed member by link (${look.name})`);
    await expectFits(q.page, `removed member by link (${look.name})`);
    expect(q.foreignRequests()).toEqual([]);
  }
}, 120_000);
