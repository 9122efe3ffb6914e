import { EventEmitter } from 'node:events';
import { AppError, invalidState } from '../errors';
import type { Clock } from '../clock';
import type { Logger } from '../log';
import type { Plan } from '../catalog/plans';
import { actionFailure, type Action, type ActionReason, type ActionType, type Failure } from '../store/actions-repo';
import type { Store } from '../store';
import { isCommandLine } from './console-text';
import { createCrashPolicy } from './crash-policy';
import { diskOverPlan } from './disk-usage';
import { createBackupScheduler } from './backup-schedule';
import { createDiskWatcher } from './disk-watcher';
import type { Environment } from './environment';
import { UNREACHABLE } from './game';
import { createNodeLoss } from './node-loss';
import { createReconciler } from './reconcile';
import type { ServerSupervisor } from './server-supervisor';
import { isStopCommand, type SoftwareCatalog } from './software-catalog';
import { createServerData } from './server-data';
import { createSupervisors } from './supervisors';
import type { RuntimeConfig, RuntimeEvents } from './types';
import type { Runtime } from './runtime-api';

export { runtimeConfigDefaults } from './types';
export type { CommandSender, LiveServer, RuntimeConfig, RuntimeEvents, StateChange } from './types';
export type { Runtime } from './runtime-api';

export interface RuntimeDeps {
  store: Pick<Store, 'servers' | 'actions' | 'crashes' | 'processes' | 'events' | 'settings' | 'playerLists' | 'backups' | 'keptBackups'>;
  clock: Clock;
  environment: Environment;
  catalog: SoftwareCatalog;
  config: RuntimeConfig;
  plans: readonly Plan[];
  log: Logger;
}


