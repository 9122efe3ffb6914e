import type { Db } from './db';
import type { Clock } from '../clock';
import { iso } from '../clock';
import type { EventsRepo } from './events-repo';
import type { Server } from './servers-repo';

type ServerState = Server['state'];

/** A server's folder measurement as the disk watcher reads it (src/runtime/disk-watcher.ts). */
export interface DiskRow {
  id: string;
  plan: string;
  state: ServerState;
  disk_used_bytes: number | null;
}

/** The disk watcher's statements on the servers table (docs/architecture.md "Disk"), part of ServersRepo. */
export function createDiskColumns(db: Db, clock: Clock, events: EventsRepo) {
  const rows = db.prepare('SELECT id, plan, state, disk_used_bytes FROM servers ORDER BY id');
  // updated_at stays: a measurement is not a change to the server (openapi/v1.yaml, Server.disk_measured_at).
  const record = db.prepare(
    "UPDATE servers SET disk_used_bytes = ?, disk_measured_at = ? WHERE id = ? AND state != 'deleting'",
  );
  const wantStopped = db.prepare(
    "UPDATE servers SET desired_state = 'stopped', updated_at = ? WHERE id = ? AND state != 'deleting'",
  );

  return {
    /** Every server's id, plan, state and last folder measurement, in one query (the disk watcher's view). */
    diskRows(): DiskRow[] {
      return rows.all() as DiskRow[];
    },

    /**
     * Records a folder measurement, with `quota.disk_warning` in the same transaction when `warn` gives the plan's
     * limit (the watcher saw the 90% line crossed); false when the row is gone or being deleted.
     */
    recordDisk(id: string, bytes: number, warn: { limitBytes: number } | null = null): boolean {
      return db.transaction(() => {
        if (record.run(bytes, iso(clock.now()), id).changes !== 1) return false;
        if (warn) events.appendForServer(id, 'quota.disk_warning', { used_bytes: bytes, limit_bytes: warn.limitBytes });
        return true;
      })();
    },

    /**
     * Desired state `stopped`, written by the service itself rather than by an action: the disk watcher's stop of a
     * server over its plan's disk space, so neither reconcile nor the crash policy starts it again; with its
     * `quota.disk_exceeded` event.
     */
    stopWanted(id: string, over: { usedBytes: number; limitBytes: number }): void {
      db.transaction(() => {
        if (wantStopped.run(iso(clock.now()), id).changes === 1) {
          events.appendForServer(id, 'quota.disk_exceeded', { used_bytes: over.usedBytes, limit_bytes: over.limitBytes });
        }
      })();
    },
  };
}
