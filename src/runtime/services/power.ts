import { AppError, invalidState } from '../../errors';
import type { Plan } from '../../catalog/plans';
import { actionFailure, type Action, type ActionReason, type ActionsRepo, type ActionType, type Failure } from '../../store/actions-repo';
import type { Crash, CrashesRepo } from '../../store/crashes-repo';
import type { ServersRepo } from '../../store/servers-repo';
import type { ServerAccess } from '../../store/server-view';
import { checkRestoreShape, type BackupsService, type RestoreTarget } from './backups';
import type { Command, CommandContext, ServerDoor } from '../server/door';
import type { Doors } from '../server/doors';
import type { Environment } from '../host/environment';
import { launchGate } from '../server/launch-gate';
import type { ServerSupervisor } from '../server/server-supervisor';

export interface PowerDeps {
  doors: Pick<Doors, 'of' | 'isClosing'>;
  actions: ActionsRepo;
  crashes: Pick<CrashesRepo, 'list'>;
  servers: Pick<ServersRepo, 'find'>;
  plans: readonly Plan[];
  environment: Pick<Environment, 'reachable'>;
  /** A restore action's backup (its checks) and its run. */
  backups: Pick<BackupsService, 'restoreTarget' | 'restore'>;
}

/** The work of each action type on the server; a restore is the backups' (backups.ts restore). */
async function perform(backups: PowerDeps['backups'], server: ServerSupervisor, ctx: CommandContext, type: ActionType, restore?: RestoreTarget): Promise<Failure | null> {
  switch (type) {
    case 'start':
      return server.start();
    case 'stop':
      await server.whenInstalled();
      await server.halt('stop', 'stop'); // stop on a stopped server is a no-op
      return null;
    case 'kill':
      await server.halt('kill', 'kill');
      return null;
    case 'restart':
      await server.whenInstalled();
      await server.halt('stop', 'restart');
      return ctx.overtaken ? null : server.start();
    case 'restore':
      // begin made the target of every restore (backups.ts restoreTarget; checkRestoreShape: each names one).
      if (!restore) throw new Error('a restore action without its backup');
      return backups.restore(server, ctx, restore);
  }
}

/** The action as a command: it marks its row running, and finishes it (a no-op if a kill, shutdown or delete did). */
function command({ actions, backups }: Pick<PowerDeps, 'actions' | 'backups'>, action: Action, restore?: RestoreTarget): Command {
  const finish = (failure: Failure | null) => void actions.finish(action.id, failure);
  return {
    kind: action.type,
    actionId: action.id,
    backupId: restore?.id,
    holds: true,
    overtakes: action.type === 'kill',
    async run(server, ctx) {
      actions.markRunning(action.id);
      let failure: Failure | null;
      try {
        failure = await perform(backups, server, ctx, action.type, restore);
      } catch (err) {
        failure = err instanceof AppError ? actionFailure(err.code, err.detail) : { code: 'internal_error', detail: String(err) };
      }
      finish(failure);
      return failure;
    },
    cancelled: (by) => finish({ code: 'action_cancelled', detail: `Overtaken by ${by.kind}${by.actionId ? ` ${by.actionId}` : ''}.` }),
  };
}

/**
 * The server's door, once these pass, in this order (a request failing several is answered by the first): the
 * launch gate (game.ts launchGate, the one the launch asks too; for a start or restart with the server's disk use),
 * a restore names a backup (and only a restore does), and nothing holds the server unless the action is a kill.
 */
function admit(deps: Pick<PowerDeps, 'doors' | 'environment' | 'servers' | 'plans'>, serverId: string, type: ActionType, backupId?: string): ServerDoor {
  const { doors } = deps;
  const door = doors.of(serverId);
  const launching = type === 'start' || type === 'restart' ? { server: deps.servers.find(serverId) } : null;
  const refused = launchGate(serverId, door.state, { isClosing: () => doors.isClosing(), plans: deps.plans, environment: deps.environment }, launching);
  if (refused) throw refused.state ? invalidState(refused.state, refused.detail) : new AppError(refused.code, refused.detail);
  checkRestoreShape(type, backupId);
  const holder = door.holder();
  if (type !== 'kill' && holder) {
    const detail = holder.actionId
      ? `Action ${holder.actionId} (${holder.kind}) is still under way; wait for it to finish, or send kill.`
      : `A ${holder.kind} of this server is under way; wait for it to finish, or send kill.`;
    throw new AppError('action_conflict', detail, undefined, undefined, { state: door.state, ...(holder.actionId ? { action_id: holder.actionId } : {}) });
  }
  return door;
}

/**
 * Power actions (createServerAction; docs/conventions.md "Writes"): each is a row in `actions` and a command on
 * the server's door, which runs it in its turn and records how it ended. One at a time per server: another action
 * or a backup while one holds the server is action_conflict, except kill, which overtakes it.
 */
export function createPower(deps: PowerDeps) {
  const { doors, actions } = deps;

  /** requestAction, also answering when the action ends (its failure, or null): a schedule's task waits for it. */
  function begin(serverId: string, userId: string, type: ActionType, backupId?: string, reason: ActionReason = 'requested', access?: ServerAccess): { action: Action; done: Promise<Failure | null> } {
    const door = admit(deps, serverId, type, backupId);
    const restore = deps.backups.restoreTarget(serverId, type, backupId, access);
    const action = actions.create(serverId, userId, type, reason);
    if (type === 'kill') {
      for (const o of actions.open(serverId)) {
        if (o.id !== action.id) actions.finish(o.id, { code: 'action_cancelled', detail: `Overtaken by kill ${action.id}.` });
      }
    }
    return { action, done: door.submit(command(deps, action, restore)) };
  }

  return {
    begin,
    /**
     * Records a power action and returns it at once as `pending`; its command runs in the background and its row
     * says how it ended. action_conflict while another action or a backup holds the server (door.ts holder), except
     * kill, which overtakes it (what it overtakes fails with action_cancelled). invalid_state while the server is
     * deleted or its node does not answer; service_unavailable while the service shuts down; quota_exceeded for a
     * start or restart past the owner's running quota (docs/conventions.md "Quotas"); disk_quota_exceeded for a
     * start or restart while its last disk measurement is over its plan's. `reason` (Action.reason) is `requested`
     * unless the service itself asks (`idle`: idle-stop.ts). A restore needs `backupId` (backups.ts restoreTarget);
     * `access` is the caller's on the server, as the access check found it (src/http/access.ts): a backup its owner
     * kept is the owner's alone to restore.
     */
    requestAction(serverId: string, userId: string, type: ActionType, backupId?: string, reason: ActionReason = 'requested', access?: ServerAccess): Action {
      return begin(serverId, userId, type, backupId, reason, access).action;
    },
    /** action_not_found unless this server has that action. */
    getAction(serverId: string, actionId: string): Action {
      const action = actions.get(serverId, actionId);
      if (!action) throw new AppError('action_not_found', `No action ${actionId} on server ${serverId}.`);
      return action;
    },
    /** Newest first; `startingAfter` is the id of the last action of the previous page. */
    listActions: (serverId: string, opts: { limit: number; startingAfter?: string }): { data: Action[]; has_more: boolean } => actions.page(serverId, opts),
    /** Newest first; server_not_found for an id with no row, like every other read. */
    crashes(serverId: string, limit = 20): Crash[] {
      doors.of(serverId);
      return deps.crashes.list(serverId, limit);
    },
  };
}

export type PowerService = ReturnType<typeof createPower>;
