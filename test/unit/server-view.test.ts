// The Server view SQLite builds (src/store/server-view.ts), table-driven on a real SQLite file: each row's
// columns against the object the spec's `Server` says they show, written out by hand here (not by a second
// mapping), and a page's envelope. The contract checker validates the same answers against the schema in every
// HTTP test; this pins the values.
import fs from 'node:fs';
import path from 'node:path';
import { systemClock } from '../../src/clock';
import { plans } from '../../src/catalog/plans';
import { createStore, type Store } from '../../src/store';
import { openDb, type Db } from '../../src/store/db';
import { tempDir } from '../helpers/app';
import { serviceActor } from '../../src/actors';
import { OWNER_ACCESS } from '../../src/store/server-view';

const MIB = 1024 * 1024;
/** Stands for the port the server was given (one of the pool's, at random). */
const PORT = -1;
let dir: string;
let db: Db;
let store: Store;
let userId: string;

beforeEach(() => {
  dir = tempDir('server-view');
  db = openDb(path.join(dir, 'db.sqlite'));
  const quotas = { defaults: { servers: 1000, running: 1000, memory_mb: 1_000_000 }, plans };
  store = createStore(db, systemClock, { host: '127.0.0.1', portRange: [29600, 29699] }, quotas, () => serviceActor('operator'));
  userId = store.users.ensure('alice@example.com').id;
});

