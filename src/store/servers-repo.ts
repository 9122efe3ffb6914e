import { required, type Db } from './db';
import type { Clock } from '../clock';
import { iso } from '../clock';
import { newId } from '../ids';
import { invalidState } from '../errors';
import type { components } from '../../generated/v1';
import type { QuotasRepo } from './quotas-repo';
import type { Placer } from './placement';
import type { EventsRepo } from './events-repo';
import { CALLER_SERVER_JSON, MEMBER_SERVER_JSON, pageJson, parseServer, SERVER_JSON, type Server, type ServerAccess, type ServerPage } from './server-view';
import type { ServerRow, ServerWrites } from './server-writes';
import type { JsonText } from '../http/types';

export type { Server } from './server-view';
type ServerState = components['schemas']['ServerState'];

/** A server's folder measurement as the disk watcher reads it (src/runtime/loops/disk-watcher.ts). */
export interface DiskRow {
  id: string;
  plan: string;
  state: ServerState;
  disk_used_bytes: number | null;
  /** Changes to its files no measurement has seen yet (migration 026). */
  disk_changes: number;
}

/** A server as the reconcile loop and boot see it: what is observed and what is wanted. */
export interface StateRow {
  id: string;
  state: ServerState;
  desired_state: 'running' | 'stopped';
}

/** The states in which a game may run, and write to its folder: the disk watcher measures these on every pass. */
const LIVE = `('starting', 'running', 'stopping', 'unreachable')`;

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
  /** Server.dns_name, normalized (src/dns/settings.ts); null (none) when not given. */
  dns_name?: string | null;
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
  /** Normalized (src/dns/settings.ts); null removes the name. */
  dns_name?: string | null;
}

/** A schedule to store, set at `since`; null for none. */
function storedSchedule(schedule: BackupSchedule | null, since: string): string | null {
  return schedule === null ? null : JSON.stringify({ ...schedule, since } satisfies StoredSchedule);
}

/** Whether a patch would leave the row as it is: every field the same, the backup schedule the same but for `since`. */
function unchanged(row: ServerRow, fields: Record<string, unknown>, schedule: BackupSchedule | null | undefined): boolean {
  const canonical = (v: unknown): string => JSON.stringify(v, (_k, x: unknown) => (x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort()) : x));
  if (Object.entries(fields).some(([k, v]) => v !== undefined && (row as unknown as Record<string, unknown>)[k] !== v)) return false;
  if (schedule === undefined) return true;
  if (schedule === null || row.backup_schedule === null) return schedule === null && row.backup_schedule === null;
  const stored = JSON.parse(row.backup_schedule) as StoredSchedule;
  return canonical(stored) === canonical({ ...schedule, since: stored.since });
}

/**
 * The list's statements (ServersRepo.listJson): the caller's own servers and those shared with them (migration 027:
 * by their account's email), one order, unfiltered and by state. Most callers have none shared with them
 * (`sharesWith`): they read through servers_by_user in its order (`own`), as before sharing.
 */
function pageStatements(db: Db) {
  const sharesWith = db.prepare('SELECT EXISTS (SELECT 1 FROM members m JOIN users u ON u.email = m.email WHERE u.id = ?)').pluck();
  const mine = `(user_id = @user_id OR id IN (SELECT m.server_id FROM members m JOIN users u ON u.email = m.email WHERE u.id = @user_id))`;
  const page = (where: string, view = CALLER_SERVER_JSON) => db.prepare<unknown[], [string, string]>(`SELECT id, ${view} FROM servers WHERE ${where} ORDER BY id LIMIT @limit`).raw();
  const own = [page('user_id = @user_id AND id > @after', SERVER_JSON), page('user_id = @user_id AND id > @after AND state = @state', SERVER_JSON)];
  const shared = [page(`${mine} AND id > @after`), page(`${mine} AND id > @after AND state = @state`)];
  // ServerList.dns_zone: the zone this service's last start publishes into (migration 040), null without one.
  const dnsZone = db.prepare<[], string | null>('SELECT (SELECT zone FROM dns_zone)').pluck();
  return { sharesWith, own, shared, dnsZone };
}

type Statements = ReturnType<typeof statements>;

