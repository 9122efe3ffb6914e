import path from 'node:path';
import { AppError } from '../errors';
import { ConsoleBuffer } from './console-buffer';
import type { Environment, ExitInfo, GameProcess } from './environment';
import { playersFromMessage, tpsFromMessage, type PlayersInfo } from './probes';
import type { RuntimeStore } from './runtime-store';
import { renderCommand, type SoftwareCatalog, type SoftwareDefinition } from './software-catalog';
import { nicenessFor } from './cpu-priority';
import { canTransition, type ServerState, type TransitionEvent } from './states';
import type { Failure, Plan, RuntimeConfig, RuntimeLog, StateChange } from './types';

export interface SupervisorContext {
  store: RuntimeStore;
  environment: Environment;
  catalog: SoftwareCatalog;
  plans: Record<string, Plan>;
  log: RuntimeLog;
  config: RuntimeConfig;
  now: () => number;
  isClosing: () => boolean;
  emitState: (e: StateChange) => void;
}

const CONSOLE_LINES = 1000;
const CRASH_LINES = 20;

/**
 * One server's life: its process, state, console and crash policy. Power actions (runtime.ts) and the reconcile
 * loop drive it through launch() and halt(); it never decides on its own except to restart after a crash.
 */
export class ServerSupervisor {
  readonly console: ConsoleBuffer;
  readonly dir: string;
  state: ServerState;
  proc: GameProcess | null = null;
  tps: number | null = null;
  players: PlayersInfo | null = null;
  installing: Promise<void> | null = null;
  installFailed = false;
  /** The plan's memory as of the last launch; the runtime's watchdog compares RSS with it. */
  memoryLimitBytes = Infinity;
  private launching: Promise<Failure | null> | null = null;
  private exitHandled: Promise<void> = Promise.resolve();
  private expectingExit = false;
  private abortLaunch = false;
  private crashReason: string | null = null;
  private restartTimer: NodeJS.Timeout | null = null;
  private onReady: (() => void) | null = null;

  constructor(
    readonly id: string,
    initial: ServerState,
    private readonly ctx: SupervisorContext,
  ) {
    this.state = initial;
    this.dir = path.join(ctx.config.dataDir, 'servers', id);
    this.console = new ConsoleBuffer(CONSOLE_LINES, path.join(this.dir, 'logs', 'console.log'), () =>
      new Date(ctx.now()).toISOString(),
    );
  }

  /** True while a process lives or is being launched: the reconcile loop leaves such a server alone. */
  get busy(): boolean {
    return this.launching !== null || this.proc !== null || this.restartTimer !== null || this.installing !== null;
  }

  /** Publishes only real changes (Wings: the environment publishes a state only when it really changes). */
  setState(to: ServerState, on: TransitionEvent): void {
    const previous = this.state;
    if (previous === to || previous === 'deleting') return;
    if (!canTransition(previous, to)) this.ctx.log.error('state transition not in the table', { serverId: this.id, previous, to, on });
    this.state = to;
    this.ctx.store.setState(this.id, to);
    this.console.push('system', `state ${previous} → ${to} (${on})`);
    this.ctx.emitState({ serverId: this.id, state: to, previous });
  }

  cancelRestart(): void {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
  }

  /**
   * Starts the game and resolves once it is ready (null) or has failed (the reason). Every failure is also
   * recorded as a crash and the state becomes `crashed`, except when a stop or kill interrupted the start.
   * A second call while one is under way joins it: there is never a second process for one server.
   */
  launch(on: 'start' | 'auto_restart'): Promise<Failure | null> {
    if (this.proc && this.state === 'running') return Promise.resolve(null);
    this.launching ??= this.doLaunch(on).finally(() => (this.launching = null));
    return this.launching;
  }

  /** True while a process lives or a launch is under way. */
  get hasProcess(): boolean {
    return this.proc !== null || this.launching !== null;
  }

  /** Resolves once the current process (if any) has exited and its exit has been handled. */
  waitExit(): Promise<void> {
    return this.exitHandled;
  }

