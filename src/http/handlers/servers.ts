import { AppError } from '../../errors';
import type { ServersRepo } from '../../store/servers-repo';
import type { IdempotencyRepo } from '../../store/idempotency-repo';
import type { Lifecycle } from '../../runtime/services/lifecycle';
import type { Call, Handlers, Reply } from '../types';
import { idempotent } from './idempotent';
import { page } from './paging';

export interface ServerDeps {
  servers: ServersRepo;
  idempotency: IdempotencyRepo;
  /** Creates, changes and removes servers, checking what the schemas cannot (server-rules.ts). */
  lifecycle: Lifecycle;
}

/**
 * Servers tag: listServers (the caller's servers and those shared with them), createServer, getServer, updateServer,
 * deleteServer. The last three act on the call's server (the dispatcher's access check, src/http/access.ts); only its
 * owner may change or delete it (their x-permission).
 */
export function serverHandlers(deps: ServerDeps): Handlers {
  const { servers, lifecycle } = deps;
  return {
    listServers: ({ principal, query }) => {
      const { limit, startingAfter } = page(query);
      // The page's JSON as SQLite built it (src/store/server-view.ts), sent as it is.
      return { status: 200, json: servers.listJson(principal.userId, { limit, startingAfter, state: query.state }) };
    },

    createServer: (call) => createServer(deps, call),

    getServer: ({ server }) => {
      // The server's JSON as SQLite built it (src/store/server-view.ts), with the caller's access, sent as it is.
      const json = servers.viewJson(server.id, server.access);
      if (json === undefined) throw notFound(server.id);
      return { status: 200, json };
    },

    updateServer: ({ server, body }) => ({ status: 200, body: lifecycle.update(server.ownerId, server.id, body) }),

    // openapi-backend checked the query against the spec (`true` or `false`) but hands it over as the string sent.
    deleteServer: ({ server, query }) => ({ status: 202, body: lifecycle.requestRemoval(server.id, String(query.keep_backups) === 'true') }),
  };
}

function notFound(id: string): AppError {
  return new AppError('server_not_found', `There is no server ${id}.`);
}

/**
 * POST /v1/servers, safe to retry with Idempotency-Key (draft-ietf-httpapi-idempotency-key-header;
 * docs/conventions.md "Idempotency"): the server row and the replayable answer are written in one transaction,
 * so an acknowledged create is never lost and never doubled.
 */
function createServer(deps: ServerDeps, call: Call<'createServer'>): Reply<'createServer'> {
  const { principal, body } = call;
  // The request's identity is its fields as createServer hashed them before idempotent() (fields added later join
  // only when sent), so a key stored by an earlier release still matches its retry; migration 030 gave the stored
  // answers idempotent()'s shape.
  const identity = [
    body.name, body.plan, body.version,
    ...(body.settings ? [body.settings] : []),
    ...(body.idle_stop_minutes !== undefined ? [{ idle_stop_minutes: body.idle_stop_minutes }] : []),
    ...(body.backup_schedule !== undefined ? [{ backup_schedule: body.backup_schedule }] : []),
  ];
  return idempotent(deps.idempotency, call, { operation: 'createServer', path: '', body, identity }, () => {
    const server = deps.lifecycle.createRequested(principal.userId, body);
    return { status: 201 as const, body: server, headers: { Location: `/v1/servers/${server.id}` } };
  });
}
