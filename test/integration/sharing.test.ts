import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTestApp, type TestApp } from '../helpers/app';
import { until } from '../helpers/wait';

/**
 * Shared servers (issue 30 §1; docs/architecture.md "Sharing"): an invitation that tells nothing about the account,
 * the member's view of the server list, removal ending access and streams within a second, events reaching members
 * only while members and only of what they may see, with their actor, and quotas that stay the owner's. Which
 * operation needs which permission is sharing-permissions.test.ts's table.
 */

let t: TestApp;
const auth = (token: string) => ({ Authorization: `Bearer ${token}` });
afterEach(async () => {
  const unknown = t.db.prepare(`SELECT type FROM events WHERE actor IS NULL OR json_extract(actor, '$.cause') = 'unknown'`).pluck().all();
  expect(unknown).toEqual([]); // every event names who did it (src/actors.ts)
  await t.finish();
});

/** A service with the owner's installed flying-squid server and a member account's token. */
async function shared(options: Parameters<typeof createTestApp>[0] = {}) {
  t = await createTestApp({ env: { GAME_PORT_RANGE: '27720-27739', ...options.env }, ...options });
  const owner = t.token('owner@example.com');
  const member = t.token('member@example.com');
  const server = (await t.http.post('/v1/servers').set(auth(owner)).send({ name: 'together', plan: 'small', version: 'flying-squid-1.20' })).body.id as string;
  await until('the server installed', async () => (await t.http.get(`/v1/servers/${server}`).set(auth(owner))).body.state === 'stopped', 15_000);
  const invite = (email: string, permissions: string[]) => t.http.post(`/v1/servers/${server}/members`).set(auth(owner)).send({ email, permissions });
  const userId = (email: string) => t.store.users.ensure(email).id;
  return { owner, member, server, invite, userId };
}

test('an invitation answers alike whether the account exists; it applies once it does, and shows active after first use', async () => {
  const { owner, server, invite } = await shared();
  t.store.users.ensure('exists@example.com');
  const [a, b] = [await invite('exists@example.com', ['console']), await invite('Ghost@Example.com', ['console'])];
  const shape = (m: Record<string, unknown>) => ({ ...m, id: '<id>', email: '<email>', created_at: '<t>', updated_at: '<t>' });
  expect([a.status, b.status]).toEqual([201, 201]);
  expect(shape(a.body)).toEqual(shape(b.body));
  expect(a.body).toMatchObject({ status: 'invited', user_id: null, permissions: ['console'], server_id: server });
  // Case does not matter, and one email is one member.
  expect((await invite('ghost@example.com', [])).body.code).toBe('member_exists');
  expect((await invite('owner@example.com', [])).status).toBe(400);
  // The account is made later: the membership applies to it at once.
  const ghost = t.token('ghost@example.com');
  const read = await t.http.get(`/v1/servers/${server}`).set(auth(ghost));
  expect(read.status).toBe(200);
  expect(read.body.access).toEqual({ role: 'member', permissions: ['console'], owner_email: 'owner@example.com' });
  const after = await t.http.get(`/v1/servers/${server}/members/${b.body.id}`).set(auth(owner));
  expect(after.body).toMatchObject({ status: 'active', user_id: t.store.users.ensure('ghost@example.com').id });
  expect((await t.http.get(`/v1/servers/${server}/members/${a.body.id}`).set(auth(owner))).body.status).toBe('invited');
  t.expectContract();
});

