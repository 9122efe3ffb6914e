// Server names in DNS from the dashboard (issue 43; src/dashboard/public/js/dns-name.js) in Debian's Chromium, on a
// phone in the dark scheme and a desktop in the light one, with a real authoritative DNS server (Knot,
// test/helpers/knot.ts) so `published` is what the DNS server accepted: the create form offers "Name players type"
// with the zone after it (ServerList.dns_zone), says in words why a name is refused (taken, kept by the operator,
// not a name), and creates the server with its name; the server page shows the address players type (the name for
// Minecraft, name:port for Luanti) with a copy button and its status, pending with its error in words while the
// DNS server is down and published once it is back; the owner renames and removes the name there. Without
// DNS_ZONE the field is not shown at all.
import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/browser';
import { startKnot, type Knot } from '../helpers/knot';
import { until } from '../helpers/wait';
import { DESKTOP_LIGHT, EMAIL, PHONE_DARK, expectAccessible, expectFits, expectScheme, openPage, showSection, startDashboard, waitForText, waitOnPage, type Dashboard } from './helpers';

jest.setTimeout(240_000);

let browser: Browser;
let knot: Knot;
let service: Dashboard | undefined;

beforeAll(async () => {
  browser = await launchChromium();
  knot = await startKnot();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await knot?.stop();
}, 60_000);
afterEach(async () => {
  await service?.finish();
  service = undefined;
}, 90_000);

const dnsEnv = () => ({ DNS_ZONE: knot.zone, DNS_SERVER: `127.0.0.1:${knot.port}`, DNS_TSIG_KEY: knot.key, DNS_TTL_S: '30' });

