import Database from 'better-sqlite3';
import supertest from 'supertest';
import { createTestApp, manualClock, type TestApp, type TestAppOptions } from '../helpers/app';
import { until } from '../helpers/wait';
import { hashToken } from '../../src/auth/tokens';
import { hashPasswordSync } from '../../src/dashboard/passwords';

let t: TestApp;
let admin: string;

/** A fresh app with alice's token (named 'test'). */
async function startApp(options: TestAppOptions = {}) {
  t = await createTestApp(options);
  admin = t.token('alice@example.com');
}

/** The tests of the calling describe each get their own app and database. */
function appPerTest(options: () => TestAppOptions = () => ({})) {
  beforeEach(() => startApp(options()));
  afterEach(() => t.finish());
}

const auth = (token: string) => ({ Authorization: `Bearer ${token}` });

describe('tokens', () => {
  appPerTest();

  test('create shows the secret once; it works; only its SHA-256 hash is stored', async () => {
    const res = await t.http.post('/v1/tokens').set(auth(admin)).send({ name: 'ci', scopes: ['servers:read'], expires_in_seconds: 3600 });
    expect(res.status).toBe(201);
    expect(res.body.token).toMatch(/^gsh_[A-Za-z0-9_-]{43}$/);
    expect(res.body.prefix).toBe(res.body.token.slice(0, 9));
    expect(Date.parse(res.body.expires_at) - Date.parse(res.body.created_at)).toBe(3600_000);
    expect((await t.http.get('/v1/servers').set(auth(res.body.token))).status).toBe(200);

    const stored = t.db.prepare('SELECT * FROM tokens WHERE id = ?').get(res.body.id) as Record<string, unknown>;
    expect(stored.hash).toBe(hashToken(res.body.token));
    expect(JSON.stringify(stored)).not.toContain(res.body.token);

    const got = await t.http.get(`/v1/tokens/${res.body.id}`).set(auth(admin));
    expect(got.body.token).toBeUndefined();
    expect(got.body.last_used_at).not.toBeNull();
  });

  test('list pages through your tokens; another user sees none of them', async () => {
    // The tokens listed: alice's 'test' (from startApp), then 'ci', t0, t1 and t2.
    await t.http.post('/v1/tokens').set(auth(admin)).send({ name: 'ci', scopes: ['servers:read'], expires_in_seconds: 3600 }).expect(201);
    for (let i = 0; i < 3; i++) await t.http.post('/v1/tokens').set(auth(admin)).send({ name: `t${i}`, scopes: ['servers:read'] });
    const first = await t.http.get('/v1/tokens?limit=2').set(auth(admin));
    expect(first.body.has_more).toBe(true);
    const second = await t.http.get(`/v1/tokens?limit=100&starting_after=${first.body.next_cursor}`).set(auth(admin));
    const all = [...first.body.data, ...second.body.data];
    expect(all.map((x: { name: string }) => x.name)).toEqual(['test', 'ci', 't0', 't1', 't2']);

    const bob = t.token('bob@example.com');
    const bobs = await t.http.get('/v1/tokens').set(auth(bob));
    expect(bobs.body.data).toHaveLength(1);
    const foreign = await t.http.get(`/v1/tokens/${all[1].id}`).set(auth(bob));
    expect(foreign.status).toBe(404);
    expect((await t.http.delete(`/v1/tokens/${all[1].id}`).set(auth(bob))).status).toBe(404);
    expect((await t.http.get(`/v1/tokens/${all[1].id}`).set(auth(admin))).status).toBe(200);
  });

  test('revoke: 204, then 404 for the token and 401 for its holder', async () => {
    const made = await t.http.post('/v1/tokens').set(auth(admin)).send({ name: 'short-lived', scopes: ['servers:read'] });
    expect((await t.http.delete(`/v1/tokens/${made.body.id}`).set(auth(admin))).status).toBe(204);
    expect((await t.http.get(`/v1/tokens/${made.body.id}`).set(auth(admin))).status).toBe(404);
    expect((await t.http.delete(`/v1/tokens/${made.body.id}`).set(auth(admin))).status).toBe(404);
    expect((await t.http.get('/v1/servers').set(auth(made.body.token))).status).toBe(401);
  });
});

