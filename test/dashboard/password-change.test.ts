// Settings → Password in Debian's Chromium: a new password ends every session of the account, so another browser
// signed in as the same user is signed out; this browser carries on. With the box ticked every API token of the
// user is revoked too; without it they keep working. Over HTTP: the current password is checked, CSRF and Origin
// like every other session post. This browser's events stream never reconnects with its revoked token, however late
// its new one comes.
import supertest from 'supertest';
import { DESKTOP_LIGHT, EMAIL, PASSWORD, PHONE_DARK, dashboardPerTest } from './helpers';

const NEW_PASSWORD = 'a brand new passphrase';
const ctx = dashboardPerTest({});

test.each([
  ['with "also revoke every API token" ticked, the API token stops working', true, 401],
  ['without it, the API token keeps working', false, 200],
])('a password change signs out every other browser; %s', async (_name, revoke, tokenStatus) => {
  const { origin } = ctx.service;
  const api = supertest(origin);
  const token = ctx.service.token(EMAIL, ['servers:read']);
  await api.get('/v1/servers').set('Authorization', `Bearer ${token}`).expect(200);

  // Two browsers signed in as the same user: a phone and this desktop.
  const other = await ctx.open(PHONE_DARK);
  await other.show(`${origin}/#/servers`);
  await other.page.getByRole('heading', { name: 'Servers', level: 1 }).waitFor();

  const p = await ctx.open(DESKTOP_LIGHT);
  const { page } = p;
  await p.show(`${origin}/#/servers`);
  await page.getByRole('heading', { name: 'Servers', level: 1 }).waitFor();
  await page.getByRole('link', { name: 'Password' }).click();
  await page.getByRole('heading', { name: 'Password', level: 1 }).waitFor();
  await page.getByLabel('Current password').fill(PASSWORD);
  await page.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
  await page.getByLabel('New password again').fill(NEW_PASSWORD);
  if (revoke) await page.getByRole('checkbox', { name: /Also revoke every API token/ }).check();
  // The new session's token comes late (a slow network; seen in CI under load): the events stream, ended by the
  // change, waits for it rather than reconnecting with the revoked one, a 401 the console would show (api.js).
  await page.route('**/dashboard/session-token', async (route) => {
    await new Promise((r) => setTimeout(r, 3_000));
    await route.continue();
  });
  await page.getByRole('button', { name: 'Change password' }).click();
  await page.locator('#password-changed').waitFor();
  await page.unroute('**/dashboard/session-token');
  await p.screenshot(`password-changed-${revoke ? 'revoked' : 'kept'}`);

  // The other browser is signed out: its next request finds its token and session gone. That is a click, or
  // its own poll of the Servers list when that comes first (then the link is gone and the click gives up).
  const signInForm = other.page.getByRole('heading', { name: 'Sign in' });
  if (!(await signInForm.isVisible())) {
    await other.page.getByRole('link', { name: 'API tokens' }).click({ timeout: 5_000 }).catch(() => undefined);
  }
  await signInForm.waitFor();
  expect(await other.page.getByRole('alert').textContent()).toMatch(/session has ended/);

  // This browser carries on, in a new session with a new page token.
  await page.getByRole('link', { name: 'API tokens' }).click();
  await page.getByRole('heading', { name: 'API tokens', level: 1 }).waitFor();
  // The list arrives after the heading; the page's own tokens are never in it, the revoked API token neither.
  await page.locator(revoke ? 'text=No tokens.' : 'tr[data-token-id]').first().waitFor();
  expect(await page.locator('tr[data-token-id]').count()).toBe(revoke ? 0 : 1);
  expect(p.consoleErrors).toEqual([]);

  await api.get('/v1/servers').set('Authorization', `Bearer ${token}`).expect(tokenStatus);
  const signIn = (password: string) =>
    api.post('/dashboard/sign-in').set('Origin', origin).send({ email: EMAIL, password });
  await signIn(PASSWORD).expect(401);
  await signIn(NEW_PASSWORD).expect(200);
}, 120_000);

describe('over HTTP', () => {
  const signIn = (http: supertest.Agent) =>
    http.post('/dashboard/sign-in').set('Origin', ctx.service.origin).send({ email: EMAIL, password: PASSWORD }).expect(200);
  const change = (http: supertest.Agent, csrf: string, body: object) =>
    http.post('/dashboard/password').set('Origin', ctx.service.origin).set('X-CSRF-Token', csrf).send(body);

  test('a wrong current password, a bad body, no CSRF token or another origin change nothing', async () => {
    const http = supertest.agent(ctx.service.origin);
    const { csrf_token: csrf } = (await signIn(http)).body as { csrf_token: string };
    const body = { current_password: PASSWORD, new_password: NEW_PASSWORD };

    const wrong = await change(http, csrf, { ...body, current_password: 'not it' }).expect(400);
    expect(wrong.body.errors).toEqual([{ pointer: '/body/current_password', detail: 'is not the current password' }]);
    const bad = await change(http, csrf, { current_password: PASSWORD, new_password: 'short', revoke_tokens: 'yes' }).expect(400);
    expect(bad.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(['/body/new_password', '/body/revoke_tokens']);
    await change(http, 'x'.repeat(43), body).expect(403);
    await http.post('/dashboard/password').set('Origin', 'https://evil.example').set('X-CSRF-Token', csrf).send(body).expect(403);
    await http.post('/dashboard/password').set('X-CSRF-Token', csrf).send(body).expect(403); // no Origin
    await supertest(ctx.service.origin).post('/dashboard/password').set('Origin', ctx.service.origin).send(body).expect(401);

    // Nothing changed: the session lives on and the old password still signs in.
    expect((await http.get('/dashboard/session').expect(200)).body).toMatchObject({ signed_in: true });
    await signIn(supertest.agent(ctx.service.origin));
  }, 60_000);

  test('the answer starts a new session for this browser and says what ended', async () => {
    const http = supertest.agent(ctx.service.origin);
    const first = (await signIn(http)).body as { csrf_token: string };
    await signIn(supertest.agent(ctx.service.origin)); // another browser
    const res = await change(http, first.csrf_token, { current_password: PASSWORD, new_password: NEW_PASSWORD, revoke_tokens: true }).expect(200);
    expect(res.body).toMatchObject({ signed_in: true, email: EMAIL, sessions_ended: 2 });
    expect(res.body.csrf_token).not.toBe(first.csrf_token);
    expect(ctx.service.db.prepare('SELECT COUNT(*) FROM sessions').pluck().get()).toBe(1);
  }, 60_000);
});
