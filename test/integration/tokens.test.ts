import { createTestApp, type TestApp } from '../helpers/app';
import { hashToken } from '../../src/auth/tokens';

let t: TestApp;
let admin: string;

/** A fresh app with alice's token (named 'test'). */
async function startApp() {
  t = await createTestApp();
  admin = t.token('alice@example.com');
}

/** The tests of the calling describe each get their own app and database. */
function appPerTest() {
  beforeEach(startApp);
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
