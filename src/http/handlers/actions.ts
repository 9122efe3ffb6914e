import type { ServersRepo } from '../../store/servers-repo';
import type { Runtime } from '../../runtime/runtime';
import type { IdempotencyRepo } from '../../store/idempotency-repo';
import type { Handlers } from '../types';
import { idempotent } from './idempotent';
import { page, withCursor } from './paging';
import { ownedServer } from './owned';

/** Actions tag: createServerAction, listServerActions, getServerAction, listServerCrashes. */
export function actionHandlers(deps: { servers: ServersRepo; runtime: Runtime; idempotency: IdempotencyRepo }): Handlers {
  const { servers, runtime } = deps;
  return {
    createServerAction: (call) => {
      const { principal, path, body } = call;
      const server = ownedServer(servers, principal, path.server_id);
      return idempotent(deps.idempotency, call, { operation: 'createServerAction', path: server.id, body }, () => {
        const action = runtime.requestAction(server.id, principal.userId, body.type, body.type === 'restore' ? body.backup_id : undefined);
        return { status: 202 as const, body: action, headers: { Location: `/v1/servers/${server.id}/actions/${action.id}` } };
      });
    },

    listServerActions: ({ principal, path, query }) => {
      const server = ownedServer(servers, principal, path.server_id);
      return { status: 200, body: withCursor(runtime.listActions(server.id, page(query))) };
    },

    getServerAction: ({ principal, path }) => {
      const server = ownedServer(servers, principal, path.server_id);
      return { status: 200, body: runtime.getAction(server.id, path.action_id) };
    },

    listServerCrashes: ({ principal, path }) => {
      const server = ownedServer(servers, principal, path.server_id);
      return { status: 200, body: { data: runtime.crashes(server.id, 100) } };
    },
  };
}