/** The repository's statements, prepared once (docs/conventions.md "Code layout"). */
function statements(db: Db) {
  const diskColumns = 'SELECT id, plan, state, disk_used_bytes, disk_changes FROM servers';
  return {
    one: db.prepare<unknown[], ServerRow>('SELECT * FROM servers WHERE id = ? AND user_id = ?'),
    view: db.prepare<unknown[], JsonText<Server>>(`SELECT ${SERVER_JSON} FROM servers WHERE id = ?`).pluck(),
    memberView: db.prepare<unknown[], JsonText<Server>>(`SELECT ${MEMBER_SERVER_JSON} FROM servers WHERE id = @id`).pluck(),
    pages: pageStatements(db),
    inState: db.prepare<unknown[], string>('SELECT id FROM servers WHERE state = ? ORDER BY id').pluck(),
    // The index servers_by_state (migration 026) answers each of these without reading a row.
    byState: db.prepare<unknown[], { state: ServerState; count: number }>('SELECT state, COUNT(*) AS count FROM servers GROUP BY state'),
    unsettled: db.prepare<unknown[], StateRow>(`SELECT id, state, desired_state FROM servers
    WHERE (state = 'stopped' AND desired_state = 'running') OR (state = 'running' AND desired_state = 'stopped')`),
    notStopped: db.prepare<unknown[], StateRow>(`SELECT id, state, desired_state FROM servers WHERE state IN
    ('installing', 'starting', 'running', 'stopping', 'crashed', 'unreachable') ORDER BY id`),
    idleView: db.prepare<unknown[], { user_id: string; idle_stop_minutes: number | null; state: ServerState }>('SELECT user_id, idle_stop_minutes, state FROM servers WHERE id = ?'),
    owner: db.prepare<unknown[], string>('SELECT user_id FROM servers WHERE id = ?').pluck(),
    planView: db.prepare<unknown[], Pick<Server, 'plan' | 'desired_state'>>('SELECT plan, desired_state FROM servers WHERE id = ?'),
    diskLive: db.prepare<unknown[], DiskRow>(`${diskColumns} WHERE state IN ${LIVE}`),
    diskChanged: db.prepare<unknown[], DiskRow>(`${diskColumns} WHERE disk_changes > 0 AND state NOT IN ${LIVE} AND state != 'deleting'`),
    every: db.prepare<unknown[], JsonText<Server>>(`SELECT ${SERVER_JSON} FROM servers ORDER BY id`).pluck(),
  };
}

/** What creating and changing a server needs besides the statements: createServersRepo's parameters. */
interface ChangeDeps {
  db: Db;
  clock: Clock;
  placer: Placer;
  quotas: Pick<QuotasRepo, 'checkCreate' | 'checkPlanChange'>;
  memoryOf: (plan: string) => number;
  events: Pick<EventsRepo, 'raise'>;
  writes: ServerWrites;
}

/** Creating a server and changing its name, plan or schedule: each checks, writes and raises its event in one transaction. */
function serverChanges(st: Statements, { db, clock, placer, quotas, memoryOf, events, writes }: ChangeDeps) {
  return {
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
            dns_name: input.dns_name ?? null,
            state: 'installing',
            desired_state: 'stopped',
            ...placer.place(memoryOf(input.plan)),
            disk_used_bytes: null,
            disk_measured_at: null,
            created_at: now,
            updated_at: now,
          };
          writes.insert(row);
          const server = parseServer(required(st.view.get(row.id)));
          events.raise('server.created', { server }, { serverId: row.id });
          return server;
        })
        .immediate();
    },

    /**
     * Applies a rename and/or plan change. The state check, the memory quota check of a larger plan and the write
     * are one transaction, so a start that lands in between cannot run the game on a plan that changed under it. A server being deleted takes no
     * change at all (invalid_state): `deleting` is terminal, and a 200 would promise a server that is going away.
     */
    update(userId: string, id: string, patch: ServerPatch): Server | undefined {
      return db
        .transaction(() => {
          const row = st.one.get(id, userId);
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
          // A patch that changes nothing writes nothing and raises no server.updated (issue 42 §4).
          if (unchanged(row, fields, schedule)) return parseServer(required(st.view.get(id)));
          const updatedAt = iso(clock.now());
          const next = {
            ...row,
            ...fields,
            backup_schedule: schedule === undefined ? row.backup_schedule : storedSchedule(schedule, updatedAt),
            updated_at: updatedAt,
          };
          writes.update(next);
          const server = parseServer(required(st.view.get(id)));
          events.raise('server.updated', { server }, { serverId: id });
          return server;
        })
        .immediate();
    },
  };
}