export function createRuntime(deps: RuntimeDeps): Runtime {
  const { servers, actions, crashes, processes } = deps.store;
  const { environment, log } = deps;
  const events = new EventEmitter();
  const work = new Set<Promise<unknown>>();
  const removals = new Map<string, Promise<void>>();
  const now = () => deps.clock.now();
  const crashPolicy = createCrashPolicy({ crashes, actions, servers, config: deps.config, now, log });
  const supervisors = createSupervisors({
    servers, processes, crashPolicy, environment, catalog: deps.catalog, plans: deps.plans, log, config: deps.config, now,
    isClosing: () => reconciler.isClosing(),
    emitState: (e) => events.emit('state', e),
    playersChanged: (id, joined, left, reason) => deps.store.events.playersChanged(id, joined, left, reason),
    settings: { forLaunch: (launch) => data.launch.forLaunch(launch) },
  });
  const data = createServerData({ ...deps, supervisor: (id) => supervisors.of(id), track: (p) => void track(p) });
  const reconciler = createReconciler({
    servers, actions, processes, environment, supervisors, config: deps.config, log,
    install: (id) => void install(id),
    held: (id) => data.backups.busy(id),
    resumeRemoval: (id) => void beginRemoval(supervisors.of(id)),
  });
  environment.onReachability?.(createNodeLoss({ supervisors, environment, log, track: (p) => void track(p) }));
  const diskWatcher = createDiskWatcher({
    servers, actions, crashPolicy, supervisors, plans: deps.plans, config: deps.config, log,
    backupsFolder: (id) => data.backups.folder(id),
    isClosing: () => reconciler.isClosing(),
    track: (p) => void track(p),
  });

  /** Background work is tracked so idle() and tests can wait for it; it never rejects (failures are recorded). */
  function track<T>(p: Promise<T>): Promise<T> {
    work.add(p);
    void p.finally(() => work.delete(p)).catch(() => undefined);
    return p;
  }

  function install(serverId: string): Promise<void> {
    return track(supervisors.of(serverId).install());
  }

  function remove(serverId: string): Promise<void> {
    const slot = supervisors.of(serverId);
    if (slot.state === 'deleting') return removals.get(serverId) ?? Promise.resolve();
    return beginRemoval(slot);
  }

  /** Also what boot runs for a server a previous life left in `deleting`. */
  function beginRemoval(slot: ServerSupervisor): Promise<void> {
    const running = removals.get(slot.id);
    if (running) return running;
    servers.markDeleting(slot.id);
    for (const a of actions.open(slot.id)) {
      actions.finish(a.id, { code: 'action_cancelled', detail: 'The server was deleted before this action finished.' });
    }
    slot.markDeleting();
    const done = track(finishRemoval(slot)).finally(() => removals.delete(slot.id));
    removals.set(slot.id, done);
    return done;
  }

  async function finishRemoval(slot: ServerSupervisor): Promise<void> {
    try {
      await slot.whenInstalled();
      await slot.halt('kill', 'delete');
      await slot.console.close();
      await environment.uninstall(slot.dir);
      await data.backups.removeAll(slot.id);
      // Listeners (telemetry) drop what they keep before the row goes: a crash in between leaves the row in
      // `deleting`, and the next boot runs the whole removal again, so listeners must be idempotent.
      events.emit('removed', { serverId: slot.id });
      servers.remove(slot.id);
      supervisors.forget(slot.id);
    } catch (err) {
      log.error('deleting a server failed; it stays in state deleting and is retried at the next start', {
        server_id: slot.id,
        error: String(err),
      });
    }
  }

  function requestAction(serverId: string, userId: string, type: ActionType, backupId?: string, reason: ActionReason = 'requested'): Action {
    if (reconciler.isClosing()) throw new AppError('service_unavailable', 'The service is shutting down; try again shortly.');
    const slot = supervisors.of(serverId);
    if (slot.state === 'deleting') throw invalidState('deleting', 'The server is being deleted.');
    if (slot.state === 'unreachable' || environment.reachable?.(serverId) === false) throw invalidState('unreachable', UNREACHABLE);
    const open = actions.open(serverId);
    const restoreTarget = data.backups.checkAction(serverId, type, backupId); // a backup under way; a restore's backup
    if (type !== 'kill' && open.length > 0) {
      const o = open[0];
      const detail = `Action ${o.id} (${o.type}) is still ${o.status}; wait for it to finish, or send kill.`;
      throw new AppError('action_conflict', detail, undefined, undefined, { state: slot.state, action_id: o.id });
    }
    const overDisk = type === 'start' || type === 'restart' ? diskOverPlan(servers.find(serverId), deps.plans) : null;
    if (overDisk) throw new AppError(overDisk.code, overDisk.detail);
    const action = actions.create(serverId, userId, type, reason);
    if (restoreTarget) data.backups.willRestore(serverId, restoreTarget);
    for (const o of open) actions.finish(o.id, { code: 'action_cancelled', detail: `Overtaken by kill ${action.id}.` });
    track(new Promise<void>((resolve) => setImmediate(() => resolve(runAction(slot, action)))));
    return action;
  }

  async function runAction(slot: ServerSupervisor, action: Action): Promise<void> {
    if (!actions.isOpen(action.id)) {
      if (action.type === 'restore') data.backups.forgetRestore(slot.id);
      return; // overtaken by a kill before it started
    }
    actions.markRunning(action.id);
    let failure: Failure | null;
    try {
      failure = await perform(slot, action);
    } catch (err) {
      log.error('power action failed unexpectedly', { actionId: action.id, err: String(err) });
      failure = err instanceof AppError ? actionFailure(err.code, err.detail) : { code: 'internal_error', detail: String(err) };
    }
    actions.finish(action.id, failure); // a no-op if a kill, shutdown or delete completed it first
  }

  async function perform(slot: ServerSupervisor, action: Action): Promise<Failure | null> {
    switch (action.type) {
      case 'start':
        return slot.start();
      case 'stop':
        await slot.whenInstalled();
        await slot.halt('stop', 'stop'); // stop on a stopped server is a no-op
        return null;
      case 'kill':
        await slot.halt('kill', 'kill');
        return null;
      case 'restart':
        await slot.whenInstalled();
        await slot.halt('stop', 'restart');
        return actions.isOpen(action.id) ? slot.start() : null;
      case 'restore':
        return data.backups.restore(slot);
    }
  }

  const backupScheduler = createBackupScheduler({
    scheduled: () => deps.store.backups.scheduled(),
    backUp: (id) => void data.backups.create(id, null, true),
    now: () => deps.clock.now(),
    log,
    everyMs: deps.config.backupScheduleMs,
  });

  return {
    async start() {
      await data.backups.recover();
      await reconciler.start();
      diskWatcher.start();
      backupScheduler.start();
    },
    async close() {
      backupScheduler.stop();
      await diskWatcher.stop();
      await reconciler.close();
    },
    async idle() {
      while (work.size > 0) await Promise.allSettled([...work]);
    },
    measureDisk: () => diskWatcher.measureNow(),
    runBackupSchedules: () => backupScheduler.runDue(),
    create(userId, input, chosen = {}) {
      const server = deps.store.settings.atomically(() => {
        const created = servers.create(userId, { ...input, transport: deps.catalog.get(input.software).transport });
        if (Object.keys(chosen).length > 0) deps.store.settings.choose(created.id, chosen);
        return created;
      });
      // After the caller's transaction: if it rolled back, there is no row and nothing to install.
      track(new Promise<void>((resolve) => setImmediate(() => resolve(servers.find(server.id) ? install(server.id) : undefined))));
      return server;
    },
    install,
    update(userId, serverId, patch) {
      const server = servers.update(userId, serverId, patch);
      if (!server) throw new AppError('server_not_found', `There is no server ${serverId}.`);
      return server;
    },
    remove,
    requestAction,
    getAction(serverId, actionId) {
      const action = actions.get(serverId, actionId);
      if (!action) throw new AppError('action_not_found', `No action ${actionId} on server ${serverId}.`);
      return action;
    },
    listActions: (serverId, opts) => actions.page(serverId, opts),
    crashes(serverId, limit = 20) {
      supervisors.of(serverId); // server_not_found for an id with no row, like every other read
      return crashes.list(serverId, limit);
    },
    state: (serverId) => supervisors.of(serverId).state,
    sendCommand(serverId, text, sender) {
      const slot = supervisors.of(serverId);
      const game = slot.running('commands need it running');
      // The spec refuses these before a handler runs; checked again for the runtime's other callers.
      if (!isCommandLine(text)) {
        const detail = 'must be one non-empty line of text, without control characters';
        throw new AppError('validation_failed', `A command ${detail}.`, [{ pointer: '/command', detail }]);
      }
      if (isStopCommand(game.def, text)) {
        // The game would exit on it as on a crash (and be restarted): it is this user's stop action instead, so
        // desired state becomes `stopped` with the action and the exit is expected. The action sends the stop.
        requestAction(serverId, sender.userId, 'stop'); // action_conflict while another action is open
        return slot.console.push('input', text, sender.tokenId);
      }
      const line = slot.console.push('input', text, sender.tokenId);
      game.send(text);
      return line;
    },
    players: async (serverId) => supervisors.of(serverId).running('players are known only while it runs').players(now()),
    console: {
      recent: (serverId, limit = 100) => supervisors.of(serverId).console.recent(limit),
      subscribe: (serverId, fn, opts = {}) => supervisors.of(serverId).console.subscribe(fn, opts.afterSeq),
      holdsAllAfter: (serverId, afterSeq) => supervisors.of(serverId).console.holdsAllAfter(afterSeq),
    },
    data,
    live: () => supervisors.all().flatMap((s) => s.live ?? []),
    on: (event, fn) => void events.on(event, fn),
    off: (event, fn) => void events.off(event, fn),
  };
}
