// Session lifetime over plain HTTP with a clock the test moves: a session and the API token handed out for it
// end together, and signing in again replaces the browser's previous session.
import supertest from 'supertest';
import { manualClock } from '../helpers/app';
import { EMAIL, PASSWORD, startDashboard, type Dashboard } from './helpers';

// Both tests sign in (a session, tokens) and move the clock: each gets its own service, database and clock.
let clock: ReturnType<typeof manualClock>;
let service: Dashboard;

beforeEach(async () => {
  clock = manualClock(Date.now());
  service = await startDashboard({ clock, env: { GAME_PORT_RANGE: '27440-27444' } });
}, 60_000);
afterEach(async () => {
  try {
    service.expectContract();
  } finally {
    await service.close();
  }
}, 60_000);

async function signIn(http: supertest.Agent) {
  const res = await http.post('/dashboard/sign-in').set('Origin', service.origin).send({ email: EMAIL, password: PASSWORD }).expect(200);
  return res.body as { csrf_token: string; expires_at: string };
}

function sessionToken(http: supertest.Agent, csrf: string) {
  return http.post('/dashboard/session-token').set('Origin', service.origin).set('X-CSRF-Token', csrf);
}

test('the session and its API token expire together, 12 hours after sign-in', async () => {
  const http = supertest.agent(service.origin);
  const session = await signIn(http);
  expect(Date.parse(session.expires_at) - clock.now()).toBe(12 * 3600_000);
  const token = (await sessionToken(http, session.csrf_token).expect(201)).body as { token: string; expires_at: string };
  expect(token.expires_at).toBe(session.expires_at);

  clock.advance(12 * 3600_000 - 30_000); // 30 s left: too little for a new token
  await http.get('/v1/servers').set('Authorization', `Bearer ${token.token}`).expect(200);
  await sessionToken(http, session.csrf_token).expect(401);

  clock.advance(30_000);
  await http.get('/v1/servers').set('Authorization', `Bearer ${token.token}`).expect(401);
  expect((await http.get('/dashboard/session').expect(200)).body).toEqual({ signed_in: false });
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