  private async doLaunch(on: 'start' | 'auto_restart'): Promise<Failure | null> {
    if (this.state === 'deleting' || this.ctx.isClosing()) {
      return { code: 'invalid_state', detail: `The server is ${this.ctx.isClosing() ? 'shutting down' : 'being deleted'}.` };
    }
    this.cancelRestart();
    this.setState('starting', on);
    this.abortLaunch = false;
    const server = this.ctx.store.server(this.id);
    let def: SoftwareDefinition;
    let plan: Plan;
    try {
      if (!server) throw new AppError('server_not_found', `Server ${this.id} no longer exists.`);
      def = this.ctx.catalog.get(server.software);
      plan = this.ctx.plans[server.plan];
      if (!plan) throw new AppError('unknown_plan', `Plan "${server.plan}" is not configured on this host.`);
      if (server.port === null) throw new AppError('invalid_state', 'The server has no port allocated.');
      this.memoryLimitBytes = plan.memory_mb * 1024 * 1024;
    } catch (err) {
      return this.failStart('spawn_failed', err instanceof AppError ? err.detail : String(err));
    }
    const host = server.host ?? '0.0.0.0';
    if (!(await this.ctx.environment.isPortFree(host, server.port))) {
      return this.failStart('port_in_use', `Port ${server.port} on ${host} is already in use by another process.`);
    }
    if (this.abortLaunch) return this.interrupted();
    let proc: GameProcess;
    try {
      proc = await this.ctx.environment.spawn({
        serverId: this.id,
        argv: renderCommand(def, {
          node: process.execPath, server_id: this.id, game_version: server.game_version, dir: this.dir, host,
          memory_mb: String(plan.memory_mb), heap_mb: String(Math.max(32, Math.floor(plan.memory_mb * 0.75))),
          port: String(server.port), max_players: String(plan.max_players),
        }),
        cwd: this.dir,
        ipc: def.ipc,
        niceness: nicenessFor(plan.cpu_shares),
      });
    } catch (err) {
      return this.failStart('spawn_failed', `The game process could not be started: ${(err as Error).message}`);
    }
    const ready = this.watch(proc, def);
    if (this.abortLaunch) {
      await this.halt('kill');
      return this.interrupted();
    }
    return this.awaitReady(proc, def, ready);
  }

