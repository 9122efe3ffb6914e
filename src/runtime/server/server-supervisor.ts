import { GAME_ACTOR as GAME, type Actor, type Actors } from '../../actors';
import { AppError, invalidState } from '../../errors';
import type { Logger } from '../../log';
import type { Plan } from '../../catalog/plans';
import type { Failure } from '../../store/actions-repo';
import type { CrashReason } from '../../store/crashes-repo';
import type { ProcessesRepo } from '../../store/processes-repo';
import type { ServersRepo } from '../../store/servers-repo';
import type { CrashPolicy } from './crash-policy';
import type { Environment, ExitInfo, GameProcess, LaunchSpec } from '../host/environment';
import type { ServerStorage } from '../host/storage';
import { launchGate } from './launch-gate';
import { describeExit, Game, installFiles, launchAt, planLaunch, prepareLaunch, type LaunchPlan, type LaunchSettings, type Player, type PlayerLeftReason, type PlayersChanged, type StopCause } from './game';
import type { SoftwareCatalog } from '../software/software-catalog';
import { ServerStateMachine } from './server-state';
import type { ConsoleBuffer } from './console-buffer';
import { canTransition, type ServerState } from './states';
import type { LiveServer, RuntimeConfig, StateChange } from './types';

export interface SupervisorDeps {
  servers: Pick<ServersRepo, 'find' | 'setState' | 'markDeleting'>;
  processes: ProcessesRepo;
  crashPolicy: CrashPolicy;
  environment: Environment;
  storage: ServerStorage;
  catalog: SoftwareCatalog;
  plans: readonly Plan[];
  log: Logger;
  config: RuntimeConfig;
  now: () => number;
  isClosing: () => boolean;
  emitState: (e: StateChange) => void;
  playersChanged?: (serverId: string, joined: Player[], left: Player[], reason: PlayerLeftReason) => void;
  /** Who the server's events say is online (EventsRepo.onlinePlayers): for a game it did not see report. */
  onlinePlayers?: (serverId: string) => Player[];
  /** The files and arguments a launch takes from the server's settings and player lists (launch-files.ts). */
  settings: LaunchSettings;
  /** After a crash is recorded: its door schedules the crash policy's restart (door.ts restartIfWanted). */
  crashed: () => void;
  /** Whom the work under way acts for: an exit and the players' comings and goings are the game's own. */
  actors: Actors;
}

export const CRASH_LINES = 20;

/**
 * One server's life, from install to removal: its state (ServerStateMachine, the only writer of servers.state), its
 * install, its game process and its exit. Only its door (door.ts) holds it: every command, whoever submits it (power
 * actions, backups, the reconcile loop, the disk watcher, node loss, the removal), reaches it there, one at a time.
 * Alone it only notices an exit (a crash: its door schedules the restart). States: states.ts.
 */
export class ServerSupervisor extends ServerStateMachine {
  private game: Game | null = null;
  private installing: Promise<void> | null = null;
  private installFailed = false;
  private launching: Promise<Failure | null> | null = null;
  private exitHandled: Promise<void> = Promise.resolve();
  private stopCause: StopCause | null = null; // why halt stops the game; null while nobody asked (an exit is a crash)
  private abortLaunch: StopCause | null = null; // a halt came while the launch had no process yet: it gives up
  private crashReason: CrashReason | null = null;
  private stopActor: Actor = GAME; // whom halt acts for; an exit nobody asked for is the game's own (src/actors.ts)
  /** As `by` (who kicked), else whoever halted the game, else the game itself (a crash, players coming and going). */
  private readonly asExit = <T>(fn: () => T, by?: Actor): T => this.deps.actors.run(by ?? (this.stopCause ? this.stopActor : GAME), fn);
  private readonly onPlayers: PlayersChanged = (joined, left, reason, by) => this.asExit(() => this.deps.playersChanged?.(this.id, joined, left, reason), by);

  constructor(id: string, initial: ServerState, private readonly deps: SupervisorDeps, console?: ConsoleBuffer) {
    super(id, initial, deps, console);
  }

