// Dashboard sign-in under attack, over real HTTP with a clock the test moves: progressive delay per
// email+address pair instead of a lock (docs/conventions.md "Authentication"). Client addresses come from
// X-Forwarded-For with TRUST_PROXY, as behind a reverse proxy.
import supertest from 'supertest';
import { manualClock } from '../helpers/app';
import { createUsersRepo } from '../../src/store/users-repo';
import { hashPasswordSync } from '../../src/dashboard/passwords';
import { MAX_FACTOR_FAILURES } from '../../src/dashboard/sign-in-factor';
import { newTotpSecret, totpAt } from '../../src/dashboard/totp';
import { createSecondFactorsRepo } from '../../src/store/second-factors-repo';
import { EMAIL as VICTIM, PASSWORD, startDashboard, type Dashboard } from './helpers';

const OTHER = 'other@example.com';
const X = '203.0.113.7'; // the attacker's address, which the victim and another user share (one NAT)
const Y = '198.51.100.9';
const Z = '192.0.2.44';
const WRONG = 'not the password';
const CHEAP = { N: 2 ** 10, r: 8, p: 1 };

// Every test signs in and moves the clock: each gets its own service, database and clock.
let clock: ReturnType<typeof manualClock>;
let service: Dashboard;

async function start(env: Record<string, string> = {}) {
  clock = manualClock(Date.now());
  service = await startDashboard({ clock, env: { TRUST_PROXY: 'true', ...env } });
  // Cheap hashes for the two accounts, since these tests check their passwords dozens of times.
  const users = createUsersRepo(service.db, clock);
  for (const email of [VICTIM, OTHER]) users.setPasswordHash(users.ensure(email).id, hashPasswordSync(PASSWORD, CHEAP));
}
afterEach(async () => {
  try {
    service?.expectContract();
  } finally {
    await service?.close();
  }
}, 60_000);

function signIn(from: string, email: string, password: string, http: supertest.Agent = supertest(service.origin)) {
  return http
    .post('/dashboard/sign-in')
    .set('Origin', service.origin)
    .set('X-Forwarded-For', from)
    .send({ email, password });
}

/** The statuses (and Retry-After, on 429) of `n` wrong passwords in a row, the clock standing still. */
async function hammer(n: number, from = X, email = VICTIM) {
  const answers: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await signIn(from, email, WRONG);
    answers.push(res.status === 429 ? `429 ${res.headers['retry-after']}` : String(res.status));
  }
  return answers;
}

type Row = [who: string, from: string, email: string, password: string, want: number];

test('an attacker failing 20 times for one email from X is delayed ever longer, and keeps nobody else out', async () => {
  await start();
  await signIn(X, VICTIM, PASSWORD).expect(200); // the victim has signed in from X before: X is known for them

  // 5 free failures (SIGN_IN_FREE_FAILURES), then the pair waits 1 s, 2 s, 4 s … up to 900 s (SIGN_IN_MAX_DELAY_S).
  // X is known for the victim, so each attempt is still checked (a wrong one makes the wait longer) and answered 429.
  const answers = await hammer(20);
  expect(answers).toEqual([
    ...Array(5).fill('401'),
    ...[2, 4, 8, 16, 32, 64, 128, 256, 512, 900, 900, 900, 900, 900, 900].map((s) => `429 ${s}`),
  ]);

  const rows: Row[] = [
    ['the victim from another address', Y, VICTIM, PASSWORD, 200],
    ['the victim from the known address X, with the right password', X, VICTIM, PASSWORD, 200],
    ['another user behind X, who never signed in from there', X, OTHER, PASSWORD, 200],
    ['another user behind X, mistyping once', X, OTHER, WRONG, 401],
    ['the attacker at X, again', X, VICTIM, WRONG, 429],
  ];
  for (const [who, from, email, password, want] of rows) {
    const res = await signIn(from, email, password);
    expect({ who, status: res.status }).toEqual({ who, status: want });
    if (want === 429) expect(res.body).toMatchObject({ code: 'rate_limited' });
  }
}, 120_000);

