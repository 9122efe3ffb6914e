// Per-account quotas through the API (docs/conventions.md "Quotas"): servers, running servers and the plans' memory,
// each refused past its limit with 403 quota_exceeded and the figures, shown by GET /v1/quota, changed per user by
// the CLI, and never overshot by a burst. Game ports 28500-28599, only allocated;
// the one test that starts games uses 28900-28909 (test/runtime/console.test.ts starts games on 28500-28519).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { createTestApp, type TestApp, type TestAppOptions } from '../helpers/app';
import { until } from '../helpers/wait';
import { runCli } from '../../src/cli';

let t: TestApp;
const auth = (token: string) => ({ Authorization: `Bearer ${token}` });
const create = (token: string, name: string, plan = 'micro', version = 'flying-squid-1.20') =>
  t.http.post('/v1/servers').set(auth(token)).send({ name, plan, version });
const quotaOf = async (token: string) => {
  const res = await t.http.get('/v1/quota').set(auth(token));
  expect(res.status).toBe(200);
  return res.body;
};
const serverCount = (token: string) => t.http.get('/v1/servers?limit=100').set(auth(token)).then((r) => r.body.data.length as number);
const installed = (token: string, id: string) =>
  until(`${id} installed`, async () => (await t.http.get(`/v1/servers/${id}`).set(auth(token))).body.state === 'stopped', 15_000);

/** A refused request: 403, a problem document with the quota's figures, and a detail for people. */
function expectRefused(res: { status: number; headers: Record<string, string>; body: unknown }, quota: string, limit: number, used: number) {
  expect(res.status).toBe(403);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({
    type: `${t.config.publicUrl}/problems/quota_exceeded`, // its page on PUBLIC_URL (docs/conventions.md "Errors")
    status: 403,
    code: 'quota_exceeded',
    quota,
    limit,
    used,
    detail: expect.stringMatching(/quota/),
  });
}

// Every test creates servers: each gets its own service and database (docs/conventions.md "Tests").
async function app(env: Record<string, string>, options: TestAppOptions = {}) {
  t = await createTestApp({ ...options, env: { GAME_PORT_RANGE: '28500-28549', ...env } });
}
afterEach(() => t.finish());

describe('creates past a quota are refused with the quota, its limit and its use, and write nothing', () => {
  test.each([
    ['servers', { env: { QUOTA_SERVERS: '2' }, accepted: ['micro', 'micro'], refused: 'micro', want: ['servers', 2, 2] }],
    ['no servers at all', { env: { QUOTA_SERVERS: '0' }, accepted: [], refused: 'micro', want: ['servers', 0, 0] }],
    ['memory, filled exactly', { env: { QUOTA_MEMORY_MB: '1536' }, accepted: ['micro', 'small'], refused: 'micro', want: ['memory_mb', 1536, 1536] }],
    ['memory, a plan larger than what is left', { env: { QUOTA_MEMORY_MB: '2048' }, accepted: ['small'], refused: 'medium', want: ['memory_mb', 2048, 1024] }],
  ] as const)('%s', async (_name, { env, accepted, refused, want }) => {
    await app(env);
    const alice = t.token('alice@example.com');
    for (const [i, plan] of accepted.entries()) expect((await create(alice, `s${i}`, plan)).status).toBe(201);
    const res = await create(alice, 'one too many', refused);
    expectRefused(res, want[0], want[1], want[2]);
    expect(await serverCount(alice)).toBe(accepted.length);
    const quota = await quotaOf(alice);
    expect(quota[want[0]]).toEqual({ limit: want[1], used: want[2] });
  });

  test('a smaller plan still fits where a larger one did not', async () => {
    await app({ QUOTA_MEMORY_MB: '2048' });
    const alice = t.token('alice@example.com');
    expect((await create(alice, 'a', 'small')).status).toBe(201);
    expectRefused(await create(alice, 'b', 'medium'), 'memory_mb', 2048, 1024);
    expect((await create(alice, 'b', 'micro')).status).toBe(201);
  });
});

