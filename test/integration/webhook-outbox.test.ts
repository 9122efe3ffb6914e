import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import Database from 'better-sqlite3';
import { createTestApp, manualClock, tempDirsOfFile, type TestApp } from '../helpers/app';
import { loadMigrations, migrate } from '../../src/store/db';
import { until } from '../helpers/wait';
import { OUTBOX_SCANS } from '../../src/store/outbox-repo';

/**
 * The outbox's bounds (docs/architecture.md "Events and webhooks", BENCHMARKS.md §9): what one webhook and one user
 * may have pending (past it the oldest is dropped, with its reason), and a due scan whose cost follows what is due,
 * not what is pending: it walks partial indexes of queue heads, and takes a few heads per webhook so that one
 * webhook's backlog never hides another's delivery.
 */
let t: TestApp;
afterEach(() => t.finish());
/** DATA_DIRs given to an app, which its close() leaves where they are. */
const givenDataDir = tempDirsOfFile('outbox-upgrade');

const auth = (token: string) => ({ Authorization: `Bearer ${token}` });
async function hook(token: string, types: string[], url = 'http://127.0.0.1:9/hook'): Promise<string> {
  const res = await t.http.post('/v1/webhooks').set(auth(token)).send({ url, event_types: types });
  expect(res.status).toBe(201);
  return res.body.id;
}
async function deliveries(token: string, id: string) {
  const res = await t.http.get(`/v1/webhooks/${id}/deliveries?limit=100`).set(auth(token));
  return (res.body.data as Array<{ status: string; error: string | null }>).reverse(); // oldest first
}
/** The counts migration 025's triggers keep agree with the rows, and every queue with pending rows has one head. */
function countsAgree(): void {
  const rows = t.db.prepare('SELECT status, COUNT(*) AS count FROM webhook_deliveries GROUP BY status').all() as Array<{ status: string; count: number }>;
  const byStatus = Object.fromEntries(rows.map((r) => [r.status, r.count]));
  expect(t.store.outbox.countByStatus()).toEqual(['pending', 'succeeded', 'failed'].map((status) => ({ status, count: byStatus[status] ?? 0 })));
  const wrong = t.db.prepare(`SELECT id FROM webhooks w WHERE pending <> (SELECT COUNT(*) FROM webhook_deliveries d WHERE d.webhook_id = w.id AND d.status = 'pending')`).all();
  expect(wrong).toEqual([]);
  const heads = t.db.prepare(`SELECT webhook_id, server_key, SUM(head) AS heads, MIN(seq) AS oldest,
    MAX(CASE WHEN head = 1 THEN seq END) AS head_seq FROM webhook_deliveries WHERE status = 'pending' GROUP BY webhook_id, server_key`).all() as Array<{ heads: number; oldest: number; head_seq: number }>;
  expect(heads.filter((q) => q.heads !== 1 || q.head_seq !== q.oldest)).toEqual([]);
}
// A user-scoped event always has its copy (raise returns null only for a server scope whose row is gone).
const changed = (userId: string, server: string) => t.store.events.raise('server.state_changed', { from: 'stopped', to: 'starting' }, { userId, serverId: server })!;

describe('pending deliveries are bounded per webhook and per user; past a bound the oldest is dropped, with its reason', () => {
  beforeEach(async () => {
    t = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_PENDING_PER_WEBHOOK: '5', WEBHOOK_PENDING_PER_USER: '8' } });
  });

  test('one webhook keeps its newest WEBHOOK_PENDING_PER_WEBHOOK; player events count like any other', async () => {
    const token = t.token('a@example.com');
    const userId = t.store.tokens.authenticate(token)!.userId;
    const server = await t.http.post('/v1/servers').set(auth(token)).send({ name: 'p', plan: 'micro', version: 'flying-squid-1.20' });
    await t.runtime.idle(); // its install's events come before the webhook
    const id = await hook(token, ['server.state_changed', 'player.joined']);
    for (let i = 0; i < 5; i++) changed(userId, 'srv_one');
    t.store.events.playersChanged(server.body.id, [{ name: 'joiner', uuid: '5d7c1b2e-0000-3000-8000-000000000001' }], []);
    changed(userId, 'srv_two');
    const all = await deliveries(token, id);
    expect(all.map((d) => d.status)).toEqual(['failed', 'failed', 'pending', 'pending', 'pending', 'pending', 'pending']);
    expect(all[0].error).toMatch(/^dropped: more than 5 deliveries were pending for this webhook/);
    countsAgree();
    // Another user is not touched by it.
    const other = t.token('b@example.com');
    const theirs = await hook(other, ['server.state_changed']);
    changed(t.store.tokens.authenticate(other)!.userId, 'srv_theirs');
    expect((await deliveries(other, theirs)).map((d) => d.status)).toEqual(['pending']);
  });

  test('one user keeps WEBHOOK_PENDING_PER_USER over all its webhooks, dropping from the webhook holding most', async () => {
    const token = t.token('a@example.com');
    const userId = t.store.tokens.authenticate(token)!.userId;
    const both = await hook(token, ['server.state_changed', 'token.created']);
    const one = await hook(token, ['server.state_changed']);
    for (let i = 0; i < 4; i++) await t.http.post('/v1/tokens').set(auth(token)).send({ name: `t${i}`, scopes: ['servers:read'] }).expect(201);
    for (let i = 0; i < 3; i++) changed(userId, 'srv_s');
    // both: 7 made, 5 kept (the webhook's bound); one: 3. Together 8, the user's bound.
    const count = async (id: string) => (await deliveries(token, id)).filter((d) => d.status === 'pending').length;
    expect([await count(both), await count(one)]).toEqual([5, 3]);
    changed(userId, 'srv_s');
    // both: 6 → 5 (its bound); one: 4; together 9 → 8, from `both`, which holds most.
    expect([await count(both), await count(one)]).toEqual([4, 4]);
    const dropped = (await deliveries(token, both)).filter((d) => d.status === 'failed').map((d) => d.error);
    expect(dropped).toContainEqual(expect.stringMatching(/^dropped: more than 8 deliveries were pending for this account's webhooks/));
    expect((await deliveries(token, one)).every((d) => d.status === 'pending')).toBe(true);
    countsAgree();
    // Disabling a webhook fails its pending deliveries; deleting one removes its rows: the counts follow.
    await t.http.patch(`/v1/webhooks/${one}`).set(auth(token)).send({ enabled: false }).expect(200);
    countsAgree();
    await t.http.delete(`/v1/webhooks/${both}`).set(auth(token)).expect(204);
    countsAgree();
  });
});

