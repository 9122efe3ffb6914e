// Every /dashboard route is rate limited (docs/conventions.md "Rate limiting"), over real HTTP: the page and its
// files per client address (DASHBOARD_FILES_PER_MINUTE), the session routes per session, or per address without
// one (DASHBOARD_SESSION_PER_MINUTE). Past the limit: a 429 rate_limited problem with Retry-After. Sign-in has
// its own progressive delay (sign-in-throttle.test.ts).
import supertest from 'supertest';
import { EMAIL, PASSWORD, startDashboard, type Dashboard } from './helpers';

const LIMIT = 3;
const X = '203.0.113.7';

// Each test spends a budget: its own service, so no test sees another's counts.
let service: Dashboard;
beforeEach(async () => {
  service = await startDashboard({
    env: {
      DASHBOARD_FILES_PER_MINUTE: String(LIMIT),
      DASHBOARD_SESSION_PER_MINUTE: String(LIMIT),
      TRUST_PROXY: 'true',
    },
  });
}, 60_000);
afterEach(() => service.finish(), 60_000);

/** A browser behind address `from`, signed in; its CSRF token. */
async function signedIn(from = X) {
  const http = supertest.agent(service.origin);
  const res = await http.post('/dashboard/sign-in').set('Origin', service.origin).set('X-Forwarded-For', from)
    .send({ email: EMAIL, password: PASSWORD }).expect(200);
  return { http, csrf: (res.body as { csrf_token: string }).csrf_token };
}

type Send = (c: { http: supertest.Agent; csrf: string }) => supertest.Test;
const post = (path: string, body?: object): Send => ({ http, csrf }) => {
  const req = http.post(path).set('Origin', service.origin).set('X-CSRF-Token', csrf).set('X-Forwarded-For', X);
  return body ? req.send(body) : req;
};
const get = (path: string): Send => ({ http }) => http.get(path).set('X-Forwarded-For', X);

// `spend` uses the budget (`send` itself unless given), then `send` must be refused.
const cases: [string, { signIn: boolean; send: Send; spend?: Send }][] = [
  ['the page', { signIn: false, send: get('/') }],
  ['a static file', { signIn: false, send: get('/dashboard/assets/app.css') }],
  ['a missing static file', { signIn: false, send: get('/dashboard/assets/nothing.js') }],
  ['the session, signed out (per address)', { signIn: false, send: get('/dashboard/session') }],
  ['the session, signed in (per session)', { signIn: true, send: get('/dashboard/session') }],
  ['a page token', { signIn: true, send: post('/dashboard/session-token') }],
  ['a password change', { signIn: true, send: post('/dashboard/password', { current_password: 'x', new_password: 'y' }) }],
  ['sign-out (the session budget)', { signIn: true, spend: get('/dashboard/session'), send: post('/dashboard/sign-out') }],
  ['an unknown /dashboard path', { signIn: false, send: get('/dashboard/nothing') }],
];

test.each(cases)('%s answers 429 past its limit, with a problem document and Retry-After', async (_name, { signIn, send, spend = send }) => {
  const client = signIn ? await signedIn() : { http: supertest.agent(service.origin), csrf: '' };
  for (let i = 0; i < LIMIT; i++) expect((await spend(client)).status).not.toBe(429);
  const res = await send(client).expect(429);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ code: 'rate_limited', status: 429 });
  expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
  expect(res.headers.ratelimit).toBeDefined();
}, 60_000);

test('the session routes count per session: another browser behind the same address is not held up', async () => {
  const first = await signedIn();
  const second = await signedIn();
  for (let i = 0; i < LIMIT; i++) await get('/dashboard/session')(first).expect(200);
  await get('/dashboard/session')(first).expect(429);
  expect((await get('/dashboard/session')(second).expect(200)).body).toMatchObject({ signed_in: true });
  await post('/dashboard/session-token')(second).expect(201);
}, 60_000);

test('the page and its files count per address: another address is not held up', async () => {
  const http = supertest(service.origin);
  for (let i = 0; i < LIMIT; i++) await http.get('/').set('X-Forwarded-For', X).expect(200);
  await http.get('/dashboard/assets/app.css').set('X-Forwarded-For', X).expect(429);
  await http.get('/').set('X-Forwarded-For', '198.51.100.9').expect(200);
}, 60_000);
