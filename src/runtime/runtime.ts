import { EventEmitter } from 'node:events';
import { AppError } from '../errors';
import type { Clock } from '../clock';
import type { Logger } from '../log';
import type { Plan } from '../catalog/plans';
import type { Action, ActionType, Failure } from '../store/actions-repo';
import type { Crash } from '../store/crashes-repo';
import type { NewServer, Server } from '../store/servers-repo';
import type { Store } from '../store';
import type { ConsoleLine, ConsoleListener } from './console-buffer';
import { isCommandLine } from './console-text';
import { createCrashPolicy } from './crash-policy';
import { diskOverPlan } from './disk-usage';
import { createDiskWatcher } from './disk-watcher';
import type { Environment } from './environment';
import { UNREACHABLE } from './game';
import type { Players } from './probes';
import { createNodeLoss } from './node-loss';
import { createReconciler } from './reconcile';
import type { ServerSupervisor } from './server-supervisor';
import { isStopCommand, type SoftwareCatalog } from './software-catalog';
import type { ServerState } from './states';
import { createServerData, type ServerData } from './server-data';
import type { SettingValues } from './settings';
import { createSupervisors } from './supervisors';
import type { CommandSender, LiveServer, RuntimeConfig, RuntimeEvents } from './types';

export { runtimeConfigDefaults } from './types';
export type { CommandSender, LiveServer, RuntimeConfig, RuntimeEvents, StateChange } from './types';

export interface RuntimeDeps {
  store: Pick<Store, 'servers' | 'actions' | 'crashes' | 'processes' | 'settings' | 'playerLists' | 'backups'>;
  clock: Clock;
  environment: Environment;
  catalog: SoftwareCatalog;
  config: RuntimeConfig;
  plans: readonly Plan[];
  log: Logger;
}

/**
 * The one owner of a server's life on this host, from create to removal (docs/architecture.md). Handlers call
 * these methods and translate the result; every method that takes a server id expects the caller to have checked
 * that the server is the caller's (another user's answers server_not_found at the HTTP layer).
 */