  /** True while a process lives or a launch is under way. */
  get hasProcess(): boolean { return this.game !== null || this.launching !== null; }

  /** What the telemetry sampler reads; null unless the game is running. */
  get live(): LiveServer | null { return this.current === 'running' && this.game ? this.game.live(this.id) : null; }

  /**
   * Creates the server folder (world, logs, settings.json), `installing → stopped`. Never rejects: a failure is a
   * crash (install_failed), state `crashed`, retried by the next start. Joins a running install; else a no-op.
   */
  install(): Promise<void> {
    if (!this.installing && (this.current === 'installing' || this.installFailed)) {
      this.installing = this.doInstall().finally(() => (this.installing = null));
    }
    return this.installing ?? Promise.resolve();
  }

  /** Resolves once no install is running (stop, remove and shutdown wait for it before touching the folder). */
  whenInstalled = async (): Promise<void> => { await this.installing; };

  private async doInstall(): Promise<void> {
    try {
      await installFiles(this.deps.servers.find(this.id), this.id, this.deps.catalog, this.deps.storage);
      this.installFailed = false;
      this.setState('stopped', this.current === 'crashed' ? 'cleared' : 'install_succeeded');
    } catch (err) {
      this.installFailed = true;
      this.console.push('system', `install failed: ${err instanceof AppError ? err.detail : (err as Error).message}`);
      this.deps.crashPolicy.record(this.id, 'install_failed', { code: null, signal: null }, this.console.lastTexts(CRASH_LINES));
      this.setState('crashed', 'install_failed');
    }
  }

  /** Its launch at another node's `place`, nothing written (game.ts launchAt; a move's start ahead). */
  launchAt = (place: { host: string; port: number }): LaunchSpec | null => launchAt(this.deps.servers.find(this.id), this.id, this.deps, place);

  /** A user's start: finishes (or retries) the install, waits out a stop, launches. */
  async start(): Promise<Failure | null> {
    if (this.current === 'installing' || this.installFailed) await this.install();
    if (this.installFailed) return { code: 'start_failed', detail: `The install failed: ${this.console.lastTexts(1)[0]}` };
    if (this.current === 'stopping') await this.exitHandled;
    return this.launch('start');
  }

  /**
   * Starts the game and resolves once it is ready (null) or has failed (the reason), each failure also recorded as a
   * crash (`crashed`) unless a stop or kill interrupted the start. A second call joins it: never a second process.
   */
  launch(on: 'start' | 'auto_restart'): Promise<Failure | null> {
    if (this.game && this.current === 'running') return Promise.resolve(null);
    this.launching ??= this.doLaunch(on).finally(() => (this.launching = null));
    return this.launching;
  }

  private async doLaunch(on: 'start' | 'auto_restart'): Promise<Failure | null> {
    const server = this.deps.servers.find(this.id); // read once for the gate and the launch; refused, the state stays
    const refused = launchGate(this.id, this.current, this.deps, { server });
    if (refused) return { code: refused.code, detail: refused.detail };
    if (!canTransition(this.current, 'starting', on)) return { code: 'invalid_state', detail: `The server is ${this.current}; it cannot start now.` };
    this.setState('starting', on);
    this.abortLaunch = null;
    let launch: LaunchPlan;
    try {
      launch = planLaunch(server, this.id, this.deps.catalog, this.deps.plans);
    } catch (err) {
      return this.failStart('spawn_failed', err instanceof AppError ? err.detail : String(err));
    }
    const { address } = launch;
    if (!(await this.deps.environment.isPortFree(address, this.id))) {
      return this.failStart('port_in_use', `Port ${address.port} on ${address.host} is already in use by another process.`);
    }
    if (this.abortLaunch) return this.interrupted(); // eslint-disable-line @typescript-eslint/no-unnecessary-condition -- halt() may set it during the await (TypeScript keeps the narrowing)
    let game: Game;
    try {
      const proc = await this.deps.environment.spawn(await prepareLaunch(launch, this.deps));
      game = this.watch(new Game(proc, launch.def, launch.plan, address, this.console, () => this.current === 'starting', this.onPlayers, [], this.deps.now));
    } catch (err) {
      return this.failStart('spawn_failed', `The game process could not be started: ${(err as Error).message}`);
    }
    if (this.abortLaunch) { // eslint-disable-line @typescript-eslint/no-unnecessary-condition -- halt() may set it during the awaits (TypeScript keeps the narrowing)
      await this.halt('kill', this.abortLaunch);
      return this.interrupted();
    }
    return this.awaitReady(game);
  }

