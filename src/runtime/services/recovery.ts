import { serviceActor } from '../../actors';
import type { Logger } from '../../log';
import type { ProcessesRepo } from '../../store/processes-repo';
import type { Recovery, RecoveriesRepo } from '../../store/recoveries-repo';
import type { ServersRepo } from '../../store/servers-repo';
import type { VolumeTransfer } from '../host/docker/nodes-environment';
import type { ServerStorage } from '../host/storage';
import type { Store } from '../../store';
import type { SoftwareCatalog } from '../software/software-catalog';
import type { BackupsService } from './backups';
import { installFiles } from '../server/game';
import type { Command, CommandContext } from '../server/door';
import type { Doors } from '../server/doors';
import type { ServerSupervisor } from '../server/server-supervisor';

export interface RecoveriesDeps {
  repo: RecoveriesRepo;
  servers: Pick<ServersRepo, 'find' | 'filesChanged'>;
  /** The node a server is on now (NodesRepo.nodeOf), and whether a node of that name still exists. */
  nodeOf: (serverId: string) => string | null;
  nodeExists: (name: string) => boolean;
  doors: Pick<Doors, 'of'>;
  /** The removal of a server's volume and containers from a named node, and whether it answers (nodes-environment.ts). */
  transfer: Pick<VolumeTransfer, 'drop' | 'reachable'>;
  storage: Pick<ServerStorage, 'importArchive'>;
  /** Writes a new server's files (game.ts installFiles) into its volume on the node it is on now. */
  install: (serverId: string) => Promise<void>;
  /** What a backup of the server holds (its software's `backup.paths`), and a backup's archive on this host. */
  backupPaths: (serverId: string) => string[] | null;
  archiveOf: (serverId: string, backupId: string) => string;
  processes: Pick<ProcessesRepo, 'forget'>;
  log: Logger;
  /** Tracks background work (a leftover's removal) so Runtime idle() waits for it. */
  track: (p: Promise<unknown>) => void;
  /** How long a restore that met a failing engine waits before trying again (5 s). */
  retryMs?: number;
}

/** The recovery as its server's door runs it: one `recover` command, which holds the server until it has ended. */
function recoveryCommand(deps: RecoveriesDeps, first: Recovery): Command {
  return {
    kind: 'recover',
    holds: true,
    actor: serviceActor('operator'), // the operator asked (`gsh node lose`): the events it raises say so
    run: (server, ctx) => carryOut(deps, server, ctx, first.id).then(() => null),
    cancelled: (by) => deps.repo.fail(first.id, `Cancelled before it began by ${by.kind}.`),
  };
}

/** Carries the recovery on from the step its row records: the switch, the files, then the start there. */
async function carryOut(deps: RecoveriesDeps, server: ServerSupervisor, ctx: CommandContext, id: string): Promise<void> {
  let recovery = deps.repo.get(id);
  if (recovery?.status === 'pending') recovery = await leaveLostNode(deps, server, ctx, recovery);
  if (recovery?.status === 'switched') recovery = await restoreFiles(deps, server, ctx, recovery);
  if (recovery?.status !== 'restored' || ctx.overtaken) return;
  if (deps.servers.find(server.id)?.desired_state === 'running') {
    const failure = await server.start();
    if (failure) deps.log.warn('a recovered server did not start on its new node', { serverId: server.id, node: recovery.toNode, code: failure.code });
  }
  deps.repo.finish(recovery.id);
  await dropLeftover(deps, deps.repo.get(recovery.id) ?? recovery);
}

/**
 * The game on the lost node must not run on beside the new one: where the node still answers (`--force`) it is
 * stopped through its engine; where it does not, the service lets go of it (its container is removed if the node
 * ever answers again, dropLeftover). Then, with no await between the two (so no node check makes it `unreachable`
 * again meanwhile), the server is `stopped` and switched to a live node. Refused: the recovery fails, the server stays.
 */
