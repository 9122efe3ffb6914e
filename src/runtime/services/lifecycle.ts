import { AppError } from '../../errors';
import type { Logger } from '../../log';
import type { ActionsRepo } from '../../store/actions-repo';
import type { BackupSchedule, NewServer, Server, ServersRepo } from '../../store/servers-repo';
import type { SettingsRepo } from '../../store/settings-repo';
import type { BackupsService } from './backups';
import type { KeptBackupsService } from './kept-backups';
import { checkDnsName, checkPatch, newServerFrom, type CreateServerRequest, type ServerRulesDeps } from './server-rules';
import { install } from '../server/commands';
import type { Command } from '../server/door';
import type { Doors } from '../server/doors';
import type { Environment } from '../host/environment';
import type { ServerStorage } from '../host/storage';
import type { RuntimeEventBus } from '../server/runtime-events';
import type { SettingValues } from '../software/settings';
import type { SoftwareCatalog } from '../software/software-catalog';
import type { ServerState } from '../server/states';

export interface LifecycleDeps extends ServerRulesDeps {
  servers: Pick<ServersRepo, 'create' | 'update' | 'find' | 'remove'>;
  settings: Pick<SettingsRepo, 'atomically' | 'choose'>;
  actions: Pick<ActionsRepo, 'open' | 'finish'>;
  catalog: SoftwareCatalog;
  doors: Pick<Doors, 'of' | 'forget'>;
  environment: Pick<Environment, 'uninstall'>;
  /** The server's files (storage.ts), deleted by the removal. */
  storage: Pick<ServerStorage, 'remove'>;
  /** A removal deletes the server's archives, or hands the promised ones to its owner (backups.ts removeAll). */
  backups: Pick<BackupsService, 'removeAll'>;
  /** deleteServer?keep_backups=true promises the server's backups to its owner first. */
  keptBackups: Pick<KeptBackupsService, 'promise'>;
  events: Pick<RuntimeEventBus, 'emit'>;
  log: Logger;
  /** Tracks the install a create starts (Runtime idle()). */
  track(p: Promise<unknown>): void;
}

/**
 * The removal, as a command that overtakes whatever runs (docs/architecture.md "Removal"): `deleting` at once
 * (begin), then the game killed (its players leave with reason `delete`), the other commands waited out, the
 * folder and archives deleted, `removed` published (telemetry drops the history) and the row deleted. A failure
 * is logged and the server stays `deleting` until the next boot runs it again, so every step is idempotent (its
 * files on a node away cannot be deleted until the node answers: it stays `deleting` until then).
 */
function removal(deps: LifecycleDeps, serverId: string): Command {
  const { servers, doors, log } = deps;
  return {
    kind: 'remove',
    holds: true,
    overtakes: true,
    begin(server) {
      server.markDeleting(); // the state machine writes it (server-state.ts), with desired state `stopped`
      for (const a of deps.actions.open(serverId)) {
        deps.actions.finish(a.id, { code: 'action_cancelled', detail: 'The server was deleted before this action finished.' });
      }
    },
    async run(server, ctx) {
      try {
        await server.halt('kill', 'delete');
        await ctx.othersSettled();
        await server.whenInstalled();
        await server.console.close();
        await deps.environment.uninstall(serverId);
        await deps.storage.remove(serverId);
        await deps.backups.removeAll(serverId);
        // Listeners (telemetry) drop what they keep before the row goes: a crash in between leaves the row in
        // `deleting`, and the next boot runs the whole removal again, so listeners must be idempotent.
        deps.events.emit('removed', { serverId });
        servers.remove(serverId);
        doors.forget(serverId);
      } catch (err) {
        log.error('deleting a server failed; it stays in state deleting and is retried at the next start', { server_id: serverId, error: String(err) });
      }
      return null;
    },
  };
}

/**
 * A server from create to removal (docs/architecture.md "A server's life"): its row, its install, its changes, its
 * removal, each through the server's door where the server itself is touched.
 */