  private async awaitReady(game: Game): Promise<Failure | null> {
    const outcome = await game.waitReady();
    if (outcome === 'ready' && this.current === 'starting') {
      this.setState('running', 'ready');
      return null;
    }
    if (outcome === 'ready') {
      await this.exitHandled; // a stop or kill arrived as it became ready
      return this.interrupted();
    }
    if (outcome === 'timeout') {
      this.crashReason = 'start_timeout';
      this.console.push('system', `not ready within ${game.def.startTimeoutMs} ms; killing it`);
      await game.proc.kill();
    }
    await this.exitHandled;
    if (this.current !== 'crashed') return this.interrupted();
    return game.startFailure(outcome, await game.proc.exited, this.console.lastTexts(5));
  }

  private interrupted(): Failure {
    if (this.current === 'starting') {
      this.setState('stopping', 'stop');
      this.setState('stopped', 'exited');
    }
    return { code: 'action_cancelled', detail: 'The start was interrupted by a stop, kill or shutdown.' };
  }

  /**
   * Takes over a game still running (Environment.adopt: a previous life's, or one whose node returned); the state
   * stays `running`. Its players are those the events say are online, so its next report joins nobody twice.
   */
  adopt(proc: GameProcess): void {
    const launch = planLaunch(this.deps.servers.find(this.id), this.id, this.deps.catalog, this.deps.plans);
    const online = this.deps.onlinePlayers?.(this.id) ?? [];
    this.watch(new Game(proc, launch.def, launch.plan, launch.address, this.console, () => false, this.onPlayers, online, this.deps.now));
  }

  /** Boot: the game of a previous life is gone (no process is left): `stopped`, and its players left with it. */
  override resetAtBoot(): void {
    this.leaveUnseen('shutdown');
    super.resetAtBoot();
  }

  /** A game went away without this supervisor seeing it end: every player the events say was online leaves. */
  private leaveUnseen(reason: PlayerLeftReason): void {
    const online = this.deps.onlinePlayers?.(this.id) ?? [];
    if (online.length > 0) this.deps.playersChanged?.(this.id, [], online, reason);
  }

  /** The removal began: `deleting`, terminal (the removal then kills the game and deletes the folder). */
  markDeleting(): void {
    this.setState('deleting', 'remove');
  }

  /** Its node stopped answering (node-loss.ts): `unreachable` unless installing or deleting; its game is still followed. */
  nodeLost(): void {
    if (['installing', 'deleting', 'unreachable'].includes(this.current)) return;
    this.console.push('system', 'the machine this server runs on stopped answering');
    this.setState('unreachable', 'node_lost');
  }

  /** Its node answers again: the game adopted again there (`running`), or none is left (`stopped`). */
  nodeReturned(proc: GameProcess | null): void {
    if (this.current !== 'unreachable') return;
    if (proc) this.adopt(proc);
    else this.leaveUnseen('unreachable'); // none if its exit was seen while the node was away (onExit)
    this.setState(proc ? 'running' : 'stopped', 'node_returned');
  }

  /**
   * Lets the game go (Game.detach), saying what went, or null: at shutdown a running one (`running` stays, to adopt),
   * at a node's return the one followed while `unreachable`, to adopt again (node-loss.ts).
   */
  detach(): { pid: number; cmdline: string[] } | null {
    const game = this.game;
    if (!['running', 'unreachable'].includes(this.current) || !game?.detach(this.console)) return null;
    this.game = null; // its exit is no longer followed
    return { pid: game.proc.pid, cmdline: game.proc.cmdline };
  }

