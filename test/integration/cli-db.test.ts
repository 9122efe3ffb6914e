// `npx gsh db backup|restore` and `npx gsh config` as operators run them (`node bin/gsh.js`, built by `npm test`),
// against a service running in this process on the same DATA_DIR (README "Upgrades and backups").
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { createTestApp, tempDir, type TestApp } from '../helpers/app';
import { settingNames } from '../../src/cli-config';

const bin = path.join(__dirname, '..', '..', 'bin', 'gsh.js');

/** Runs the CLI without blocking this process, so the service here keeps answering and writing meanwhile. */
function gsh(args: string[], env: Record<string, string>): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], { env: { ...process.env, ...env }, encoding: 'utf8' }, (error, stdout, stderr) => {
      resolve({ status: error ? Number(error.code ?? 1) : 0, stdout, stderr });
    });
  });
}

function count(file: string, table: string): number {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare(`SELECT COUNT(*) FROM ${table}`).pluck().get() as number;
  } finally {
    db.close();
  }
}

let t: TestApp;
let backups: string;
let env: Record<string, string>;
let stopped: boolean;

/** Stops the service as an operator does before a restore; afterEach then only checks and removes its folder. */
async function stopService() {
  stopped = true;
  await t.shutdown();
}

// Each test gets its own service, database and data folder (docs/conventions.md "Tests").
beforeEach(async () => {
  t = await createTestApp({ env: { GAME_PORT_RANGE: '29220-29229' } });
  backups = tempDir('backups');
  env = { DATA_DIR: t.config.dataDir };
  stopped = false;
});
afterEach(async () => {
  fs.rmSync(backups, { recursive: true, force: true });
  if (!stopped) return t.finish();
  t.expectContract();
  fs.rmSync(t.dir, { recursive: true, force: true });
});

test('db backup takes a consistent copy while the service runs and writes', async () => {
  const user = t.store.users.ensure('ops@example.com');
  const token = t.token('ops@example.com');
  const created = await t.http.post('/v1/servers').set('Authorization', `Bearer ${token}`).send({ name: 'kept', plan: 'micro', version: 'flying-squid-1.20' });
  expect(created.status).toBe(201);
  const file = path.join(backups, 'gsh-backup.sqlite');
  // Tokens are written all through the backup, each in its own transaction.
  let writing = true;
  const writer = (async () => {
    while (writing) {
      t.store.tokens.create(user.id, { name: 'during', scopes: ['servers:read'] });
      await new Promise((r) => setTimeout(r, 2));
    }
  })();
  const before = count(t.config.dbFile, 'tokens');
  const result = await gsh(['db', 'backup', file], env);
  writing = false;
  await writer;
  expect([result.status, result.stderr]).toEqual([0, '']);
  expect(result.stdout).toMatch(/^Backed up .*gsh\.sqlite to .*gsh-backup\.sqlite \(\d+ bytes, migrations up to \d{3}\)\.\n$/);
  const copy = new Database(file, { readonly: true });
  expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
  expect(copy.prepare('SELECT name FROM servers').pluck().all()).toEqual(['kept']);
  copy.close();
  const copied = count(file, 'tokens');
  expect(copied).toBeGreaterThanOrEqual(before);
  expect(copied).toBeLessThanOrEqual(count(t.config.dbFile, 'tokens'));
  expect(fs.existsSync(`${file}.partial`)).toBe(false);

  // Never over an existing file.
  const again = await gsh(['db', 'backup', file], env);
  expect(again.status).toBe(1);
  expect(again.stderr).toContain('exists; name a new file');
});

test('db restore refuses while the service runs, then restores once it is stopped', async () => {
  const token = t.token('ops@example.com');
  await t.http.post('/v1/servers').set('Authorization', `Bearer ${token}`).send({ name: 'in the backup', plan: 'micro', version: 'flying-squid-1.20' });
  const file = path.join(backups, 'b.sqlite');
  expect((await gsh(['db', 'backup', file], env)).status).toBe(0);
  await t.http.post('/v1/servers').set('Authorization', `Bearer ${token}`).send({ name: 'after the backup', plan: 'micro', version: 'flying-squid-1.20' });

  const refused = await gsh(['db', 'restore', file], env);
  expect(refused.status).toBe(1);
  expect(refused.stderr).toMatch(/is in use: stop the service \(and any other gsh command\) before restoring/);
  expect(count(t.config.dbFile, 'servers')).toBe(2); // nothing changed
  expect((await t.http.get('/v1/servers').set('Authorization', `Bearer ${token}`)).body.data).toHaveLength(2);

  await stopService();
  const restored = await gsh(['db', 'restore', file], env);
  expect([restored.status, restored.stderr]).toEqual([0, '']);
  const kept = /kept at (\S+)\.$/m.exec(restored.stdout)![1];
  expect(count(kept, 'servers')).toBe(2); // the replaced database, whole
  const db = new Database(t.config.dbFile, { readonly: true });
  expect(db.prepare('SELECT name FROM servers').pluck().all()).toEqual(['in the backup']);
  db.close();
});

test.each([
  ['a missing file', () => 'nope.sqlite', /There is no backup at/],
  ['a file that is not a database', (dir: string) => (fs.writeFileSync(path.join(dir, 'x'), 'hello, not sqlite'.repeat(100)), 'x'), /is not an SQLite database/],
  ['a database that is not ours', (dir: string) => (new Database(path.join(dir, 'y')).exec('CREATE TABLE t (x)'), 'y'), /not a gsh control database/],
])('db restore refuses %s and changes nothing', async (_name, make, message) => {
  await stopService();
  const before = fs.readFileSync(t.config.dbFile);
  const result = await gsh(['db', 'restore', path.join(backups, make(backups))], env);
  expect(result.status).toBe(1);
  expect(result.stderr).toMatch(message);
  expect(fs.readFileSync(t.config.dbFile).equals(before)).toBe(true);
});

test('db restore refuses a backup made by a newer release', async () => {
  const file = path.join(backups, 'newer.sqlite');
  expect((await gsh(['db', 'backup', file], env)).status).toBe(0);
  const db = new Database(file);
  db.prepare("INSERT INTO schema_migrations VALUES (999, '999-future', '2030-01-01T00:00:00.000Z')").run();
  db.close();
  await stopService();
  const result = await gsh(['db', 'restore', file], env);
  expect(result.status).toBe(1);
  expect(result.stderr).toMatch(/made by a newer release \(migration 999; this one knows up to \d{3}\)/);
});

test('config prints every setting in effect, marks defaults, and never a secret', async () => {
  const secret = 'operator-metrics-secret-0123456789abcdef';
  const result = await gsh(['config'], { DATA_DIR: t.config.dataDir, METRICS_TOKEN: secret, QUOTA_SERVERS: '7' });
  expect([result.status, result.stderr]).toEqual([0, '']);
  const lines = result.stdout.trim().split('\n');
  expect(lines.map((l) => l.split('=')[0])).toEqual(settingNames);
  expect(lines).toContain('METRICS_TOKEN=(set, hidden)');
  expect(lines).toContain('QUOTA_SERVERS=7');
  expect(lines).toContain('PORT=8080  (default)');
  expect(lines).toContain('METRICS_PORT=(off)  (default)');
  expect(result.stdout).not.toContain(secret);

  const bad = await gsh(['config'], { DATA_DIR: t.config.dataDir, RATE_LIMIT_PER_MINUTE: 'lots' });
  expect(bad.status).toBe(1);
  expect(bad.stderr).toBe('gsh: RATE_LIMIT_PER_MINUTE must be a whole number from 1 to 1000000; got "lots".\n');
});