describe('tokens: bad input', () => {
  // Read-only: every case is refused with 400 and creates nothing, so the table shares one app built once.
  beforeAll(startApp);
  afterAll(() => t.close());
  afterEach(() => t.expectContract());

  test.each([
    ['no scopes', { name: 'x', scopes: [] }, '/body/scopes'],
    ['unknown scope', { name: 'x', scopes: ['admin'] }, '/body/scopes/0'],
    ['repeated scope', { name: 'x', scopes: ['servers:read', 'servers:read'] }, '/body/scopes'],
    ['expiry under a minute', { name: 'x', scopes: ['servers:read'], expires_in_seconds: 5 }, '/body/expires_in_seconds'],
    ['expiry as text', { name: 'x', scopes: ['servers:read'], expires_in_seconds: '1d' }, '/body/expires_in_seconds'],
  ])('%s → 400', async (_name, body, pointer) => {
    const res = await t.http.post('/v1/tokens').set(auth(admin)).send(body);
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer);
  });
});

describe('catalog', () => {
  appPerTest();

  test('plans and versions publish what create accepts', async () => {
    const plans = await t.http.get('/v1/plans').set(auth(admin));
    const versions = await t.http.get('/v1/versions').set(auth(admin));
    expect(plans.body.data.map((p: { id: string }) => p.id)).toEqual(['micro', 'small', 'medium', 'large']);
    expect(versions.body.data.length).toBeGreaterThan(0);
    for (const v of versions.body.data) expect(v.id).toBe(`${v.software}-${v.game_version}`);
    const v = versions.body.data[versions.body.data.length - 1];
    const created = await t.http
      .post('/v1/servers')
      .set(auth(admin))
      .send({ name: 'from the catalog', plan: plans.body.data[0].id, version: v.id });
    expect(created.status).toBe(201);
    expect(created.body.game_version).toBe(v.game_version);
  });
});

/**
 * Alice signed in to the dashboard over HTTP (a real socket: the Origin check needs the port): `pageToken()` is
 * what the page gets from POST /dashboard/session-token, a token linked to her session.
 */
async function dashboardSession(email = 'alice@example.com') {
  const password = 'correct horse battery';
  const user = t.store.users.ensure(email);
  t.store.users.setPasswordHash(user.id, hashPasswordSync(password, t.config.dashboard.passwordCost)); // the app's cost: 2^10 in tests
  const { base, close } = await t.listen();
  const agent = supertest.agent(base);
  const signedIn = await agent.post('/dashboard/sign-in').set('Origin', base).send({ email, password }).expect(200);
  const post = (path: string) => agent.post(path).set('Origin', base).set('X-CSRF-Token', signedIn.body.csrf_token);
  return {
    pageToken: async () => (await post('/dashboard/session-token').expect(201)).body as { id: string; token: string },
    signOut: () => post('/dashboard/sign-out').expect(204),
    close,
  };
}

const rows = (ids: string[]) =>
  (t.db.prepare('SELECT id FROM tokens WHERE id IN (SELECT value FROM json_each(?))').all(JSON.stringify(ids)) as { id: string }[]).map((r) => r.id);
const create = (token: string, body: object) => t.http.post('/v1/tokens').set(auth(token)).send(body);