describe('the due scan', () => {
  test('walks indexes of queue heads only, never the pending rows', async () => {
    t = await createTestApp();
    for (const [name, sql] of Object.entries(OUTBOX_SCANS)) {
      const plan = (t.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all({ now: '', per_webhook: 1 }) as Array<{ detail: string }>).map((r) => r.detail);
      expect([name, plan.filter((d) => /^SCAN (d|webhook_deliveries)\b/.test(d))]).toEqual([name, []]);
      expect([name, plan.some((d) => /deliveries_(due|next)/.test(d))]).toEqual([name, true]);
    }
  });

  test('a webhook\'s backlog of due deliveries never hides another webhook\'s new one', async () => {
    t = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    const token = t.token('a@example.com');
    const userId = t.store.tokens.authenticate(token)!.userId;
    const busy = await hook(token, ['server.state_changed']);
    for (let i = 0; i < 300; i++) changed(userId, `srv_b${i}`); // 300 queues, every head due
    const other = t.token('b@example.com');
    const fresh = await hook(other, ['token.created']);
    await t.http.post('/v1/tokens').set(auth(other)).send({ name: 'x', scopes: ['servers:read'] }).expect(201);
    const heads = t.store.outbox.dueHeads(4);
    expect(heads.filter((h) => h.webhookId === busy)).toHaveLength(4);
    expect(heads.filter((h) => h.webhookId === fresh)).toHaveLength(1);
  });
});

test('an outbox written before migration 025 gets its queue heads (each queue\'s oldest pending row) and its counts', async () => {
  const dir = givenDataDir();
  const file = path.join(dir, 'gsh.sqlite');
  const before = new Database(file);
  migrate(before, loadMigrations().filter((m) => m.id < 25));
  before.exec(`INSERT INTO users (id, email, created_at) VALUES ('usr_old', 'old@example.com', '2026-01-01T00:00:00.000Z');
    INSERT INTO webhooks (id, user_id, url, event_types, secret, created_at, updated_at)
      VALUES ('whk_old', 'usr_old', 'http://127.0.0.1:9/hook', '["server.state_changed"]', 'whsec_c2VjcmV0', '', '')`);
  const add = (i: number, server: string, status: string) => {
    const seq = before.prepare(`INSERT INTO events (id, user_id, server_id, type, data, created_at)
      VALUES (?, 'usr_old', ?, 'server.state_changed', '{"from":"stopped","to":"starting"}', '2026-01-01T00:00:00.000Z')`).run(`evt_old${i}`, server).lastInsertRowid;
    before.prepare(`INSERT INTO webhook_deliveries (id, webhook_id, event_seq, server_key, status, next_attempt_at, created_at)
      VALUES (?, 'whk_old', ?, ?, ?, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`).run(`dlv_old${i}`, seq, server, status);
  };
  [['srv_a', 'succeeded'], ['srv_a', 'pending'], ['srv_b', 'failed'], ['srv_a', 'pending'], ['srv_b', 'pending'], ['srv_b', 'pending']]
    .forEach(([server, status], i) => add(i, server, status));
  before.close();
  t = await createTestApp({ env: { DATA_DIR: dir, WEBHOOK_ALLOW_PRIVATE: 'true' } });
  countsAgree();
  expect(t.store.outbox.countByStatus()).toEqual([{ status: 'pending', count: 4 }, { status: 'succeeded', count: 1 }, { status: 'failed', count: 1 }]);
  expect(t.store.outbox.dueHeads(10).map((h) => h.group).sort()).toEqual(['whk_old/srv_a', 'whk_old/srv_b']);
});

test('a queue whose head went with the retention purge goes on with its next delivery', async () => {
  const clock = manualClock(Date.now());
  t = await createTestApp({ clock, env: { WEBHOOK_ALLOW_PRIVATE: 'true', EVENT_RETENTION_DAYS: '1' } });
  const got: string[] = [];
  const rx = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c)).on('end', () => (got.push(JSON.parse(body).id), res.writeHead(204).end()));
  });
  await new Promise<void>((r) => rx.listen(0, '127.0.0.1', r));
  try {
    const token = t.token('a@example.com');
    const userId = t.store.tokens.authenticate(token)!.userId;
    await hook(token, ['server.state_changed'], `http://127.0.0.1:${(rx.address() as AddressInfo).port}/hook`);
    changed(userId, 'srv_q'); // never delivered: the dispatcher is not running yet
    clock.advance(2 * 86_400_000);
    const kept = changed(userId, 'srv_q');
    t.purge();
    t.dispatcher.start();
    await until('the delivery after the purged one', () => got.includes(kept.id), 10_000);
    await until('its outcome written', () => t.store.outbox.countByStatus()[1].count === 1, 10_000);
    countsAgree();
  } finally {
    rx.closeAllConnections();
    rx.close();
  }
});
