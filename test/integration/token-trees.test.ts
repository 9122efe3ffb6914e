import http from 'node:http';
import supertest from 'supertest';
import { createTestApp, type TestApp } from '../helpers/app';
import { hashPasswordSync } from '../../src/dashboard/passwords';
import { runCli } from '../../src/cli';

/**
 * Token trees (docs/conventions.md "Authentication", SECURITY.md): a token minted by a token is its child.
 * Revoking a token revokes its descendants, transitively, with their streams; a token sees and revokes only itself
 * and its descendants, unless it is a root token (made by the user: CLI, dashboard) holding every scope, or the
 * dashboard page's own token.
 */
let t: TestApp;
beforeEach(async () => {
  t = await createTestApp();
});
afterEach(() => t.finish());

const auth = (token: string) => ({ Authorization: `Bearer ${token}` });
type Made = { id: string; token: string };
async function mint(parent: string, name: string, scopes: string[], extra: object = {}): Promise<Made> {
  const res = await t.http.post('/v1/tokens').set(auth(parent)).send({ name, scopes, ...extra });
  expect(res.status).toBe(201);
  return res.body as Made;
}
const works = async (token: string) => (await t.http.get('/v1/plans').set(auth(token))).status;
const names = async (token: string) => ((await t.http.get('/v1/tokens?limit=100').set(auth(token))).body.data as { name: string }[]).map((x) => x.name);

/** alice's root token (every scope, as the CLI makes it) → manager (tokens:manage + read) → bot → grandbot. */
async function tree() {
  const root = t.token('alice@example.com');
  const manager = await mint(root, 'manager', ['tokens:manage', 'servers:read']);
  const bot = await mint(manager.token, 'bot', ['tokens:manage', 'servers:read']);
  const grandbot = await mint(bot.token, 'grandbot', ['servers:read']);
  const sibling = await mint(root, 'sibling', ['servers:write', 'tokens:manage']);
  return { root, manager, bot, grandbot, sibling };
}

test('revoking a token revokes every token minted from it, transitively; the rest keep working', async () => {
  const { root, manager, bot, grandbot, sibling } = await tree();
  expect(await Promise.all([manager, bot, grandbot].map((x) => works(x.token)))).toEqual([200, 200, 200]);
  expect((await t.http.delete(`/v1/tokens/${manager.id}`).set(auth(root))).status).toBe(204);
  expect(await Promise.all([manager, bot, grandbot].map((x) => works(x.token)))).toEqual([401, 401, 401]);
  expect(await works(root)).toBe(200);
  expect(await works(sibling.token)).toBe(200);
  // Each revoked token has its token.revoked event.
  const revoked = (await t.http.get('/v1/events?type=token.revoked&limit=100').set(auth(root))).body.data;
  expect(revoked.map((e: { data: { token: { name: string } } }) => e.data.token.name).sort()).toEqual(['bot', 'grandbot', 'manager']);
});

test('a token revoking itself takes its descendants with it', async () => {
  const { bot, grandbot, manager } = await tree();
  expect((await t.http.delete(`/v1/tokens/${bot.id}`).set(auth(bot.token))).status).toBe(204);
  expect([await works(bot.token), await works(grandbot.token), await works(manager.token)]).toEqual([401, 401, 200]);
});

test('a child never outlives its parent: under a parent that never expires, revoking the parent still ends it', async () => {
  const root = t.token('alice@example.com');
  const never = await mint(root, 'never', ['tokens:manage', 'servers:read'], { expires_in_seconds: null });
  const child = await mint(never.token, 'child of never', ['servers:read'], { expires_in_seconds: null });
  expect((await t.http.get(`/v1/tokens/${child.id}`).set(auth(root))).body.expires_at).toBeNull();
  await t.http.delete(`/v1/tokens/${never.id}`).set(auth(root)).expect(204);
  expect(await works(child.token)).toBe(401);
});

