// Upgrades (README "Upgrades and backups"): today's service started on the database the first release on main
// left behind (fixtures/first-release.sql, made by that release's own migrations: fixtures/make-first-release.js).
// Every row survives, the newer migrations run once and in order, a second start changes nothing, and a migration
// that fails rolls back and leaves the old database as it was. Game ports 29210-29219.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import supertest from 'supertest';
import { tempDir } from '../helpers/app';
import { loadConfig } from '../../src/config';
import { silentLogger } from '../../src/log';
import { buildService } from '../../src/service';
import { loadMigrations, migrate, openDb, type Migration } from '../../src/store/db';
import { verifyPassword } from '../../src/dashboard/passwords';

const FIXTURE = fs.readFileSync(path.join(__dirname, 'fixtures', 'first-release.sql'), 'utf8');
const TOKEN = 'gsh_first-release-token-secret-0000000000000000'; // its hash is in the fixture
type Rows = Record<string, unknown>[];

let dir: string;
let dbFile: string;

beforeEach(() => {
  dir = tempDir('upgrade');
  dbFile = path.join(dir, 'gsh.sqlite');
  const db = new Database(dbFile);
  db.exec(FIXTURE);
  db.close();
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Every table's rows, each limited to the columns it had in the first release, in primary key order. */
function snapshot(file: string, columns?: Record<string, string[]>): { columns: Record<string, string[]>; rows: Record<string, Rows> } {
  const db = new Database(file, { readonly: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").pluck().all() as string[];
    const cols = columns ?? Object.fromEntries(tables.map((t) => [t, (db.pragma(`table_info("${t}")`) as { name: string }[]).map((c) => c.name)]));
    const rows = Object.fromEntries(
      Object.entries(cols).map(([t, c]) => [t, db.prepare(`SELECT ${c.map((n) => `"${n}"`).join(', ')} FROM "${t}" ORDER BY 1, 2`).all() as Rows]),
    );
    return { columns: cols, rows };
  } finally {
    db.close();
  }
}

function schema(file: string): unknown[] {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name").all();
  } finally {
    db.close();
  }
}

async function start(boot = true) {
  // Retention far out, so the boot's purge of old token rows keeps the fixture's revoked token whatever today is.
  const config = loadConfig({ DATA_DIR: dir, GAME_PORT_RANGE: '29210-29219', TOKEN_RETENTION_DAYS: '3650' });
  const service = await buildService(config, silentLogger);
  if (boot) await service.boot();
  return service;
}

test("today's service starts on the first release's database: every row survives, migrations run once and in order", async () => {
  const before = snapshot(dbFile);
  expect(before.rows.schema_migrations.map((m) => m.id)).toEqual([1, 2, 3, 4, 5]);
  const service = await start(false);
  // Rows as the upgrade left them, before the boot's maintenance (telemetry rolls samples up) and any request (a
  // request records its token's last use).
  const after = snapshot(dbFile, before.columns);
  await service.boot();
  const http = supertest(service.app);
  try {
    // The first release's token, servers, actions, crashes and password work with today's code.
    const listed = await http.get('/v1/servers').set('Authorization', `Bearer ${TOKEN}`);
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((s: { name: string; state: string }) => [s.name, s.state])).toEqual([
      ['Survival', 'stopped'],
      ['Creative', 'crashed'],
    ]);
    const actions = await http.get('/v1/servers/srv_mhzfirst0000bbbbbbbbbbbbb/actions').set('Authorization', `Bearer ${TOKEN}`);
    expect(actions.body.data[0]).toMatchObject({ status: 'failed', error: { code: 'start_failed' } });
    const crashes = await http.get('/v1/servers/srv_mhzfirst0000bbbbbbbbbbbbb/crashes').set('Authorization', `Bearer ${TOKEN}`);
    expect(crashes.body.data).toHaveLength(1);
    const user = service.db.prepare("SELECT password_hash FROM users WHERE email = 'first@example.com'").pluck().get() as string;
    expect(await verifyPassword('first-release-password', user)).toBe(true);
  } finally {
    await service.shutdown();
  }
  const applied = after.rows.schema_migrations as { id: number; name: string; applied_at: string }[];
  const today = loadMigrations();
  expect(applied.map((m) => m.id)).toEqual(today.map((m) => m.id));
  expect(applied.map((m) => m.name)).toEqual(today.map((m) => m.name));
  expect(applied.slice(0, 5)).toEqual(before.rows.schema_migrations); // the first release's records, untouched
  const newer = applied.slice(5).map((m) => m.applied_at);
  expect(newer).toEqual([...newer].sort());
  // Every row survives as it was; migration 030 gives createServer's stored answer the shape of every other one.
  const reshaped = (before.rows.idempotency_keys as { response_body: string }[]).map((r) => {
    const server = JSON.parse(r.response_body) as { id: string };
    return { ...r, response_body: JSON.stringify({ body: server, headers: { Location: `/v1/servers/${server.id}` } }) };
  });
  for (const [table, rows] of Object.entries(before.rows)) {
    if (table !== 'schema_migrations') expect([table, after.rows[table]]).toEqual([table, table === 'idempotency_keys' ? reshaped : rows]);
  }
  expect(reshaped).toHaveLength(1);
});

test('a second start is a no-op: the same schema, the same migration records, the same rows', async () => {
  await (await start()).shutdown();
  const schemaOnce = schema(dbFile);
  const once = snapshot(dbFile);
  await (await start()).shutdown();
  expect(schema(dbFile)).toEqual(schemaOnce);
  expect(snapshot(dbFile).rows.schema_migrations).toEqual(once.rows.schema_migrations);
  expect(snapshot(dbFile, once.columns).rows).toEqual(once.rows);
});

test('a migration that fails rolls every pending one back: the file stays as the first release left it, and a later fixed upgrade works', () => {
  const schemaBefore = schema(dbFile);
  const before = snapshot(dbFile);
  const broken: Migration = { id: 999, name: '999-broken', sql: 'CREATE TABLE half_done (x INTEGER); INSERT INTO no_such_table VALUES (1);' };
  expect(() => {
    const db = new Database(dbFile);
    try {
      migrate(db, [...loadMigrations(), broken]);
    } finally {
      db.close();
    }
  }).toThrow(/no such table: no_such_table/);
  expect(schema(dbFile)).toEqual(schemaBefore);
  expect(snapshot(dbFile)).toEqual(before);
  const check = new Database(dbFile, { readonly: true });
  expect(check.pragma('integrity_check', { simple: true })).toBe('ok');
  check.close();
  // The next release (without the broken migration) upgrades it as if nothing had happened.
  const db = openDb(dbFile);
  expect(db.prepare('SELECT COUNT(*) FROM schema_migrations').pluck().get()).toBe(loadMigrations().length);
  db.close();
});
