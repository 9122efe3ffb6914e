import { createTestApp, manualClock, type TestApp } from '../helpers/app';

let t: TestApp;
let clock: ReturnType<typeof manualClock>;

/** The tests of the calling describe each get their own app, database and clock. */
function appPerTest() {
  beforeEach(async () => {
    clock = manualClock();
    t = await createTestApp({ clock });
  });
  afterEach(() => t.finish());
}

// Read-only: every request here is refused (401) and writes nothing, so one app serves them all.
describe('bearer tokens (RFC 6750): refused callers', () => {
  beforeAll(async () => {
    clock = manualClock();
    t = await createTestApp({ clock });
  });
  afterAll(() => t.close());
  afterEach(() => t.expectContract());

  const refused: Array<[string, () => Record<string, string>]> = [
    ['no Authorization header', () => ({})],
    ['an unknown token', () => ({ Authorization: 'Bearer gsh_' + 'A'.repeat(43) })],
    ['another scheme', () => ({ Authorization: 'Basic YWxpY2U6c2VjcmV0' })],
    ['Bearer with nothing after it', () => ({ Authorization: 'Bearer ' })],
    ['a token with a space in it', () => ({ Authorization: 'Bearer gsh_abc def' })],
  ];
  test.each(refused)('%s → 401 with a challenge', async (_name, headers) => {
    const res = await t.http.get('/v1/servers').set(headers());
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('unauthorized');
    expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="gsh", error="invalid_token"/);
  });

  test('an invalid request from an anonymous caller is 401, not 400 (shape is not revealed)', async () => {
    const res = await t.http.post('/v1/servers').send({ bogus: true });
    expect(res.status).toBe(401);
  });
});

describe('bearer tokens (RFC 6750)', () => {
  appPerTest();

  test('the scheme name is case-insensitive', async () => {
    const token = t.token('case@example.com');
    expect((await t.http.get('/v1/servers').set('Authorization', `bearer ${token}`)).status).toBe(200);
  });

  test('an expired token is refused', async () => {
    const token = t.token('exp@example.com', ['servers:read'], 3600);
    expect((await t.http.get('/v1/servers').set('Authorization', `Bearer ${token}`)).status).toBe(200);
    clock.advance(3600 * 1000);
    const res = await t.http.get('/v1/servers').set('Authorization', `Bearer ${token}`);
    expect(res.status).toBe(401);
  });

  test('a revoked token is refused from the next request on', async () => {
    const token = t.token('rev@example.com');
    const me = await t.http.get('/v1/tokens').set('Authorization', `Bearer ${token}`);
    const id = me.body.data[0].id;
    expect((await t.http.delete(`/v1/tokens/${id}`).set('Authorization', `Bearer ${token}`)).status).toBe(204);
    expect((await t.http.get('/v1/servers').set('Authorization', `Bearer ${token}`)).status).toBe(401);
  });
});

describe('scopes', () => {
  // Every case makes tokens (and createServer/createToken succeed with the right scope): one app per case.
  appPerTest();

  // operation → the scope it needs; a token with every other scope is refused with 403.
  const cases: Array<[string, 'get' | 'post' | 'delete', string, object | undefined, string]> = [
    ['listServers', 'get', '/v1/servers', undefined, 'servers:read'],
    ['createServer', 'post', '/v1/servers', { name: 'a', plan: 'small', version: 'flying-squid-1.20' }, 'servers:write'],
    ['listPlans', 'get', '/v1/plans', undefined, 'servers:read'],
    ['listVersions', 'get', '/v1/versions', undefined, 'servers:read'],
    ['listTokens', 'get', '/v1/tokens', undefined, 'tokens:manage'],
    ['createToken', 'post', '/v1/tokens', { name: 'x', scopes: ['tokens:manage'] }, 'tokens:manage'],
  ];
  test.each(cases)('%s (%s %s)', async (_op, method, path, body, scope) => {
    const others = (['servers:read', 'servers:write', 'tokens:manage'] as const).filter(
      (s) => s !== scope && !(scope === 'servers:read' && s === 'servers:write'),
    );
    const without = t.token(`no-${scope}@example.com`, [...others]);
    let req = t.http[method](path).set('Authorization', `Bearer ${without}`);
    if (body) req = req.send(body);
    const res = await req;
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('insufficient_scope');
    expect(res.headers['www-authenticate']).toContain('error="insufficient_scope"');

    const withScope = t.token(`with-${scope}@example.com`, [scope as 'servers:read']);
    let ok = t.http[method](path).set('Authorization', `Bearer ${withScope}`);
    if (body) ok = ok.send(body);
    expect((await ok).status).toBeLessThan(300);
  });

  test('servers:write implies servers:read', async () => {
    const token = t.token('writer@example.com', ['servers:write']);
    expect((await t.http.get('/v1/servers').set('Authorization', `Bearer ${token}`)).status).toBe(200);
  });

  test('a token cannot create a token with scopes it does not hold', async () => {
    const token = t.token('limited@example.com', ['tokens:manage', 'servers:read']);
    const res = await t.http
      .post('/v1/tokens')
      .set('Authorization', `Bearer ${token}`)
      .send({ name: 'escalate', scopes: ['servers:write'] });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('insufficient_scope');
  });
});