afterEach(() => {
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function create(name = 'world') {
  return store.servers.create(userId, { name, plan: 'micro', version: 'flying-squid-1.20', software: 'flying-squid', game_version: '1.20' });
}

/** Sets columns of the server's row; `zone`, `published` and `error` write the DNS publisher's tables instead. */
const set = (id: string, { zone, published, error, ...columns }: Record<string, unknown>) => {
  for (const [column, value] of Object.entries(columns)) db.prepare(`UPDATE servers SET ${column} = ? WHERE id = ?`).run(value, id);
  if (zone !== undefined) db.prepare('INSERT INTO dns_zone (zone, ttl) VALUES (?, 30)').run(zone);
  if (published !== undefined || error !== undefined) {
    const port = (db.prepare('SELECT port FROM servers WHERE id = ?').get(id) as { port: number }).port;
    db.prepare('INSERT INTO dns_records (server_id, published_for, last_error) VALUES (?, ?, ?)').run(id, String(published).replace('PORT', String(port)), error ?? null);
  }
};

test.each([
  ['a fresh server: its address, no disk measurement, no idle stop, no schedule', {}, {
    disk_used_mb: null, disk_measured_at: null, idle_stop_minutes: null, backup_schedule: null,
  }],
  ['no host yet: address null', { host: null }, { address: null }],
  ['no port yet: address null', { port: null }, { address: null }],
  ['udp', { transport: 'udp' }, { address: { host: '127.0.0.1', port: PORT, transport: 'udp' } }],
  ['0 bytes is 0 MiB', { disk_used_bytes: 0, disk_measured_at: '2026-11-25T00:00:00.000Z' }, { disk_used_mb: 0, disk_measured_at: '2026-11-25T00:00:00.000Z' }],
  ['1 byte rounds up to 1 MiB', { disk_used_bytes: 1 }, { disk_used_mb: 1 }],
  ['exactly 1 MiB is 1', { disk_used_bytes: MIB }, { disk_used_mb: 1 }],
  ['one byte past 1 MiB is 2', { disk_used_bytes: MIB + 1 }, { disk_used_mb: 2 }],
  ['past 2^32 bytes', { disk_used_bytes: 5 * 1024 * MIB + 7 }, { disk_used_mb: 5 * 1024 + 1 }],
  ['idle stop', { idle_stop_minutes: 30 }, { idle_stop_minutes: 30 }],
  ['a schedule shows without our `since`', { backup_schedule: JSON.stringify({ every_hours: 6, keep: 3, since: '2026-01-01T00:00:00.000Z' }) },
    { backup_schedule: { every_hours: 6, keep: 3 } }],
  ['a cron schedule', { backup_schedule: JSON.stringify({ cron: '0 4 * * *', keep: 2, since: 'x' }) }, { backup_schedule: { cron: '0 4 * * *', keep: 2 } }],
  // DNS names (migration 040): the zone comes from dns_zone, written at start; without it `dns` is null.
  ['a DNS name without a zone', { dns_name: 'survival' }, { dns_name: 'survival', dns: null }],
  ['a DNS name in a zone, not yet published', { dns_name: 'survival', zone: 'play.test' },
    { dns_name: 'survival', dns: { name: 'survival.play.test', status: 'pending', ttl_seconds: 30, error: null } }],
  ['a DNS name whose records are this address', { dns_name: 'survival', zone: 'play.test', published: 'survival.play.test|127.0.0.1|PORT|tcp' },
    { dns_name: 'survival', dns: { name: 'survival.play.test', status: 'published', ttl_seconds: 30, error: null } }],
  ['a DNS name whose records are an older address, and the failure since', { dns_name: 'survival', zone: 'play.test', published: 'survival.play.test|10.0.0.1|PORT|tcp', error: 'down' },
    { dns_name: 'survival', dns: { name: 'survival.play.test', status: 'pending', ttl_seconds: 30, error: 'down' } }],
  ['a name with quotes, backslashes, control characters and non-ASCII', { name: 'a"b\\c\n\t\u0001é😀' }, { name: 'a"b\\c\n\t\u0001é😀' }],
])('%s', (_what, columns, expected: Record<string, unknown>) => {
  const server = create();
  set(server.id, columns);
  const row = db.prepare('SELECT * FROM servers WHERE id = ?').get(server.id) as Record<string, unknown>;
  const shown = JSON.parse(store.servers.viewJson(server.id, OWNER_ACCESS)!);
  expect(shown).toEqual({
    id: server.id, name: row.name, plan: 'micro', version: 'flying-squid-1.20', software: 'flying-squid', game_version: '1.20',
    state: 'installing', desired_state: 'stopped', address: { host: '127.0.0.1', port: row.port, transport: 'tcp' },
    dns_name: null, dns: null, disk_used_mb: null, disk_measured_at: null, idle_stop_minutes: null, backup_schedule: null, access: OWNER_ACCESS,
    created_at: row.created_at, updated_at: row.updated_at,
    ...JSON.parse(JSON.stringify(expected).replace(`"port":${PORT}`, `"port":${row.port}`)),
  });
  // The same view everywhere a Server is read: by its owner, by the runtime, in the page, in the reconcile pass.
  expect(store.servers.find(server.id)).toEqual(shown);
  expect(JSON.parse(store.servers.listJson(userId, { limit: 10 })).data).toEqual([shown]);
  expect(store.servers.all()).toEqual([shown]);
});

test('another user reads nothing', () => {
  const server = create();
  const bob = store.users.ensure('bob@example.com').id;
  expect(JSON.parse(store.servers.listJson(bob, { limit: 10 }))).toEqual({ data: [], has_more: false, next_cursor: null, dns_zone: null });
});

test.each([
  [0, 5, { count: 0, has_more: false, cursor: null }],
  [3, 5, { count: 3, has_more: false, cursor: null }],
  [5, 5, { count: 5, has_more: false, cursor: null }],
  [6, 5, { count: 5, has_more: true, cursor: 4 }],
])('%i servers, limit %i: a page in id order with has_more and the last shown id as cursor', (n, limit, want) => {
  const ids = Array.from({ length: n }, (_, i) => create(`s${i}`).id).sort();
  const page = JSON.parse(store.servers.listJson(userId, { limit }));
  expect(page.data.map((s: { id: string }) => s.id)).toEqual(ids.slice(0, want.count));
  expect(page.has_more).toBe(want.has_more);
  expect(page.next_cursor).toBe(want.cursor === null ? null : ids[want.cursor]);
  if (want.has_more) {
    const next = JSON.parse(store.servers.listJson(userId, { limit, startingAfter: page.next_cursor }));
    expect(next.data.map((s: { id: string }) => s.id)).toEqual(ids.slice(limit, limit * 2));
  }
});