  /** Records the process so a later service life can find it, and handles its exit. */
  private watch(game: Game): Game {
    this.game = game;
    this.stopCause = null;
    this.crashReason = null;
    this.deps.processes.record({ serverId: this.id, pid: game.proc.pid, cmdline: game.proc.cmdline });
    this.exitHandled = game.proc.exited.then((exit) => this.asExit(() => this.onExit(game, exit)));
    return game;
  }

  private onExit(game: Game, exit: ExitInfo): void {
    this.deps.processes.forget(this.id, game.proc.pid);
    this.game = null;
    this.console.push('system', `process ${game.proc.pid} exited (${describeExit(exit)})`);
    const cause = this.stopCause ?? (this.current === 'unreachable' ? 'unreachable' : 'crash');
    game.leaveAll(cause); // every player it had online left with it (issue 27 §5)
    if (cause !== 'crash') {
      this.stopCause = null; // an exit seen as its node returns is the node's doing, not the game's crash
      this.setState('stopped', this.current === 'unreachable' ? 'node_returned' : 'exited');
      return;
    }
    const reason = this.crashReason ?? (exit.outOfMemory ? 'out_of_memory' : 'exited');
    this.crashReason = null;
    const wasStarting = this.current === 'starting';
    this.crashed(reason, exit, wasStarting ? 'start_failed' : 'crash');
  }

  private failStart(reason: 'spawn_failed' | 'port_in_use', detail: string): Failure {
    this.console.push('system', detail);
    this.crashed(reason, { code: null, signal: null }, 'start_failed');
    return { code: reason === 'port_in_use' ? 'port_in_use' : 'start_failed', detail };
  }

  private crashed(reason: CrashReason, exit: ExitInfo, on: 'start_failed' | 'crash'): void {
    if (this.current === 'unreachable') return; // its node went away: node-loss.ts decides once it returns
    this.deps.crashPolicy.record(this.id, reason, exit, this.console.lastTexts(CRASH_LINES));
    this.setState('crashed', on);
    this.deps.crashed();
  }

  /**
   * Ends the process: 'stop' sends the software's stop command and SIGKILLs after stopTimeoutMs, 'kill' SIGKILLs now.
   * Resolves once it exited and the state is `stopped`; clears a crash; a no-op when stopped. `cause`: its player.left.
   */
  async halt(mode: 'stop' | 'kill', cause: StopCause): Promise<void> {
    if (this.launching && !this.game) {
      this.abortLaunch = cause; // the launch is between its port check and spawn; it checks this flag
      await this.launching;
    }
    const game = this.game;
    if (game) {
      this.stopCause = cause;
      this.stopActor = this.deps.actors.current();
      if (this.current === 'starting' || this.current === 'running') this.setState('stopping', 'stop');
      if (mode === 'kill') {
        this.console.push('system', 'killing the process (SIGKILL)');
        await game.proc.kill();
      } else {
        this.console.push('input', game.def.stopCommand, this.stopActor);
        const { forced } = await game.proc.stop(game.def.stopCommand, this.deps.config.stopTimeoutMs);
        if (forced) this.console.push('system', `did not stop within ${this.deps.config.stopTimeoutMs} ms; killed`);
      }
      await this.exitHandled;
    } else if (this.current === 'crashed') {
      this.setState('stopped', 'cleared');
    }
  }

  /** The running game, for commands and player lists; invalid_state (saying `why` it must run) otherwise. */
  running(why: string): Game {
    if (this.current !== 'running' || !this.game) throw invalidState(this.current, `The server is ${this.current}; ${why}.`);
    return this.game;
  }

  /** The watchdog's round: kills a process over its plan's memory where the environment does not enforce it
   * (memory_limit; the heap flag misses native memory), lets a ping-probed game report players. */
  watchdog(): void {
    const game = this.game;
    if (!game) return;
    if (this.stopCause === null && game.killIfOverPlan(this.console)) this.crashReason = 'memory_limit';
    if (this.current === 'running') game.pollPlayers(this.deps.now());
  }
}
