// The dashboard in Debian's Chromium against a real listening service: sign-in, Settings → API tokens (shown
// once, works on the API, revoked in the UI → 401), sign-out; and, over plain HTTP, CSRF, failed sign-ins and
// the page's headers.
import supertest from 'supertest';
import { DESKTOP_DARK, DESKTOP_LIGHT, EMAIL, PASSWORD, PHONE_LIGHT, TOAST_MS, dashboardPerTest, signInThroughUi, type TestPage } from './helpers';
import { DASHBOARD_CSP } from '../../src/dashboard';

const ctx = dashboardPerTest({});

/** Signs in through the form and waits for the signed-in page (which has its session's API token by then). */
async function signedIn(look = DESKTOP_LIGHT) {
  const p = await ctx.open(look, { signedIn: false });
  await signInThroughUi(p.page, ctx.service.origin);
  await p.page.getByRole('heading', { name: 'Servers', level: 1 }).waitFor();
  return p;
}

/** The page talked only to this test's service and logged no console errors but the `expected` ones. */
function expectOnlyTheService(p: TestPage, expected: RegExp[] = []) {
  expect(p.foreignRequests()).toEqual([]);
  expect(p.consoleErrors).toEqual(expected.map((re) => expect.stringMatching(re)));
}

test('a wrong password is refused with a message; the right one signs in, and says so in a message that leaves', async () => {
  const p = await ctx.open(PHONE_LIGHT, { signedIn: false });
  const { page } = p;
  await signInThroughUi(page, ctx.service.origin, 'not the password');
  await expectText(page.getByRole('alert'), /email or password is not right/);
  await p.screenshot('sign-in-refused');

  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Servers', level: 1 }).waitFor();
  await expectText(page.locator('#who-email'), EMAIL);
  // The session cookie is httpOnly, SameSite=Strict and only sent to /dashboard.
  const [cookie] = await page.context().cookies();
  expect(cookie).toMatchObject({ name: 'gsh_session', httpOnly: true, sameSite: 'Strict', path: '/dashboard' });
  // "Signed in as …" leaves by itself (issue 29: it stayed and covered charts and buttons).
  const toast = page.locator('.toast', { hasText: `Signed in as ${EMAIL}.` });
  await toast.waitFor();
  await toast.waitFor({ state: 'detached', timeout: TOAST_MS + 4000 });
  // Chromium logs every 4xx answer to fetch(); the one expected is the wrong password's 401.
  expectOnlyTheService(p, [/^Failed to load resource: the server responded with a status of 401 .*\/dashboard\/sign-in$/]);
}, 60_000);

test('a token created in Settings is shown once, works on the API, and is refused once revoked in the UI', async () => {
  const p = await signedIn(DESKTOP_DARK);
  const { page } = p;
  await page.getByRole('link', { name: 'API tokens' }).click();
  await page.getByRole('heading', { name: 'API tokens', level: 1 }).waitFor();
  // The page's own session token is not the customer's to manage: not listed (listTokens leaves it out).
  await page.getByText('No tokens.').waitFor();

  await page.getByLabel('Name').fill('ci deploy');
  await page.getByRole('checkbox', { name: /servers:write/ }).check();
  await page.getByRole('button', { name: 'Create token' }).click();
  const secret = (await page.locator('#new-token').textContent()) ?? '';
  expect(secret).toMatch(/^gsh_[A-Za-z0-9_-]{43}$/);
  await p.screenshot('token-created');

  const api = supertest(ctx.service.origin);
  await api.get('/v1/servers').set('Authorization', `Bearer ${secret}`).expect(200);

  // Shown once: after Done it is gone from the page, and the list shows only its prefix.
  await page.getByRole('button', { name: 'Done' }).click();
  const row = page.locator('tr', { hasText: 'ci deploy' });
  await expectText(row, /servers:read, servers:write/);
  expect(await page.content()).not.toContain(secret);

  await page.getByRole('button', { name: /^Revoke ci deploy/ }).click();
  await row.waitFor({ state: 'detached' });
  await api.get('/v1/servers').set('Authorization', `Bearer ${secret}`).expect(401);
  await p.screenshot('tokens');
  expectOnlyTheService(p);
}, 60_000);