/** Servers as the API shows them: one, a page of a user's, or every one. */
function serverViews(st: Statements) {
  return {
    /**
     * A server as the API's JSON (server-view.ts) with the reader's `access`, for an answer that sends it as it is;
     * undefined when the row is gone. The access check (src/http/access.ts) found the reader may see it.
     */
    viewJson(id: string, access: ServerAccess): JsonText<Server> | undefined {
      return access.role === 'owner' ? st.view.get(id) : st.memberView.get({ id, permissions: JSON.stringify(access.permissions) });
    },

    /**
     * A page of the user's servers and of those shared with them, oldest id first, each with the user's `access`,
     * as the API's `ServerPage` JSON (server-view.ts).
     */
    listJson(userId: string, opts: { limit: number; startingAfter?: string; state?: ServerState }): JsonText<ServerPage> {
      const params = { user_id: userId, after: opts.startingAfter ?? '', limit: opts.limit + 1 };
      const { sharesWith, own, shared } = st.pages;
      const [pageAll, pageByState] = sharesWith.get(userId) === 1 ? shared : own;
      const rows = opts.state ? pageByState.all({ ...params, state: opts.state }) : pageAll.all(params);
      return pageJson(rows, opts.limit, st.pages.dnsZone.get() ?? null);
    },

    /** Any user's server by id: for the runtime, which acts on servers the HTTP layer already checked. */
    find(id: string): Server | undefined {
      const json = st.view.get(id);
      return json === undefined ? undefined : parseServer(json);
    },

    /** Every server of every user, in one query (tests; the runtime reads only the servers it must act on). */
    all(): Server[] {
      return st.every.all().map(parseServer);
    },
  };
}

/** The narrow reads of the runtime's loops (disk watcher, idle stop, reconcile, boot, metrics): a few columns, no view. */
function runtimeReads(st: Statements) {
  return {
    /**
     * The servers a disk watcher pass measures (docs/architecture.md "Disk"), oldest id first: those whose game may
     * run, and those whose files changed since their last measurement; not the stopped ones nothing changed.
     */
    diskDue(): DiskRow[] {
      return [...st.diskLive.all(), ...st.diskChanged.all()].sort((a, b) => (a.id < b.id ? -1 : 1));
    },

    /** Whose server it is (the runtime records the service's own actions for its owner), or undefined when gone. */
    ownerOf: (id: string): string | undefined => st.owner.get(id),

    /** The idle stop's view of a server (src/runtime/loops/idle-stop.ts): its owner, its minutes and its state. */
    idleStopOf(id: string): { userId: string; minutes: number | null; state: ServerState } | undefined {
      const row = st.idleView.get(id);
      return row && { userId: row.user_id, minutes: row.idle_stop_minutes, state: row.state };
    },

    /** A server's plan and desired state, read without building its view (the disk watcher, per measurement). */
    planOf(id: string): Pick<Server, 'plan' | 'desired_state'> | undefined {
      return st.planView.get(id);
    },

    /** The servers whose observed state is off their desired one: the reconcile loop's work (an index lookup). */
    unsettled: (): StateRow[] => st.unsettled.all(),

    /** Every server not `stopped` nor `deleting`: what boot looks at (a stopped server needs nothing of it). */
    notStopped: (): StateRow[] => st.notStopped.all(),

    /** Every server (of any user) in this state; used at boot to finish deletions a previous life began. */
    idsInState(state: ServerState): string[] {
      return st.inState.all(state);
    },

    /** How many servers are in each observed state, all accounts together (the operator's metrics). */
    countByState: (): { state: ServerState; count: number }[] => st.byState.all(),
  };
}

/**
 * The `servers` table's one repository: reads here, every write through `writes` (server-writes.ts, where each
 * statement that writes the table lives). `placer` chooses a new server's node, host and port (placement.ts);
 * `memoryOf` is a plan's memory in MiB.
 */
export function createServersRepo(
  db: Db,
  clock: Clock,
  placer: Placer,
  quotas: Pick<QuotasRepo, 'checkCreate' | 'checkPlanChange'>,
  memoryOf: (plan: string) => number,
  events: Pick<EventsRepo, 'raise'>,
  writes: ServerWrites,
) {
  const st = statements(db);
  return {
    setState: writes.setState,
    markDeleting: writes.markDeleting,
    remove: writes.remove,
    recordDisk: writes.recordDisk,
    filesChanged: writes.filesChanged,
    stopWanted: writes.stopWanted,
    ...serverChanges(st, { db, clock, placer, quotas, memoryOf, events, writes }),
    ...serverViews(st),
    ...runtimeReads(st),
  };
}

export type ServersRepo = ReturnType<typeof createServersRepo>;
