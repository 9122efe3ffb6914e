import { AppError } from '../../errors';
import type { Plan } from '../../catalog/plans';
import type { VersionCatalog } from '../../catalog/versions';
import type { BackupSchedule, Server, ServersRepo } from '../../store/servers-repo';
import { scheduleErrors } from '../../runtime/loops/backup-schedule';
import type { IdempotencyRepo } from '../../store/idempotency-repo';
import type { Lifecycle } from '../../runtime/services/lifecycle';
import type { SettingsService } from '../../runtime/services/server-settings';
import type { KeptBackupsService } from '../../runtime/services/kept-backups';
import type { Call, Handlers, Reply } from '../types';
import { idempotent } from './idempotent';
import { page } from './paging';

export interface ServerDeps {
  servers: ServersRepo;
  idempotency: IdempotencyRepo;
  versions: VersionCatalog;
  /** The plans a server is created or changed to (the service's, as GET /v1/plans lists them). */
  plans: readonly Plan[];
  lifecycle: Lifecycle;
  /** Settings given at create are checked by their owner (SettingsService.checkNew). */
  settings: Pick<SettingsService, 'checkNew'>;
  /** deleteServer?keep_backups=true promises the server's backups to its owner. */
  keptBackups: Pick<KeptBackupsService, 'promise'>;
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

    updateServer: ({ server, body }) => {
      if (body.plan !== undefined) checkPlan(deps.plans, body.plan);
      if (body.backup_schedule) checkSchedule(deps.plans, body.backup_schedule, body.plan ?? found(servers, server.id).plan);
      return { status: 200, body: lifecycle.update(server.ownerId, server.id, body) };
    },

    deleteServer: ({ server, query }) => {
      // openapi-backend checked the query against the spec (`true` or `false`) but hands it over as the string sent.
      if (String(query.keep_backups) === 'true') deps.keptBackups.promise(server.id); // 403 past KEPT_BACKUPS_PER_USER
      void lifecycle.remove(server.id); // 202: the state is `deleting` now; the row goes when the removal ends
      return { status: 202, body: found(servers, server.id) };
    },
  };
}

function notFound(id: string): AppError {
  return new AppError('server_not_found', `There is no server ${id}.`);
}

/** The server as it is now (its owner's view: only the owner changes or deletes it); gone since the check: 404. */
function found(servers: ServersRepo, id: string): Server {
  const server = servers.find(id);
  if (!server) throw notFound(id);
  return server;
}

/** A backup schedule's rules beyond its schema (backup-schedule.ts scheduleErrors): 400 validation_failed. */
function checkSchedule(plans: readonly Plan[], schedule: BackupSchedule, planId: string) {
  const errors = scheduleErrors(schedule, plans.find((p) => p.id === planId)?.backups ?? 1);
  if (errors.length > 0) throw new AppError('validation_failed', 'The backup schedule is not valid.', errors);
}

function checkPlan(plans: readonly Plan[], id: string) {
  if (!plans.some((p) => p.id === id)) {
    throw new AppError('unknown_plan', `There is no plan "${id}"; GET /v1/plans lists them.`, [
      { pointer: '/body/plan', detail: 'no such plan' },
    ]);
  }
}

/**
 * POST /v1/servers, safe to retry with Idempotency-Key (draft-ietf-httpapi-idempotency-key-header;
 * docs/conventions.md "Idempotency"): the server row and the replayable answer are written in one transaction,
 * so an acknowledged create is never lost and never doubled.
 */
function createServer(deps: ServerDeps, call: Call<'createServer'>): Reply<'createServer'> {
  const { principal, body } = call;
  checkPlan(deps.plans, body.plan);
  const version = deps.versions.resolve(body.version);
  if (!version) {
    throw new AppError('unknown_version', `There is no version "${body.version}"; GET /v1/versions lists them.`, [
      { pointer: '/body/version', detail: 'no such version' },
    ]);
  }
  if (body.backup_schedule) checkSchedule(deps.plans, body.backup_schedule, body.plan);
  const input = {
    name: body.name, plan: body.plan, version: version.id, software: version.software, game_version: version.game_version,
    idle_stop_minutes: body.idle_stop_minutes ?? null, backup_schedule: body.backup_schedule ?? null,
  };
  const settings = body.settings ? deps.settings.checkNew(version.software, body.plan, body.settings) : {};
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
    const server = deps.lifecycle.create(principal.userId, input, settings);
    return { status: 201 as const, body: server, headers: { Location: `/v1/servers/${server.id}` } };
  });
}