test('a member lists the shared server beside their own, with their access, and sees nothing else of the owner\'s', async () => {
  const { owner, member, server, invite } = await shared();
  await invite('member@example.com', ['power', 'console']);
  const other = (await t.http.post('/v1/servers').set(auth(owner)).send({ name: 'private', plan: 'micro', version: 'flying-squid-1.20' })).body.id;
  const own = (await t.http.post('/v1/servers').set(auth(member)).send({ name: 'mine', plan: 'micro', version: 'flying-squid-1.20' })).body.id;
  const list = (await t.http.get('/v1/servers').set(auth(member))).body.data as Array<{ id: string; access: unknown }>;
  expect(list.map((s) => [s.id, s.access]).sort()).toEqual([
    [server, { role: 'member', permissions: ['power', 'console'], owner_email: 'owner@example.com' }],
    [own, { role: 'owner', permissions: ['console', 'power', 'settings', 'players', 'backups', 'alerts', 'files'] }],
  ].sort());
  expect((await t.http.get(`/v1/servers/${other}`).set(auth(member))).status).toBe(404);
  const mine = (path: string) => t.http.get(path).set(auth(member)).then((r) => r.body.data.length as number);
  await t.http.post('/v1/webhooks').set(auth(owner)).send({ url: 'https://hooks.example.com/owner', event_types: ['server.created'] });
  expect([await mine('/v1/webhooks'), await mine('/v1/tokens')]).toEqual([0, 1]);
  // Only the owner manages members, renames or deletes the server.
  for (const [method, path] of [['get', `/v1/servers/${server}/members`], ['delete', `/v1/servers/${server}`], ['patch', `/v1/servers/${server}`]] as const) {
    const res = await t.http[method](path).set(auth(member)).send(method === 'patch' ? { name: 'mine now' } : undefined);
    expect([path, res.status, res.body.permission]).toEqual([path, 403, 'owner']);
  }
  t.expectContract();
}, 30_000);

test('quotas count against the owner: a member\'s start past the owner\'s running quota is refused, their own quota untouched', async () => {
  const { member, server, invite, userId } = await shared();
  await invite('member@example.com', ['power']);
  t.store.quotas.set(userId('owner@example.com'), { running: 0 });
  const res = await t.http.post(`/v1/servers/${server}/actions`).set(auth(member)).send({ type: 'start' });
  expect(res.status).toBe(403);
  expect(res.body).toMatchObject({ code: 'quota_exceeded', quota: 'running', limit: 0 });
  expect((await t.http.get('/v1/quota').set(auth(member))).body.running.used).toBe(0);
  t.expectContract();
});

/** Opens an event stream on a real socket; resolves when the service has answered, with when it ended. */
async function openStream(base: string, path: string, token: string) {
  const url = new URL(path, base);
  let endedAt: number | null = null;
  const res = await new Promise<http.IncomingMessage>((resolve, reject) =>
    http.get(url, { headers: auth(token) }, resolve).on('error', reject),
  );
  res.on('data', () => undefined);
  res.on('close', () => (endedAt ??= Date.now()));
  return { status: res.statusCode, ended: () => endedAt, destroy: () => res.destroy() };
}

test('taking a permission ends the streams that need it, and removing the member ends every stream and all access, within a second', async () => {
  const { owner, member, server, invite } = await shared();
  const memberId = (await invite('member@example.com', ['console'])).body.id;
  const { base, close } = await t.listen();
  try {
    const consoleStream = await openStream(base, `/v1/servers/${server}/console/stream`, member);
    const metricsStream = await openStream(base, `/v1/servers/${server}/metrics/stream`, member);
    expect([consoleStream.status, metricsStream.status]).toEqual([200, 200]);
    let changedAt = Date.now();
    expect((await t.http.patch(`/v1/servers/${server}/members/${memberId}`).set(auth(owner)).send({ permissions: [] })).status).toBe(200);
    await until('the console stream to end', () => consoleStream.ended() !== null, 5_000);
    expect(consoleStream.ended()! - changedAt).toBeLessThan(1_500);
    expect(metricsStream.ended()).toBeNull(); // any member may follow the metrics
    changedAt = Date.now();
    expect((await t.http.delete(`/v1/servers/${server}/members/${memberId}`).set(auth(owner))).status).toBe(204);
    await until('the metrics stream to end', () => metricsStream.ended() !== null, 5_000);
    expect(metricsStream.ended()! - changedAt).toBeLessThan(1_500);
    expect((await t.http.get(`/v1/servers/${server}`).set(auth(member))).status).toBe(404);
    expect((await t.http.get('/v1/servers').set(auth(member))).body.data).toEqual([]);
  } finally {
    await close();
  }
  t.expectContract();
}, 30_000);