describe('a user may hold TOKENS_PER_USER live tokens', () => {
  let clock: ReturnType<typeof manualClock>;
  appPerTest(() => ({ clock: (clock = manualClock()), env: { TOKENS_PER_USER: '3' } }));

  test('one more is 403 quota_exceeded with quota, limit and used, and writes nothing; revoked and expired ones do not count', async () => {
    // alice holds 'test' (startApp); two more reach the cap of 3, one of them expiring in a minute.
    await create(admin, { name: 'a', scopes: ['servers:read'] }).expect(201);
    await create(admin, { name: 'short', scopes: ['servers:read'], expires_in_seconds: 60 }).expect(201);
    const before = t.db.prepare('SELECT COUNT(*) FROM tokens').pluck().get();
    const over = await create(admin, { name: 'one too many', scopes: ['servers:read'] });
    expect(over.status).toBe(403);
    expect(over.body).toMatchObject({ code: 'quota_exceeded', quota: 'tokens', limit: 3, used: 3 });
    expect(t.db.prepare('SELECT COUNT(*) FROM tokens').pluck().get()).toBe(before);
    // Another user has a budget of their own.
    await create(t.token('bob@example.com'), { name: 'bob', scopes: ['servers:read'] }).expect(201);

    clock.advance(60_000); // 'short' expired: it no longer counts
    await create(admin, { name: 'after expiry', scopes: ['servers:read'] }).expect(201);
    await create(admin, { name: 'over again', scopes: ['servers:read'] }).expect(403);
    const listed = await t.http.get('/v1/tokens').set(auth(admin));
    const a = listed.body.data.find((x: { name: string }) => x.name === 'a');
    await t.http.delete(`/v1/tokens/${a.id}`).set(auth(admin)).expect(204); // revoked: it no longer counts
    await create(admin, { name: 'after revoke', scopes: ['servers:read'] }).expect(201);
  });

  test('a parallel burst creates exactly up to the cap (the count and the insert are one transaction)', async () => {
    const res = await Promise.all(Array.from({ length: 12 }, (_, i) => create(admin, { name: `burst ${i}`, scopes: ['servers:read'] })));
    expect(res.filter((r) => r.status === 201)).toHaveLength(2);
    expect(res.filter((r) => r.status === 403).every((r) => r.body.code === 'quota_exceeded')).toBe(true);
    expect(t.db.prepare("SELECT COUNT(*) FROM tokens WHERE name LIKE 'burst %'").pluck().get()).toBe(2);
  });

  test('the dashboard page\'s own tokens neither count nor are refused at the cap', async () => {
    await create(admin, { name: 'a', scopes: ['servers:read'] }).expect(201);
    await create(admin, { name: 'b', scopes: ['servers:read'] }).expect(201); // at the cap
    const dashboard = await dashboardSession();
    try {
      const page = await dashboard.pageToken(); // a fourth live token, for the signed-in page
      await dashboard.pageToken();
      const over = await create(page.token, { name: 'from settings', scopes: ['servers:read'] });
      expect(over.body).toMatchObject({ code: 'quota_exceeded', limit: 3, used: 3 });
    } finally {
      await dashboard.close();
    }
  });
});

describe('a token cannot outlive the token that creates it', () => {
  let clock: ReturnType<typeof manualClock>;
  appPerTest(() => ({ clock: (clock = manualClock()) }));
  const HOUR = 3600;
  const expiresIn = (body: { created_at: string; expires_at: string | null }) =>
    body.expires_at === null ? null : (Date.parse(body.expires_at) - Date.parse(body.created_at)) / 1000;

  test.each([
    ['left out: it expires with its parent', 201, {}, HOUR],
    ['shorter', 201, { expires_in_seconds: 1800 }, 1800],
    ['as long', 201, { expires_in_seconds: HOUR }, HOUR],
    ['longer', 400, { expires_in_seconds: HOUR + 1 }, undefined],
    ['null, as left out: it expires with its parent', 201, { expires_in_seconds: null }, HOUR],
  ])('parent expires in an hour, child %s → %s', async (_name, status, expiry, seconds) => {
    const parent = t.token('alice@example.com', ['tokens:manage', 'servers:read'], HOUR);
    const before = t.db.prepare('SELECT COUNT(*) FROM tokens').pluck().get();
    const res = await create(parent, { name: 'child', scopes: ['servers:read'], ...expiry });
    expect(res.status).toBe(status);
    if (status === 201) {
      expect(expiresIn(res.body)).toBe(seconds);
    } else {
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.errors).toEqual([{ pointer: '/body/expires_in_seconds', detail: expect.stringMatching(/^must be at most 3600: /) }]);
      expect(t.db.prepare('SELECT COUNT(*) FROM tokens').pluck().get()).toBe(before);
    }
  });

  test('the child is refused once its parent has expired', async () => {
    const parent = t.token('alice@example.com', ['tokens:manage', 'servers:read'], HOUR);
    const child = await create(parent, { name: 'child', scopes: ['servers:read'] }).expect(201);
    clock.advance(HOUR * 1000);
    await t.http.get('/v1/plans').set(auth(child.body.token)).expect(401);
  });

  test('a parent that never expires bounds nothing: left out is never, any expiry is allowed', async () => {
    const never = await create(admin, { name: 'never', scopes: ['servers:read'] }).expect(201);
    expect(never.body.expires_at).toBeNull();
    const year = await create(admin, { name: 'a year', scopes: ['servers:read'], expires_in_seconds: 365 * 86400 }).expect(201);
    expect(expiresIn(year.body)).toBe(365 * 86400);
  });

  test('tokens made in the dashboard (through the page token, for the signed-in user) are not bound by the page token', async () => {
    const dashboard = await dashboardSession();
    try {
      const page = await dashboard.pageToken();
      const never = await create(page.token, { name: 'from settings', scopes: ['servers:read'] }).expect(201);
      expect(never.body.expires_at).toBeNull();
      const year = await create(page.token, { name: 'a year', scopes: ['servers:read'], expires_in_seconds: 365 * 86400 }).expect(201);
      expect(expiresIn(year.body)).toBe(365 * 86400);
    } finally {
      await dashboard.close();
    }
  });
});

