import { required, type Db } from './db';
import type { Clock } from '../clock';
import { iso } from '../clock';
import { newId } from '../ids';
import type { components } from '../../generated/v1';
import type { QuotasRepo } from './quotas-repo';
import type { StoreObserver } from './observer';
import type { EventsRepo } from './events-repo';
import type { ServerWrites } from './server-writes';

/** A power action as the API shows it (the spec's Action schema): the one shape the runtime and handlers use. */
// Open enums in the answer (openapi/v1.yaml x-open-enum, for clients); the service's are the known sets.
export type Action = Omit<components['schemas']['Action'], 'type' | 'reason' | 'status'> & { type: ActionType; reason: ActionReason; status: components['schemas']['ActionStatus'] };
export type ActionType = components['schemas']['ActionType'];
/** Who asked for an action (Action.reason): a client, or the service's idle stop. */
export type ActionReason = components['schemas']['ActionReason'];
export type DesiredState = components['schemas']['Server']['desired_state'];

/** The registry codes an action can fail with (the spec's ActionErrorCode, a subset of the error registry). */
export type ActionErrorCode = components['schemas']['ActionErrorCode'];

/** Every ActionErrorCode; test/unit/errors.test.ts pins it to the spec's enum and to the error registry. */
export const ACTION_ERROR_CODES: readonly ActionErrorCode[] = [
  'start_failed', 'start_timeout', 'port_in_use', 'action_cancelled',
  'invalid_state', 'disk_quota_exceeded', 'service_unavailable', 'restore_failed', 'backup_not_found', 'internal_error',
];

/** An error that ended an action, as its Action.error: a code the spec lists for actions, else internal_error. */
export function actionFailure(code: string, detail: string): Failure {
  const known = (ACTION_ERROR_CODES as readonly string[]).includes(code);
  return known ? { code: code as ActionErrorCode, detail } : { code: 'internal_error', detail };
}

/** Why an action failed: an error registry code and words for a person (Action.error). */
export interface Failure {
  code: ActionErrorCode;
  detail: string;
}

interface ActionRow {
  id: string;
  server_id: string;
  user_id: string;
  type: ActionType;
  reason: ActionReason;
  status: components['schemas']['ActionStatus'];
  error_code: ActionErrorCode | null;
  error_detail: string | null;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
}

/** The failure becomes one `error` object (docs/conventions.md "Writes"). */
function toAction(row: ActionRow): Action {
  return {
    id: row.id,
    server_id: row.server_id,
    type: row.type,
    reason: row.reason,
    status: row.status,
    error: row.error_code ? { code: row.error_code, detail: row.error_detail ?? '' } : null,
    created_at: row.created_at,
    started_at: row.started_at,
    completed_at: row.completed_at,
  };
}

type Statements = ReturnType<typeof statements>;

/** The repository's statements, prepared once (docs/conventions.md "Code layout"). */
function statements(db: Db) {
  return {
    insert: db.prepare(`INSERT INTO actions (id, server_id, user_id, type, reason, status, created_at)
      VALUES (@id, @server_id, @user_id, @type, @reason, 'pending', @created_at)`),
    one: db.prepare<unknown[], ActionRow>('SELECT * FROM actions WHERE server_id = ? AND id = ?'),
    byId: db.prepare<unknown[], ActionRow>('SELECT * FROM actions WHERE id = ?'),
    status: db.prepare('SELECT status FROM actions WHERE id = ?').pluck(),
    open: db.prepare<unknown[], ActionRow>(`SELECT * FROM actions WHERE server_id = ? AND status IN ('pending', 'running') ORDER BY id`),
    allOpen: db.prepare<unknown[], ActionRow>(`SELECT * FROM actions WHERE status IN ('pending', 'running') ORDER BY id`),
    first: db.prepare<unknown[], ActionRow>('SELECT * FROM actions WHERE server_id = ? ORDER BY id DESC LIMIT ?'),
    after: db.prepare<unknown[], ActionRow>('SELECT * FROM actions WHERE server_id = ? AND id < ? ORDER BY id DESC LIMIT ?'),
    markRunning: db.prepare(`UPDATE actions SET status = 'running', started_at = ? WHERE id = ? AND status = 'pending'`),
    finish: db.prepare<unknown[], ActionType>(`UPDATE actions SET status = ?, error_code = ?, error_detail = ?, completed_at = ?,
      started_at = COALESCE(started_at, ?) WHERE id = ? AND status IN ('pending', 'running') RETURNING type`).pluck(),
    lastUserStart: db.prepare<unknown[], string | null>(`SELECT MAX(created_at) FROM actions WHERE server_id = ? AND type IN ('start', 'restart')`).pluck(),
  };
}

