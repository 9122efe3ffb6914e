import type { Action as RuntimeAction } from '../../runtime/runtime-store';
import type { ServersRepo } from '../../store/servers-repo';
import type { ServerRuntime } from '../runtime-port';
import type { Handlers } from '../types';
import type { components } from '../../../generated/v1';
import { page } from './paging';
import { ownedServer } from './owned';

type Action = components['schemas']['Action'];

/** The runtime's action row as the API shows it: the failure as one `error` object (CONVENTIONS.md "Writes"). */
export function toAction(a: RuntimeAction): Action {
  return {
    id: a.id,
    server_id: a.server_id,
    type: a.type,
    status: a.status,
    error: a.error_code ? { code: a.error_code, detail: a.error_detail ?? '' } : null,
    created_at: a.created_at,
    started_at: a.started_at,
    completed_at: a.completed_at,
  };
}

/** Actions tag: createServerAction, listServerActions, getServerAction, listServerCrashes. */
export function actionHandlers(deps: { servers: ServersRepo; runtime: ServerRuntime }): Handlers {
  const { servers, runtime } = deps;
  return {
    createServerAction: ({ principal, path, body }) => {
      const server = ownedServer(servers, principal, path.server_id);
      const action = runtime.requestAction(server.id, principal.userId, body.type);
      return {
        status: 202,
        body: toAction(action),
        headers: { Location: `/v1/servers/${server.id}/actions/${action.id}` },
      };
    },

    listServerActions: ({ principal, path, query }) => {
      const server = ownedServer(servers, principal, path.server_id);
      const { limit, startingAfter } = page(query);
      // One more than asked tells whether another page follows.
      const rows = runtime.listActions(server.id, { limit: limit + 1, startingAfter });
      const data = rows.slice(0, limit).map(toAction);
      const has_more = rows.length > limit;
      return { status: 200, body: { data, has_more, next_cursor: has_more ? data[data.length - 1].id : null } };
    },

    getServerAction: ({ principal, path }) => {
      const server = ownedServer(servers, principal, path.server_id);
      return { status: 200, body: toAction(runtime.getAction(server.id, path.action_id)) };
    },

    listServerCrashes: ({ principal, path }) => {
      const server = ownedServer(servers, principal, path.server_id);
      const data = runtime.crashes(server.id, 100).map(({ server_id: _omit, ...crash }) => ({
        ...crash,
        reason: crash.reason as components['schemas']['Crash']['reason'],
      }));
      return { status: 200, body: { data } };
    },
  };
}
