import type { DnsSettings } from '../dns/settings';
import path from 'node:path';
import type { Clock } from '../clock';
import type { Logger } from '../log';
import type { Plan } from '../catalog/plans';
import type { Store } from '../store';
import { serviceActor, type Actors } from '../actors';
import type { RuntimeHost } from './host/select-environment';
import type { SoftwareCatalog } from './software/software-catalog';
import type { RuntimeConfig } from './server/types';
import { createWork } from './server/work';
import { createRuntimeEvents } from './server/runtime-events';
import { createCrashPolicy } from './server/crash-policy';
import { createDoors, type Doors } from './server/doors';
import { createLaunchFiles } from './server/launch-files';
import { createServerSettings } from './services/server-settings';
import { createPlayerLists } from './services/player-lists';
import { createKeptBackups } from './services/kept-backups';
import { createBackups, type BackupsService } from './services/backups';
import { createLifecycle } from './services/lifecycle';
import { createPower, type PowerService } from './services/power';
import { createConsoles } from './services/consoles';
import { createReconciler } from './loops/reconcile';
import { createMoves } from './services/moves';
import { recoveriesOf } from './services/recovery';
import { createNodeLoss } from './services/node-loss';
import { createDiskWatcher } from './loops/disk-watcher';
import { serverDiskUsage } from './host/disk-usage';
import { createBackupScheduler } from './loops/backup-schedule';
import { createSchedules, type SchedulesConfig } from './services/schedules';
import { createMembers } from './services/members';
import { createAlerts, type AlertSample } from './loops/alerts';
import { createIdleStop, type IdleSample } from './loops/idle-stop';
import { versionCatalog } from '../catalog/versions';
import { createFiles } from './services/files';
import { createTransfers } from './services/file-transfers';

/** The largest upload or archive the Files API takes (openapi/v1.yaml tag Files): 1 GiB. */
const FILES_MAX_UPLOAD_BYTES = 1024 * 1024 * 1024;

/** What the runtime is built from: where games run and their files are (RuntimeHost), and the service's parts. */
export interface RuntimeDeps extends RuntimeHost {
  store: Store;
  clock: Clock;
  catalog: SoftwareCatalog;
  config: RuntimeConfig;
  plans: readonly Plan[];
  /** The names the operator keeps for DNS (src/dns/settings.ts); null or absent without DNS_ZONE. */
  dns?: Pick<DnsSettings, 'reserved'> | null;
  log: Logger;
  /** Whom the work under way acts for: the doors run each command as its submitter (src/actors.ts). */
  actors: Actors;
  schedules: SchedulesConfig;
  /**
   * The telemetry's stored samples, for the loops that act on them (alerts, idle stop). The sampler is built after
   * the runtime (it reads the doors), so the service hands a subscription it binds later (service.ts); without one
   * (the runtime's own tests) those two loops are not made.
   */
  samples?: { subscribe(listener: (sample: AlertSample & IdleSample) => void): () => void };
  /** How long a minute of `idle_stop_minutes` is (60,000 ms unless a test shortens it). */
  idleMinuteMs?: number;
}

/** A server's software definition, or undefined once the server is gone. */
function softwareOfServer(store: Store, catalog: SoftwareCatalog) {
  return (serverId: string) => {
    const server = store.servers.find(serverId);
    return server && catalog.get(server.software);
  };
}

/**
 * The loops that act on the telemetry's samples, each acting as itself (src/actors.ts): the alert rules, and the idle
 * stop, which asks for a stop as a request would. Neither without samples (the runtime's own tests).
 */
function sampleLoops(deps: RuntimeDeps, power: Pick<PowerService, 'requestAction'>) {
  const { samples, store, plans, log, actors } = deps;
  if (!samples) return { alerts: undefined, idleStop: undefined };
  const alerts = createAlerts({
    subscribe: (listener) => samples.subscribe((sample) => actors.run(serviceActor('alerts'), () => listener(sample))),
    repo: store.alerts, servers: store.servers, plans, log,
  });
  const idleStop = createIdleStop({
    subscribe: (listener) => samples.subscribe(listener), servers: store.servers, log, minuteMs: deps.idleMinuteMs ?? 60_000,
    requestAction: (...args) => actors.run(serviceActor('idle_stop'), () => power.requestAction(...args)),
  });
  return { alerts, idleStop };
}

/**
 * What nodes add (docs/architecture.md "Nodes and placement"): moves between them and recoveries from a lost one
 * (`gsh node lose`), which the reconcile loop carries on with, and the servers of a node that stops or starts
 * answering. Moves and recoveries only where volumes can be copied between nodes (`deps.transfer`).
 */
function nodeServices(deps: RuntimeDeps, parts: { doors: Doors; backups: BackupsService; track: (p: Promise<unknown>) => void }) {
  const { store, catalog, storage, environment, log, actors } = deps;
  const { doors, backups, track } = parts;
  const moves = deps.transfer && createMoves({ repo: store.moves, nodeOf: (serverId) => store.nodes.nodeOf(serverId), doors, transfer: deps.transfer, softwareOf: softwareOfServer(store, catalog), log, track });
  const passes = deps.transfer && recoveriesOf({ store, catalog, backups, doors, transfer: deps.transfer, storage, log, track }, moves);
  const nodeLoss = createNodeLoss({ doors, environment, log });
  environment.onReachability?.((ids, reachable) => actors.run(serviceActor('node'), () => nodeLoss(ids, reachable)));
  return passes;
}