  private async awaitReady(proc: GameProcess, def: SoftwareDefinition, ready: Promise<void>): Promise<Failure | null> {
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      ready.then(() => 'ready' as const),
      proc.exited.then(() => 'exit' as const),
      new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), def.startTimeoutMs))),
    ]);
    clearTimeout(timer);
    if (outcome === 'ready' && this.state === 'starting') {
      this.setState('running', 'ready');
      return null;
    }
    if (outcome === 'ready') {
      await this.exitHandled; // a stop or kill arrived as it became ready
      return this.interrupted();
    }
    if (outcome === 'timeout') {
      this.crashReason = 'start_timeout';
      this.console.push('system', `not ready within ${def.startTimeoutMs} ms; killing it`);
      await proc.kill();
    }
    await this.exitHandled;
    if (this.state !== 'crashed') return this.interrupted();
    const exit = await proc.exited;
    const lines = this.console.lastTexts(5).join(' | ');
    return outcome === 'timeout'
      ? { code: 'start_timeout', detail: `The game was not ready within ${def.startTimeoutMs} ms and was killed. Last console lines: ${lines}` }
      : { code: 'start_failed', detail: `The game exited while starting (${describeExit(exit)}). Last console lines: ${lines}` };
  }

  private interrupted(): Failure {
    if (this.state === 'starting') {
      this.setState('stopping', 'stop');
      this.setState('stopped', 'exited');
    }
    return { code: 'action_cancelled', detail: 'The start was interrupted by a stop, kill or shutdown.' };
  }

  /** Records the process, feeds its console and messages, and handles its exit. Resolves on the ready signal. */
  private watch(proc: GameProcess, def: SoftwareDefinition): Promise<void> {
    this.proc = proc;
    this.expectingExit = false;
    this.crashReason = null;
    this.ctx.store.recordProcess(this.id, proc.pid, proc.cmdline);
    const ready = new Promise<void>((resolve) => (this.onReady = resolve));
    const readyRegex = 'console' in def.ready ? def.ready.console : null;
    const readyType = 'ipc' in def.ready ? def.ready.ipc : null;
    proc.onLine((stream, text) => {
      this.console.push(stream, text);
      if (readyRegex?.test(text) && this.state === 'starting') this.onReady?.();
    });
    proc.onMessage((msg) => {
      if (readyType && (msg as { type?: unknown })?.type === readyType && this.state === 'starting') this.onReady?.();
      this.players = playersFromMessage(msg) ?? this.players;
      this.tps = tpsFromMessage(msg) ?? this.tps;
    });
    this.exitHandled = proc.exited.then((exit) => this.onExit(proc, exit));
    return ready;
  }

  private onExit(proc: GameProcess, exit: ExitInfo): void {
    this.ctx.store.forgetProcess(this.id, proc.pid);
    this.proc = null;
    this.onReady = null;
    this.tps = null;
    this.players = null;
    this.console.push('system', `process ${proc.pid} exited (${describeExit(exit)})`);
    if (this.expectingExit) {
      this.expectingExit = false;
      this.setState('stopped', 'exited');
      return;
    }
    const reason = this.crashReason ?? 'exited';
    this.crashReason = null;
    const wasStarting = this.state === 'starting';
    this.recordCrash(reason, exit);
    this.setState('crashed', wasStarting ? 'start_failed' : 'crash');
    this.afterCrash();
  }

  private failStart(reason: string, detail: string): Failure {
    this.console.push('system', detail);
    this.recordCrash(reason, { code: null, signal: null });
    this.setState('crashed', 'start_failed');
    this.afterCrash();
    return { code: reason === 'port_in_use' ? 'port_in_use' : 'start_failed', detail };
  }

  recordCrash(reason: string, exit: ExitInfo): void {
    this.ctx.store.recordCrash({
      server_id: this.id, exit_code: exit.code, signal: exit.signal, reason, last_lines: this.console.lastTexts(CRASH_LINES),
    });
    this.ctx.log.warn('game server crashed', { serverId: this.id, reason, ...exit });
  }

  /**
   * Crash policy (Wings restarts unless the last crash was too recent; we count instead): restart with
   * exponential backoff while the server should run, unless it crashed more than maxRestarts times within
   * windowMs (counting only since the user's last start), in which case it stays crashed until a start action.
   */
  afterCrash(): void {
    if (this.ctx.isClosing() || this.state !== 'crashed') return;
    if (this.ctx.store.server(this.id)?.desired_state !== 'running') return;
    const { maxRestarts, windowMs } = this.ctx.config.crashLoop;
    const crashes = this.ctx.store.crashesInWindow(this.id, windowMs);
    if (crashes > maxRestarts) {
      this.console.push('system', `crashed ${crashes} times within ${windowMs} ms; staying crashed until a start action`);
      return;
    }
    const delay = Math.min(this.ctx.config.backoffMs * 2 ** Math.max(0, crashes - 1), windowMs);
    this.console.push('system', `restarting in ${delay} ms (crash ${crashes} of at most ${maxRestarts} in the window)`);
    this.cancelRestart();
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      if (this.state === 'crashed' && !this.ctx.isClosing()) void this.launch('auto_restart');
    }, delay);
  }

  /**
   * Ends the process: 'stop' sends the software's stop command and SIGKILLs after stopTimeoutMs, 'kill' SIGKILLs
   * now. Resolves once it has exited and the state is `stopped`. On a crashed server it clears the crash
   * (`crashed → stopped`); on a stopped one it is a no-op.
   */
  async halt(mode: 'stop' | 'kill'): Promise<void> {
    this.cancelRestart();
    if (this.launching && !this.proc) {
      this.abortLaunch = true; // the launch is between its port check and spawn; it checks this flag
      await this.launching;
    }
    const proc = this.proc;
    if (proc) {
      this.expectingExit = true;
      if (this.state === 'starting' || this.state === 'running') this.setState('stopping', 'stop');
      if (mode === 'kill') {
        this.console.push('system', 'killing the process (SIGKILL)');
        await proc.kill();
      } else {
        const stopCommand = this.stopCommand();
        this.console.push('input', stopCommand);
        const { forced } = await proc.stop(stopCommand, this.ctx.config.stopTimeoutMs);
        if (forced) this.console.push('system', `did not stop within ${this.ctx.config.stopTimeoutMs} ms; killed`);
      }
      await this.exitHandled;
    } else if (this.state === 'crashed') {
      this.setState('stopped', 'cleared');
    }
  }

  private stopCommand(): string {
    try {
      return this.ctx.catalog.get(this.ctx.store.server(this.id)?.software ?? '').stopCommand;
    } catch {
      return 'stop'; // the definition was removed while the game ran; the SIGKILL after the timeout still applies
    }
  }

  /** Kills the process because it uses more memory than its plan allows; recorded as a crash (memory_limit). */
  killForMemory(rss: number, limit: number): void {
    if (!this.proc || this.expectingExit) return;
    this.crashReason = 'memory_limit';
    this.console.push('system', `resident memory ${mb(rss)} MB exceeds the plan's ${mb(limit)} MB; killing it`);
    void this.proc.kill();
  }
}

function mb(bytes: number): number {
  return Math.round(bytes / 1024 / 1024);
}

export function describeExit(exit: ExitInfo): string {
  return exit.signal ? `signal ${exit.signal}` : `exit code ${exit.code}`;
}
