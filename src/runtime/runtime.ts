import { EventEmitter } from 'node:events';
import { AppError } from '../errors';
import type { Clock } from '../clock';
import type { Db } from '../store/db';
import type { ConsoleLine, ConsoleListener } from './console-buffer';
import type { Environment } from './environment';
import { pingPlayers, type PlayersInfo } from './probes';
import { createRuntimeStore, type Action, type ActionType, type Crash, type ServerRecord } from './runtime-store';
import { ServerSupervisor } from './server-supervisor';
import type { SoftwareCatalog } from './software-catalog';
import type { ServerState } from './states';
import type { Failure, LiveServer, Plan, RuntimeConfig, RuntimeLog, StateChange } from './types';

export { runtimeConfigDefaults } from './types';
export type { Failure, LiveServer, Plan, RuntimeConfig, RuntimeLog, StateChange } from './types';

export interface RuntimeDeps {
  db: Db;
  clock: Clock;
  environment: Environment;
  catalog: SoftwareCatalog;
  config: RuntimeConfig;
  /** plan id → resources; the plans of the servers table. */
  plans: Record<string, Plan>;
  log: RuntimeLog;
}

export type Runtime = ReturnType<typeof createRuntime>;

const PING_EVERY_MS = 5_000;

/**
 * The supervisor of this host's game servers: power actions with a recorded outcome, desired-state reconcile,
 * crash policy, memory watchdog, console and player probes. See states.ts for the state machine.
 */
