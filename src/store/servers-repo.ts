import type { Db } from './db';
import type { Clock } from '../clock';
import { iso } from '../clock';
import { newId } from '../ids';
import { AppError, invalidState } from '../errors';
import type { components } from '../../generated/v1';
import type { QuotasRepo } from './quotas-repo';
import type { Placer } from './placement';
import { createEventsRepo, type EventsRepo } from './events-repo';
import { createDiskColumns } from './disk-columns';
import { pageJson, parseServer, SERVER_JSON, type Server, type ServerPage } from './server-view';
import type { JsonText } from '../http/types';
export type { DiskRow } from './disk-columns';

export type { Server } from './server-view';
type ServerState = Server['state'];

interface ServerRow {
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
  created_at: string;
  updated_at: string;
}

export interface NewServer {
  name: string;
  plan: string;
  version: string;
  software: string;
  game_version: string;
  /** The software's transport (software-catalog.ts); `tcp` when not given. */
  transport?: 'tcp' | 'udp';
  /** Server.idle_stop_minutes; null (never) when not given. */
  idle_stop_minutes?: number | null;
  /** Server.backup_schedule; null (none) when not given. */
  backup_schedule?: BackupSchedule | null;
}

export type BackupSchedule = components['schemas']['BackupSchedule'];

/** A schedule as stored (servers.backup_schedule, migration 020): the API's fields and when it was set. */
export type StoredSchedule = BackupSchedule & { since: string };

/** What `update` changes (UpdateServerRequest, already checked). */
export interface ServerPatch {
  name?: string;
  plan?: string;
  idle_stop_minutes?: number | null;
  backup_schedule?: BackupSchedule | null;
}

/** A schedule to store, set at `since`; null for none. */
function storedSchedule(schedule: BackupSchedule | null, since: string): string | null {
  return schedule === null ? null : JSON.stringify({ ...schedule, since } satisfies StoredSchedule);
}

/**
 * `placer` chooses a new server's node, host and port (placement.ts); `memoryOf` is a plan's memory in MiB.
 */