export interface Runtime {
  /** Boot: cleans up after a previous life, resumes installs, deletions and crash backoffs, starts the loops. */
  start(): Promise<void>;
  /** Graceful shutdown: fails open actions, stops every game (a container: lets it go, to adopt), resolves after. */
  close(): Promise<void>;
  /** Resolves once no install, power action, removal or disk-quota stop that began earlier is still under way. */
  idle(): Promise<void>;
  /**
   * Measures every server's folder now, or right after the pass under way (the loop runs one every diskCheckMs),
   * and acts on it: the near-quota console line, the stop of a server over its plan's disk. Resolves when the
   * measurements are recorded (a stop it began is tracked by idle()); does nothing after close().
   */
  measureDisk(): Promise<void>;
  /**
   * Inserts a server in state `installing` with its address allocated, and starts its install once the caller's
   * transaction (if any) has returned. Synchronous, so it can run inside IdempotencyRepo.run. quota_exceeded past
   * the owner's servers or memory quota (docs/conventions.md "Quotas"). `settings` (checked by settings.checkNew)
   * are stored in the same transaction.
   */
  create(userId: string, input: NewServer, settings?: SettingValues): Server;
  /** Prepares the server's folder; resolves when done (a failure is recorded as a crash, never rejected). */
  install(serverId: string): Promise<void>;
  /**
   * Renames and/or changes the plan (a plan change needs the server stopped or crashed: invalid_state; a larger plan
   * past the owner's memory quota is quota_exceeded).
   */
  update(userId: string, serverId: string, patch: { name?: string; plan?: string }): Server;
  /**
   * Starts a removal: open actions fail (action_cancelled), the state becomes `deleting` at once; then the process
   * is killed, the folder deleted, `removed` published and the row deleted. The promise resolves when the row
   * is gone; a failure is logged and the server stays `deleting` until the next boot retries. On a server already
   * `deleting` it starts nothing (it resolves with the removal under way, if any).
   */
  remove(serverId: string): Promise<void>;
  /**
   * Records a power action and returns it at once as `pending`; it runs in the background and its row says how
   * it ended. One action at a time per server: another while one is open is action_conflict, except kill, which
   * overtakes it (the overtaken action fails with action_cancelled). invalid_state while the server is deleted;
   * quota_exceeded for a start or restart past the owner's running quota (docs/conventions.md "Quotas").
   * disk_quota_exceeded for a start or restart while its last disk measurement is over its plan's.
   */
  requestAction(serverId: string, userId: string, type: ActionType, backupId?: string): Action;
  /** action_not_found unless this server has that action. */
  getAction(serverId: string, actionId: string): Action;
  /** Newest first; `startingAfter` is the id of the last action of the previous page. */
  listActions(serverId: string, opts: { limit: number; startingAfter?: string }): { data: Action[]; has_more: boolean };
  /** Newest first. */
  crashes(serverId: string, limit?: number): Crash[];
  /** The observed state as the runtime holds it (also written to servers.state). */
  state(serverId: string): ServerState;
  /**
   * Writes one console line to the game; invalid_state unless it is running, validation_failed unless it is one
   * line of text. Echoed as an `input` line that records the sender's token. The software's stop command is a
   * stop action by the sender instead (refused like one: action_conflict while another action is open).
   */
  sendCommand(serverId: string, text: string, sender: CommandSender): ConsoleLine;
  /** Who is online, from the game itself; invalid_state unless it is running or if the game cannot tell. */
  players(serverId: string): Promise<Players>;
  console: {
    /** The newest `limit` lines (default 100), oldest first. */
    recent(serverId: string, limit?: number): ConsoleLine[];
    /** Live lines; with afterSeq, first the buffered lines after it. Returns the unsubscribe function. */
    subscribe(serverId: string, fn: ConsoleListener, opts?: { afterSeq?: number }): () => void;
  };
  /** The servers' settings, player lists and backups (server-data.ts). */
  data: ServerData;
  /** Every running game, for the telemetry sampler. */
  live(): LiveServer[];
  on<E extends keyof RuntimeEvents>(event: E, fn: (e: RuntimeEvents[E]) => void): void;
  off<E extends keyof RuntimeEvents>(event: E, fn: (e: RuntimeEvents[E]) => void): void;
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
    slot.setState('deleting', 'remove');
    const done = track(finishRemoval(slot)).finally(() => removals.delete(slot.id));
    removals.set(slot.id, done);
    return done;
  }

  async function finishRemoval(slot: ServerSupervisor): Promise<void> {
    try {
      await slot.whenInstalled();
      await slot.halt('kill');
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

  function requestAction(serverId: string, userId: string, type: ActionType, backupId?: string): Action {
    if (reconciler.isClosing()) throw new AppError('service_unavailable', 'The service is shutting down; try again shortly.');
    const slot = supervisors.of(serverId);
    if (slot.state === 'deleting') throw new AppError('invalid_state', 'The server is being deleted.');
    if (slot.state === 'unreachable' || environment.reachable?.(serverId) === false) throw new AppError('invalid_state', UNREACHABLE);
    const open = actions.open(serverId);
    data.backups.checkAction(serverId, type, backupId); // a backup under way; a restore's backup
    if (type !== 'kill' && open.length > 0) {
      const o = open[0];
      throw new AppError('action_conflict', `Action ${o.id} (${o.type}) is still ${o.status}; wait for it to finish, or send kill.`);
    }
    const overDisk = type === 'start' || type === 'restart' ? diskOverPlan(servers.find(serverId), deps.plans) : null;
    if (overDisk) throw new AppError(overDisk.code, overDisk.detail);
    const action = actions.create(serverId, userId, type);
    for (const o of open) actions.finish(o.id, { code: 'action_cancelled', detail: `Overtaken by kill ${action.id}.` });
    track(new Promise<void>((resolve) => setImmediate(() => resolve(runAction(slot, action)))));
    return action;
  }

  async function runAction(slot: ServerSupervisor, action: Action): Promise<void> {
    if (!actions.isOpen(action.id)) return; // overtaken by a kill before it started
    actions.markRunning(action.id);
    let failure: Failure | null;
    try {
      failure = await perform(slot, action);
    } catch (err) {
      log.error('power action failed unexpectedly', { actionId: action.id, err: String(err) });
      failure = err instanceof AppError ? { code: err.code, detail: err.detail } : { code: 'internal_error', detail: String(err) };
    }
    actions.finish(action.id, failure); // a no-op if a kill, shutdown or delete completed it first
  }

  async function perform(slot: ServerSupervisor, action: Action): Promise<Failure | null> {
    switch (action.type) {
      case 'start':
        return slot.start();
      case 'stop':
        await slot.whenInstalled();
        await slot.halt('stop'); // stop on a stopped server is a no-op
        return null;
      case 'kill':
        await slot.halt('kill');
        return null;
      case 'restart':
        await slot.whenInstalled();
        await slot.halt('stop');
        return actions.isOpen(action.id) ? slot.start() : null;
      case 'restore':
        return data.backups.restore(slot);
    }
  }

  return {
    async start() {
      await data.backups.recover();
      await reconciler.start();
      diskWatcher.start();
    },
    async close() {
      await diskWatcher.stop();
      await reconciler.close();
    },
    async idle() {
      while (work.size > 0) await Promise.allSettled([...work]);
    },
    measureDisk: () => diskWatcher.measureNow(),
    create(userId, input, chosen = {}) {
      const server = deps.store.settings.atomically(() => {
        const created = servers.create(userId, input);
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
    },
    data,
    live: () => supervisors.all().flatMap((s) => s.live ?? []),
    on: (event, fn) => void events.on(event, fn),
    off: (event, fn) => void events.off(event, fn),
  };
}
