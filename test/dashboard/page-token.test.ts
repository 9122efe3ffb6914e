// The page's API token lives minutes; here, in Debian's Chromium, it lives 3 s (DASHBOARD_TOKEN_TTL_S) so the
// page must renew it many times while the user works, without them noticing: no sign-in form, no error, and each
// renewal ends the token it replaces, so one live page token at a time.
import type { Page, Response } from 'playwright-core';
import { PHONE_DARK, dashboardPerTest } from './helpers';

const TTL_S = 3;
const ctx = dashboardPerTest({ env: { DASHBOARD_TOKEN_TTL_S: String(TTL_S) } });

interface PageToken {
  id: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
}

function pageTokens(): PageToken[] {
  return ctx.service.db
    .prepare("SELECT id, created_at, expires_at, revoked_at FROM tokens WHERE name = 'dashboard session' ORDER BY id")
    .all() as PageToken[];
}

async function waitFor(what: string, ok: () => boolean, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test('the page keeps working for many token lifetimes, renewing its token before it ends', async () => {
  const p = await ctx.open(PHONE_DARK);
  const { page } = p;
  const v1Answers: Response[] = [];
  page.on('response', (r) => void (r.url().includes('/v1/') && v1Answers.push(r)));
  await p.show(`${ctx.service.origin}/#/servers`);
  await page.getByRole('heading', { name: 'Servers', level: 1 }).waitFor();

  // Four renewals: over four times the token's lifetime, while the Servers page polls the API every 3 s. A
  // replaced token's row is deleted at once, so the ids are collected as they come.
  const seen = new Map<string, PageToken>();
  const observe = () => {
    const now = pageTokens();
    for (const t of now) seen.set(t.id, t);
    return now;
  };
  await waitFor('four renewals', () => (observe(), seen.size >= 5));
  await page.getByRole('link', { name: 'API tokens' }).click();
  await page.getByRole('heading', { name: 'API tokens', level: 1 }).waitFor();
  await page.getByLabel('Name').fill('made after renewals');
  await page.getByRole('button', { name: 'Create token' }).click();
  await page.locator('#new-token').waitFor();

  const current = observe();
  for (const t of seen.values()) expect(Date.parse(t.expires_at) - Date.parse(t.created_at)).toBeLessThanOrEqual(TTL_S * 1000);
  // Each renewal ended the token it replaced: only the newest is left, and it is live. None of them is listed.
  expect(current.map((t) => [t.id, t.revoked_at])).toEqual([[[...seen.keys()].sort().pop(), null]]);
  const listed = await page.locator('tr[data-token-id]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-token-id')));
  expect(listed).toHaveLength(1);
  expect([...seen.keys()]).not.toContain(listed[0]);
  await expectNoSignInForm(p.page);
  expect(v1Answers.filter((r) => r.status() >= 400 && r.status() !== 401).map((r) => `${r.status()} ${r.url()}`)).toEqual([]);
  // A request already on its way with the token being replaced can meet the revocation: the page retries it with
  // the new token at once (Chromium logs the 401 all the same). Nothing else may show up.
  expect(p.consoleErrors.filter((e) => !/status of 401 .*\/v1\//.test(e))).toEqual([]);
  expect(p.foreignRequests()).toEqual([]);
}, 120_000);

async function expectNoSignInForm(page: Page) {
  expect(await page.getByRole('heading', { name: 'Sign in' }).count()).toBe(0);
  expect(await page.getByRole('alert').count()).toBe(0);
}