async function leaveLostNode(deps: RecoveriesDeps, server: ServerSupervisor, ctx: CommandContext, recovery: Recovery): Promise<Recovery | undefined> {
  const { repo, log } = deps;
  await server.whenInstalled();
  if (server.hasProcess && server.state !== 'unreachable') await server.halt('stop', 'move');
  else if (server.state === 'crashed') await server.halt('stop', 'move');
  if (ctx.overtaken || server.state === 'deleting') {
    repo.fail(recovery.id, 'a kill, the removal or the shutdown came first');
    return undefined;
  }
  if (server.state === 'unreachable') {
    const held = server.detach();
    if (held) deps.processes.forget(server.id, held.pid); // a next life must not adopt the lost node's container
    server.nodeReturned(null); // `stopped`, its players gone with the lost node
  }
  const switched = repo.switchOver(recovery.id);
  if ('refused' in switched) {
    repo.fail(recovery.id, switched.refused);
    log.warn('a server could not be recovered; it stays on its lost node', { serverId: server.id, node: recovery.fromNode, reason: switched.refused });
    return undefined;
  }
  server.console.push('system', `the machine this server ran on is gone; recovering it on another, where players reach it at ${switched.address.host}:${switched.address.port}`);
  log.info('recovering a server of a lost node', { serverId: server.id, from: recovery.fromNode, to: switched.toNode });
  // A lost node that answers (`--force`, or back meanwhile) loses its copy now, before the new game can start.
  await dropLeftover(deps, repo.get(recovery.id) ?? recovery);
  return repo.get(recovery.id);
}

/**
 * A fresh volume on the new node (what an interrupted try left there removed first), the server's files as a new
 * server of its version has them, then its newest ready backup restored over them (an older one should that
 * archive be damaged; none: the fresh files stay). Recorded `restored` with `server.recovered`. An engine failing
 * meanwhile is waited out, the command holding the server (nothing starts it with half its files), until it works
 * or a kill, the removal or the shutdown comes (the next life carries it on from `switched`).
 */
async function restoreFiles(deps: RecoveriesDeps, server: ServerSupervisor, ctx: CommandContext, recovery: Recovery): Promise<Recovery | undefined> {
  const { repo, log } = deps;
  for (;;) {
    if (ctx.overtaken) return undefined;
    try {
      await deps.transfer.drop(server.id, recovery.toNode ?? '');
      await deps.install(server.id);
      const backup = await restoreNewest(deps, server);
      repo.restored(recovery.id, backup);
      deps.servers.filesChanged(server.id);
      server.console.push('system', backup ? `recovered from backup ${backup.id} of ${backup.createdAt}` : 'recovered with the files of a new server: it had no backup');
      return repo.get(recovery.id);
    } catch (err) {
      log.warn('recovering a server met a failing engine; trying again', { serverId: server.id, node: recovery.toNode, error: String(err) });
      await new Promise((r) => setTimeout(r, deps.retryMs ?? 5_000));
    }
  }
}

/** The newest backup whose archive restores, or null when there is none; throws when the new node's engine fails. */
async function restoreNewest(deps: RecoveriesDeps, server: ServerSupervisor): Promise<{ id: string; createdAt: string } | null> {
  const paths = deps.backupPaths(server.id);
  if (!paths) return null;
  for (const backup of deps.repo.backups(server.id)) {
    try {
      await deps.storage.importArchive(server.id, paths, { file: deps.archiveOf(server.id, backup.id), sha256: backup.sha256, tag: backup.id }, () => Promise.resolve());
      return backup;
    } catch (err) {
      if (!deps.transfer.reachable(deps.nodeOf(server.id) ?? '')) throw err;
      deps.log.warn('a backup could not be restored into a recovered server; trying an older one', { serverId: server.id, backupId: backup.id, error: String(err) });
    }
  }
  return null;
}

/**
 * Removes the server's volume and containers from the lost node once it answers (it may come back: its game must
 * then go, never be adopted), unless the server is on that node; a node removed meanwhile has nothing to reach.
 */