describe('old token rows are purged', () => {
  let clock: ReturnType<typeof manualClock>;
  const DAY = 86_400_000;
  appPerTest(() => ({
    clock: (clock = manualClock()),
    boot: true,
    env: { TOKEN_RETENTION_DAYS: '30', TOKEN_PURGE_INTERVAL_S: '1', METRICS_INTERVAL_S: '3600' },
  }));

  /** The ids of these tokens whose rows are still in the database file, read through a connection of its own. */
  function inFile(ids: string[]): string[] {
    const file = new Database(t.config.dbFile, { readonly: true });
    try {
      const found = file.prepare('SELECT id FROM tokens WHERE id IN (SELECT value FROM json_each(?))').all(JSON.stringify(ids));
      return (found as { id: string }[]).map((r) => r.id).sort();
    } finally {
      file.close();
    }
  }

  test('rows revoked or expired more than TOKEN_RETENTION_DAYS ago disappear from the file; live and recent ones stay', async () => {
    const make = async (name: string, expires?: number) =>
      (await create(admin, { name, scopes: ['servers:read'], ...(expires ? { expires_in_seconds: expires } : {}) }).expect(201)).body.id as string;
    const live = await make('live');
    const later = await make('expires in 40 days', 40 * 86400);
    const expired = await make('expired on day 1', 86400);
    const revoked = await make('revoked on day 0');
    await t.http.delete(`/v1/tokens/${revoked}`).set(auth(admin)).expect(204);
    clock.advance(25 * DAY);
    const recent = await make('revoked on day 25');
    await t.http.delete(`/v1/tokens/${recent}`).set(auth(admin)).expect(204);
    const all = [live, later, expired, revoked, recent];
    expect(inFile(all)).toEqual([...all].sort());

    clock.advance(7 * DAY); // day 32
    await until('the purge', () => inFile(all).length === 3, 20_000);
    expect(inFile(all)).toEqual([live, later, recent].sort());
    await t.http.get('/v1/plans').set(auth(admin)).expect(200);
    const listed = await t.http.get('/v1/tokens').set(auth(admin)).expect(200);
    expect(listed.body.data.map((x: { id: string }) => x.id)).toEqual(expect.arrayContaining([live, later]));
  }, 60_000);

  test('the dashboard page\'s tokens go as soon as they stop working: at sign-out at once, revoked ones at the next purge', async () => {
    const dashboard = await dashboardSession();
    try {
      const first = await dashboard.pageToken();
      const second = await dashboard.pageToken();
      await t.http.delete(`/v1/tokens/${first.id}`).set(auth(second.token)).expect(204);
      await until('the purge', () => inFile([first.id]).length === 0, 20_000);
      expect(inFile([second.id, first.id])).toEqual([second.id]);
      await dashboard.signOut();
      expect(inFile([second.id])).toEqual([]);
      expect(rows([second.id])).toEqual([]);
      expect(inFile([t.db.prepare("SELECT id FROM tokens WHERE name = 'test'").pluck().get() as string])).toHaveLength(1);
    } finally {
      await dashboard.close();
    }
  }, 60_000);
});
