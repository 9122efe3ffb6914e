import { required, type Db } from './db';
import type { Clock } from '../clock';
import { iso } from '../clock';
import { newId } from '../ids';
import type { Event, EventsRepo } from './events-repo';
import type { NodesRepo } from './nodes-repo';
import { parseServer, SERVER_JSON, type Server } from './server-view';
import type { ServerWrites } from './server-writes';

/**
 * A recovery's progress (docs/architecture.md "When a node is lost"): `pending` (asked for by `gsh node lose`),
 * `switched` (the server's row on a live node, with a new address), `restored` (its newest ready backup, or a fresh
 * install, in its new volume; `server.recovered` raised), then `done`, or `failed` before the switch (the server left
 * on the lost node, `unreachable`, for another `gsh node lose` to try again).
 */
export type RecoveryStatus = 'pending' | 'switched' | 'restored' | 'done' | 'failed';

export interface Recovery {
  id: string;
  serverId: string;
  fromNode: string;
  /** The live node it was placed on; null until the switch. */
  toNode: string | null;
  status: RecoveryStatus;
  /** The backup restored, and when it was made; null until restored, or when it had none. */
  backupId: string | null;
  backupCreatedAt: string | null;
  error: string | null;
  /** The lost node while the server's volume and containers there may remain (removed if it answers again). */
  leftover: string | null;
  createdAt: string;
  updatedAt: string;
}

interface RecoveryRow {
  id: string;
  server_id: string;
  from_node: string;
  to_node: string | null;
  status: RecoveryStatus;
  backup_id: string | null;
  backup_created_at: string | null;
  error: string | null;
  leftover: string | null;
  created_at: string;
  updated_at: string;
}

const toRecovery = (r: RecoveryRow): Recovery => ({
  id: r.id, serverId: r.server_id, fromNode: r.from_node, toNode: r.to_node, status: r.status, backupId: r.backup_id,
  backupCreatedAt: r.backup_created_at, error: r.error, leftover: r.leftover, createdAt: r.created_at, updatedAt: r.updated_at,
});

/** What `server.recovered` says (openapi/v1.yaml ServerRecoveredEvent): the server, the backup restored and its age at `at`. */
export function recoveredData(server: Server, backup: { id: string; createdAt: string } | null, at: number): Extract<Event, { type: 'server.recovered' }>['data'] {
  return {
    server,
    backup_id: backup?.id ?? null,
    backup_created_at: backup?.createdAt ?? null,
    backup_age_seconds: backup ? Math.max(0, Math.floor((at - Date.parse(backup.createdAt)) / 1000)) : null,
  };
}

type Statements = ReturnType<typeof statements>;
type Nodes = Pick<NodesRepo, 'get' | 'list' | 'serversOn' | 'markLost' | 'bestFor' | 'placeOn'>;
type MemoryOf = (plan: string) => number;

/** The repository's statements, prepared once (docs/conventions.md "Code layout"). */
function statements(db: Db) {
  const OPEN = "('pending', 'switched', 'restored')";
  return {
    insert: db.prepare(`INSERT INTO server_recoveries (id, server_id, from_node, status, created_at, updated_at) VALUES (?, ?, ?, 'pending', ?, ?)`),
    get: db.prepare<unknown[], RecoveryRow>('SELECT * FROM server_recoveries WHERE id = ?'),
    open: db.prepare<unknown[], RecoveryRow>(`SELECT * FROM server_recoveries WHERE status IN ${OPEN} ORDER BY id`),
    openOf: db.prepare<unknown[], RecoveryRow>(`SELECT * FROM server_recoveries WHERE server_id = ? AND status IN ${OPEN}`),
    leftovers: db.prepare<unknown[], RecoveryRow>('SELECT * FROM server_recoveries WHERE leftover IS NOT NULL ORDER BY id'),
    server: db.prepare<unknown[], { plan: string; node: string | null; state: string }>('SELECT plan, node, state FROM servers WHERE id = ?'),
    view: db.prepare<unknown[], string>(`SELECT ${SERVER_JSON} FROM servers WHERE id = ?`).pluck(),
    // Newest first: the one restored, and the older ones should its archive turn out damaged (recovery.ts).
    backups: db.prepare<unknown[], { id: string; created_at: string; sha256: string | null }>(
      `SELECT id, created_at, sha256 FROM backups WHERE server_id = ? AND status = 'ready' ORDER BY created_at DESC, id DESC`),
    switched: db.prepare(`UPDATE server_recoveries SET status = 'switched', to_node = ?, leftover = from_node, updated_at = ? WHERE id = ? AND status = 'pending'`),
    restored: db.prepare(`UPDATE server_recoveries SET status = 'restored', backup_id = ?, backup_created_at = ?, updated_at = ?
      WHERE id = ? AND status = 'switched'`),
    done: db.prepare(`UPDATE server_recoveries SET status = 'done', updated_at = ? WHERE id = ? AND status IN ('switched', 'restored')`),
    failed: db.prepare(`UPDATE server_recoveries SET status = 'failed', error = ?, updated_at = ? WHERE id = ? AND status IN ${OPEN}`),
    dropped: db.prepare('UPDATE server_recoveries SET leftover = NULL, updated_at = ? WHERE id = ?'),
  };
}