async function dropLeftover(deps: RecoveriesDeps, recovery: Recovery): Promise<void> {
  const node = recovery.leftover;
  if (!node) return;
  if (!deps.nodeExists(node)) {
    deps.repo.dropped(recovery.id);
    return;
  }
  if (!deps.transfer.reachable(node) || deps.nodeOf(recovery.serverId) === node) return;
  try {
    await deps.transfer.drop(recovery.serverId, node);
    deps.repo.dropped(recovery.id);
    deps.log.info('removed what a lost node kept of a recovered server', { serverId: recovery.serverId, node });
  } catch (err) {
    deps.log.warn('could not remove what a lost node kept of a recovered server; tried again later', { serverId: recovery.serverId, node, error: String(err) });
  }
}

/**
 * Recovering the servers of a node lost for good (docs/architecture.md "When a node is lost"). The operator asks
 * (`gsh node lose`, `pending` rows, recoveries-repo.ts); `poll`, on the reconcile loop's passes (at boot before its
 * first decides anything, as moves.ts), hands each open recovery to its server's door as one `recover` command: it
 * lets go of (or stops) the game on the lost node, places the server on a live node with a new address
 * (`server.updated`), makes its files there from its newest ready backup (kept on this host) or as a new server's,
 * tells the customer (`server.recovered`), and starts it if its desired state is running. Each step is recorded
 * first, so a `kill -9` anywhere is carried on at the next boot. What the lost node keeps of it is removed if that
 * node ever answers again.
 */
export function createRecoveries(deps: RecoveriesDeps) {
  const { repo } = deps;
  /** Recoveries handed to a door in this service life. */
  const submitted = new Set<string>();
  let sweeping: Promise<void> | null = null;

  return {
    /** Hands each open recovery not yet handed over to its server's door, then sweeps the lost nodes that answer. */
    poll(): void {
      for (const recovery of repo.open()) {
        if (submitted.has(recovery.id)) continue;
        submitted.add(recovery.id);
        try {
          void deps.doors.of(recovery.serverId).submit(recoveryCommand(deps, recovery));
        } catch (err) {
          repo.fail(recovery.id, `The server is gone: ${(err as Error).message}`);
        }
      }
      sweeping ??= (async () => {
        for (const recovery of repo.leftovers()) if (recovery.status === 'done' || recovery.status === 'failed') await dropLeftover(deps, recovery);
      })().finally(() => (sweeping = null));
      deps.track(sweeping);
    },
  };
}

export type Recoveries = ReturnType<typeof createRecoveries>;

/**
 * The recoveries as composeRuntime makes them (with nodes only), from the store's repositories and the runtime's
 * parts, polled on the reconcile loop's passes right after the moves (`moves`): the one `poll` the reconciler gets.
 */
export function recoveriesOf(parts: {
  store: Pick<Store, 'recoveries' | 'servers' | 'nodes' | 'processes'>;
  catalog: SoftwareCatalog;
  backups: Pick<BackupsService, 'archive'>;
  doors: Pick<Doors, 'of'>;
  transfer: Pick<VolumeTransfer, 'drop' | 'reachable'>;
  storage: ServerStorage;
  log: Logger;
  track: (p: Promise<unknown>) => void;
}, moves: { poll(): void } | undefined): { poll(): void } {
  const { store, catalog, storage } = parts;
  const recoveries = createRecoveries({
    repo: store.recoveries,
    servers: store.servers,
    nodeOf: (serverId) => store.nodes.nodeOf(serverId),
    nodeExists: (name) => store.nodes.get(name) !== undefined,
    doors: parts.doors,
    transfer: parts.transfer,
    storage,
    install: (serverId) => installFiles(store.servers.find(serverId), serverId, catalog, storage),
    backupPaths: (serverId) => {
      const server = store.servers.find(serverId);
      return (server && catalog.get(server.software).backup?.paths) ?? null;
    },
    archiveOf: (serverId, backupId) => parts.backups.archive(serverId, backupId).file,
    processes: store.processes,
    log: parts.log,
    track: parts.track,
  });
  return {
    poll() {
      moves?.poll();
      recoveries.poll();
    },
  };
}
