import type { ServersRepo } from '../../store/servers-repo';
import type { PowerService } from '../../runtime/power';
import type { IdempotencyRepo } from '../../store/idempotency-repo';
import type { Handlers } from '../types';
import { idempotent } from './idempotent';
import { page, withCursor } from './paging';
import { ownedServer } from './owned';

/** Actions tag: createServerAction, listServerActions, getServerAction, listServerCrashes. */
export function actionHandlers(deps: { servers: ServersRepo; power: PowerService; idempotency: IdempotencyRepo }): Handlers {
  const { servers, power } = deps;
  return {
    createServerAction: (call) => {
      const { principal, path, body } = call;
      const server = ownedServer(servers, principal, path.server_id);
      return idempotent(deps.idempotency, call, { operation: 'createServerAction', path: server.id, body }, () => {
        const action = power.requestAction(server.id, principal.userId, body.type, body.type === 'restore' ? body.backup_id : undefined);
        return { status: 202 as const, body: action, headers: { Location: `/v1/servers/${server.id}/actions/${action.id}` } };
      });
    },

    listServerActions: ({ principal, path, query }) => {
      const server = ownedServer(servers, principal, path.server_id);
      return { status: 200, body: withCursor(power.listActions(server.id, page(query))) };
    },

    getServerAction: ({ principal, path }) => {
      const server = ownedServer(servers, principal, path.server_id);
      return { status: 200, body: power.getAction(server.id, path.action_id) };
    },

    listServerCrashes: ({ principal, path }) => {
      const server = ownedServer(servers, principal, path.server_id);
      return { status: 200, body: { data: power.crashes(server.id, 100) } };
    },
  };
}
