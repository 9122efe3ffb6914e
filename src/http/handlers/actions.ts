import type { PowerService } from '../../runtime/services/power';
import type { IdempotencyRepo } from '../../store/idempotency-repo';
import type { Handlers } from '../types';
import { idempotent } from './idempotent';
import { page, withCursor } from './paging';

/**
 * Actions tag: createServerAction, listServerActions, getServerAction, listServerCrashes. The server is the call's
 * (the dispatcher's access check, src/http/access.ts); an action is recorded as the caller's, owner or member.
 */
export function actionHandlers(deps: { power: PowerService; idempotency: IdempotencyRepo }): Handlers {
  const { power } = deps;
  return {
    createServerAction: (call) => {
      const { principal, body, server } = call;
      return idempotent(deps.idempotency, call, { operation: 'createServerAction', path: server.id, body }, () => {
        const backupId = body.type === 'restore' ? body.backup_id : undefined;
        const action = power.requestAction(server.id, principal.userId, body.type, backupId, 'requested', server.access);
        return { status: 202 as const, body: action, headers: { Location: `/v1/servers/${server.id}/actions/${action.id}` } };
      });
    },

    listServerActions: ({ server, query }) => ({ status: 200, body: withCursor(power.listActions(server.id, page(query))) }),

    getServerAction: ({ server, path }) => ({ status: 200, body: power.getAction(server.id, path.action_id) }),

    listServerCrashes: ({ server }) => ({ status: 200, body: { data: power.crashes(server.id, 100) } }),
  };
}