test('GET /v1/quota shows the operator defaults and each account\'s own use, to any valid token', async () => {
  // '' is what an operator leaves unset: the defaults of src/config.ts.
  await app({ QUOTA_SERVERS: '', QUOTA_RUNNING_SERVERS: '', QUOTA_MEMORY_MB: '' });
  const alice = t.token('alice@example.com');
  const bob = t.token('bob@example.com');
  const empty = { servers: { limit: 10, used: 0 }, running: { limit: 5, used: 0 }, memory_mb: { limit: 8192, used: 0 } };
  expect(await quotaOf(alice)).toEqual(empty);
  expect((await create(alice, 'a', 'micro')).status).toBe(201);
  expect((await create(alice, 'b', 'small')).status).toBe(201);
  const used = { servers: { limit: 10, used: 2 }, running: { limit: 5, used: 0 }, memory_mb: { limit: 8192, used: 1536 } };
  for (const scopes of [['servers:read'], ['tokens:manage'], ['servers:write']] as const) {
    expect(await quotaOf(t.token('alice@example.com', [...scopes]))).toEqual(used);
  }
  expect(await quotaOf(bob)).toEqual(empty);
  expect((await t.http.get('/v1/quota')).status).toBe(401);
});

test('one tenant at its quota cannot make another tenant\'s create fail', async () => {
  // Four ports: without the quota alice would take all of them and bob's first create would be a 503.
  await app({ GAME_PORT_RANGE: '28510-28513', QUOTA_SERVERS: '3' });
  const alice = t.token('alice@example.com');
  const bob = t.token('bob@example.com');
  const statuses: number[] = [];
  let last;
  for (let i = 0; i < 4; i++) statuses.push((last = await create(alice, `a${i}`)).status);
  expect(statuses).toEqual([201, 201, 201, 403]);
  expectRefused(last!, 'servers', 3, 3);
  const theirs = await create(bob, 'mine');
  expect(theirs.status).toBe(201);
  expect(theirs.body.address.port).toBeGreaterThanOrEqual(28510);
});

test('with the default quotas and a port range of the default size, one tenant gets 403, never the 503 of a full host', async () => {
  await app({ GAME_PORT_RANGE: '28500-28599', QUOTA_SERVERS: '', QUOTA_RUNNING_SERVERS: '', QUOTA_MEMORY_MB: '' });
  const alice = t.token('alice@example.com');
  for (let i = 0; i < 10; i++) expect((await create(alice, `a${i}`)).status).toBe(201);
  expectRefused(await create(alice, 'eleventh'), 'servers', 10, 10);
  expect((await create(t.token('bob@example.com'), 'mine')).status).toBe(201);
});

test('a server counts until it is gone; once deleted, the refused create can be retried with its Idempotency-Key', async () => {
  await app({ QUOTA_SERVERS: '1' });
  const alice = t.token('alice@example.com');
  const first = await create(alice, 'first');
  await installed(alice, first.body.id);
  const retry = () => create(alice, 'second').set('Idempotency-Key', 'quota-retry');
  expectRefused(await retry(), 'servers', 1, 1);
  // A server held in `deleting` (as a service that died mid-removal leaves it) still holds its port: it counts.
  t.db.prepare("UPDATE servers SET state = 'deleting' WHERE id = ?").run(first.body.id);
  expectRefused(await retry(), 'servers', 1, 1);
  t.db.prepare("UPDATE servers SET state = 'stopped' WHERE id = ?").run(first.body.id);
  expect((await t.http.delete(`/v1/servers/${first.body.id}`).set(auth(alice))).status).toBe(202);
  await until('deleted', async () => (await t.http.get(`/v1/servers/${first.body.id}`).set(auth(alice))).status === 404, 15_000);
  expect((await quotaOf(alice)).servers).toEqual({ limit: 1, used: 0 });
  const again = await retry();
  expect(again.status).toBe(201);
  expect(again.headers['idempotent-replayed']).toBeUndefined();
});

