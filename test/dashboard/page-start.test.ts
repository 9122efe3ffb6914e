// How the dashboard starts when the network drops its scripts (a phone between networks; Chromium drops requests in
// flight when the host's interfaces change): a dropped module or stylesheet makes boot.js load the page again and the
// dashboard comes up by itself, styled (three loads more at most); a start that never comes (boot.js itself dropped)
// says so after a few seconds, with no script, and its link loads the dashboard again (index.html .start-stuck,
// app.css); a chart whose read was dropped is still an image with a name (chart.js). Debian's Chromium at 390×844
// dark and 1280×800 light, axe-core clean.
import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/browser';
import {
  DESKTOP_LIGHT, EMAIL, PHONE_DARK, expectAccessible, expectFits, openPage, pageReport, showDashboard, startDashboard,
  type Dashboard, type Look, type TestPage,
} from './helpers';

const LOOKS: Look[] = [
  PHONE_DARK,
  { ...DESKTOP_LIGHT, name: 'desktop 1280×800, light', viewport: { width: 1280, height: 800 } },
];

let browser: Browser;
let service: Dashboard;
beforeAll(async () => {
  // One service for the file, whose tests load the page about fifteen times in a minute (every drop a reload, each
  // load ≈ 40 files): past the default 600 files a minute per address (DASHBOARD_FILES_PER_MINUTE), which a CI run
  // met (its 429s, not a drop, left a load without its scripts). That limit is not what this file is about.
  [browser, service] = await Promise.all([launchChromium(), startDashboard({ env: { DASHBOARD_FILES_PER_MINUTE: '6000' } })]);
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await service?.finish();
}, 60_000);

test('a server page whose metrics read was dropped: its charts are still images with names (axe clean)', async () => {
  const auth = { Authorization: `Bearer ${service.token(EMAIL)}` };
  const created = await service.http.post('/v1/servers').set(auth).send({ name: 'Charts', plan: 'micro', version: 'flying-squid-1.20' });
  expect(created.status).toBe(201);
  const p = await openPage(browser, service, PHONE_DARK);
  try {
    await p.page.route('**/v1/servers/*/metrics?*', (route) => route.abort('internetdisconnected'));
    await p.page.goto(`${service.origin}/#/servers/${String(created.body.id)}`);
    const ram = p.page.locator('svg[data-chart="ram_bytes"]');
    await ram.waitFor({ timeout: 30_000 });
    expect(await ram.getAttribute('aria-label')).toBe('RAM: not read yet');
    expect(await ram.getAttribute('data-points')).toBe('0');
    await expectAccessible(p.page, 'a server page without its metrics (phone, dark)');
  } finally {
    await p.close();
  }
}, 60_000);

/** Whether the page applies the stylesheet at `file` (a dropped one is in document.styleSheets, its rules unreadable). */
async function styled(p: TestPage, file: string): Promise<boolean> {
  return p.page.evaluate((f) => [...document.styleSheets].some((s) => {
    try {
      return s.href?.endsWith(f) === true && s.cssRules.length > 0;
    } catch {
      return false; // Chromium: "Cannot access rules" of a sheet that did not load
    }
  }), file);
}

test('a stylesheet dropped once: the page loads itself again, styled; one dropped every time: three loads more, then it stays', async () => {
  const p = await openPage(browser, service, PHONE_DARK);
  try {
    let asked = 0;
    await p.page.route('**/dashboard/assets/files.css', (route) => (asked++ === 0 ? route.abort('internetdisconnected') : route.continue()));
    await p.page.goto(`${service.origin}/#/servers`);
    await p.page.getByRole('navigation', { name: 'Main' }).waitFor({ timeout: 30_000 });
    await p.page.waitForFunction(() => document.readyState === 'complete' && sessionStorage.getItem('gsh-dashboard-reloads') === null, undefined, { timeout: 30_000 });
    expect(asked).toBe(2); // dropped, then asked again by the page loaded anew, which kept it
    expect(await styled(p, '/files.css')).toBe(true);

    // Dropped at every load (the network never lets it through): boot.js stops after three more loads.
    await p.page.unrouteAll();
    let dropped = 0;
    await p.page.route('**/dashboard/assets/manage.css', (route) => (dropped++, route.abort('internetdisconnected')));
    await p.page.goto('about:blank');
    await p.page.goto(`${service.origin}/#/servers`);
    await p.page.waitForFunction(() => sessionStorage.getItem('gsh-dashboard-reloads') === '3', undefined, { timeout: 30_000 });
    await new Promise((r) => setTimeout(r, 6000)); // longer than boot.js's longest wait (2 s) and a load
    expect(dropped).toBe(4);
    await p.page.getByRole('navigation', { name: 'Main' }).waitFor({ timeout: 30_000 }); // unstyled, but working
    expect(await styled(p, '/manage.css')).toBe(false);
  } finally {
    await p.close();
  }
}, 90_000);

describe.each(LOOKS.map((l) => [l.name, l] as [string, Look]))('%s', (_name, look) => {
  test('a module dropped once: the page loads itself again and the dashboard comes up', async () => {
    const p = await openPage(browser, service, look);
    try {
      let dropped = 0;
      await p.page.route('**/dashboard/assets/js/app.js', (route) => (dropped++ === 0 ? route.abort('internetdisconnected') : route.continue()));
      await p.page.goto(`${service.origin}/#/servers`);
      await p.page.getByRole('navigation', { name: 'Main' }).waitFor({ timeout: 30_000 }).catch(async (err: unknown) => {
        throw new Error([String(err), ...(await pageReport(p))].join('\n'));
      });
      expect(dropped).toBeGreaterThanOrEqual(2); // dropped, then asked again by the page boot.js loaded anew
      await expect(p.page.locator('.start-stuck').count()).resolves.toBe(0); // app.js replaced <main>
    } finally {
      await p.close();
    }
  }, 60_000);

  test('a start that never comes says so after a few seconds, and its link loads the dashboard again', async () => {
    const p = await openPage(browser, service, look);
    try {
      // boot.js and app.js both dropped: nothing of the page's own runs, so nothing can reload it.
      const drop = (route: { abort: (code: string) => Promise<void> }) => route.abort('internetdisconnected');
      await p.page.route('**/dashboard/assets/js/boot.js', drop);
      await p.page.route('**/dashboard/assets/js/app.js', drop);
      await p.page.goto(`${service.origin}/#/servers`);
      const hint = p.page.locator('.start-stuck');
      await expect(hint.isVisible()).resolves.toBe(false); // not at once: a normal start takes well under a second
      await hint.waitFor({ state: 'visible', timeout: 20_000 });
      expect(await hint.innerText()).toBe('Still loading? The connection may have dropped: load the dashboard again.');
      await expectFits(p.page, `stuck start (${look.name})`);
      await expectAccessible(p.page, `stuck start (${look.name})`);
      // The network is back: the link loads the dashboard, which starts.
      await p.page.unrouteAll();
      // (A load that Chromium's network-change drops cut short is made again; one that fails otherwise says why.)
      const link = hint.getByRole('link', { name: 'load the dashboard again' });
      expect(await link.getAttribute('href')).toBe('/');
      await showDashboard(p, `${service.origin}/`, { firstLoad: () => link.click() });
      await expect(hint.count()).resolves.toBe(0);
    } finally {
      await p.close();
    }
  }, 120_000);
});
