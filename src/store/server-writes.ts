import type { Db } from './db';
import { AppError } from '../errors';
import type { Clock } from '../clock';
import { iso } from '../clock';
import type { EventsRepo } from './events-repo';
import { serviceActor } from '../actors';
import type { components } from '../../generated/v1';

/** The disk watcher's events name it, whichever work measured (docs/architecture.md "Disk"). */
const DISK = serviceActor('disk_quota');

type ServerState = components['schemas']['ServerState'];

/** One folder measurement of a disk watcher pass (ServerWrites.recordDisk). */
export interface DiskMeasurement {
  id: string;
  bytes: number;
  /** The row's disk_changes when the walk began. */
  seenChanges: number;
  /** The plan's limit, when this measurement crossed 90% of it (a quota.disk_warning event goes with it); else null. */
  warnLimitBytes: number | null;
}

/** A `servers` row as stored (migrations 001, 009, 010, 018, 019, 020, 021, 026). */
export interface ServerRow {
  id: string;
  user_id: string;
  name: string;
  plan: string;
  version: string;
  software: string;
  game_version: string;
  state: ServerState;
  desired_state: 'running' | 'stopped';
  host: string | null;
  port: number | null;
  /** Migration 018: `tcp` or `udp`, from the software definition. */
  transport: 'tcp' | 'udp';
  /** Migration 010: the node it was placed on (docs/architecture.md "Nodes and placement"); NULL when local. */
  node: string | null;
  /** Migration 009: the last measurement of the server's folder, NULL until the first. */
  disk_used_bytes: number | null;
  disk_measured_at: string | null;
  /** Migration 019: minutes without a player before the idle stop; NULL for never. */
  idle_stop_minutes: number | null;
  /** Migration 020: the backup schedule as JSON (backup-schedule.ts StoredSchedule); NULL for none. */
  backup_schedule: string | null;
  /** Migration 040: its label in DNS_ZONE (openapi/v1.yaml DnsName), lowercase ASCII; NULL for none. */
  dns_name: string | null;
  created_at: string;
  updated_at: string;
}

type Statements = ReturnType<typeof statements>;
type Events = Pick<EventsRepo, 'raise'>;

/** The table's writes and the one read their events need, prepared once (docs/conventions.md "Code layout"). */
function statements(db: Db) {
  return {
    insert: db.prepare(`INSERT INTO servers
      (id, user_id, name, plan, version, software, game_version, state, desired_state, host, port, node, transport,
       idle_stop_minutes, backup_schedule, dns_name, created_at, updated_at)
      VALUES (@id, @user_id, @name, @plan, @version, @software, @game_version, @state, @desired_state, @host, @port,
              @node, @transport, @idle_stop_minutes, @backup_schedule, @dns_name, @created_at, @updated_at)`),
    update: db.prepare(`UPDATE servers SET name = @name, plan = @plan, idle_stop_minutes = @idle_stop_minutes,
      backup_schedule = @backup_schedule, dns_name = @dns_name, updated_at = @updated_at WHERE id = @id AND user_id = @user_id`),
    // A state change may change the server's files (a game that ran, an install): one more for the disk watcher.
    setState: db.prepare('UPDATE servers SET state = ?, updated_at = ?, disk_changes = disk_changes + 1 WHERE id = ?'),
    markDeleting: db.prepare("UPDATE servers SET state = 'deleting', desired_state = 'stopped', updated_at = ? WHERE id = ?"),
    remove: db.prepare('DELETE FROM servers WHERE id = ?'),
    current: db.prepare<unknown[], Current>('SELECT user_id, name, state FROM servers WHERE id = ?'),
    setDesired: db.prepare('UPDATE servers SET desired_state = ?, updated_at = ? WHERE id = ?'),
    // updated_at stays: a measurement is not a change to the server (openapi/v1.yaml, Server.disk_measured_at).
    // Only the changes the walk began after are seen: one made during it leaves disk_changes above 0 (migration 026).
    recordDisk: db.prepare(`UPDATE servers SET disk_used_bytes = ?, disk_measured_at = ?, disk_changes = MAX(0, disk_changes - ?)
      WHERE id = ? AND state != 'deleting'`),
    filesChanged: db.prepare('UPDATE servers SET disk_changes = disk_changes + 1 WHERE id = ?'),
    wantStopped: db.prepare("UPDATE servers SET desired_state = 'stopped', updated_at = ? WHERE id = ? AND state != 'deleting'"),
    promiseBackups: db.prepare('UPDATE servers SET keep_backups = 1 WHERE id = ?'),
    placeUnplaced: db.prepare('UPDATE servers SET node = ? WHERE node IS NULL'),
    relocate: db.prepare('UPDATE servers SET node = @node, host = @host, port = @port, updated_at = @updated_at WHERE id = @id'),
  };
}

/**
 * A DNS name another server has is the unique index's refusal (migration 040), so two creates racing for one name
 * cannot both have it: 409 dns_name_taken.
 */
function nameTaken<T>(write: () => T): T {
  try {
    return write();
  } catch (err) {
    // Not `instanceof Error`: better-sqlite3 makes its errors with the class of the realm that first loaded it, which
    // under jest is another test file's (each has its own globals), so the check would miss them there.
    const { code, message } = err as { code?: unknown; message?: unknown };
    if (code === 'SQLITE_CONSTRAINT_UNIQUE' && String(message).includes('servers.dns_name')) {
      throw new AppError('dns_name_taken', 'Another server has that DNS name; pick another.', [{ pointer: '/body/dns_name', detail: 'is taken' }]);
    }
    throw err;
  }
}

