import type { Db } from './db';
import type { Clock } from '../clock';
import { iso } from '../clock';
import { newId } from '../ids';
import { AppError } from '../errors';
import { createEventsRepo, type EventsRepo } from './events-repo';
import type { components } from '../../generated/v1';

export type Backup = components['schemas']['Backup'];

interface BackupRow {
  id: string;
  server_id: string;
  name: string | null;
  status: Backup['status'];
  size_bytes: number | null;
  sha256: string | null;
  error: string | null;
  created_at: string;
  finished_at: string | null;
}

function toBackup(row: BackupRow): Backup {
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    size_bytes: row.size_bytes,
    sha256: row.sha256,
    error: row.error,
    created_at: row.created_at,
    finished_at: row.finished_at,
  };
}

/**
 * The `backups` table (migration 015). The runtime's backups (src/runtime/backups.ts) are the only writer. Each
 * change writes its `backup.*` event for the server's owner in its own transaction (docs/architecture.md "Events
 * and webhooks").
 */
export function createBackupsRepo(db: Db, clock: Clock, events: EventsRepo = createEventsRepo(db, clock)) {
  const q = {
    insert: db.prepare(`INSERT INTO backups (id, server_id, name, status, created_at) VALUES (?, ?, ?, 'pending', ?)`),
    get: db.prepare('SELECT * FROM backups WHERE server_id = ? AND id = ?'),
    byId: db.prepare('SELECT * FROM backups WHERE id = ?'),
    page: db.prepare('SELECT * FROM backups WHERE server_id = ? AND id > ? ORDER BY id LIMIT ?'),
    pending: db.prepare(`SELECT * FROM backups WHERE server_id = ? AND status = 'pending'`),
    kept: db.prepare(`SELECT COUNT(*) AS n FROM backups WHERE server_id = ? AND status IN ('pending', 'ready')`),
    allPending: db.prepare(`SELECT * FROM backups WHERE status = 'pending'`),
    ready: db.prepare(`UPDATE backups SET status = 'ready', size_bytes = ?, sha256 = ?, finished_at = ? WHERE id = ? AND status = 'pending'`),
    failed: db.prepare(`UPDATE backups SET status = 'failed', error = ?, finished_at = ? WHERE id = ? AND status = 'pending'`),
    remove: db.prepare('DELETE FROM backups WHERE server_id = ? AND id = ?'),
  };
  /** The backup's event, as the row is now. */
  function announce(id: string, type: 'backup.ready' | 'backup.failed'): void {
    const row = q.byId.get(id) as BackupRow;
    events.appendForServer(row.server_id, type, { backup: toBackup(row) });
  }

  return {
    /**
     * A new `pending` backup, unless one of the server's is still pending (returned as `busy`), or it already keeps
     * `limit` (ready or pending; backup_limit_reached). The count and the insert are one transaction.
     */
    create(serverId: string, name: string | null, limit: number): { backup: Backup } | { busy: Backup } {
      return db.transaction(() => {
        const open = q.pending.get(serverId) as BackupRow | undefined;
        if (open) return { busy: toBackup(open) };
        const kept = (q.kept.get(serverId) as { n: number }).n;
        if (kept >= limit) throw new AppError('backup_limit_reached', `The server keeps ${kept} backups, as many as its plan allows (${limit}); delete one first.`);
        const id = newId('bkp', clock.now());
        q.insert.run(id, serverId, name, iso(clock.now()));
        const backup = toBackup(q.get.get(serverId, id) as BackupRow);
        events.appendForServer(serverId, 'backup.created', { backup });
        return { backup };
      }).immediate();
    },
    get: (serverId: string, id: string): Backup | undefined => {
      const row = q.get.get(serverId, id) as BackupRow | undefined;
      return row && toBackup(row);
    },
    page(serverId: string, opts: { limit: number; startingAfter?: string }): { data: Backup[]; has_more: boolean } {
      const rows = q.page.all(serverId, opts.startingAfter ?? '', opts.limit + 1) as BackupRow[];
      return { data: rows.slice(0, opts.limit).map(toBackup), has_more: rows.length > opts.limit };
    },
    pending: (serverId: string): boolean => q.pending.get(serverId) !== undefined,
    /** Every pending backup with its server: at boot, these were interrupted. */
    allPending: (): Array<{ serverId: string; id: string }> => (q.allPending.all() as BackupRow[]).map((r) => ({ serverId: r.server_id, id: r.id })),
    markReady: (id: string, sizeBytes: number, sha256: string): void =>
      db.transaction(() => {
        if (q.ready.run(sizeBytes, sha256, iso(clock.now()), id).changes > 0) announce(id, 'backup.ready');
      })(),
    markFailed: (id: string, error: string): void =>
      db.transaction(() => {
        if (q.failed.run(error.slice(0, 500), iso(clock.now()), id).changes > 0) announce(id, 'backup.failed');
      })(),
    remove: (serverId: string, id: string): boolean =>
      db.transaction(() => {
        const row = q.get.get(serverId, id) as BackupRow | undefined;
        if (!row || q.remove.run(serverId, id).changes === 0) return false;
        events.appendForServer(serverId, 'backup.deleted', { backup: toBackup(row) });
        return true;
      })(),
  };
}

export type BackupsRepo = ReturnType<typeof createBackupsRepo>;