export function createRuntime(deps: RuntimeDeps) {
  const { environment, catalog, config, log } = deps;
  const store = createRuntimeStore(deps.db, () => deps.clock.now());
  const events = new EventEmitter();
  const slots = new Map<string, ServerSupervisor>();
  const lastPing = new Map<string, number>();
  const timers: NodeJS.Timeout[] = [];
  let closing = false;
  const ctx = {
    store, environment, catalog, plans: deps.plans, log, config, now: () => deps.clock.now(),
    isClosing: () => closing,
    emitState: (e: StateChange) => events.emit('state', e),
  };

  function slotFor(server: ServerRecord): ServerSupervisor {
    let slot = slots.get(server.id);
    if (!slot) slots.set(server.id, (slot = new ServerSupervisor(server.id, server.state, ctx)));
    return slot;
  }

  function requireSlot(serverId: string): ServerSupervisor {
    const existing = slots.get(serverId);
    if (existing) return existing;
    const server = store.server(serverId);
    if (!server) throw new AppError('server_not_found', `No server ${serverId}.`);
    return slotFor(server);
  }

  // --- install / remove ----------------------------------------------------------------------------------------

  /**
   * Creates the server folder (world, logs, settings.json) and moves `installing → stopped`. Never rejects for an
   * install failure: that is recorded as a crash (reason install_failed) and the state becomes `crashed`; a
   * start action retries the install. Calling it again while it runs joins the running install.
   */
  function install(serverId: string): Promise<void> {
    const slot = requireSlot(serverId);
    if (!slot.installing && (slot.state === 'installing' || slot.installFailed)) {
      slot.installing = doInstall(slot).finally(() => (slot.installing = null));
    }
    return slot.installing ?? Promise.resolve();
  }

  async function doInstall(slot: ServerSupervisor): Promise<void> {
    try {
      const server = store.server(slot.id);
      if (!server) throw new AppError('server_not_found', `No server ${slot.id}.`);
      const def = catalog.get(server.software);
      if (!def.gameVersions.includes(server.game_version)) {
        throw new AppError('unknown_version', `${def.id} does not offer game version ${server.game_version}.`);
      }
      const settings = JSON.stringify(def.settings ?? {}, null, 2) + '\n';
      await environment.install(slot.dir, ['world', 'logs'], { 'settings.json': settings });
      slot.installFailed = false;
      slot.setState('stopped', slot.state === 'crashed' ? 'cleared' : 'install_succeeded');
    } catch (err) {
      slot.installFailed = true;
      slot.console.push('system', `install failed: ${err instanceof AppError ? err.detail : (err as Error).message}`);
      slot.recordCrash('install_failed', { code: null, signal: null });
      slot.setState('crashed', 'install_failed');
    }
  }

  /** Kills the process if any, deletes the server folder, resolves when done (the caller then deletes the row). */
  async function remove(serverId: string): Promise<void> {
    const slot = requireSlot(serverId);
    for (const a of store.openActions(serverId)) {
      store.finishAction(a.id, { code: 'action_cancelled', detail: 'The server was deleted before this action finished.' });
    }
    slot.setState('deleting', 'remove');
    await slot.installing;
    await slot.halt('kill');
    await slot.console.close();
    await environment.uninstall(slot.dir);
    slots.delete(serverId);
  }

  // --- power actions -------------------------------------------------------------------------------------------

  /**
   * Records a power action and returns it at once as `pending`; it runs in the background and its row says how
   * it ended. One action at a time per server (Wings' power lock): a second one while one is pending or running
   * is refused with action_conflict, except kill, which overtakes it (the overtaken action fails with
   * action_cancelled and the process is SIGKILLed now). start/restart set desired_state running, stop/kill stopped.
   */
  function requestAction(serverId: string, userId: string, type: ActionType): Action {
    if (closing) throw new AppError('service_unavailable', 'The service is shutting down; try again shortly.');
    const slot = requireSlot(serverId);
    if (slot.state === 'deleting') throw new AppError('invalid_state', 'The server is being deleted.');
    const open = store.openActions(serverId);
    if (type !== 'kill' && open.length > 0) {
      const o = open[0];
      throw new AppError('action_conflict', `Action ${o.id} (${o.type}) is still ${o.status}; wait for it to finish, or send kill.`);
    }
    const action = store.createAction(serverId, userId, type, type === 'start' || type === 'restart' ? 'running' : 'stopped');
    for (const o of open) store.finishAction(o.id, { code: 'action_cancelled', detail: `Overtaken by kill ${action.id}.` });
    setImmediate(() => void runAction(slot, action));
    return action;
  }

  async function runAction(slot: ServerSupervisor, action: Action): Promise<void> {
    if (!isOpen(action.id)) return; // overtaken by a kill before it started
    store.markRunning(action.id);
    let failure: Failure | null;
    try {
      failure = await perform(slot, action);
    } catch (err) {
      log.error('power action failed unexpectedly', { actionId: action.id, err: String(err) });
      failure = err instanceof AppError ? { code: err.code, detail: err.detail } : { code: 'internal_error', detail: String(err) };
    }
    store.finishAction(action.id, failure); // a no-op if a kill, shutdown or delete completed it first
  }

  async function perform(slot: ServerSupervisor, action: Action): Promise<Failure | null> {
    switch (action.type) {
      case 'start':
        return startNow(slot);
      case 'stop':
        await slot.installing;
        await slot.halt('stop'); // stop on a stopped server is a no-op
        return null;
      case 'kill':
        await slot.halt('kill');
        return null;
      case 'restart':
        await slot.installing;
        await slot.halt('stop');
        return isOpen(action.id) ? startNow(slot) : null;
    }
  }

  /** A user start: waits for the install, cancels any backoff (a user act resets the crash count), launches. */
  async function startNow(slot: ServerSupervisor): Promise<Failure | null> {
    if (slot.state === 'installing' || slot.installFailed) await install(slot.id);
    if (slot.installFailed) return { code: 'start_failed', detail: `The install failed: ${slot.console.lastTexts(1)[0]}` };
    slot.cancelRestart();
    if (slot.state === 'stopping') await slot.waitExit();
    return slot.launch('start');
  }

  function isOpen(actionId: string): boolean {
    const status = store.actionStatus(actionId);
    return status === 'pending' || status === 'running';
  }

  function getAction(serverId: string, actionId: string): Action {
    const action = store.action(serverId, actionId);
    if (!action) throw new AppError('action_not_found', `No action ${actionId} on server ${serverId}.`);
    return action;
  }

  /** Newest first; `startingAfter` is the id of the last action of the previous page. */
  function listActions(serverId: string, opts: { limit?: number; startingAfter?: string } = {}): Action[] {
    // No upper clamp: the API validates limit (1–100) and asks for one more to learn whether a page follows.
    return store.listActions(serverId, Math.max(opts.limit ?? 20, 1), opts.startingAfter);
  }

  // --- boot, loops, shutdown -----------------------------------------------------------------------------------

  /**
   * Service boot: fails actions a previous life left open, kills its leftover game processes (verified through
   * /proc, see Environment.killLeftover), resets transient states, resumes installs and crash backoffs, then
   * starts the loops; the first reconcile starts every server whose desired state is running.
   */
  async function start(): Promise<void> {
    for (const a of store.allOpenActions()) {
      store.finishAction(a.id, { code: 'service_unavailable', detail: 'The service restarted before this action finished; request it again.' });
    }
    for (const p of store.processes()) {
      const killed = await environment.killLeftover({ serverId: p.server_id, pid: p.pid, cmdline: p.cmdline });
      if (killed) log.warn('killed a game process left by a previous service life', { serverId: p.server_id, pid: p.pid });
      store.forgetProcess(p.server_id, p.pid);
    }
    for (const server of store.servers()) {
      const slot = slotFor(server);
      if (server.state === 'starting' || server.state === 'running' || server.state === 'stopping') {
        slot.setState('stopped', 'service_boot');
      } else if (server.state === 'installing') {
        void install(server.id);
      } else if (server.state === 'crashed') {
        slot.afterCrash();
      }
    }
    timers.push(setInterval(reconcile, config.reconcileMs), setInterval(watchResources, config.memoryCheckMs));
    reconcile();
  }

  /** Makes actual follow desired for servers no action is working on. */
  function reconcile(): void {
    if (closing) return;
    for (const server of store.servers()) {
      if (server.state === 'deleting') continue;
      const slot = slotFor(server);
      if (slot.busy || store.openActions(server.id).length > 0) continue;
      if (server.desired_state === 'running' && slot.state === 'stopped') void slot.launch('start');
    }
    for (const slot of slots.values()) {
      const desired = store.server(slot.id)?.desired_state;
      if (desired === 'stopped' && slot.state === 'running' && store.openActions(slot.id).length === 0) void slot.halt('stop');
    }
  }

  /** RSS watchdog (the heap flag alone misses native memory) and, for ping-probed software, a player poll. */
  function watchResources(): void {
    for (const slot of slots.values()) {
      const rss = slot.proc?.rssBytes();
      if (rss && rss > slot.memoryLimitBytes) slot.killForMemory(rss, slot.memoryLimitBytes);
      if (slot.state === 'running' && deps.clock.now() - (lastPing.get(slot.id) ?? 0) > PING_EVERY_MS) {
        const server = store.server(slot.id);
        if (server && catalog.get(server.software).players === 'minecraft-ping') {
          lastPing.set(slot.id, deps.clock.now());
          probePlayers(server).then((p) => (slot.players = p), () => undefined);
        }
      }
    }
  }

  function probePlayers(server: ServerRecord): Promise<PlayersInfo> {
    return pingPlayers(server.host ?? '0.0.0.0', server.port ?? 0);
  }

  /**
   * Graceful shutdown: stops every game process with its stop command (desired_state untouched, so the next boot
   * starts them again), stops the loops, resolves when all processes have exited.
   */
  async function close(): Promise<void> {
    closing = true;
    for (const t of timers) clearInterval(t);
    for (const a of store.allOpenActions()) {
      store.finishAction(a.id, { code: 'service_unavailable', detail: 'The service shut down before this action finished; request it again.' });
    }
    const all = [...slots.values()];
    for (const slot of all) slot.cancelRestart();
    await Promise.all(all.map(async (slot) => {
      await slot.installing;
      if (slot.hasProcess) await slot.halt('stop');
      await slot.console.close();
    }));
  }

  // --- console, players, telemetry -----------------------------------------------------------------------------

  function sendCommand(serverId: string, text: string): void {
    const slot = requireSlot(serverId);
    if (slot.state !== 'running' || !slot.proc) throw new AppError('invalid_state', `The server is ${slot.state}; commands need it running.`);
    if (/[\r\n]/.test(text) || text.trim() === '') {
      throw new AppError('validation_failed', 'A command is one non-empty line.', [{ pointer: '/command', detail: 'must be one non-empty line' }]);
    }
    slot.console.push('input', text);
    try {
      slot.proc.sendCommand(text);
    } catch {
      throw new AppError('invalid_state', 'The game process is exiting; its console is closed.');
    }
  }

  /** Who is online, from the game itself. Throws invalid_state unless the server is running. */
  async function players(serverId: string): Promise<PlayersInfo> {
    const slot = requireSlot(serverId);
    const server = store.server(serverId);
    if (!server || slot.state !== 'running') throw new AppError('invalid_state', `The server is ${slot.state}; players are known only while it runs.`);
    const probe = catalog.get(server.software).players;
    if (probe === 'minecraft-ping') return (slot.players = await probePlayers(server));
    if (probe === 'none') throw new AppError('invalid_state', `${server.software} does not report its players.`);
    return slot.players ?? { online: 0, max: deps.plans[server.plan]?.max_players ?? 0, players: [] };
  }

  function live(): LiveServer[] {
    return [...slots.values()]
      .filter((s) => s.state === 'running' && s.proc)
      .map((s) => ({
        serverId: s.id, pid: s.proc!.pid, tps: s.tps, players_online: s.players?.online ?? null, players_max: s.players?.max ?? null,
      }));
  }

  return {
    start, close, install, remove, requestAction, getAction, listActions, sendCommand, players, live,
    /** Newest first. */
    crashes: (serverId: string, limit = 20): Crash[] => (requireSlot(serverId), store.crashes(serverId, limit)),
    /** The observed state as the runtime holds it (also written to servers.state). */
    state: (serverId: string): ServerState => requireSlot(serverId).state,
    console: {
      /** The newest `limit` lines (default 100), oldest first. */
      recent: (serverId: string, limit = 100): ConsoleLine[] => requireSlot(serverId).console.recent(limit),
      /** Live lines; with afterSeq, first the buffered lines after it. Returns the unsubscribe function. */
      subscribe: (serverId: string, fn: ConsoleListener, opts: { afterSeq?: number } = {}): (() => void) =>
        requireSlot(serverId).console.subscribe(fn, opts.afterSeq),
    },
    on: (event: 'state', fn: (e: StateChange) => void) => void events.on(event, fn),
    off: (event: 'state', fn: (e: StateChange) => void) => void events.off(event, fn),
  };
}
