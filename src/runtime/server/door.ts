import { serviceActor, type Actor, type Actors } from '../../actors';
import { AppError } from '../../errors';
import type { Logger } from '../../log';
import { actionFailure, type Failure } from '../../store/actions-repo';
import type { ConsoleBuffer } from './console-buffer';
import type { CrashPolicy } from './crash-policy';
import { ServerSupervisor, type SupervisorDeps } from './server-supervisor';
import type { ServerState } from './states';

/** What a command is: for conflicts, logs, and a reader looking for who does what to a server. */
export type CommandKind =
  | 'install' | 'start' | 'stop' | 'restart' | 'kill' | 'restore' | 'backup' | 'auto_restart' | 'reconcile'
  | 'disk_stop' | 'node_lost' | 'node_returned' | 'boot' | 'remove' | 'shutdown' | 'move' | 'recover';

/** What a running command may ask of the door. */
export interface CommandContext {
  /**
   * True once an overtaking command (a kill, the removal, the shutdown) took the server while this one ran: it ends
   * without changes of its own from then on (a restart or a backup does not start the game again).
   */
  readonly overtaken: boolean;
  /**
   * Resolves once every other command under way on this server that began before this one has ended (the removal
   * waits before deleting). Only those: two overtaking commands that each waited for the other (a shutdown that
   * overtook a removal) would wait forever.
   */
  othersSettled(): Promise<void>;
  /**
   * What it holds the server for is done (a backup's archive is written): requests are accepted again, and wait
   * behind the rest of it (the game's start after a backup) as behind any command.
   */
  release(): void;
}

/**
 * One operation on one server (docs/architecture.md "The door"). A command is data and two steps: `begin`, done at
 * once inside submit (what a request must see answered at once: `deleting`, `unreachable`, a reset at boot), and
 * `run`, done later under the server's lock, one command at a time in the order submitted, unless it `overtakes`.
 * The server (its state machine and process) is reachable only here: nothing else holds a ServerSupervisor.
 */
export interface Command {
  kind: CommandKind;
  /** The action row it runs for, if any (action_conflict names it). */
  actionId?: string;
  /** The backup it archives or restores, if any (a kept backup cannot be deleted while a restore uses it). */
  backupId?: string;
  /**
   * Holds the server against requests while it waits or runs: another action or backup is refused with
   * action_conflict (kill aside). An install does not hold it: an action asked for meanwhile waits behind it.
   */
  holds: boolean;
  /**
   * Kill, removal, shutdown: runs at once, past the lock (Pterodactyl Wings' power lock that kill may pass).
   * Commands still waiting are cancelled; commands running are told (CommandContext.overtaken) and end on their own.
   */
  overtakes?: boolean;
  /** An install or a backup leaves a crash restart the crash policy scheduled; every other command cancels it. */
  keepsRestart?: boolean;
  /**
   * Whom it acts for (src/actors.ts): whoever submitted it (the actor current at submit) unless it says, as the
   * crash policy's restart does. Its `begin` and `run`, and every event they raise, name this actor.
   */
  actor?: Actor;
  begin?(server: ServerSupervisor): void;
  run?(server: ServerSupervisor, ctx: CommandContext): Promise<Failure | null>;
  /** Instead of run, when an overtaking command cancelled it while it waited. */
  cancelled?(by: Command): void;
}

export interface DoorDeps {
  crashPolicy: Pick<CrashPolicy, 'scheduleRestart'>;
  isClosing(): boolean;
  log: Logger;
  /** Tracks a command until it ends (Runtime idle()). */
  track(p: Promise<unknown>): void;
  actors: Actors;
}

interface Entry {
  command: Command;
  actor: Actor;
  overtaken: boolean;
  released: boolean;
  /** When it began to run, in this door's order (othersSettled waits for those that began before). */
  began: number;
  done: Promise<Failure | null>;
  resolve(failure: Failure | null): void;
}

/** The crash policy's restart, as a command: it launches only a server still crashed when its turn comes. */
const autoRestart: Command = {
  kind: 'auto_restart',
  holds: false,
  keepsRestart: true,
  actor: serviceActor('crash_restart'),
  run: async (server) => (server.state === 'crashed' ? server.launch('auto_restart') : null),
};

/**
 * The one door of one server: every operation on it is a Command submitted here, queued under one lock, so nothing
 * starts or stops it behind another's back. What holds the server (what used to be the supervisor's flags, the
 * backups' sets, the removals map and the open actions) is what this queue holds. A crash restart the crash policy
 * schedules is a command submitted when its backoff ends.
 */
export class ServerDoor {
  private readonly queue: Entry[] = [];
  /** How many commands have begun to run here: each one's `began`. */
  private begun = 0;
  private readonly underway = new Set<Entry>();
  private restartTimer: NodeJS.Timeout | null = null;
  private readonly server: ServerSupervisor;

  /**
   * Makes the server's supervisor, which only this door holds; a crash it records schedules the restart here.
   * `console`: the server's console of this life, when an earlier door had one (doors.ts).
   */
  constructor(id: string, initial: ServerState, supervisor: Omit<SupervisorDeps, 'crashed'>, private readonly deps: DoorDeps, console?: ConsoleBuffer) {
    this.server = new ServerSupervisor(id, initial, { ...supervisor, crashed: () => this.restartIfWanted() }, console);
  }