/** What an action's life needs besides the statements: createActionsRepo's parameters. */
interface LifeDeps {
  db: Db;
  clock: Clock;
  quotas: Pick<QuotasRepo, 'checkStart'>;
  /** The servers table's writer (ServersRepo): an action's desired state is written through it. */
  servers: Pick<ServerWrites, 'setDesired'>;
  events: Pick<EventsRepo, 'raise'>;
  observer: StoreObserver;
}

/** An action's life: created with the desired state it implies, marked running, finished with its event. */
function actionLife(st: Statements, { db, clock, quotas, servers, events, observer }: LifeDeps) {
  return {
    /**
     * Records a pending action and the desired state it implies (start/restart → running, stop/kill → stopped)
     * in one transaction: an acknowledged action and the state it asks for are one fact. A start or restart is
     * checked against the owner's `running` quota in that transaction (quota_exceeded; docs/conventions.md "Quotas").
     */
    create(serverId: string, userId: string, type: ActionType, reason: ActionReason = 'requested'): Action {
      const row = { id: newId('act', clock.now()), server_id: serverId, user_id: userId, type, reason, created_at: iso(clock.now()) };
      const desired: DesiredState = type === 'start' || type === 'restart' ? 'running' : 'stopped';
      db.transaction(() => {
        if (desired === 'running') quotas.checkStart(serverId, userId);
        st.insert.run(row);
        // A restore starts the server again only if it ran: what its owner wants stays as it was.
        if (type !== 'restore') servers.setDesired(serverId, desired, row.created_at);
      }).immediate();
      return toAction({ ...row, status: 'pending', error_code: null, error_detail: null, started_at: null, completed_at: null });
    },

    markRunning: (id: string): void => void st.markRunning.run(iso(clock.now()), id),

    /**
     * Completes an action unless it already completed (a kill may have failed it first), with its action.succeeded
     * or action.failed event in the same transaction. Returns whether it did.
     */
    finish(id: string, failure: Failure | null): boolean {
      const t = iso(clock.now());
      const status = failure ? 'failed' : 'succeeded';
      const finished = db.transaction(() => {
        const type = st.finish.get(status, failure?.code ?? null, failure?.detail ?? null, t, t, id);
        if (type === undefined) return undefined;
        const row = required(st.byId.get(id));
        events.raise(failure ? 'action.failed' : 'action.succeeded', { action: toAction(row) }, { serverId: row.server_id });
        return type;
      })();
      if (finished !== undefined) observer.actionFinished?.(finished, status); // after the commit: counts what happened
      return finished !== undefined;
    },
  };
}

/** Reading actions: one, whether it is open, a server's open ones, a page, and the last start asked for. */
function actionReads(st: Statements) {
  return {
    get(serverId: string, id: string): Action | undefined {
      const row = st.one.get(serverId, id);
      return row && toAction(row);
    },

    /** True while the action is pending or running. */
    isOpen(id: string): boolean {
      const status = st.status.get(id);
      return status === 'pending' || status === 'running';
    },

    /** This server's pending and running actions, oldest first (at most one, or a kill and what it overtakes). */
    open: (serverId: string): Action[] => st.open.all(serverId).map(toAction),
    allOpen: (): Action[] => st.allOpen.all().map(toAction),

    /** A page, newest first, after the action `startingAfter` (docs/conventions.md "Collections"). */
    page(serverId: string, opts: { limit: number; startingAfter?: string }): { data: Action[]; has_more: boolean } {
      const rows = opts.startingAfter ? st.after.all(serverId, opts.startingAfter, opts.limit + 1) : st.first.all(serverId, opts.limit + 1);
      return { data: rows.slice(0, opts.limit).map(toAction), has_more: rows.length > opts.limit };
    },

    /** When the user last asked this server to start (start or restart), or null. */
    lastUserStart: (serverId: string): string | null => st.lastUserStart.get(serverId) ?? null,
  };
}

/** The `actions` table: power actions and how they ended (failures are recorded here, never only logged). */
export function createActionsRepo(
  db: Db,
  clock: Clock,
  quotas: Pick<QuotasRepo, 'checkStart'>,
  /** The servers table's writer (ServersRepo): an action's desired state is written through it. */
  servers: Pick<ServerWrites, 'setDesired'>,
  events: Pick<EventsRepo, 'raise'>,
  observer: StoreObserver = {},
) {
  const st = statements(db);
  return { ...actionLife(st, { db, clock, quotas, servers, events, observer }), ...actionReads(st) };
}

export type ActionsRepo = ReturnType<typeof createActionsRepo>;
