import { required, type Db } from './db';
import type { Clock } from '../clock';
import { iso } from '../clock';
import { newId } from '../ids';
import { AppError } from '../errors';
import type { EventsRepo } from './events-repo';
import type { StoredSchedule } from './servers-repo';
import type { components } from '../../generated/v1';

export type Backup = components['schemas']['Backup'];

interface BackupRow {
  id: string;
  server_id: string;
  name: string | null;
  /** Migration 020: made by the server's schedule (1), or asked for (0). */
  automatic: 0 | 1;
  status: components['schemas']['BackupStatus'];
  /** Migration 031: how it was made, once ready. */
  consistency: components['schemas']['BackupConsistency'] | null;
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
    automatic: row.automatic === 1,
    status: row.status,
    consistency: row.consistency,
    size_bytes: row.size_bytes,
    sha256: row.sha256,
    error: row.error,
    created_at: row.created_at,
    finished_at: row.finished_at,
  };
}

type Statements = ReturnType<typeof statements>;
type Events = Pick<EventsRepo, 'raise'>;

/** The repository's statements, prepared once (docs/conventions.md "Code layout"). */
function statements(db: Db) {
  return {
    insert: db.prepare(`INSERT INTO backups (id, server_id, name, automatic, status, created_at) VALUES (?, ?, ?, ?, 'pending', ?)`),
    // Retention (openapi/v1.yaml Backup.automatic): the oldest ready automatic backup goes first.
    oldestAutomatic: db.prepare<unknown[], BackupRow>(`SELECT * FROM backups WHERE server_id = ? AND automatic = 1 AND status = 'ready' ORDER BY id LIMIT 1`),
    keptAutomatic: db.prepare<unknown[], number>(`SELECT COUNT(*) FROM backups WHERE server_id = ? AND automatic = 1 AND status IN ('pending', 'ready')`).pluck(),
    get: db.prepare<unknown[], BackupRow>('SELECT * FROM backups WHERE server_id = ? AND id = ?'),
    byId: db.prepare<unknown[], BackupRow>('SELECT * FROM backups WHERE id = ?'),
    page: db.prepare<unknown[], BackupRow>('SELECT * FROM backups WHERE server_id = ? AND id > ? ORDER BY id LIMIT ?'),
    pending: db.prepare<unknown[], BackupRow>(`SELECT * FROM backups WHERE server_id = ? AND status = 'pending'`),
    kept: db.prepare<unknown[], { n: number }>(`SELECT COUNT(*) AS n FROM backups WHERE server_id = ? AND status IN ('pending', 'ready')`),
    allPending: db.prepare<unknown[], BackupRow>(`SELECT * FROM backups WHERE status = 'pending'`),
    scheduled: db.prepare<unknown[], { id: string; backup_schedule: string; last_automatic: string | null }>(`SELECT s.id, s.backup_schedule,
        (SELECT MAX(b.created_at) FROM backups b WHERE b.server_id = s.id AND b.automatic = 1) AS last_automatic
      FROM servers s WHERE s.backup_schedule IS NOT NULL AND s.state != 'deleting' ORDER BY s.id`),
    ready: db.prepare(`UPDATE backups SET status = 'ready', consistency = ?, size_bytes = ?, sha256 = ?, finished_at = ? WHERE id = ? AND status = 'pending'`),
    failed: db.prepare(`UPDATE backups SET status = 'failed', error = ?, finished_at = ? WHERE id = ? AND status = 'pending'`),
    remove: db.prepare('DELETE FROM backups WHERE server_id = ? AND id = ?'),
  };
}