export function createServersRepo(
  db: Db,
  clock: Clock,
  placer: Placer,
  quotas: Pick<QuotasRepo, 'checkCreate' | 'checkPlanChange'>,
  memoryOf: (plan: string) => number,
  events: EventsRepo = createEventsRepo(db, clock),
) {
  const insert = db.prepare(`INSERT INTO servers
    (id, user_id, name, plan, version, software, game_version, state, desired_state, host, port, node, transport,
     idle_stop_minutes, backup_schedule, created_at, updated_at)
    VALUES (@id, @user_id, @name, @plan, @version, @software, @game_version, @state, @desired_state, @host, @port,
            @node, @transport, @idle_stop_minutes, @backup_schedule, @created_at, @updated_at)`);
  const one = db.prepare('SELECT * FROM servers WHERE id = ? AND user_id = ?');
  const viewOne = db.prepare(`SELECT ${SERVER_JSON} FROM servers WHERE id = ? AND user_id = ?`).pluck();
  const view = db.prepare(`SELECT ${SERVER_JSON} FROM servers WHERE id = ?`).pluck();
  const page = (where: string) => db.prepare(`SELECT id, ${SERVER_JSON} FROM servers WHERE ${where} ORDER BY id LIMIT ?`).raw();
  const [pageAll, pageByState] = [page('user_id = ? AND id > ?'), page('user_id = ? AND id > ? AND state = ?')];
  const update = db.prepare(
    `UPDATE servers SET name = @name, plan = @plan, idle_stop_minutes = @idle_stop_minutes,
      backup_schedule = @backup_schedule, updated_at = @updated_at
      WHERE id = @id AND user_id = @user_id`,
  );
  const markDeleting = db.prepare("UPDATE servers SET state = 'deleting', desired_state = 'stopped', updated_at = ? WHERE id = ?");
  const remove = db.prepare('DELETE FROM servers WHERE id = ?');
  const inState = db.prepare('SELECT id FROM servers WHERE state = ? ORDER BY id').pluck();
  const live = db
    .prepare(`SELECT id FROM servers WHERE id IN (SELECT value FROM json_each(?)) AND state != 'deleting'`)
    .pluck();
  const setState = db.prepare('UPDATE servers SET state = ?, updated_at = ? WHERE id = ?');
  const byState = db.prepare('SELECT state, COUNT(*) AS count FROM servers GROUP BY state');
  const current = db.prepare('SELECT user_id, name, state FROM servers WHERE id = ?');
  const idleView = db.prepare('SELECT user_id, idle_stop_minutes, state FROM servers WHERE id = ?');
  type Current = { user_id: string; name: string; state: ServerState } | undefined;
  /** A state write and its server.state_changed event, one transaction (docs/architecture.md "Events and webhooks"). */
  const changeState = db.transaction((id: string, to: ServerState, write: () => void) => {
    const before = current.get(id) as Current;
    write();
    if (before && before.state !== to) events.append(before.user_id, id, 'server.state_changed', { from: before.state, to });
  });
  // One query per reconcile pass: every server with the number of its open actions (no N+1 reads).
  const withOpenActions = db.prepare(`SELECT ${SERVER_JSON} AS json, (SELECT COUNT(*) FROM actions a
    WHERE a.server_id = servers.id AND a.status IN ('pending', 'running')) AS open_actions FROM servers ORDER BY id`);

  return {
    ...createDiskColumns(db, clock, events),
    /**
     * Inserts a server in state `installing` with its place (node, address) allocated, atomically. The account's
     * quotas are checked in the same transaction (quota_exceeded, before any place is taken), so a burst of creates
     * cannot go past them together (docs/conventions.md "Quotas"), nor past a node's memory or ports.
     */
    create(userId: string, input: NewServer): Server {
      return db
        .transaction(() => {
          quotas.checkCreate(userId, input.plan);
          const now = iso(clock.now());
          const row: ServerRow = {
            id: newId('srv', clock.now()),
            user_id: userId,
            ...input,
            transport: input.transport ?? 'tcp',
            idle_stop_minutes: input.idle_stop_minutes ?? null,
            backup_schedule: storedSchedule(input.backup_schedule ?? null, now),
            state: 'installing',
            desired_state: 'stopped',
            ...placer.place(memoryOf(input.plan)),
            disk_used_bytes: null,
            disk_measured_at: null,
            created_at: now,
            updated_at: now,
          };
          insert.run(row);
          const server = parseServer(view.get(row.id) as string);
          events.append(userId, row.id, 'server.created', { server });
          return server;
        })
        .immediate();
    },

    get(userId: string, id: string): Server | undefined {
      const json = this.getJson(userId, id);
      return json === undefined ? undefined : parseServer(json);
    },

    /** The user's server as the API's JSON (server-view.ts), for an answer that sends it as it is. */
    getJson(userId: string, id: string): JsonText<Server> | undefined {
      return viewOne.get(id, userId) as JsonText<Server> | undefined;
    },

    /** A page of the user's servers, oldest id first, as the API's `ServerPage` JSON (server-view.ts). */
    listJson(userId: string, opts: { limit: number; startingAfter?: string; state?: ServerState }): JsonText<ServerPage> {
      const after = opts.startingAfter ?? '';
      const rows = opts.state
        ? pageByState.all(userId, after, opts.state, opts.limit + 1)
        : pageAll.all(userId, after, opts.limit + 1);
      return pageJson(rows as [string, string][], opts.limit);
    },

    /**
     * Applies a rename and/or plan change. The state check, the memory quota check of a larger plan and the write
     * are one transaction, so a start that lands in between cannot run the game on a plan that changed under it. A server being deleted takes no
     * change at all (invalid_state): `deleting` is terminal, and a 200 would promise a server that is going away.
     */
    update(userId: string, id: string, patch: ServerPatch): Server | undefined {
      return db
        .transaction(() => {
          const row = one.get(id, userId) as ServerRow | undefined;
          if (!row) return undefined;
          if (row.state === 'deleting') throw invalidState('deleting', 'The server is being deleted.');
          if (patch.plan !== undefined && patch.plan !== row.plan && !['stopped', 'crashed'].includes(row.state)) {
            throw invalidState(row.state, `The plan can only change while the server is stopped or crashed; it is ${row.state}.`);
          }
          if (patch.plan !== undefined) {
            quotas.checkPlanChange(row.user_id, row.plan, patch.plan);
            placer.checkResize(row.id, memoryOf(row.plan), memoryOf(patch.plan));
          }
          const { backup_schedule: schedule, ...fields } = patch;
          const updatedAt = iso(clock.now());
          const next = {
            ...row,
            ...fields,
            backup_schedule: schedule === undefined ? row.backup_schedule : storedSchedule(schedule, updatedAt),
            updated_at: updatedAt,
          };
          update.run(next);
          const server = parseServer(view.get(id) as string);
          events.append(row.user_id, id, 'server.updated', { server });
          return server;
        })
        .immediate();
    },

    /** The idle stop's view of a server (src/runtime/idle-stop.ts): its owner, its minutes and its state. */
    idleStopOf(id: string): { userId: string; minutes: number | null; state: ServerState } | undefined {
      const row = idleView.get(id) as { user_id: string; idle_stop_minutes: number | null; state: ServerState } | undefined;
      return row && { userId: row.user_id, minutes: row.idle_stop_minutes, state: row.state };
    },

    /** Any user's server by id: for the runtime, which acts on servers the HTTP layer already checked. */
    find(id: string): Server | undefined {
      const json = view.get(id) as string | undefined;
      return json === undefined ? undefined : parseServer(json);
    },

    /** The ids among these whose server exists and is not being deleted (one query, for the stream sweep). */
    liveIds(ids: string[]): Set<string> {
      return new Set(live.all(JSON.stringify(ids)) as string[]);
    },

    /** Every server with how many actions are open on it, in one query (the reconcile loop's view). */
    allWithOpenActions(): Array<Server & { open_actions: number }> {
      return (withOpenActions.all() as Array<{ json: string; open_actions: number }>).map((r) => ({
        ...parseServer(r.json),
        open_actions: r.open_actions,
      }));
    },

    /** The observed state; written by the runtime's supervisor, its only writer. */
    setState(id: string, state: ServerState): void {
      changeState(id, state, () => setState.run(state, iso(clock.now()), id));
    },

    /** Marks a server as being deleted (desired state stopped); the runtime then removes its process and files. */
    markDeleting(id: string): void {
      changeState(id, 'deleting', () => markDeleting.run(iso(clock.now()), id));
    },

    /** Every server (of any user) in this state; used at boot to finish deletions a previous life began. */
    idsInState(state: ServerState): string[] {
      return inState.all(state) as string[];
    },

    /** How many servers are in each observed state, all accounts together (the operator's metrics). */
    countByState: (): { state: ServerState; count: number }[] => byState.all() as { state: ServerState; count: number }[],

    /** Removes the row, which frees its port for the next server. */
    remove(id: string): void {
      db.transaction(() => {
        const row = current.get(id) as Current;
        if (row) events.append(row.user_id, id, 'server.deleted', { name: row.name });
        remove.run(id);
      })();
    },
  };
}

export type ServersRepo = ReturnType<typeof createServersRepo>;