export function createLifecycle(deps: LifecycleDeps) {
  const { servers, doors } = deps;

  /** Prepares the server's folder (the install command); resolves when done, never rejects (a failure is a crash). */
  async function installServer(serverId: string): Promise<void> {
    await doors.of(serverId).submit(install);
  }

  /**
   * Inserts a server in state `installing` with its address allocated, and starts its install once the caller's
   * transaction (if any) has returned (the door runs commands on a later tick). Synchronous, so it can run inside
   * IdempotencyRepo.run. quota_exceeded past the owner's servers or memory quota (docs/conventions.md "Quotas").
   * `chosen` settings (checked by SettingsService.checkNew) are stored in the same transaction.
   */
  function create(userId: string, input: NewServer, chosen: SettingValues = {}): Server {
    const server = deps.settings.atomically(() => {
      const created = servers.create(userId, { ...input, transport: deps.catalog.get(input.software).transport });
      if (Object.keys(chosen).length > 0) deps.settings.choose(created.id, chosen);
      return created;
    });
    // After the caller's transaction: if it rolled back, there is no row and nothing to install.
    deps.track(new Promise<void>((resolve) => setImmediate(() => resolve(servers.find(server.id) ? installServer(server.id) : undefined))));
    return server;
  }

  /**
   * Starts a removal (open actions fail with action_cancelled, the state is `deleting` at once) and resolves when
   * the row is gone. On a server already `deleting` it starts nothing: it resolves with the removal under way, if
   * any (one that failed is run again by the next boot).
   */
  async function remove(serverId: string): Promise<void> {
    const door = doors.of(serverId);
    if (door.state === 'deleting') await door.removal();
    else await door.submit(removal(deps, serverId));
  }

  return {
    create,
    /**
     * createServer's work: the request checked (a plan the service offers, a version the catalog lists, a backup
     * schedule within the plan, the software's settings: server-rules.ts), then created as `create` does.
     */
    createRequested(userId: string, request: CreateServerRequest): Server {
      const { input, settings } = newServerFrom(deps, request);
      return create(userId, input, settings);
    },
    install: installServer,
    /**
     * Renames and/or changes the plan, idle stop or backup schedule (a plan change needs the server stopped or
     * crashed: invalid_state; a larger plan past the owner's memory quota is quota_exceeded).
     */
    update(userId: string, serverId: string, patch: { name?: string; plan?: string; backup_schedule?: BackupSchedule | null; dns_name?: string | null }): Server {
      checkPatch(deps.plans, patch, () => servers.find(serverId)?.plan);
      const dnsName = checkDnsName(deps.dns, patch.dns_name);
      const server = servers.update(userId, serverId, dnsName === undefined ? patch : { ...patch, dns_name: dnsName });
      if (!server) throw new AppError('server_not_found', `There is no server ${serverId}.`);
      return server;
    },
    remove,
    /**
     * deleteServer's work: the server's ready backups promised to its owner when `keepBackups` (403 quota_exceeded
     * past KEPT_BACKUPS_PER_USER, nothing deleted), then the removal started. Answers the server as it is then,
     * `deleting` (the removal's first step is synchronous); the row goes when the removal ends, which nobody awaits:
     * one that fails leaves the server `deleting` for the next boot to finish.
     */
    requestRemoval(serverId: string, keepBackups: boolean): Server {
      if (keepBackups) deps.keptBackups.promise(serverId);
      void remove(serverId);
      const server = servers.find(serverId);
      if (!server) throw new AppError('server_not_found', `There is no server ${serverId}.`);
      return server;
    },
    /** Boot: runs again the whole removal of a server a previous life left `deleting`. */
    resumeRemoval(serverId: string): Promise<unknown> {
      return doors.of(serverId).submit(removal(deps, serverId));
    },
    /** The observed state as the server's owner holds it (also written to servers.state). */
    state: (serverId: string): ServerState => doors.of(serverId).state,
  };
}

export type Lifecycle = ReturnType<typeof createLifecycle>;
