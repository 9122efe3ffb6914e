// `gsh db …`: backups of the control database (README "Upgrades and backups"). The command names are an
// interface operators' scripts depend on: keep them.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { loadConfig } from './config';
import { loadMigrations, openDb } from './store/db';
import { failure, UsageError } from './cli-usage';

export const DB_USAGE = `  gsh db backup <file>
  gsh db restore <file>`;

export const DB_HELP = `db backup copies the control database (DATA_DIR/gsh.sqlite) to a new file with SQLite's online backup API: a
consistent copy, also while the service runs and writes. It refuses to overwrite a file. Game servers' folders
are not in it. db restore replaces the control database with a backup, once the service is stopped: it refuses
while anything (the service, another gsh command) has the database open, keeps the database it replaces next to
it as gsh.sqlite.before-restore-<time>, and brings a backup from an older release up to date.`;

/** Runs `gsh db <argv…>`; resolves with the exit code (2: bad usage, 1: refused or failed). */
export async function runDbCli(argv: string[], env: NodeJS.ProcessEnv, out: (s: string) => void, err: (s: string) => void): Promise<number> {
  try {
    const [command, file, ...rest] = argv;
    if (command !== 'backup' && command !== 'restore') throw new UsageError(`There is no db command "${command}".`);
    if (!file) throw new UsageError(`db ${command} needs the ${command === 'backup' ? 'file to write' : 'backup file to read'}.`);
    if (rest.length > 0) throw new UsageError(`Unexpected argument "${rest[0]}".`);
    const { dbFile } = loadConfig(env);
    if (command === 'backup') await backup(dbFile, path.resolve(file), out);
    else restore(dbFile, path.resolve(file), out);
    return 0;
  } catch (e) {
    return failure(e, err, DB_USAGE, ['db', ...argv]);
  }
}

/**
 * SQLite's backup API through better-sqlite3 `db.backup()`: pages are copied from a read transaction, and a write
 * by another connection meanwhile restarts the copy, so the file is one consistent state
 * (https://www.sqlite.org/backup.html). Written next to its target and renamed once checked, so a failed backup
 * leaves no file that looks like one.
 */
async function backup(dbFile: string, target: string, out: (s: string) => void): Promise<void> {
  if (!fs.existsSync(dbFile)) throw new Error(`There is no database at ${dbFile} (DATA_DIR).`);
  if (fs.existsSync(target)) throw new Error(`${target} exists; name a new file.`);
  const partial = `${target}.partial`;
  const db = new Database(dbFile, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    // All pages in one step: one read transaction, which in WAL mode never blocks the service's writes.
    await db.backup(partial, { progress: ({ remainingPages }) => Math.max(remainingPages, 100) });
  } catch (e) {
    fs.rmSync(partial, { force: true });
    throw e;
  } finally {
    db.close();
  }
  const migrations = check(partial);
  fs.renameSync(partial, target);
  out(`Backed up ${dbFile} to ${target} (${fs.statSync(target).size} bytes, migrations up to ${pad(migrations)}).`);
}

/** The backup's integrity and its newest migration; refuses a file that is not this service's database. */
function check(file: string): number {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const integrity = db.pragma('integrity_check', { simple: true });
    if (integrity !== 'ok') throw new Error(`${file} fails SQLite's integrity check: ${String(integrity)}.`);
    const hasTable = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
    if (!hasTable) throw new Error(`${file} is not a gsh control database (no schema_migrations).`);
    return db.prepare<[], number>('SELECT COALESCE(MAX(id), 0) FROM schema_migrations').pluck().get() ?? 0;
  } catch (e) {
    if ((e as { code?: string }).code === 'SQLITE_NOTADB') throw new Error(`${file} is not an SQLite database.`, { cause: e });
    throw e;
  } finally {
    db.close();
  }
}

/**
 * Whether anything has the database open. Leaving WAL mode needs every other connection closed (SQLite answers
 * SQLITE_BUSY at once with no busy timeout; https://www.sqlite.org/wal.html "Persistence of WAL mode"), and every
 * connection of the service and the CLI holds it open in WAL mode. The locks are the operating system's, so a
 * service killed with -9 holds none: no stale lock or pid file to clear. Leaving WAL also checkpoints the log into
 * the file, so the file alone is the whole database when it is set aside.
 */
function assertClosed(dbFile: string): void {
  const db = new Database(dbFile, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 0');
    db.pragma('journal_mode = DELETE');
  } catch (e) {
    if ((e as { code?: string }).code !== 'SQLITE_BUSY') throw e;
    throw new Error(`${dbFile} is in use: stop the service (and any other gsh command) before restoring.`, { cause: e });
  } finally {
    db.close();
  }
}

function restore(dbFile: string, source: string, out: (s: string) => void): void {
  if (!fs.existsSync(source)) throw new Error(`There is no backup at ${source}.`);
  const newest = check(source);
  const known = Math.max(0, ...loadMigrations().map((m) => m.id));
  if (newest > known) throw new Error(`${source} was made by a newer release (migration ${pad(newest)}; this one knows up to ${pad(known)}).`);
  let kept: string | null = null;
  if (fs.existsSync(dbFile)) {
    assertClosed(dbFile);
    kept = `${dbFile}.before-restore-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    fs.renameSync(dbFile, kept);
    for (const suffix of ['-wal', '-shm']) fs.rmSync(`${dbFile}${suffix}`, { force: true });
  }
  const incoming = `${dbFile}.restoring`;
  fs.mkdirSync(path.dirname(dbFile), { recursive: true });
  fs.copyFileSync(source, incoming);
  fs.renameSync(incoming, dbFile);
  openDb(dbFile).close(); // a backup from an older release is migrated now, all or nothing
  out(`Restored ${source} to ${dbFile}${kept ? `; the database it replaced is kept at ${kept}` : ''}.`);
}

const pad = (n: number) => String(n).padStart(3, '0');
