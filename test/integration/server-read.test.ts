// GET /v1/servers/{id} through the real app on a real SQLite file: a table of callers and paths, each answer the
// server view a read of its own gives (src/store/server-view.ts), never another user's server, and a token that
// stopped working reads nothing.
import { createTestApp, manualClock, type TestApp } from '../helpers/app';
import { until } from '../helpers/wait';

let t: TestApp;
let clock: ReturnType<typeof manualClock>;
let alice: string;
let aliceServer: { id: string; name: string };
let bobServer: { id: string };

beforeEach(async () => {
  clock = manualClock();
  t = await createTestApp({ clock });
  alice = t.token('alice@example.com');
  clock.advance(60_000);
  const create = (token: string, name: string) =>
    t.http.post('/v1/servers').set('Authorization', `Bearer ${token}`).send({ name, plan: 'micro', version: 'flying-squid-1.20' });
  aliceServer = (await create(alice, 'alices-world')).body;
  bobServer = (await create(t.token('bob@example.com'), 'bobs-world')).body;
  // Installed (installing → stopped) before the reads, so no state change lands between an answer and the
  // separate read it is compared with.
  const installed = (id: string) => t.db.prepare("SELECT state FROM servers WHERE id = ?").pluck().get(id) === 'stopped';
  await until('both servers installed', () => installed(aliceServer.id) && installed(bobServer.id), 60_000);
});
afterEach(() => t.finish());

type Case = {
  name: string;
  token: () => string;
  path: () => string;
  status: number;
  code?: string;
};

const CASES: Case[] = [
  { name: "the caller's server", token: () => alice, path: () => aliceServer.id, status: 200 },
  { name: 'its id percent-encoded', token: () => alice, path: () => `%${'s'.charCodeAt(0).toString(16)}${aliceServer.id.slice(1)}`, status: 200 },
  { name: "another user's server", token: () => alice, path: () => bobServer.id, status: 404, code: 'server_not_found' },
  { name: 'an unknown id', token: () => alice, path: () => 'srv_01JZZZZZZZZZZZZZZZZZZZZZZZ', status: 404, code: 'server_not_found' },
  { name: 'a malformed percent-encoding', token: () => alice, path: () => 'srv_%E0%A4%A', status: 400, code: 'validation_failed' },
  { name: 'a token without servers:read', token: () => t.token('alice@example.com', ['tokens:manage']), path: () => aliceServer.id, status: 403, code: 'insufficient_scope' },
  {
    name: 'a revoked token',
    token: () => {
      const secret = t.token('alice@example.com');
      const { tokenId, userId } = t.store.tokens.authenticate(secret)!;
      t.store.tokens.revoke(userId, tokenId);
      return secret;
    },
    path: () => aliceServer.id,
    status: 401,
    code: 'unauthorized',
  },
  {
    name: 'an expired token',
    token: () => {
      const secret = t.token('alice@example.com', undefined, 60);
      clock.advance(61_000);
      return secret;
    },
    path: () => aliceServer.id,
    status: 401,
    code: 'unauthorized',
  },
];

test.each(CASES.map((c) => [c.name, c] as const))('GET /v1/servers/{id}: %s', async (_name, c) => {
  const res = await t.http.get(`/v1/servers/${c.path()}`).set('Authorization', `Bearer ${c.token()}`);
  expect(res.status).toBe(c.status);
  if (c.status === 200) {
    // Exactly what a read of its own gives (the same view, server-view.ts), which is alice's server.
    expect(res.text).toBe(t.store.servers.viewJson(aliceServer.id, { role: 'owner', permissions: ['console', 'power', 'settings', 'players', 'backups', 'alerts'] }));
    expect(res.body).toMatchObject({ id: aliceServer.id, name: 'alices-world' });
  } else {
    expect(res.body.code).toBe(c.code);
    expect(res.text).not.toContain('alices-world');
    expect(res.text).not.toContain('bobs-world');
  }
});

test('a change made between two reads shows in the second', async () => {
  const get = () => t.http.get(`/v1/servers/${aliceServer.id}`).set('Authorization', `Bearer ${alice}`);
  expect((await get()).body.name).toBe('alices-world');
  const patched = await t.http.patch(`/v1/servers/${aliceServer.id}`).set('Authorization', `Bearer ${alice}`).send({ name: 'renamed' });
  expect(patched.status).toBe(200);
  expect((await get()).body.name).toBe('renamed');
});