type Current = { user_id: string; name: string; state: ServerState };

/** The writes other repositories join inside their own transactions, as plain statements: the row's fields and place. */
function joinedWrites(st: Statements, clock: Clock) {
  return {
    /** A new row (servers-repo.ts create, inside its transaction with the quota check and the placement). */
    insert: (row: ServerRow): void => void nameTaken(() => st.insert.run(row)),
    /** Name, plan, idle stop, backup schedule and DNS name (servers-repo.ts update, inside its transaction). */
    update: (row: ServerRow): void => void nameTaken(() => st.update.run(row)),
    /** What its owner asked for last (ActionsRepo.create, in the action's transaction). */
    setDesired: (id: string, desired: 'running' | 'stopped', at: string): void => void st.setDesired.run(desired, at, id),
    /** `keep_backups`: the removal hands the server's ready backups to its owner (KeptBackupsRepo.promise). */
    promiseBackups: (id: string): void => void st.promiseBackups.run(id),
    /** A moved server's new node and address (MovesRepo.switchOver, in its transaction with server.updated). */
    relocate: (id: string, place: { node: string; host: string; port: number }): void =>
      void st.relocate.run({ id, ...place, updated_at: iso(clock.now()) }),
    /** Servers placed before nodes existed (node NULL) are on `node` (NodesRepo.ensureDefault). */
    placeUnplacedOn: (node: string): void => void st.placeUnplaced.run(node),
  };
}

/** The server's observed state and its removal, each with its event in the write's transaction. */
function lifecycleWrites(db: Db, st: Statements, clock: Clock, events: Events) {
  /** A state write and its server.state_changed event, one transaction. */
  const changeState = db.transaction((id: string, to: ServerState, write: () => void) => {
    const before = st.current.get(id);
    write();
    if (before && before.state !== to) events.raise('server.state_changed', { from: before.state, to }, { serverId: id });
  });

  return {
    /** The observed state; the server's owner (src/runtime/server/server-state.ts) is the only caller. */
    setState: (id: string, state: ServerState): void => {
      changeState(id, state, () => st.setState.run(state, iso(clock.now()), id));
    },
    /** `deleting`, desired state `stopped`: the removal began. */
    markDeleting: (id: string): void => {
      changeState(id, 'deleting', () => st.markDeleting.run(iso(clock.now()), id));
    },
    /** Deletes the row with its server.deleted event, which frees its port for the next server. */
    remove: (id: string): void => {
      db.transaction(() => {
        const row = st.current.get(id);
        if (row) events.raise('server.deleted', { name: row.name }, { serverId: id });
        st.remove.run(id);
      })();
    },
  };
}

/** The disk watcher's writes (docs/architecture.md "Disk"): its measurements, what makes it measure again, its stop. */
function diskWrites(db: Db, st: Statements, clock: Clock, events: Events) {
  return {
    /**
     * Records a pass's measurements in one transaction (one fsync, not one per server), each with `quota.disk_warning`
     * when `warnLimitBytes` gives the plan's limit (the watcher saw the 90% line crossed). `seenChanges` is the row's
     * disk_changes read before the walk began, which the measurement accounts for. Returns the ids recorded (not
     * those gone or being deleted meanwhile).
     */
    recordDisk: (measured: DiskMeasurement[]): Set<string> => {
      return db.transaction(() => {
        const recorded = new Set<string>();
        const at = iso(clock.now());
        for (const m of measured) {
          if (st.recordDisk.run(m.bytes, at, m.seenChanges, m.id).changes !== 1) continue;
          recorded.add(m.id);
          if (m.warnLimitBytes !== null) events.raise('quota.disk_warning', { used_bytes: m.bytes, limit_bytes: m.warnLimitBytes }, { serverId: m.id }, DISK);
        }
        return recorded;
      })();
    },
    /** Its files changed while no game ran (a backup made or deleted, a restore): the disk watcher measures it again. */
    filesChanged: (id: string): void => void st.filesChanged.run(id),
    /**
     * Desired state `stopped`, written by the service itself rather than by an action: the disk watcher's stop of a
     * server over its plan's disk space, so neither reconcile nor the crash policy starts it again; with its
     * `quota.disk_exceeded` event.
     */
    stopWanted: (id: string, over: { usedBytes: number; limitBytes: number }): void => {
      db.transaction(() => {
        if (st.wantStopped.run(iso(clock.now()), id).changes === 1) {
          events.raise('quota.disk_exceeded', { used_bytes: over.usedBytes, limit_bytes: over.limitBytes }, { serverId: id }, DISK);
        }
      })();
    },
  };
}

/**
 * Every statement that writes the `servers` table, in one place: ServersRepo is the table's one writer
 * (docs/architecture.md "Who owns what"), and the repositories whose changes touch a server's row (an action's
 * desired state, a kept-backups promise, the default node's adoption) call these inside their own transactions,
 * where they join as plain statements. test/unit/servers-writer.test.ts fails on a write to `servers` anywhere
 * else in src/. Each state change is written with its server.state_changed event (docs/architecture.md "Events and
 * webhooks").
 */
export function createServerWrites(db: Db, clock: Clock, events: Events) {
  const st = statements(db);
  return { ...joinedWrites(st, clock), ...lifecycleWrites(db, st, clock, events), ...diskWrites(db, st, clock, events) };
}

export type ServerWrites = ReturnType<typeof createServerWrites>;