test('a larger plan past the memory quota is refused and changes nothing; a smaller plan and a rename always pass', async () => {
  await app({ QUOTA_MEMORY_MB: '1536' });
  const alice = t.token('alice@example.com');
  const ids: string[] = [];
  for (const name of ['a', 'b']) ids.push((await create(alice, name, 'micro')).body.id);
  for (const id of ids) await installed(alice, id);
  const patch = (id: string, body: object) => t.http.patch(`/v1/servers/${id}`).set(auth(alice)).send(body);
  expect((await patch(ids[0], { plan: 'small' })).status).toBe(200); // 1024 + 512 = 1536: exactly the quota
  const before = (await t.http.get(`/v1/servers/${ids[1]}`).set(auth(alice))).body;
  expectRefused(await patch(ids[1], { plan: 'small', name: 'renamed' }), 'memory_mb', 1536, 1536);
  expect((await t.http.get(`/v1/servers/${ids[1]}`).set(auth(alice))).body).toEqual(before);
  // The operator lowers the quota below what is used: nothing larger, but shrinking and renaming still work.
  t.store.quotas.set(t.store.users.findByEmail('alice@example.com')!.id, { memory_mb: 0 });
  expect((await patch(ids[1], { name: 'renamed' })).status).toBe(200);
  expect((await patch(ids[0], { plan: 'micro' })).status).toBe(200);
  expect((await quotaOf(alice)).memory_mb).toEqual({ limit: 0, used: 1024 });
});

