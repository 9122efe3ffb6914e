import { required, type Db } from './db';
import type { Clock } from '../clock';
import { iso } from '../clock';
import { quotaExceeded } from '../errors';
import type { EventsRepo } from './events-repo';
import type { ServerWrites } from './server-writes';
import type { components } from '../../generated/v1';

export type KeptBackup = components['schemas']['KeptBackup'];

interface KeptRow {
  id: string;
  user_id: string;
  server_id: string;
  server_name: string;
  version: string;
  name: string | null;
  automatic: 0 | 1;
  size_bytes: number;
  sha256: string;
  created_at: string;
  finished_at: string;
  kept_at: string;
}

function toKept(row: KeptRow): KeptBackup {
  return {
    id: row.id,
    server_id: row.server_id,
    server_name: row.server_name,
    version: row.version,
    name: row.name,
    automatic: row.automatic === 1,
    size_bytes: row.size_bytes,
    sha256: row.sha256,
    created_at: row.created_at,
    kept_at: row.kept_at,
  };
}

type Statements = ReturnType<typeof statements>;

/** The repository's statements, prepared once (docs/conventions.md "Code layout"). */
function statements(db: Db) {
  return {
    server: db.prepare<unknown[], { user_id: string; state: string; keep_backups: 0 | 1 }>('SELECT user_id, state, keep_backups FROM servers WHERE id = ?'),
    kept: db.prepare<unknown[], number>('SELECT COUNT(*) FROM kept_backups WHERE user_id = ?').pluck(),
    // Ready backups of the user's servers that will be kept once their removal ends (not yet copied: a removal
    // past its transfer still has the rows, and they count once, as kept).
    promised: db.prepare<unknown[], number>(`SELECT COUNT(*) FROM backups b JOIN servers s ON s.id = b.server_id
      WHERE s.user_id = ? AND s.keep_backups = 1 AND b.status = 'ready'
        AND NOT EXISTS (SELECT 1 FROM kept_backups k WHERE k.id = b.id)`).pluck(),
    ready: db.prepare<unknown[], number>(`SELECT COUNT(*) FROM backups WHERE server_id = ? AND status = 'ready'`).pluck(),
    transfer: db.prepare(`INSERT OR IGNORE INTO kept_backups
        (id, user_id, server_id, server_name, version, name, automatic, size_bytes, sha256, created_at, finished_at, kept_at)
      SELECT b.id, s.user_id, s.id, s.name, s.version, b.name, b.automatic, b.size_bytes, b.sha256, b.created_at, b.finished_at, ?
      FROM backups b JOIN servers s ON s.id = b.server_id WHERE s.id = ? AND s.keep_backups = 1 AND b.status = 'ready'`),
    ofServer: db.prepare<unknown[], string>('SELECT id FROM kept_backups WHERE server_id = ? ORDER BY id').pluck(),
    get: db.prepare<unknown[], KeptRow>('SELECT * FROM kept_backups WHERE user_id = ? AND id = ?'),
    // A kept backup of the owner of this server (a restore into it).
    forServer: db.prepare<unknown[], KeptRow>('SELECT k.* FROM kept_backups k JOIN servers s ON s.user_id = k.user_id WHERE s.id = ? AND k.id = ?'),
    page: db.prepare<unknown[], KeptRow>('SELECT * FROM kept_backups WHERE user_id = ? AND id > ? ORDER BY id LIMIT ?'),
    remove: db.prepare('DELETE FROM kept_backups WHERE user_id = ? AND id = ?'),
  };
}

/** A deleted server's backups becoming kept ones: promised before its removal begins, transferred during it. */
function keeping(db: Db, st: Statements, clock: Clock, servers: Pick<ServerWrites, 'promiseBackups'>) {
  return {
    /**
     * deleteServer with keep_backups=true, before the removal begins: promises the server's ready backups to its
     * owner, within `perUser` kept backups (those kept, and those promised by servers still being deleted), else
     * 403 quota_exceeded (quota `kept_backups`) and nothing changes. A server already being deleted keeps what its
     * first delete asked for.
     */
    promise(serverId: string, perUser: number): void {
      db.transaction(() => {
        const server = st.server.get(serverId);
        if (!server || server.state === 'deleting' || server.keep_backups === 1) return;
        const used = required(st.kept.get(server.user_id)) + required(st.promised.get(server.user_id));
        const more = required(st.ready.get(serverId));
        if (used + more > perUser) {
          throw quotaExceeded('kept_backups', perUser, used,
            `Keeping this server's ${more} ready backups would take your account past ${perUser} kept backups (it keeps ${used}); ` +
              'delete some of them (DELETE /v1/backups/{backup_id}), or delete the server without keep_backups.');
        }
        servers.promiseBackups(serverId);
      }).immediate();
    },
    /**
     * While the server's row still exists (its removal): the ready backups promised to its owner become kept
     * backups; returns the ids kept (their archives are the caller's to move). Idempotent, so a removal run again
     * after a crash keeps the same ones.
     */
    transfer(serverId: string): string[] {
      return db.transaction(() => {
        st.transfer.run(iso(clock.now()), serverId);
        return st.ofServer.all(serverId);
      })();
    },
  };
}

/** An account's kept backups: read one or a page, and delete one with its event. */
function keptBackups(db: Db, st: Statements, events: Pick<EventsRepo, 'raise'>) {
  return {
    get: (userId: string, id: string): KeptBackup | undefined => {
      const row = st.get.get(userId, id);
      return row && toKept(row);
    },
    /** The kept backup `id`, if the owner of `serverId` kept it. */
    forServer: (serverId: string, id: string): KeptBackup | undefined => {
      const row = st.forServer.get(serverId, id);
      return row && toKept(row);
    },
    page(userId: string, opts: { limit: number; startingAfter?: string }): { data: KeptBackup[]; has_more: boolean } {
      const rows = st.page.all(userId, opts.startingAfter ?? '', opts.limit + 1);
      return { data: rows.slice(0, opts.limit).map(toKept), has_more: rows.length > opts.limit };
    },
    /** Deletes the row with its `backup.deleted` event, one transaction; false if there was none. */
    remove: (userId: string, id: string): boolean =>
      db.transaction(() => {
        const row = st.get.get(userId, id);
        if (!row || st.remove.run(userId, id).changes === 0) return false;
        // The account's own: its server is gone, and with it every membership (docs/architecture.md "Sharing").
        const backup = {
          id: row.id, name: row.name, automatic: row.automatic === 1, status: 'ready' as const, size_bytes: row.size_bytes,
          sha256: row.sha256, error: null, created_at: row.created_at, finished_at: row.finished_at,
        };
        events.raise('backup.deleted', { backup }, { userId, serverId: row.server_id });
        return true;
      })(),
  };
}

/**
 * The `kept_backups` table (migration 021): the ready backups an account kept when it deleted their server
 * (deleteServer `keep_backups=true`). The runtime's kept backups (src/runtime/services/kept-backups.ts) are the only writer;
 * the promise on the server's row is written through the servers table's writer (ServersRepo).
 */
export function createKeptBackupsRepo(db: Db, clock: Clock, events: Pick<EventsRepo, 'raise'>, servers: Pick<ServerWrites, 'promiseBackups'>) {
  const st = statements(db);
  return { ...keeping(db, st, clock, servers), ...keptBackups(db, st, events) };
}

export type KeptBackupsRepo = ReturnType<typeof createKeptBackupsRepo>;