test('a name chosen at create, refused in words, shown with its status and copied, renamed and removed', async () => {
  service = await startDashboard({ boot: true, env: dnsEnv(), dns: { sweepMs: 200 } });
  const s = service;
  const auth = { Authorization: `Bearer ${s.token(EMAIL)}` };
  const get = async (path: string) => (await s.http.get(path).set(auth)).body;
  expect((await s.http.post('/v1/servers').set(auth).send({ name: 'First', plan: 'micro', version: 'flying-squid-1.20', dns_name: 'taken' })).status).toBe(201);

  // On a phone, dark: the create form.
  const p = await openPage(browser, s, PHONE_DARK);
  const { page } = p;
  try {
    await p.show(`${s.origin}/#/servers`);
    const dnsField = page.getByLabel('Name players type');
    await waitOnPage(p, dnsField);
    expect(await page.locator('#server-dns-name-zone').textContent()).toBe('.play.test');
    await page.locator('#server-name').fill('Survival');

    const refusals: [string, RegExp][] = [
      ['www', /^The name is kept by the operator of this service\. Pick another\.$/],
      ['TAKEN', /^The name is taken: another server has it \(capitals make no difference\)\. Pick another\.$/],
      ['my.world', /^The name can only be one word of letters, digits and hyphens/],
      ['-edge', /^The name can only be one word of letters, digits and hyphens/],
    ];
    for (const [typed, words] of refusals) {
      await dnsField.fill(typed);
      await page.getByRole('button', { name: 'Create server' }).click();
      await waitForText(page.locator('#server-dns-name-error'), words);
      expect(await dnsField.getAttribute('aria-invalid')).toBe('true');
      await waitForText(page.locator('form[aria-labelledby="create-server"] [role=alert]'), /^Not created: 1 field needs a change\.$/);
    }
    expect((await get('/v1/servers')).data).toHaveLength(1); // nothing was made
    const where = 'the create form with a refused name (phone, dark)';
    await expectFits(page, where);
    await expectAccessible(page, where);
    await expectScheme(page, PHONE_DARK);
    await p.screenshot('dns-create-refused');

    await dnsField.fill('Survival');
    await page.getByRole('button', { name: 'Create server' }).click();
    await page.getByRole('link', { name: 'Survival' }).waitFor();
    const made = (await get('/v1/servers')).data.find((x: { name: string }) => x.name === 'Survival');
    expect(made).toMatchObject({ dns_name: 'survival', dns: { name: 'survival.play.test' } });
    expect(await dnsField.inputValue()).toBe('');

    // The server page: what players type, published (Knot accepted it: dig reads it), and a copy button.
    await page.getByRole('link', { name: 'Survival' }).click();
    await waitOnPage(p, page.locator('#player-address'));
    expect(await page.locator('#player-address').inputValue()).toBe('survival.play.test');
    await waitForText(page.locator('#dns-status'), /^published Players can use it now\.$/);
    expect(knot.dig('_minecraft._tcp.survival.play.test', 'SRV')).toEqual([`0 5 ${made.address.port} survival.play.test.`]);
    await p.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: s.origin });
    await page.getByRole('button', { name: 'Copy survival.play.test' }).click();
    await until('copied', async () => (await page.evaluate(() => navigator.clipboard.readText())) === 'survival.play.test', 10_000);
    const there = 'the server page with its name (phone, dark)';
    await expectFits(page, there);
    await expectAccessible(page, there);
    await p.screenshot('dns-server-page');
    // Chromium's lines for the refused POSTs are the only ones.
    expect(p.consoleErrors.filter((e) => !/status of 4(00|09) .*\/v1\/servers$/.test(e))).toEqual([]);
    expect(p.foreignRequests()).toEqual([]);
  } finally {
    await p.close();
  }

  // On a desktop, light: a Luanti server's address is the name and the port (UDP: no SRV record to carry it).
  const luanti = (await s.http.post('/v1/servers').set(auth).send({ name: 'Blocks', plan: 'micro', version: 'luanti-5.6.1', dns_name: 'blocks' })).body;
  expect(luanti.address.transport).toBe('udp');
  const d = await openPage(browser, s, DESKTOP_LIGHT);
  try {
    await d.show(`${s.origin}/#/servers/${luanti.id}`);
    await waitOnPage(d, d.page.locator('#player-address'));
    expect(await d.page.locator('#player-address').inputValue()).toBe(`blocks.play.test:${luanti.address.port}`);
    await waitForText(d.page.locator('#dns-status'), /^published /);
    expect(knot.dig('blocks.play.test', 'A')).toEqual(['127.0.0.1']);
    expect(knot.dig('_minecraft._tcp.blocks.play.test', 'SRV')).toEqual([]);

    // The owner renames it (the page's Settings section, sections.js): a taken name is refused in words, at the field.
    await showSection(d.page, 'Settings');
    const section = d.page.locator('section[aria-labelledby="dns-name-title"]');
    const rename = section.getByLabel('Name players type');
    expect(await rename.inputValue()).toBe('blocks');
    await rename.fill('taken');
    await section.getByRole('button', { name: 'Save name' }).click();
    await waitForText(d.page.locator('#dns-name-error'), /^The name is taken: /);
    expect((await get(`/v1/servers/${luanti.id}`)).dns_name).toBe('blocks');

    // The DNS server down: the rename is saved all the same, pending with why in words; published once it is back
    // (the page reads the server again while it is pending: no event says it got published).
    await knot.pause();
    try {
      await rename.fill('cubes');
      await section.getByRole('button', { name: 'Save name' }).click();
      await waitForText(section.locator('.outcome'), /^Players can join with cubes\.play\.test:\d+ once it is published\.$/);
      await showSection(d.page, 'Overview');
      await waitForText(d.page.locator('#dns-status'), /^pending Not published yet: the DNS server at 127\.0\.0\.1:\d+ (could not be reached|closed the connection without an answer|did not answer within \d+ ms)\. The service keeps trying\.$/, 60_000);
      expect(await d.page.locator('#player-address').inputValue()).toBe(`cubes.play.test:${luanti.address.port}`);
      const where = 'the server page with a pending name (desktop, light)';
      await expectFits(d.page, where);
      await expectAccessible(d.page, where);
      await expectScheme(d.page, DESKTOP_LIGHT);
      await d.screenshot('dns-pending');
    } finally {
      await knot.resume();
    }
    await waitForText(d.page.locator('#dns-status'), /^published /, 90_000);
    expect(knot.dig('cubes.play.test', 'A')).toEqual(['127.0.0.1']);
    expect(knot.dig('blocks.play.test', 'A')).toEqual([]);

    // Removed (after the confirmation): the address players type goes, and so do the records.
    await showSection(d.page, 'Settings');
    await section.getByRole('button', { name: 'Remove the name' }).click();
    await waitForText(section.locator('.outcome'), /^The name is removed\.$/);
    await d.page.locator('#player-address').waitFor({ state: 'detached' });
    expect(d.dialogs).toEqual(['Remove the name cubes.play.test? Players who use it can no longer join by it.']);
    await until('the records removed', async () => knot.dig('cubes.play.test', 'A').length === 0);
    expect((await get(`/v1/servers/${luanti.id}`)).dns_name).toBeNull();
    expect(d.consoleErrors.filter((e) => !/status of 409 .*\/v1\/servers\/srv_\w+$/.test(e))).toEqual([]);
  } finally {
    await d.close();
  }
});

test('without DNS_ZONE no name is offered, in the create form or on the server page', async () => {
  service = await startDashboard({ boot: true });
  const s = service;
  const auth = { Authorization: `Bearer ${s.token(EMAIL)}` };
  const { id } = (await s.http.post('/v1/servers').set(auth).send({ name: 'Plain', plan: 'micro', version: 'flying-squid-1.20' })).body;
  const p = await openPage(browser, s, DESKTOP_LIGHT);
  try {
    await p.show(`${s.origin}/#/servers`);
    await waitOnPage(p, p.page.getByRole('link', { name: 'Plain' }));
    expect(await p.page.locator('#server-dns-name').isHidden()).toBe(true);
    // Opened by its link (no list read before): it asks the list once, and shows no name section.
    await p.page.goto('about:blank');
    await p.show(`${s.origin}/#/servers/${id}`);
    await waitOnPage(p, p.page.locator('#server-state'));
    await showSection(p.page, 'Settings'); // where the name's section would be
    await until('the list asked for the zone', async () => p.requests.some((u) => u.endsWith('/v1/servers?limit=1')) || undefined, 10_000);
    expect(await p.page.locator('section[aria-labelledby="dns-name-title"]').isHidden()).toBe(true);
    expect(await p.page.locator('#player-address').count()).toBe(0);
    expect(p.consoleErrors).toEqual([]);
  } finally {
    await p.close();
  }
});
