import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';

export type Db = Database.Database;

/**
 * Opens (creating if needed) the service's SQLite file and brings its schema up to date.
 *
 * Durability (see SECURITY.md): WAL journal with synchronous=FULL, so a transaction that returned has been
 * fsynced to the WAL and survives `kill -9` and power loss; an answer is only sent after its transaction
 * committed, so nothing acknowledged is lost. busy_timeout lets the CLI write while the service runs on the
 * same file (https://www.sqlite.org/wal.html#concurrency).
 */
export function openDb(file: string): Db {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  try {
    migrate(db);
  } catch (err) {
    db.close(); // the failed migration rolled back; nothing keeps the file open (README "Upgrades and backups")
    throw err;
  }
  return db;
}

export interface Migration {
  id: number;
  name: string;
  sql: string;
}

/**
 * Migrations live one per file in ./migrations as `NNN-name.ts`, each exporting `sql`, sorted by number. Each runs
 * once, in order, inside the one transaction of migrate() together with the row recording it, so a crash or a
 * failure mid-upgrade leaves nothing half applied. Files are found by listing the folder, so adding one needs no
 * registry edit.
 */
export function loadMigrations(): Migration[] {
  const dir = path.join(__dirname, 'migrations');
  return fs
    .readdirSync(dir)
    .filter((f) => /^\d{3}-[\w-]+\.(ts|js)$/.test(f) && !f.endsWith('.d.ts'))
    .sort()
    .map((f) => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- the migrations are found by listing their folder
      const mod = require(path.join(dir, f)) as { sql: string };
      return { id: Number(f.slice(0, 3)), name: f.replace(/\.(ts|js)$/, ''), sql: mod.sql };
    });
}

/**
 * Brings the schema up to date: the migrations not yet recorded in `schema_migrations` run in the order given (by
 * number, from loadMigrations), each with the row recording it, all of them in one IMMEDIATE transaction. So an
 * upgrade is all or nothing: a migration that fails rolls every pending one back and the file stays exactly as
 * the previous release left it, still usable by that release; the error is thrown. The recorded set is read
 * inside the transaction, so the service and the CLI starting together migrate once. Recorded migrations never
 * run again (test/upgrade/first-release.test.ts).
 */
export function migrate(db: Db, migrations: Migration[] = loadMigrations()): void {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`);
  const appliedIds = db.prepare<unknown[], number>('SELECT id FROM schema_migrations').pluck();
  const record = db.prepare('INSERT INTO schema_migrations (id, name, applied_at) VALUES (?, ?, ?)');
  db.transaction(() => {
    const applied = new Set(appliedIds.all());
    for (const m of migrations) {
      if (applied.has(m.id)) continue;
      db.exec(m.sql);
      record.run(m.id, m.name, new Date().toISOString());
    }
  }).immediate();
}

/**
 * A value the query always yields (a COUNT's one row, a row written earlier in the same transaction): `get()` is
 * typed `Row | undefined`, and a missing one here is a bug, thrown as such rather than read as a row later.
 */
export function required<T>(value: T | null | undefined): T {
  if (value === undefined || value === null) throw new Error('a row that must exist is missing');
  return value;
}
