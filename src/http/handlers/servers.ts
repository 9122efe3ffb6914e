import crypto from 'node:crypto';
import type { Db } from '../../store/db';
import { AppError } from '../../errors';
import { findPlan } from '../../catalog/plans';
import type { VersionCatalog } from '../../catalog/versions';
import type { ServersRepo } from '../../store/servers-repo';
import type { IdempotencyRepo } from '../../store/idempotency-repo';
import type { ServerRuntime, Telemetry } from '../runtime-port';
import type { Logger } from '../../log';
import type { Call, Handlers, Reply } from '../types';
import { page, withCursor } from './paging';

export interface ServerDeps {
  db: Db;
  servers: ServersRepo;
  idempotency: IdempotencyRepo;
  versions: VersionCatalog;
  runtime: ServerRuntime;
  telemetry: Telemetry;
  log: Logger;
}

/** Servers tag: listServers, createServer, getServer, updateServer, deleteServer. */
export function serverHandlers(deps: ServerDeps): Handlers {
  const { servers } = deps;

  function mustGet(userId: string, id: string) {
    const server = servers.get(userId, id);
    // Another user's server answers exactly like a missing one (CONVENTIONS.md "Authentication").
    if (!server) throw new AppError('server_not_found', `There is no server ${id}.`);
    return server;
  }

  return {
    listServers: ({ principal, query }) => {
      const { limit, startingAfter } = page(query);
      const result = servers.list(principal.userId, { limit, startingAfter, state: query.state });
      return { status: 200, body: withCursor(result) };
    },

    createServer: (call) => createServer(deps, call),

    getServer: ({ principal, path }) => ({ status: 200, body: mustGet(principal.userId, path.server_id) }),

    updateServer: ({ principal, path, body }) => {
      if (body.plan !== undefined) checkPlan(body.plan);
      const server = servers.update(principal.userId, path.server_id, body);
      if (!server) throw new AppError('server_not_found', `There is no server ${path.server_id}.`);
      return { status: 200, body: server };
    },

    deleteServer: ({ principal, path }) => {
      const server = mustGet(principal.userId, path.server_id);
      if (server.state !== 'deleting') {
        servers.markDeleting(server.id);
        void completeDeletion(deps, server.id);
      }
      return { status: 202, body: mustGet(principal.userId, server.id) };
    },
  };
}

function checkPlan(id: string) {
  if (!findPlan(id)) {
    throw new AppError('unknown_plan', `There is no plan "${id}"; GET /v1/plans lists them.`, [
      { pointer: '/body/plan', detail: 'no such plan' },
    ]);
  }
}

/**
 * POST /v1/servers, safe to retry with Idempotency-Key (draft-ietf-httpapi-idempotency-key-header): the key is
 * claimed first, then the server row and the replayable answer are written in one transaction, so an
 * acknowledged create is never lost and never doubled.
 */
function createServer(deps: ServerDeps, { principal, body, headers }: Call<'createServer'>): Reply<'createServer'> {
  checkPlan(body.plan);
  const version = deps.versions.resolve(body.version);
  if (!version) {
    throw new AppError('unknown_version', `There is no version "${body.version}"; GET /v1/versions lists them.`, [
      { pointer: '/body/version', detail: 'no such version' },
    ]);
  }
  const input = {
    name: body.name,
    plan: body.plan,
    version: version.id,
    software: version.software,
    game_version: version.game_version,
  };
  const key = headers['idempotency-key'] as string | undefined;
  if (key === undefined) {
    const server = deps.servers.create(principal.userId, input);
    install(deps, server.id);
    return { status: 201, body: server, headers: { Location: `/v1/servers/${server.id}` } };
  }

  const requestHash = crypto.createHash('sha256').update(JSON.stringify([body.name, body.plan, body.version])).digest('hex');
  const claim = deps.idempotency.claim(principal.userId, key, requestHash);
  if (claim.kind === 'mismatch') {
    throw new AppError('idempotency_key_reused', 'This Idempotency-Key was already used with a different request body.', [
      { pointer: '/header/idempotency-key', detail: 'already used with a different body' },
    ]);
  }
  if (claim.kind === 'in_flight') {
    throw new AppError('idempotency_in_flight', 'A request with this Idempotency-Key is still being processed; retry shortly.');
  }
  if (claim.kind === 'replay') {
    const server = JSON.parse(claim.body) as Reply<'createServer'>['body'];
    return {
      status: 201,
      body: server,
      headers: { Location: `/v1/servers/${server.id}`, 'Idempotent-Replayed': 'true' },
    };
  }
  try {
    const server = deps.db.transaction(() => {
      const created = deps.servers.create(principal.userId, input);
      deps.idempotency.complete(principal.userId, key, 201, JSON.stringify(created));
      return created;
    })();
    install(deps, server.id);
    return { status: 201, body: server, headers: { Location: `/v1/servers/${server.id}` } };
  } catch (err) {
    deps.idempotency.release(principal.userId, key);
    throw err;
  }
}

/** Starts the install in the background; the runtime records failures on the server, this only logs the unexpected. */
function install(deps: ServerDeps, id: string) {
  deps.runtime.install(id).catch((err) => deps.log.error('install failed', { server_id: id, error: String(err) }));
}

/**
 * Finishes a deletion: the runtime stops the process and removes the files, then the row goes, which frees the
 * port. Also run at boot for servers left in `deleting` by a previous life of the service.
 */
export async function completeDeletion(deps: Pick<ServerDeps, 'servers' | 'runtime' | 'telemetry' | 'log'>, id: string) {
  try {
    await deps.runtime.remove(id);
    deps.telemetry.store.deleteServer(id);
    deps.servers.remove(id);
  } catch (err) {
    deps.log.error('deleting a server failed; it stays in state deleting and is retried at the next start', {
      server_id: id,
      error: String(err),
    });
  }
}