test('from an unknown address the pair waits unchecked: Retry-After counts down, and even the right password waits', async () => {
  await start();
  expect(await hammer(6, Z)).toEqual([...Array(5).fill('401'), '429 1']);
  clock.advance(1000);
  expect(await hammer(2, Z)).toEqual(['401', '429 2']); // the sixth failure doubles the wait
  clock.advance(1000);
  const waiting = await signIn(Z, VICTIM, PASSWORD).expect(429); // not checked, so no oracle and no failure
  expect(waiting.headers['retry-after']).toBe('1');
  expect(waiting.body).toMatchObject({ code: 'rate_limited', status: 429 });
  clock.advance(1000);
  await signIn(Z, VICTIM, PASSWORD).expect(200);
  await signIn(Y, VICTIM, PASSWORD).expect(200);
}, 120_000);

test('a known address is checked only up to a ceiling; the victim\'s own browser, even after its session ended, still gets in', async () => {
  await start();
  const browser = supertest.agent(service.origin);
  await signIn(X, VICTIM, PASSWORD, browser).expect(200);
  clock.advance(13 * 3600_000); // the 12-hour session has ended; its cookie still marks the browser for 7 days
  expect((await browser.get('/dashboard/session').expect(200)).body).toEqual({ signed_in: false });

  // 30 checked failures from the known address X (5 free, then 25 inside the growing wait): the ceiling.
  const answers = await hammer(30);
  expect(answers.filter((a) => a.startsWith('429'))).toHaveLength(25);
  const rows: Row[] = [
    ['anyone at X with the right password, past the ceiling (unchecked)', X, VICTIM, PASSWORD, 429],
    ['the victim from another address', Y, VICTIM, PASSWORD, 200],
  ];
  for (const [who, from, email, password, want] of rows) {
    expect({ who, status: (await signIn(from, email, password)).status }).toEqual({ who, status: want });
  }
  await signIn(X, VICTIM, PASSWORD, browser).expect(200);
  expect((await browser.get('/dashboard/session').expect(200)).body).toMatchObject({ signed_in: true, email: VICTIM });
}, 180_000);

test('many emails failing from one address make only newcomers there wait, for the rest of the 15 minutes', async () => {
  await start({ SIGN_IN_ADDRESS_FAILURES: '4' });
  await signIn(X, OTHER, PASSWORD).expect(200); // OTHER has signed in from X before
  for (let i = 0; i < 4; i++) await signIn(X, `guess${i}@example.com`, WRONG).expect(401);
  const rows: Row[] = [
    ['the victim, never signed in from X', X, VICTIM, PASSWORD, 429],
    ['another user known at X', X, OTHER, PASSWORD, 200],
    ['the victim from another address', Y, VICTIM, PASSWORD, 200],
  ];
  for (const [who, from, email, password, want] of rows) {
    expect({ who, status: (await signIn(from, email, password)).status }).toEqual({ who, status: want });
  }
  clock.advance(15 * 60_000);
  await signIn(X, VICTIM, PASSWORD).expect(200);
}, 120_000);

test('wrong second factors from many addresses end the pending sign-in after ten: each round of guesses costs the password', async () => {
  await start();
  const users = createUsersRepo(service.db, clock);
  const user = users.ensure(VICTIM);
  const factors = createSecondFactorsRepo(service.db, clock);
  const secret = newTotpSecret();
  factors.startTotp(user.id, secret);
  factors.confirmTotp(user.id, 0);
  const http = supertest.agent(service.origin);
  const first = await signIn(X, VICTIM, PASSWORD, http);
  expect(first.body).toMatchObject({ signed_in: false, second_factor: { totp: true } });
  const wrong = String((Number(totpAt(secret, clock.now())) + 1) % 1_000_000).padStart(6, '0');
  const answers: number[] = [];
  // Each guess from another address, so the per-address throttle never waits: the pending sign-in's own count ends it.
  for (let i = 0; i < MAX_FACTOR_FAILURES; i++) {
    const res = await http.post('/dashboard/sign-in/second-factor').set('Origin', service.origin).set('X-Forwarded-For', `203.0.113.${100 + i}`).send({ code: wrong });
    answers.push(res.status);
    if (i === MAX_FACTOR_FAILURES - 1) expect(res.body.detail).toMatch(/sign in with your password again/);
  }
  expect(answers).toEqual(Array(MAX_FACTOR_FAILURES).fill(401));
  // Gone: even the right code is refused now; the password is needed again.
  const right = await http.post('/dashboard/sign-in/second-factor').set('Origin', service.origin).set('X-Forwarded-For', Y).send({ code: totpAt(secret, clock.now()) });
  expect(right.status).toBe(401);
  expect((await http.get('/dashboard/session')).body).toEqual({ signed_in: false });
});