test('gsh user set-quota changes one account\'s answer while the service runs, and "default" gives it back', async () => {
  await app({ QUOTA_SERVERS: '1' });
  const alice = t.token('alice@example.com');
  const bob = t.token('bob@example.com');
  const cli = (...args: string[]) => {
    const out: string[] = [];
    const code = runCli(['user', 'set-quota', '--email', 'alice@example.com', ...args], { DATA_DIR: t.dir, QUOTA_SERVERS: '1' }, (s) => out.push(s), (s) => out.push(s));
    expect({ code, out }).toMatchObject({ code: 0 });
    return out.join('\n');
  };
  expect((await create(alice, 'a')).status).toBe(201);
  expectRefused(await create(alice, 'b'), 'servers', 1, 1);
  expect(cli('--servers', '3')).toMatch(/servers\s+limit 3 \(this user's own; default 1\), used 1/);
  expect((await create(alice, 'b')).status).toBe(201);
  expect((await quotaOf(alice)).servers).toEqual({ limit: 3, used: 2 });
  expect((await quotaOf(bob)).servers).toEqual({ limit: 1, used: 0 });
  expect(cli('--servers', 'default')).toMatch(/servers\s+limit 1 \(default\), used 2/);
  expectRefused(await create(alice, 'c'), 'servers', 1, 2);
});

test('a burst of parallel creates from two tenants never goes past either quota', async () => {
  await app({ QUOTA_SERVERS: '5' });
  const alice = t.token('alice@example.com');
  const bob = t.token('bob@example.com');
  const burst = await Promise.all([
    ...Array.from({ length: 20 }, (_, i) => create(alice, `a${i}`).then((r) => ['alice', r.status] as const)),
    ...Array.from({ length: 5 }, (_, i) => create(bob, `b${i}`).then((r) => ['bob', r.status] as const)),
  ]);
  const tally = (who: string, status: number) => burst.filter(([w, s]) => w === who && s === status).length;
  expect([tally('alice', 201), tally('alice', 403), tally('bob', 201)]).toEqual([5, 15, 5]);
  expect([await serverCount(alice), await serverCount(bob)]).toEqual([5, 5]);
});

test('creates from several processes on one database file never go past the quota together', async () => {
  // The check and the insert are one IMMEDIATE transaction, which SQLite serialises across processes too. Four
  // processes (the built service's store, dist/, as test/integration/cli.test.ts uses it) race 10 creates each.
  await app({});
  const userId = t.store.users.ensure('alice@example.com').id;
  const script = `
    const dist = (m) => require(${JSON.stringify(path.join(__dirname, '..', '..', 'dist', 'src'))} + '/' + m);
    const db = dist('store/db').openDb(process.argv[1]);
    const store = dist('store').createStore(db, { now: () => Date.now() }, { host: '127.0.0.1', portRange: [28500, 28549] },
      { defaults: { servers: 7, running: 1, memory_mb: 1000000 }, plans: dist('catalog/plans').plans },
      () => dist('actors').serviceActor('operator'));
    const input = { name: 'raced', plan: 'micro', version: 'flying-squid-1.20', software: 'flying-squid', game_version: '1.20' };
    process.stdout.write('ready\\n');
    process.stdin.once('data', () => {
      const codes = [];
      for (let i = 0; i < 10; i++) {
        try { store.servers.create(process.argv[2], input); codes.push('created'); } catch (e) { codes.push(e.code || String(e)); }
      }
      process.stdout.write(JSON.stringify(codes) + '\\n');
      db.close();
    });`;
  const children = Array.from({ length: 4 }, () => spawn(process.execPath, ['-e', script, t.config.dbFile, userId]));
  const lines = children.map((c) => {
    const got: string[] = [];
    let buffered = '';
    c.stdout.on('data', (d: Buffer) => {
      buffered += d.toString();
      got.push(...buffered.split('\n').slice(0, -1));
      buffered = buffered.slice(buffered.lastIndexOf('\n') + 1);
    });
    return { got, exited: new Promise((r) => c.once('exit', r)) };
  });
  await until('every process ready', () => lines.every((l) => l.got[0] === 'ready'), 30_000);
  for (const c of children) c.stdin.end('go\n');
  await Promise.all(lines.map((l) => l.exited));
  const codes = lines.flatMap((l) => JSON.parse(l.got[1]) as string[]);
  expect(codes.filter((c) => c === 'created')).toHaveLength(7);
  expect(codes.filter((c) => c !== 'created')).toEqual(Array(33).fill('quota_exceeded'));
  expect(t.db.prepare('SELECT COUNT(*) FROM servers WHERE user_id = ?').pluck().get(userId)).toBe(7);
});

test('the running quota: a second start is refused until the first server stops; a start of a counted server passes', async () => {
  await app(
    { GAME_PORT_RANGE: '28900-28909', QUOTA_RUNNING_SERVERS: '1' },
    { boot: true, software: path.join(__dirname, '..', 'runtime', 'fixtures', 'software'), runtime: { stopTimeoutMs: 3_000, reconcileMs: 500 } },
  );
  const alice = t.token('alice@example.com');
  const ids: string[] = [];
  for (const name of ['a', 'b']) ids.push((await create(alice, name, 'micro', 'fake-game-1.0')).body.id);
  for (const id of ids) await installed(alice, id);
  const act = (id: string, type: string) => t.http.post(`/v1/servers/${id}/actions`).set(auth(alice)).send({ type });
  const state = (id: string, want: string) =>
    until(`${id} ${want}`, async () => (await t.http.get(`/v1/servers/${id}`).set(auth(alice))).body.state === want, 30_000);

  expect((await act(ids[0], 'start')).status).toBe(202);
  expect((await quotaOf(alice)).running).toEqual({ limit: 1, used: 1 });
  await state(ids[0], 'running');
  for (const type of ['start', 'restart']) expectRefused(await act(ids[1], type), 'running', 1, 1);
  expect((await act(ids[1], 'start')).body.detail).toMatch(/^Your account may run 1 server at once/);
  // A member with `power` is refused by the owner's quota, and told whose it is (issue 39 §4).
  await t.http.post(`/v1/servers/${ids[1]}/members`).set(auth(alice)).send({ email: 'sam@example.com', permissions: ['power'] });
  const bySam = await t.http.post(`/v1/servers/${ids[1]}/actions`).set(auth(t.token('sam@example.com'))).send({ type: 'start' });
  expectRefused(bySam, 'running', 1, 1);
  expect(bySam.body.detail).toMatch(/^This server's owner's account may run 1 server at once .*; ask the owner to stop one first or to ask the operator for a larger quota\.$/);
  // Refused: no action recorded, desired state untouched.
  expect((await t.http.get(`/v1/servers/${ids[1]}/actions`).set(auth(alice))).body.data).toEqual([]);
  expect((await t.http.get(`/v1/servers/${ids[1]}`).set(auth(alice))).body.desired_state).toBe('stopped');
  // Starting the server that already counts changes nothing, so it is never refused.
  expect((await act(ids[0], 'start')).status).toBe(202);
  await t.runtime.idle();

  expect((await act(ids[0], 'stop')).status).toBe(202);
  await state(ids[0], 'stopped');
  expect((await quotaOf(alice)).running).toEqual({ limit: 1, used: 0 });
  expect((await act(ids[1], 'start')).status).toBe(202);
  await state(ids[1], 'running');
  expect((await act(ids[1], 'stop')).status).toBe(202);
  await state(ids[1], 'stopped');
});