/**
 * The runtime as named services, each built once with what it needs, in an order where nothing is used before it
 * exists (docs/architecture.md "Wiring"): the servers' doors first (every command on a server goes through its
 * door), then the services that submit commands or read through them. Tests build the runtime through here too.
 */
export function composeRuntime(deps: RuntimeDeps) {
  const { store, environment, storage, catalog, config, plans, log, actors } = deps;
  const now = () => deps.clock.now();
  const work = createWork();
  const events = createRuntimeEvents();
  const crashPolicy = createCrashPolicy({ crashes: store.crashes, actions: store.actions, servers: store.servers, config, now, log });
  const doors = createDoors({
    servers: store.servers, processes: store.processes, crashPolicy, environment, storage, catalog, plans, log, config, now, track: work.track,
    emitState: (e) => events.emit('state', e),
    playersChanged: (id, joined, left, reason) => store.events.playersChanged(id, joined, left, reason),
    onlinePlayers: (id) => store.events.onlinePlayers(id),
    settings: createLaunchFiles({ settings: store.settings, playerLists: store.playerLists }),
    actors,
  });
  const settings = createServerSettings({ repo: store.settings, servers: store.servers, catalog, plans, doors });
  const playerLists = createPlayerLists({ repo: store.playerLists, servers: store.servers, catalog, doors });
  const keptBackups = createKeptBackups({ repo: store.keptBackups, dataDir: config.dataDir, perUser: config.keptBackupsPerUser, inUse: doors.usingBackup });
  const backups = createBackups({ repo: store.backups, servers: store.servers, catalog, plans, kept: keptBackups, doors, storage, dataDir: config.dataDir, log, track: work.track });
  const lifecycle = createLifecycle({
    servers: store.servers, settings: store.settings, actions: store.actions, catalog, doors, environment, storage, backups, events, log, track: work.track,
    keptBackups, plans, versions: versionCatalog(catalog), settingsService: settings, dns: deps.dns ?? null,
  });
  const power = createPower({ doors, actions: store.actions, crashes: store.crashes, servers: store.servers, plans, environment, backups });
  const consoles = createConsoles({ doors, power, ownerOf: store.servers.ownerOf, now });
  const schedules = createSchedules({
    repo: store.schedules, doors, power, backups, consoles, ownerOf: store.servers.ownerOf, standing: (serverId, userId) => store.members.standing(serverId, userId),
    softwareOf: softwareOfServer(store, catalog),
    actors, now, log, track: work.track, config: deps.schedules,
  });
  const members = createMembers({ repo: store.members, schedules });
  const files = createFiles({
    storage, servers: store.servers, plans, doors, catalog, changes: store.fileChanges, current: actors.current,
    maxUploadBytes: FILES_MAX_UPLOAD_BYTES, tmpDir: path.join(config.dataDir, 'tmp'), hidden: storage.ownNames ?? [], transfers: createTransfers(config.filesTransfersPerUser),
  });
  const passes = nodeServices(deps, { doors, backups, track: work.track });
  const reconciler = createReconciler({ servers: store.servers, actions: store.actions, processes: store.processes, environment, doors, lifecycle, config, log, moves: passes });
  const measure = serverDiskUsage(storage, backups.folder);
  const diskWatcher = createDiskWatcher({ servers: store.servers, crashPolicy, doors, plans, config, log, measure });
  const backupScheduler = createBackupScheduler({
    scheduled: () => store.backups.scheduled(),
    backUp: (id) => actors.run(serviceActor('backup_schedule'), () => void backups.create(id, null, true)),
    now,
    log,
    everyMs: config.backupScheduleMs,
  });
  const { alerts, idleStop } = sampleLoops(deps, power);
  return {
    doors, lifecycle, power, consoles, settings, playerLists, backups, keptBackups, diskWatcher, backupScheduler, schedules, members, events, files,
    /** Boot: cleans up after a previous life, resumes installs, deletions and crash backoffs, starts the loops. */
    start: (): Promise<void> =>
      actors.run(serviceActor('boot'), async () => {
        await storage.start().then(files.sweep); // a half-done restore finished or undone first; transfers' leftovers swept
        await backups.recover();
        await reconciler.start();
        diskWatcher.start();
        backupScheduler.start();
        schedules.start();
        idleStop?.start();
        alerts?.start();
      }),
    /**
     * Graceful shutdown: no new schedule run, fails open actions, stops every game (a container: lets it go, to
     * adopt), resolves after, once the runs under way have ended too.
     */
    close: (): Promise<void> =>
      actors.run(serviceActor('shutdown'), async () => {
        idleStop?.stop();
        alerts?.stop();
        schedules.stop();
        backupScheduler.stop();
        await diskWatcher.stop();
        await reconciler.close();
        await schedules.settled();
      }),
    /** Resolves once no install, command or removal that began earlier is still under way. */
    idle: work.idle,
  };
}

export type Runtime = ReturnType<typeof composeRuntime>;
