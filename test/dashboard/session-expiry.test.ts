// Session lifetime over plain HTTP with a clock the test moves: the page's API token lives minutes and never
// past its session, a renewal revokes the token it replaces, and signing in again replaces the browser's
// previous session.
import supertest from 'supertest';
import { manualClock } from '../helpers/app';
import { EMAIL, PASSWORD, startDashboard, type Dashboard } from './helpers';

// Both tests sign in (a session, tokens) and move the clock: each gets its own service, database and clock.
let clock: ReturnType<typeof manualClock>;
let service: Dashboard;

beforeEach(async () => {
  clock = manualClock(Date.now());
  service = await startDashboard({ clock });
}, 60_000);
afterEach(() => service.finish(), 60_000);

async function signIn(http: supertest.Agent) {
  const res = await http.post('/dashboard/sign-in').set('Origin', service.origin).send({ email: EMAIL, password: PASSWORD }).expect(200);
  return res.body as { csrf_token: string; expires_at: string };
}

function sessionToken(http: supertest.Agent, csrf: string) {
  return http.post('/dashboard/session-token').set('Origin', service.origin).set('X-CSRF-Token', csrf);
}

test('the page token lives 10 minutes (DASHBOARD_TOKEN_TTL_S), never past the 12-hour session', async () => {
  const http = supertest.agent(service.origin);
  const session = await signIn(http);
  expect(Date.parse(session.expires_at) - clock.now()).toBe(12 * 3600_000);
  const token = (await sessionToken(http, session.csrf_token).expect(201)).body as { token: string; expires_at: string; expires_in: number };
  expect(token.expires_in).toBe(600);
  expect(Date.parse(token.expires_at) - clock.now()).toBe(600_000);

  clock.advance(600_000 - 1);
  await http.get('/v1/servers').set('Authorization', `Bearer ${token.token}`).expect(200);
  clock.advance(1);
  await http.get('/v1/servers').set('Authorization', `Bearer ${token.token}`).expect(401);

  clock.advance(12 * 3600_000 - 600_000 - 300_000); // 5 minutes of the session left: the token ends with it
  const last = (await sessionToken(http, session.csrf_token).expect(201)).body as { token: string; expires_at: string; expires_in: number };
  expect(last).toMatchObject({ expires_at: session.expires_at, expires_in: 300 });
  clock.advance(300_000 - 30_000); // 30 s left: too little for a new token
  await http.get('/v1/servers').set('Authorization', `Bearer ${last.token}`).expect(200);
  await sessionToken(http, session.csrf_token).expect(401);

  clock.advance(30_000);
  await http.get('/v1/servers').set('Authorization', `Bearer ${last.token}`).expect(401);
  expect((await http.get('/dashboard/session').expect(200)).body).toEqual({ signed_in: false });
});

test('a renewal revokes the token it replaces, but only one of its own session', async () => {
  const http = supertest.agent(service.origin);
  const session = await signIn(http);
  const other = supertest.agent(service.origin);
  const otherSession = await signIn(other);
  const othersToken = (await sessionToken(other, otherSession.csrf_token).expect(201)).body as { id: string; token: string };
  const first = (await sessionToken(http, session.csrf_token).expect(201)).body as { id: string; token: string };

  const second = (await sessionToken(http, session.csrf_token).send({ replaces: first.id }).expect(201)).body as { id: string; token: string };
  await http.get('/v1/servers').set('Authorization', `Bearer ${first.token}`).expect(401);
  await http.get('/v1/servers').set('Authorization', `Bearer ${second.token}`).expect(200);

  await sessionToken(http, session.csrf_token).send({ replaces: othersToken.id }).expect(201);
  await http.get('/v1/servers').set('Authorization', `Bearer ${othersToken.token}`).expect(200);
  const bad = await sessionToken(http, session.csrf_token).send({ replaces: 42, extra: true }).expect(400);
  expect(bad.body.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual(['/body/extra', '/body/replaces']);
});

test('signing in again ends the previous session of that browser and revokes its tokens', async () => {
  const http = supertest.agent(service.origin);
  const first = await signIn(http);
  const token = (await sessionToken(http, first.csrf_token).expect(201)).body as { token: string };
  const second = await signIn(http);
  expect(second.csrf_token).not.toBe(first.csrf_token);
  await http.get('/v1/servers').set('Authorization', `Bearer ${token.token}`).expect(401);
  await sessionToken(http, second.csrf_token).expect(201);
  service.expectContract();
});

test("listTokens leaves out the pages' own tokens, across renewals and sessions; the customer's tokens stay listed", async () => {
  const http = supertest.agent(service.origin);
  const session = await signIn(http);
  const first = (await sessionToken(http, session.csrf_token).expect(201)).body as { id: string; token: string };
  const second = (await sessionToken(http, session.csrf_token).send({ replaces: first.id }).expect(201)).body as { id: string; token: string };
  const otherTab = (await sessionToken(http, session.csrf_token).expect(201)).body as { id: string };
  const page = { Authorization: `Bearer ${second.token}` };
  const made = (await http.post('/v1/tokens').set(page).send({ name: 'ci deploy', scopes: ['servers:read'] }).expect(201)).body as { id: string };
  const own = service.token(EMAIL, ['servers:read', 'servers:write', 'tokens:manage']); // an API token of the same user with every scope, as the CLI makes them (it sees all the user's tokens: the Tokens tag)

  const listed = (await http.get('/v1/tokens?limit=100').set(page).expect(200)).body as { data: { id: string; name: string }[] };
  expect(listed.data.map((t) => t.name).sort()).toEqual(['ci deploy', 'test']);
  expect(listed.data.map((t) => t.id)).not.toEqual(expect.arrayContaining([second.id]));
  expect(listed.data.map((t) => t.id)).not.toContain(otherTab.id);
  expect(listed.data.map((t) => t.id)).toContain(made.id);
  // The same list whichever token asks, and page by page.
  const byApiToken = (await http.get('/v1/tokens?limit=1').set('Authorization', `Bearer ${own}`).expect(200)).body as { data: { id: string }[]; has_more: boolean; next_cursor: string };
  expect(byApiToken).toMatchObject({ data: [{ id: listed.data[0].id }], has_more: true });
  const next = (await http.get(`/v1/tokens?limit=1&starting_after=${byApiToken.next_cursor}`).set('Authorization', `Bearer ${own}`).expect(200)).body;
  expect(next).toMatchObject({ data: [{ id: listed.data[1].id }], has_more: false });
  service.expectContract();
});