describe('what a token sees and revokes among its user\'s tokens', () => {
  test('a tokens:manage child sees only itself and its descendants; its user\'s stronger tokens are 404 to it', async () => {
    const { root, manager, bot, sibling } = await tree();
    expect(await names(bot.token)).toEqual(['bot', 'grandbot']);
    expect(await names(manager.token)).toEqual(['manager', 'bot', 'grandbot']);
    const rootId = (await t.http.get('/v1/tokens').set(auth(root))).body.data[0].id;
    for (const [who, target] of [[bot.token, manager.id], [bot.token, rootId], [bot.token, sibling.id], [manager.token, sibling.id], [manager.token, rootId]]) {
      const got = await t.http.get(`/v1/tokens/${target}`).set(auth(who));
      const revoked = await t.http.delete(`/v1/tokens/${target}`).set(auth(who));
      expect([got.status, got.body.code, revoked.status, revoked.body.code]).toEqual([404, 'token_not_found', 404, 'token_not_found']);
    }
    expect([await works(root), await works(manager.token), await works(sibling.token)]).toEqual([200, 200, 200]);
    // Its own descendants it may read and revoke.
    expect((await t.http.get(`/v1/tokens/${bot.id}`).set(auth(manager.token))).status).toBe(200);
  });

  test('a root token with every scope sees and revokes all of its user\'s tokens; one with fewer sees its own tree', async () => {
    const { root, bot, sibling } = await tree();
    expect(await names(root)).toEqual(['test', 'manager', 'bot', 'grandbot', 'sibling']);
    const narrowRoot = t.token('alice@example.com', ['tokens:manage', 'servers:read']);
    const made = await mint(narrowRoot, 'made by narrow', ['servers:read']);
    expect(await names(narrowRoot)).toEqual(['test', 'made by narrow']);
    expect((await t.http.delete(`/v1/tokens/${sibling.id}`).set(auth(narrowRoot))).status).toBe(404);
    expect((await t.http.delete(`/v1/tokens/${bot.id}`).set(auth(root))).status).toBe(204);
    expect((await t.http.delete(`/v1/tokens/${made.id}`).set(auth(root))).status).toBe(204);
    expect(await works(made.token)).toBe(401);
  });

  test('the dashboard page sees every token, and tokens it makes are roots, not its children', async () => {
    const { manager } = await tree();
    const password = 'correct horse battery';
    const user = t.store.users.ensure('alice@example.com');
    t.store.users.setPasswordHash(user.id, hashPasswordSync(password, t.config.dashboard.passwordCost)); // the app's cost: 2^10 in tests
    const { base, close } = await t.listen();
    try {
      const agent = supertest.agent(base);
      const signedIn = await agent.post('/dashboard/sign-in').set('Origin', base).send({ email: 'alice@example.com', password }).expect(200);
      const pageToken = async () =>
        (await agent.post('/dashboard/session-token').set('Origin', base).set('X-CSRF-Token', signedIn.body.csrf_token).expect(201)).body.token as string;
      const page = await pageToken();
      expect(await names(page)).toEqual(expect.arrayContaining(['test', 'manager', 'bot', 'grandbot', 'sibling']));
      const fromSettings = await mint(page, 'from settings', ['servers:read']);
      // The page's token is replaced every few minutes; what the user made through it stays.
      await agent.post('/dashboard/sign-out').set('Origin', base).set('X-CSRF-Token', signedIn.body.csrf_token).expect(204);
      expect(await works(fromSettings.token)).toBe(200);
      expect((await t.http.delete(`/v1/tokens/${manager.id}`).set(auth(page))).status).toBe(401);
    } finally {
      await close();
    }
  });
});

test('the CLI revokes a token with its descendants', async () => {
  const { manager, grandbot } = await tree();
  const errors: string[] = [];
  const code = await runCli(['token', 'revoke', '--email', 'alice@example.com', '--id', manager.id], { DATA_DIR: t.config.dataDir }, () => undefined, (l) => errors.push(l));
  expect([code, errors]).toEqual([0, []]);
  expect([await works(manager.token), await works(grandbot.token)]).toEqual([401, 401]);
});

test('a revoked parent\'s descendants lose their open streams within a second', async () => {
  const { root, manager, grandbot } = await tree();
  const { base, close } = await t.listen();
  try {
    const ended = new Promise<number>((resolve, reject) => {
      http.get(`${base}/v1/events/stream`, { headers: auth(grandbot.token) }, (res) => {
        expect(res.statusCode).toBe(200);
        res.resume();
        res.on('close', () => resolve(Date.now()));
      }).on('error', reject);
    });
    await new Promise((r) => setTimeout(r, 300));
    const revokedAt = Date.now();
    await t.http.delete(`/v1/tokens/${manager.id}`).set(auth(root)).expect(204);
    const timeout = new Promise<number>((r) => setTimeout(() => r(Infinity), 5000));
    expect((await Promise.race([ended, timeout])) - revokedAt).toBeLessThan(1500);
  } finally {
    await close();
  }
});
