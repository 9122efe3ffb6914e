import type { Logger } from '../../log';
import type { ActionsRepo } from '../../store/actions-repo';
import type { ProcessesRepo } from '../../store/processes-repo';
import type { ServersRepo } from '../../store/servers-repo';
import { adoptAtBoot, reconcileStart, reconcileStop, resetAtBoot, shutdown } from '../server/commands';
import type { ServerDoor } from '../server/door';
import type { Doors } from '../server/doors';
import type { Environment, GameProcess, LeftoverProcess } from '../host/environment';
import type { Lifecycle } from '../services/lifecycle';
import type { Moves } from '../services/moves';
import type { RuntimeConfig } from '../server/types';

export interface ReconcilerDeps {
  servers: Pick<ServersRepo, 'notStopped' | 'unsettled' | 'idsInState'>;
  actions: Pick<ActionsRepo, 'allOpen' | 'finish'>;
  processes: ProcessesRepo;
  environment: Environment;
  doors: Doors;
  /** Installs and removals a previous life left unfinished run again. */
  lifecycle: Pick<Lifecycle, 'install' | 'resumeRemoval'>;
  config: Pick<RuntimeConfig, 'reconcileMs' | 'memoryCheckMs'>;
  log: Logger;
  /** Moves between nodes (moves.ts), handed to their doors before each pass decides anything; none without nodes. */
  moves?: Pick<Moves, 'poll'>;
}

/**
 * Fails what a previous life left open: its actions cannot finish, and its processes are killed, except those
 * of servers it left `running` that the environment can adopt (Environment.adopt: containers). Resolves with
 * the adopted ones by server id.
 */
async function cleanUpPreviousLife(deps: ReconcilerDeps): Promise<Map<string, GameProcess>> {
  for (const a of deps.actions.allOpen()) {
    deps.actions.finish(a.id, { code: 'service_unavailable', detail: 'The service restarted before this action finished; request it again.' });
  }
  const adopted = new Map<string, GameProcess>();
  // A server left `unreachable` may still run on its node: adopted like a running one where the node answers.
  const wasRunning = new Set([...deps.servers.idsInState('running'), ...deps.servers.idsInState('unreachable')]);
  for (const p of deps.processes.all()) {
    const proc = wasRunning.has(p.serverId) ? await adoptOne(deps, p) : null;
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

async function adoptOne(deps: Pick<ReconcilerDeps, 'environment' | 'log'>, p: LeftoverProcess): Promise<GameProcess | null> {
  try {
    return (await deps.environment.adopt?.(p)) ?? null;
  } catch (err) {
    deps.log.warn('could not adopt a game a previous service life left; it is removed', { serverId: p.serverId, error: String(err) });
    return null;
  }
}

/**
 * Service boot up to the loops: cleans up the previous life, resets transient states, resumes installs, deletions
 * and crash backoffs. A stopped server needs none of this, and gets no door until something asks for it.
 */
async function resumeAtBoot(deps: ReconcilerDeps): Promise<void> {
  const adopted = await cleanUpPreviousLife(deps);
  for (const server of deps.servers.notStopped()) {
    const door = deps.doors.forServer(server);
    const proc = adopted.get(server.id);
    if (proc && adoptInto(deps, door, proc)) continue;
    const nodeAway = deps.environment.reachable?.(server.id) === false; // node-loss.ts made it `unreachable`
    if (['starting', 'running', 'stopping', 'unreachable'].includes(server.state) && !nodeAway) {
      void door.submit(resetAtBoot);
    } else if (server.state === 'installing') {
      void deps.lifecycle.install(server.id);
    } else if (server.state === 'crashed') {
      door.restartIfWanted();
    }
  }
  for (const id of deps.servers.idsInState('deleting')) void deps.lifecycle.resumeRemoval(id);
}

/** Hands an adopted game to its server; a server that can no longer launch (its plan is gone) has it killed. */
function adoptInto(deps: Pick<ReconcilerDeps, 'log'>, door: ServerDoor, proc: GameProcess): boolean {
  try {
    void door.submit(adoptAtBoot(proc));
    deps.log.info('adopted a game a previous service life left running', { serverId: door.id, pid: proc.pid });
    return true;
  } catch (err) {
    deps.log.warn('an adopted game cannot be supervised; it is killed', { serverId: door.id, error: String(err) });
    void proc.kill();
    return false;
  }
}

/**
 * Makes actual follow desired for servers whose door is idle (no command waits or runs, no crash restart is
 * scheduled): one indexed query for the servers whose observed state is off their desired one (a start or stop
 * a previous life or a crash policy left undone), then a command on each one's door. First it drops the doors of
 * settled servers (doors.ts dropSettled), so memory follows the servers in play.
 */
function reconcilePass({ doors, servers, moves }: Pick<ReconcilerDeps, 'doors' | 'servers' | 'moves'>): void {
  if (doors.isClosing()) return;
  doors.dropSettled();
  moves?.poll(); // a server being moved is held by its move, not started where it was
  for (const server of servers.unsettled()) {
    const door = doors.forServer(server);
    if (!door.idle) continue;
    if (server.desired_state === 'running' && door.state === 'stopped') void door.submit(reconcileStart);
    if (server.desired_state === 'stopped' && door.state === 'running') void door.submit(reconcileStop);
  }
}

/**
 * The runtime's own loops: boot (adopt or clean up what a previous life left, even after kill -9), the reconcile
 * loop (actual state follows desired state), the RSS watchdog, and graceful shutdown. Each acts on a server through
 * its door. Each pass reads only the servers it may act on, through an index (docs/architecture.md "Reconcile"):
 * a stopped server meant to be stopped costs a pass nothing, however many there are.
 */
export function createReconciler(deps: ReconcilerDeps) {
  const { doors, config } = deps;
  /** The loops' timers: the one piece of state the reconciler keeps, set by start and cleared by close. */
  const timers: NodeJS.Timeout[] = [];
  const reconcile = (): void => reconcilePass(deps);

  /** Memory and player polls of the live processes; no database read. */
  function watchdog(): void {
    for (const door of doors.all()) door.watchdog();
  }

  /** Service boot (resumeAtBoot), then the loops; the first pass starts every server whose desired state is running. */
  async function start(): Promise<void> {
    await resumeAtBoot(deps);
    timers.push(setInterval(reconcile, config.reconcileMs), setInterval(watchdog, config.memoryCheckMs));
    reconcile();
  }

  /**
   * Graceful shutdown: stops the loops, fails open actions, stops every game process with its stop command
   * (desired_state untouched, so the next boot starts them again); resolves when all have exited. A running game
   * the environment can adopt again (a container) is let go instead, still running, for the next boot to adopt.
   */
  async function close(): Promise<void> {
    doors.markClosing();
    for (const t of timers) clearInterval(t);
    for (const a of deps.actions.allOpen()) {
      deps.actions.finish(a.id, { code: 'service_unavailable', detail: 'The service shut down before this action finished; request it again.' });
    }
    await Promise.all(doors.all().map((door) => door.submit(shutdown))); // a container keeps running, to be adopted
    await deps.environment.close();
  }

  return { start, close, reconcile };
}

export type Reconciler = ReturnType<typeof createReconciler>;