/** Asking for a backup: a new pending one, with room made under the plan's and the schedule's limits. */
function backupCreation(db: Db, st: Statements, clock: Clock, events: Events) {
  return {
    /**
     * A new `pending` backup, unless one of the server's is still pending (returned as `busy`). At the plan's
     * `limit` of kept backups (ready or pending), or for an automatic one at the schedule's `keep` of automatic
     * ones, the oldest ready automatic backups are deleted to make room (returned as `pruned`: their archives are
     * the caller's to remove); with none to delete, backup_limit_reached. One transaction, with every event.
     */
    create(serverId: string, name: string | null, opts: { limit: number; automatic?: boolean; keep?: number }): { backup: Backup; pruned: string[] } | { busy: Backup } {
      return db.transaction(() => {
        const open = st.pending.get(serverId);
        if (open) return { busy: toBackup(open) };
        const pruned: string[] = [];
        const full = () =>
          required(st.kept.get(serverId)).n >= opts.limit ||
          (opts.automatic === true && opts.keep !== undefined && required(st.keptAutomatic.get(serverId)) >= opts.keep);
        while (full()) {
          const oldest = st.oldestAutomatic.get(serverId);
          if (!oldest) {
            const kept = required(st.kept.get(serverId)).n;
            throw new AppError('backup_limit_reached', `The server keeps ${kept} backups, as many as its plan allows (${opts.limit}); delete one first.`);
          }
          st.remove.run(serverId, oldest.id);
          events.raise('backup.deleted', { backup: toBackup(oldest) }, { serverId: serverId });
          pruned.push(oldest.id);
        }
        const id = newId('bkp', clock.now());
        st.insert.run(id, serverId, name, opts.automatic ? 1 : 0, iso(clock.now()));
        const backup = toBackup(required(st.get.get(serverId, id)));
        events.raise('backup.created', { backup }, { serverId: serverId });
        return { backup, pruned };
      }).immediate();
    },
  };
}

/** Reading backups: one, a page, the pending ones, and the schedules' last automatic backups. */
function backupReads(st: Statements) {
  return {
    /** Every server with a backup schedule, and when its newest automatic backup was made (backup-schedule.ts). */
    scheduled: (): Array<{ serverId: string; schedule: StoredSchedule; lastAutomatic: string | null }> =>
      st.scheduled.all().map((r) => ({
        serverId: r.id,
        schedule: JSON.parse(r.backup_schedule) as StoredSchedule,
        lastAutomatic: r.last_automatic,
      })),
    get: (serverId: string, id: string): Backup | undefined => {
      const row = st.get.get(serverId, id);
      return row && toBackup(row);
    },
    page(serverId: string, opts: { limit: number; startingAfter?: string }): { data: Backup[]; has_more: boolean } {
      const rows = st.page.all(serverId, opts.startingAfter ?? '', opts.limit + 1);
      return { data: rows.slice(0, opts.limit).map(toBackup), has_more: rows.length > opts.limit };
    },
    pending: (serverId: string): boolean => st.pending.get(serverId) !== undefined,
    /** Every pending backup with its server: at boot, these were interrupted. */
    allPending: (): Array<{ serverId: string; id: string }> => st.allPending.all().map((r) => ({ serverId: r.server_id, id: r.id })),
  };
}

/** A backup's end: ready or failed once its archive is written or not, or deleted; each with its event. */
function backupOutcomes(db: Db, st: Statements, clock: Clock, events: Events) {
  /** The backup's event, as the row is now. */
  function announce(id: string, type: 'backup.ready' | 'backup.failed'): void {
    const row = required(st.byId.get(id));
    events.raise(type, { backup: toBackup(row) }, { serverId: row.server_id });
  }

  return {
    /** The archive is written: `ready`, with how it was made (Backup.consistency), its size and digest. */
    markReady: (id: string, made: { consistency: components['schemas']['BackupConsistency']; sizeBytes: number; sha256: string }): void =>
      db.transaction(() => {
        if (st.ready.run(made.consistency, made.sizeBytes, made.sha256, iso(clock.now()), id).changes > 0) announce(id, 'backup.ready');
      })(),
    markFailed: (id: string, error: string): void =>
      db.transaction(() => {
        if (st.failed.run(error.slice(0, 500), iso(clock.now()), id).changes > 0) announce(id, 'backup.failed');
      })(),
    remove: (serverId: string, id: string): boolean =>
      db.transaction(() => {
        const row = st.get.get(serverId, id);
        if (!row || st.remove.run(serverId, id).changes === 0) return false;
        events.raise('backup.deleted', { backup: toBackup(row) }, { serverId: serverId });
        return true;
      })(),
  };
}

/**
 * The `backups` table (migration 015). The runtime's backups (src/runtime/services/backups.ts) are the only writer. Each
 * change writes its `backup.*` event for the server's owner in its own transaction (docs/architecture.md "Events
 * and webhooks").
 */
export function createBackupsRepo(db: Db, clock: Clock, events: Events) {
  const st = statements(db);
  return { ...backupCreation(db, st, clock, events), ...backupReads(st), ...backupOutcomes(db, st, clock, events) };
}

export type BackupsRepo = ReturnType<typeof createBackupsRepo>;
