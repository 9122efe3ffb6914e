import type { Logger } from '../log';
import type { ActionsRepo } from '../store/actions-repo';
import type { ProcessesRepo } from '../store/processes-repo';
import type { ServersRepo } from '../store/servers-repo';
import type { Environment, GameProcess, LeftoverProcess } from './environment';
import type { ServerSupervisor } from './server-supervisor';
import type { Supervisors } from './supervisors';
import type { RuntimeConfig } from './types';

export interface ReconcilerDeps {
  servers: Pick<ServersRepo, 'allWithOpenActions' | 'idsInState'>;
  actions: Pick<ActionsRepo, 'allOpen' | 'finish'>;
  processes: ProcessesRepo;
  environment: Environment;
  supervisors: Supervisors;
  config: Pick<RuntimeConfig, 'reconcileMs' | 'memoryCheckMs'>;
  log: Logger;
  /** Starts (and tracks) an install, or the rest of a removal, as the runtime does for a request. */
  install(serverId: string): void;
  resumeRemoval(serverId: string): void;
  /** True while something else holds the server (a backup being made): the loop leaves it alone. */
  held(serverId: string): boolean;
}

/**
 * The runtime's own loops: boot (adopt or clean up what a previous life left, even after kill -9), the reconcile
 * loop (actual state follows desired state), the RSS watchdog, and graceful shutdown. Each pass reads the
 * database once: one query for every server with its open-action count (docs/architecture.md "Reconcile").
 */
export function createReconciler(deps: ReconcilerDeps) {
  const { supervisors, config } = deps;
  const timers: NodeJS.Timeout[] = [];
  let closing = false;

  /**
   * Fails what a previous life left open: its actions cannot finish, and its processes are killed, except those
   * of servers it left `running` that the environment can adopt (Environment.adopt: containers). Resolves with
   * the adopted ones by server id.
   */
  async function cleanUpPreviousLife(): Promise<Map<string, GameProcess>> {
    for (const a of deps.actions.allOpen()) {
      deps.actions.finish(a.id, { code: 'service_unavailable', detail: 'The service restarted before this action finished; request it again.' });
    }
    const adopted = new Map<string, GameProcess>();
    // A server left `unreachable` may still run on its node: adopted like a running one where the node answers.
    const wasRunning = new Set([...deps.servers.idsInState('running'), ...deps.servers.idsInState('unreachable')]);
    for (const p of deps.processes.all()) {
      const proc = wasRunning.has(p.serverId) ? await adoptOne(p) : null;
      if (proc) {
        adopted.set(p.serverId, proc);
        continue;
      }
      // Verified through /proc first (Environment.killLeftover), so a reused pid is never touched.
      const killed = await deps.environment.killLeftover(p);
      if (killed) deps.log.warn('killed a game process left by a previous service life', { serverId: p.serverId, pid: p.pid });
      deps.processes.forget(p.serverId, p.pid);
    }
    await deps.environment.start(); // what no record names: a previous life's cgroups and anything left in them
    return adopted;
  }

  async function adoptOne(p: LeftoverProcess): Promise<GameProcess | null> {
    try {
      return (await deps.environment.adopt?.(p)) ?? null;
    } catch (err) {
      deps.log.warn('could not adopt a game a previous service life left; it is removed', { serverId: p.serverId, error: String(err) });
      return null;
    }
  }

  /**
   * Service boot: cleans up the previous life, resets transient states, resumes installs, deletions and crash
   * backoffs, then starts the loops; the first pass starts every server whose desired state is running.
   */
  async function start(): Promise<void> {
    const adopted = await cleanUpPreviousLife();
    for (const server of deps.servers.allWithOpenActions()) {
      const slot = supervisors.forServer(server);
      const proc = adopted.get(server.id);
      if (proc && adoptInto(slot, proc)) {
        slot.adoptedAtBoot();
        continue;
      }
      const nodeAway = deps.environment.reachable?.(server.id) === false; // node-loss.ts made it `unreachable`
      if (['starting', 'running', 'stopping', 'unreachable'].includes(server.state) && !nodeAway) {
        slot.resetAtBoot();
      } else if (server.state === 'installing') {
        deps.install(server.id);
      } else if (server.state === 'crashed') {
        slot.restartIfWanted();
      }
    }
    for (const id of deps.servers.idsInState('deleting')) deps.resumeRemoval(id);
    timers.push(setInterval(reconcile, config.reconcileMs), setInterval(watchdog, config.memoryCheckMs));
    reconcile();
  }

  /** Hands an adopted game to its supervisor; a server that can no longer launch (its plan is gone) has it killed. */
  function adoptInto(slot: ServerSupervisor, proc: GameProcess): boolean {
    try {
      slot.adopt(proc);
      slot.console.push('system', `adopted process ${proc.pid}, left running by a previous service life`);
      deps.log.info('adopted a game a previous service life left running', { serverId: slot.id, pid: proc.pid });
      return true;
    } catch (err) {
      deps.log.warn('an adopted game cannot be supervised; it is killed', { serverId: slot.id, error: String(err) });
      void proc.kill();
      return false;
    }
  }

  /** Makes actual follow desired for servers no action is working on: one query, then in-memory decisions. */
  function reconcile(): void {
    if (closing) return;
    for (const server of deps.servers.allWithOpenActions()) {
      if (server.state === 'deleting' || server.open_actions > 0 || deps.held(server.id)) continue; // a backup holds it
      const slot = supervisors.forServer(server);
      if (server.desired_state === 'running' && slot.state === 'stopped' && !slot.busy) void slot.launch('start');
      if (server.desired_state === 'stopped' && slot.state === 'running') void slot.halt('stop', 'stop');
    }
  }

  /** Memory and player polls of the live processes; no database read. */
  function watchdog(): void {
    for (const slot of supervisors.all()) slot.watchdog();
  }

  /**
   * Graceful shutdown: stops the loops, fails open actions, stops every game process with its stop command
   * (desired_state untouched, so the next boot starts them again); resolves when all have exited. A running game
   * the environment can adopt again (a container) is let go instead, still running, for the next boot to adopt.
   */
  async function close(): Promise<void> {
    closing = true;
    for (const t of timers) clearInterval(t);
    for (const a of deps.actions.allOpen()) {
      deps.actions.finish(a.id, { code: 'service_unavailable', detail: 'The service shut down before this action finished; request it again.' });
    }
    const all = supervisors.all();
    for (const slot of all) slot.cancelRestart();
    await Promise.all(
      all.map(async (slot) => {
        await slot.whenInstalled();
        if (slot.hasProcess && slot.detach() === null) await slot.halt('stop', 'shutdown'); // a container keeps running, to be adopted
        await slot.console.close();
      }),
    );
    await deps.environment.close();
  }

  return { start, close, reconcile, isClosing: () => closing };
}

export type Reconciler = ReturnType<typeof createReconciler>;