/** A webhook receiver on loopback that keeps what it got. */
async function receiver() {
  const got: Array<{ id: string; body: { type: string; actor: unknown } }> = [];
  const srv = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      got.push({ id: String(req.headers['webhook-id']), body: JSON.parse(body) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return { got, url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}/hook`, close: () => new Promise<void>((r) => (srv.closeAllConnections(), srv.close(() => r()))) };
}

test('events reach a member while a member, of what they may see, naming who did it; so do their webhooks', async () => {
  const { owner, member, server, invite, userId } = await shared({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' }, webhooks: { pollMs: 50 } });
  t.dispatcher.start();
  const hook = await receiver();
  try {
    const memberId = (await invite('member@example.com', ['power'])).body.id;
    await t.http.post('/v1/webhooks').set(auth(member)).send({ url: hook.url, event_types: ['action.succeeded', 'backup.created'] });
    const events = async (token: string, type: string) => (await t.http.get('/v1/events').query({ type, server_id: server }).set(auth(token))).body.data as Array<{ id: string; actor: unknown }>;

    // The member stops the server (a no-op on a stopped one, still an action): both see it, named as the member's.
    const act = await t.http.post(`/v1/servers/${server}/actions`).set(auth(member)).send({ type: 'stop' });
    await until('the action to end', async () => (await events(owner, 'action.succeeded')).length === 1, 10_000);
    await until('the member\'s copy', async () => (await events(member, 'action.succeeded')).length === 1, 10_000);
    const memberToken = t.store.tokens.list(userId('member@example.com'), 10).data[0].id;
    expect((await events(owner, 'action.succeeded'))[0].actor).toEqual({ type: 'user', user_id: userId('member@example.com'), token_id: null });
    expect((await events(member, 'action.succeeded'))[0].actor).toEqual({ type: 'user', user_id: userId('member@example.com'), token_id: memberToken });
    expect(act.status).toBe(202);

    // A backup by the owner: the member without `backups` gets no backup.* event; with it, they do.
    const backup = async () => {
      const made = await t.http.post(`/v1/servers/${server}/backups`).set(auth(owner)).send({});
      expect([made.status, made.body.code]).toEqual([202, undefined]);
      await until('the backup', async () => (await t.http.get(made.headers.location).set(auth(owner))).body.status !== 'pending', 15_000);
    };
    await backup();
    expect([(await events(owner, 'backup.created')).length, (await events(member, 'backup.created')).length]).toEqual([1, 0]);
    await t.http.patch(`/v1/servers/${server}/members/${memberId}`).set(auth(owner)).send({ permissions: ['power', 'backups'] });
    await backup();
    expect([(await events(owner, 'backup.created')).length, (await events(member, 'backup.created')).length]).toEqual([2, 1]);
    const ownerActor = (await events(member, 'backup.created'))[0].actor;
    expect(ownerActor).toEqual({ type: 'user', user_id: userId('owner@example.com'), token_id: null });

    // The member's webhook got their copies: the action and the second backup, with their own ids.
    await until('the member\'s deliveries', () => hook.got.length === 2, 10_000);
    expect(hook.got.map((d) => d.body.type).sort()).toEqual(['action.succeeded', 'backup.created']);
    const mine = new Set([...(await events(member, 'action.succeeded')), ...(await events(member, 'backup.created'))].map((e) => e.id));
    expect(hook.got.every((d) => mine.has(d.id))).toBe(true);

    // Removed: nothing new reaches them, in their list or their webhook.
    await t.http.delete(`/v1/servers/${server}/members/${memberId}`).set(auth(owner));
    await backup();
    expect([(await events(owner, 'backup.created')).length, (await events(member, 'backup.created')).length]).toEqual([3, 1]);
    await new Promise((r) => setTimeout(r, 300));
    expect(hook.got).toHaveLength(2);
  } finally {
    await hook.close();
  }
  t.expectContract();
}, 60_000);