  get id() { return this.server.id; }
  get state() { return this.server.state; }
  get console() { return this.server.console; }
  get dir() { return this.server.dir; }
  /** True while a process lives or a launch is under way. */
  get hasProcess() { return this.server.hasProcess; }
  /** What the telemetry sampler reads; null unless the game is running. */
  get live() { return this.server.live; }
  /** The running game, for console commands, settings and player lists; invalid_state (saying `why`) otherwise. */
  running(why: string) { return this.server.running(why); }
  /** The RSS watchdog's round (memory over the plan, ping-probed players): no state change of its own. */
  watchdog(): void { this.server.watchdog(); }

  /**
   * Takes a command: `begin` now, `run` in its turn (after the commands before it, on a later tick, so never inside
   * the caller's transaction). Resolves with the run's failure, or null; a cancelled command resolves with
   * action_cancelled. Throws only what `begin` throws.
   */
  submit(command: Command): Promise<Failure | null> {
    const actor = command.actor ?? this.deps.actors.current();
    if (!command.keepsRestart) this.cancelRestart();
    if (command.begin) this.deps.actors.run(actor, () => command.begin?.(this.server));
    if (!command.run) return Promise.resolve(null);
    let resolve!: (failure: Failure | null) => void;
    const done = new Promise<Failure | null>((r) => (resolve = r));
    const entry: Entry = { command, actor, overtaken: false, released: false, began: 0, done, resolve };
    this.deps.track(done);
    if (command.overtakes) {
      for (const waiting of this.queue.splice(0)) this.cancel(waiting, command);
      for (const other of this.underway) other.overtaken = true;
      this.start(entry);
    } else {
      this.queue.push(entry);
      this.next();
    }
    return done;
  }

  /** The command holding the server against requests (waiting or running, not overtaken nor released), or null. */
  holder(): Command | null {
    const held = [...this.underway, ...this.queue].find((e) => e.command.holds && !e.overtaken && !e.released);
    return held?.command ?? null;
  }

  /** Nothing waits or runs and no crash restart is scheduled: the reconcile loop and the disk watcher may act. */
  get idle(): boolean {
    return this.underway.size === 0 && this.queue.length === 0 && this.restartTimer === null;
  }

  /**
   * Nothing to watch: idle, no process nor launch, and `stopped` (a crashed server keeps its door, for its crash
   * restart or a failed install to retry). Its door may go (doors.ts dropSettled); the row says all it knows.
   */
  get settled(): boolean {
    return this.idle && !this.server.hasProcess && this.server.state === 'stopped';
  }

  /** True while a waiting or running command matches (a restore of a backup, a removal under way). */
  has(match: (c: Command) => boolean): boolean {
    return [...this.underway, ...this.queue].some((e) => match(e.command));
  }

  /** The removal under way, to join, or null. */
  removal(): Promise<Failure | null> | null {
    return [...this.underway, ...this.queue].find((e) => e.command.kind === 'remove')?.done ?? null;
  }

  /** After a crash (or at boot, for a server left crashed): the crash policy's restart, after its backoff. */
  restartIfWanted(): void {
    if (this.deps.isClosing() || this.server.state !== 'crashed') return;
    this.cancelRestart();
    this.restartTimer = this.deps.crashPolicy.scheduleRestart(this.id, (text) => this.server.console.push('system', text), () => {
      this.restartTimer = null;
      if (!this.deps.isClosing()) void this.submit(autoRestart);
    });
  }

  private cancelRestart(): void {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
  }

  private next(): void {
    const entry = this.underway.size === 0 ? this.queue.shift() : undefined;
    if (entry) this.start(entry);
  }

  private start(entry: Entry): void {
    entry.began = ++this.begun;
    this.underway.add(entry);
    const ctx: CommandContext = {
      get overtaken() { return entry.overtaken; },
      othersSettled: () => this.othersSettled(entry),
      release: () => void (entry.released = true),
    };
    // As its submitter: the one that started it, not whichever command ended before it (src/actors.ts).
    setImmediate(() => void this.deps.actors.run(entry.actor, () => this.runOne(entry, ctx)));
  }

  private async runOne(entry: Entry, ctx: CommandContext): Promise<void> {
    let failure: Failure | null;
    try {
      if (!entry.command.run) throw new Error(`a ${entry.command.kind} command without run was queued`); // submit queues only those with one
      failure = await entry.command.run(this.server, ctx);
    } catch (err) {
      this.deps.log.error('a command on a server failed unexpectedly', { server_id: this.id, command: entry.command.kind, error: String(err) });
      failure = err instanceof AppError ? actionFailure(err.code, err.detail) : { code: 'internal_error', detail: String(err) };
    }
    this.underway.delete(entry);
    entry.resolve(failure);
    this.next();
  }

  private cancel(entry: Entry, by: Command): void {
    entry.command.cancelled?.(by);
    entry.resolve({ code: 'action_cancelled', detail: `Overtaken by ${by.kind}${by.actionId ? ` ${by.actionId}` : ''}.` });
  }

  private async othersSettled(self: Entry): Promise<void> {
    for (;;) {
      const others = [...this.underway].filter((e) => e.began < self.began);
      if (others.length === 0) return;
      await Promise.all(others.map((e) => e.done));
    }
  }
}