/**
 * The `server_recoveries` table (migration 041), and the lost mark on `nodes` (through NodesRepo.markLost): written
 * by the operator's `gsh node lose` (lose) and by the runtime's recoveries (src/runtime/services/recovery.ts), each
 * step its own transaction. The switch writes the server's new node and address through ServersRepo's writes with
 * `server.updated`; the restore's record raises `server.recovered`, in its step's transaction.
 */
export function createRecoveriesRepo(db: Db, clock: Clock, nodes: Nodes, memoryOf: MemoryOf, events: EventsRepo, writes: Pick<ServerWrites, 'relocate'>) {
  const st = statements(db);
  const get = (id: string): Recovery | undefined => {
    const row = st.get.get(id);
    return row && toRecovery(row);
  };
  return {
    get,
    /** Recoveries not yet done or failed, oldest first (the runtime carries them out, also after a restart). */
    open: (): Recovery[] => st.open.all().map(toRecovery),
    /** Recoveries whose lost node may still hold the server's volume or containers. */
    leftovers: (): Recovery[] => st.leftovers.all().map(toRecovery),
    /** The server's ready backups, newest first, with each one's SHA-256 (a restore checks it). */
    backups: (serverId: string): { id: string; createdAt: string; sha256: string }[] =>
      st.backups.all(serverId).map((b) => ({ id: b.id, createdAt: b.created_at, sha256: b.sha256 ?? '' })),
    ...recoverySteps(db, st, clock, { nodes, memoryOf, events, writes }, get),
  };
}

/** The operator's request and the runtime's steps (recovery.ts): lost, switched, restored, then done or failed. */
function recoverySteps(
  db: Db,
  st: Statements,
  clock: Clock,
  { nodes, memoryOf, events, writes }: { nodes: Nodes; memoryOf: MemoryOf; events: EventsRepo; writes: Pick<ServerWrites, 'relocate'> },
  get: (id: string) => Recovery | undefined,
) {
  const now = () => iso(clock.now());
  return {
    /**
     * `gsh node lose NAME` (one IMMEDIATE transaction): marks the node lost for good and asks for a recovery of each
     * server on it (but those being deleted or already being recovered); returns every open recovery from it. Refused,
     * writing nothing, for an unknown node, or when no other node that is not lost is left to take its servers.
     */
    lose(name: string): { recoveries: Recovery[] } | { refused: string } {
      return db.transaction((): { recoveries: Recovery[] } | { refused: string } => {
        if (!nodes.get(name)) return { refused: `There is no node ${name}.` };
        if (!nodes.list().some((n) => n.name !== name && n.lostAt === null)) {
          return { refused: `Node ${name} is the only node left; add another (gsh node add) for its servers to be recovered on, then run this again.` };
        }
        nodes.markLost(name);
        for (const { id } of nodes.serversOn(name)) {
          if (st.openOf.get(id)) continue;
          st.insert.run(newId('rcv', clock.now()), id, name, now(), now());
        }
        return { recoveries: st.open.all().map(toRecovery).filter((r) => r.fromNode === name) };
      }).immediate();
    },

    /**
     * The server gets a place on the live node with the most free plan memory that takes it (as placement does) and
     * a new address there, with its `server.updated` event; the recovery is `switched`, the lost node its leftover.
     * One transaction. Refused, changing nothing, when no node takes it now or the server is no longer on the lost node.
     */
    switchOver(id: string): { toNode: string; address: { host: string; port: number } } | { refused: string } {
      return db.transaction((): { toNode: string; address: { host: string; port: number } } | { refused: string } => {
        const recovery = get(id);
        const server = recovery && st.server.get(recovery.serverId);
        if (!recovery || !server || recovery.status !== 'pending') return { refused: 'the recovery or its server is gone' };
        if (server.node !== recovery.fromNode) return { refused: `the server is on node ${server.node ?? 'none'} now, not on the lost node` };
        const to = nodes.bestFor(memoryOf(server.plan), recovery.fromNode);
        const room = to ? nodes.placeOn(to, memoryOf(server.plan)) : { refused: 'no live node has room for it (plan memory and a free port)' };
        if ('refused' in room) return room;
        writes.relocate(recovery.serverId, room.place);
        events.raise('server.updated', { server: parseServer(required(st.view.get(recovery.serverId))) }, { serverId: recovery.serverId });
        st.switched.run(room.place.node, now(), id);
        return { toNode: room.place.node, address: { host: room.place.host, port: room.place.port } };
      }).immediate();
    },

    /**
     * Its files are in place (`backup`: the one restored, or null for a fresh install): `restored`, with the
     * customer's `server.recovered` naming the backup and its age, one transaction, once.
     */
    restored(id: string, backup: { id: string; createdAt: string } | null): void {
      db.transaction(() => {
        const recovery = get(id);
        if (recovery?.status !== 'switched') return;
        const at = clock.now();
        st.restored.run(backup?.id ?? null, backup?.createdAt ?? null, iso(at), id);
        const view = st.view.get(recovery.serverId);
        if (view !== undefined) events.raise('server.recovered', recoveredData(parseServer(view), backup, at), { serverId: recovery.serverId });
      }).immediate();
    },
    finish: (id: string): void => void st.done.run(now(), id),
    /** Before the switch, the server stays on the lost node (`unreachable`); after it, only for a server gone. */
    fail: (id: string, error: string): void => void st.failed.run(error.slice(0, 500), now(), id),
    /** The lost node's volume and containers of the server are gone (or the node is). */
    dropped: (id: string): void => void st.dropped.run(now(), id),
  };
}

export type RecoveriesRepo = ReturnType<typeof createRecoveriesRepo>;