test('signing out ends the session and revokes the page token', async () => {
  const p = await signedIn();
  const { page } = p;
  const sessionTokenIds = ctx.service.db
    .prepare("SELECT id FROM tokens WHERE name = 'dashboard session' AND revoked_at IS NULL")
    .all() as { id: string }[];
  expect(sessionTokenIds.length).toBeGreaterThan(0);
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  const live = ctx.service.db.prepare("SELECT id FROM tokens WHERE name = 'dashboard session' AND revoked_at IS NULL").all();
  expect(live).toEqual([]);
  expect(await page.context().cookies()).toEqual([]);
  expectOnlyTheService(p);
}, 60_000);

describe('over HTTP', () => {
  const signIn = (http: supertest.Agent, password = PASSWORD, email = EMAIL) =>
    http.post('/dashboard/sign-in').set('Origin', ctx.service.origin).send({ email, password });

  test('state-changing requests without the CSRF token or from another origin are refused', async () => {
    const http = supertest.agent(ctx.service.origin);
    const session = (await signIn(http).expect(200)).body as { csrf_token: string };
    const post = (path: string) => http.post(path).set('Origin', ctx.service.origin);

    const missing = await post('/dashboard/session-token').expect(403);
    expect(missing.body).toMatchObject({ code: 'csrf_failed' });
    await post('/dashboard/session-token').set('X-CSRF-Token', 'x'.repeat(43)).expect(403);
    await http.post('/dashboard/session-token').set('Origin', 'https://evil.example').set('X-CSRF-Token', session.csrf_token).expect(403);
    await http.post('/dashboard/sign-out').set('X-CSRF-Token', session.csrf_token).expect(403); // no Origin
    await http.post('/dashboard/sign-in').set('Origin', 'https://evil.example').send({ email: EMAIL, password: PASSWORD }).expect(403);

    const created = await post('/dashboard/session-token').set('X-CSRF-Token', session.csrf_token).expect(201);
    await http.get('/v1/tokens').set('Authorization', `Bearer ${created.body.token}`).expect(200);
    await post('/dashboard/sign-out').set('X-CSRF-Token', session.csrf_token).expect(204);
    await http.get('/v1/tokens').set('Authorization', `Bearer ${created.body.token}`).expect(401);
    await post('/dashboard/session-token').set('X-CSRF-Token', session.csrf_token).expect(401);
    expect((await http.get('/dashboard/session').expect(200)).body).toEqual({ signed_in: false });
  });

  // How failed sign-ins are slowed down (progressive delay, not a lock): sign-in-throttle.test.ts, with a fake clock.
  test('failed sign-ins say so without telling whether the email exists', async () => {
    const http = supertest(ctx.service.origin);
    const unknown = await signIn(http, 'whatever', 'nobody@example.com').expect(401);
    const wrong = await signIn(http, 'whatever', EMAIL).expect(401);
    expect(unknown.body.detail).toBe(wrong.body.detail);
    expect(wrong.body).toMatchObject({ code: 'unauthorized' });
  }, 30_000);

  test('the page is served with a strict CSP and no inline script', async () => {
    const res = await supertest(ctx.service.origin).get('/').expect(200);
    expect(res.headers['content-security-policy']).toBe(DASHBOARD_CSP);
    expect(res.text).not.toMatch(/<script(?![^>]*\bsrc=)/);
    expect(res.text).not.toMatch(/\sstyle=|\son[a-z]+=/);
  });
});

async function expectText(locator: import('playwright-core').Locator, want: string | RegExp) {
  await locator.first().waitFor();
  const deadline = Date.now() + 20_000;
  let text = '';
  while (Date.now() < deadline) {
    text = (await locator.first().textContent()) ?? '';
    if (typeof want === 'string' ? text.includes(want) : want.test(text)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`expected ${want} in "${text}"`);
}
