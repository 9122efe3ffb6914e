// What a software definition makes of a server on this host: its folder, its launch, and the process that runs.
import { AppError } from '../../errors';
import type { components } from '../../../generated/v1';
import type { Plan } from '../../catalog/plans';
import type { Failure } from '../../store/actions-repo';
import type { Server } from '../../store/servers-repo';
import type { ConsoleBuffer } from './console-buffer';
import type { Environment, ExitInfo, GameAddress, GameProcess, LaunchSpec } from '../host/environment';
import type { ServerStorage } from '../host/storage';
import { pingPlayers, playersFromMessage, tpsFromMessage, type Players } from './probes';

export type Player = Players['players'][number];
/** Why a player left (the spec's PlayerLeftReason): `left` while the game runs on, else what stopped the game. */
export type PlayerLeftReason = components['schemas']['PlayerLeftReason'];
/** What stops a game on purpose (ServerSupervisor.halt): the causes of PlayerLeftReason a command gives. */
export type StopCause = Exclude<PlayerLeftReason, 'left' | 'crash' | 'unreachable'>;
/** Who joined and left since the last report, or everyone as the game stops; `by`, for a kick, who kicked (Game.kick). */
export type PlayersChanged = (joined: Player[], left: Player[], reason: PlayerLeftReason, by?: Actor) => void;
import type { LiveServer } from './types';
import type { Actor } from '../../actors';
import { isSignal, type Signal } from '../software/signals';
import { renderCommand, type SoftwareCatalog, type SoftwareDefinition } from '../software/software-catalog';

/** How often a ping-probed game (no IPC) is asked who is online. */
const PING_EVERY_MS = 5_000;
/** How long after a kick a player's leaving is put down to it (PlayerLeftReason `kick`). */
export const KICK_WINDOW_MS = 30_000;

export type { GameAddress } from '../host/environment';

/** Writes a server's world/ and settings.json as its definition asks (storage.ts write; idempotent, the world kept). */
export async function installFiles(server: Server | undefined, id: string, catalog: SoftwareCatalog, storage: ServerStorage) {
  if (!server) throw new AppError('server_not_found', `No server ${id}.`);
  const def = catalog.get(server.software);
  if (!def.gameVersions.includes(server.game_version)) {
    throw new AppError('unknown_version', `${def.id} does not offer game version ${server.game_version}.`);
  }
  await storage.write(id, ['world'], { 'settings.json': JSON.stringify(def.settings ?? {}, null, 2) + '\n' });
}

/** What one launch needs, read fresh from the row (the plan may have changed while the server was stopped). */
export interface LaunchPlan {
  server: Server;
  def: SoftwareDefinition;
  plan: Plan;
  address: GameAddress;
}

/** Reads what a launch needs; throws an AppError naming what is missing. */
export function planLaunch(server: Server | undefined, id: string, catalog: SoftwareCatalog, plans: readonly Plan[]): LaunchPlan {
  if (!server) throw new AppError('server_not_found', `Server ${id} no longer exists.`);
  const def = catalog.get(server.software);
  const plan = plans.find((p) => p.id === server.plan);
  if (!plan) throw new AppError('unknown_plan', `Plan "${server.plan}" is not configured on this host.`);
  if (!server.address) throw new AppError('invalid_state', 'The server has no port allocated.');
  return { server, def, plan, address: server.address };
}

/**
 * What a launch takes from the server's settings and player lists (server-settings.ts, player-lists.ts): the files
 * to write into its folder (settings.json, the lists) and its command arguments.
 */
export interface LaunchSettings {
  forLaunch(launch: LaunchPlan): { files: Record<string, string>; args: Record<string, string> };
}

type LaunchParts = { catalog: SoftwareCatalog; plans: readonly Plan[]; environment: Environment; storage: ServerStorage; settings: LaunchSettings }; // what rendering a launch reads

/**
 * Writes the server's settings.json and lists file as they are now (a change since install or the last launch
 * reaches the game here; storage.ts write, so through the engine on a node) and renders the launch with the
 * arguments its settings give, in the folder as the game sees it (docs/architecture.md "Settings").
 */
export async function prepareLaunch(launch: LaunchPlan, deps: Omit<LaunchParts, 'catalog' | 'plans'>): Promise<LaunchSpec> {
  const { files, spec } = render(launch, deps);
  await deps.storage.write(launch.server.id, ['world'], files);
  return spec;
}

/** The launch's files and spec, one rendering for prepareLaunch and launchAt (a start ahead must equal its start). */
function render(launch: LaunchPlan, deps: Omit<LaunchParts, 'catalog' | 'plans'>): { files: Record<string, string>; spec: LaunchSpec } {
  const { files, args } = deps.settings.forLaunch(launch);
  return { files, spec: launchSpec(launch, deps.storage.gameDir(launch.server.id), deps.environment.gameBindHost, args) };
}

/** A launch's spec at `place` (a new node's host and port), nothing written: a move's start ahead (moves.ts); or null. */
export function launchAt(server: Server | undefined, id: string, deps: LaunchParts, place: { host: string; port: number }): LaunchSpec | null {
  try {
    const planned = planLaunch(server, id, deps.catalog, deps.plans);
    return render({ ...planned, address: { ...planned.address, ...place } }, deps).spec;
  } catch {
    return null;
  }
}

/** The argv, folder and limits of one launch, rendered from the software definition, the plan and the settings. */
export function launchSpec({ server, def, plan, address }: LaunchPlan, dir: string, bindHost = address.host, args: Record<string, string> = {}): LaunchSpec {
  return {
    serverId: server.id,
    argv: renderCommand(def, {
      node: process.execPath,
      server_id: server.id,
      game_version: server.game_version,
      dir,
      host: bindHost,
      memory_mb: String(plan.memory_mb),
      // The V8 heap gets three quarters of the plan; the rest is native memory the cgroup (or watchdog) counts too.
      heap_mb: String(Math.max(32, Math.floor(plan.memory_mb * 0.75))),
      port: String(address.port),
      max_players: String(plan.player_slots),
      ...args,
    }),
    cwd: dir,
    address,
    ipc: def.ipc,
    limits: { memoryMb: plan.memory_mb, cpuPercent: plan.cpu_percent },
  };
}

/**
 * One launched game process as its supervisor sees it: every console line goes to the server's console, IPC
 * messages update `tps` and `players`, and `ready` resolves on the definition's ready signal (an IPC message
 * type, or a console line matching its regex) if it comes while `isStarting()` holds. A new Game per process,
 * so nothing one process reported survives into the next.
 */
export class Game {
  tps: number | null = null;
  private reported: Players | null = null;
  /** When the players were last asked for by a Minecraft ping (ping-probed software only). */
  private lastPingAt = 0;
  /** Who waits for a sign of the game (awaitSignal), told of every line and message. */
  private readonly watchers = new Set<(event: { line: string } | { message: unknown }) => void>();
  /** Players kicked through kick(), by uuid, with when and by whom: their next leaving is a `kick`, if it comes soon enough. */
  private readonly kicked = new Map<string, { at: number; by: Actor | undefined }>();
  readonly ready: Promise<void>;

  constructor(
    readonly proc: GameProcess,
    readonly def: SoftwareDefinition,
    readonly plan: Plan,
    readonly address: GameAddress,
    console: ConsoleBuffer,
    isStarting: () => boolean,
    /** Who joined and who left between two player reports (IPC reports only: a ping's list may be cut short). */
    private readonly onPlayers: PlayersChanged = () => undefined,
    /** Who is online already, for a game taken over while it runs (the events say so): not joined again. */
    online: Player[] = [],
    /** The clock a kick's window is measured on (the supervisor's). */
    private readonly now: () => number = Date.now,
  ) {
    this.reported = online.length > 0 ? { online: online.length, max: plan.player_slots, players: online } : null;
    let signalReady: () => void = () => undefined;
    this.ready = new Promise<void>((resolve) => (signalReady = resolve));
    const readyRegex = 'console' in def.ready ? def.ready.console : null;
    const readyType = 'ipc' in def.ready ? def.ready.ipc : null;
    proc.onLine((stream, text) => {
      console.push(stream, text);
      if (readyRegex?.test(text) && isStarting()) signalReady();
      for (const fn of this.watchers) fn({ line: text });
    });
    proc.onMessage((msg) => {
      if (readyType && (msg as { type?: unknown } | null)?.type === readyType && isStarting()) signalReady();
      for (const fn of this.watchers) fn({ message: msg });
      const players = playersFromMessage(msg);
      if (players) {
        const was = new Set((this.reported?.players ?? []).map((p) => p.uuid));
        const still = new Set(players.players.map((p) => p.uuid));
        const joined = players.players.filter((p) => !was.has(p.uuid));
        const left = (this.reported?.players ?? []).filter((p) => !still.has(p.uuid));
        this.reported = players;
        const at = this.now();
        const byKick = (p: Player) => at - (this.kicked.get(p.uuid)?.at ?? -Infinity) <= KICK_WINDOW_MS;
        const quit = left.filter((p) => !byKick(p));
        // Kicked players leave as kicked by whoever kicked each (one report per kicker).
        const kickers = new Map<Actor | undefined, Player[]>();
        for (const p of left.filter(byKick)) {
          const by = this.kicked.get(p.uuid)?.by;
          kickers.set(by, [...(kickers.get(by) ?? []), p]);
        }
        for (const p of left) this.kicked.delete(p.uuid);
        for (const [by, players] of kickers) onPlayers([], players, 'kick', by);
        if (joined.length + quit.length > 0) onPlayers(joined, quit, 'left');
      }
      this.tps = tpsFromMessage(msg) ?? this.tps;
    });
  }

  /**
   * The process is gone: every player it reported online left with it, for `reason` (issue 27 §5). Nothing is
   * reported of it afterwards. A game let go to be adopted again (detach) keeps its players and never calls this.
   */
  leaveAll(reason: PlayerLeftReason): void {
    const gone = this.reported?.players ?? [];
    this.reported = null;
    if (gone.length > 0) this.onPlayers([], gone, reason);
  }

  /**
   * Sends `command`; true at the first `signal` the game gives after, false if it exits or `timeoutMs` passes first
   * (a live backup's pause, backup-definitions.ts); invalid_state when its console is closed.
   */
  async request(command: string, signal: Signal, timeoutMs: number): Promise<boolean> {
    let watcher: ((event: { line: string } | { message: unknown }) => void) | undefined;
    let timer: NodeJS.Timeout | undefined;
    const seen = new Promise<boolean>((resolve) => {
      watcher = (event) => isSignal(signal, event) && resolve(true);
      this.watchers.add(watcher);
      timer = setTimeout(() => resolve(false), timeoutMs);
      void this.proc.exited.then(() => resolve(false));
    });
    try {
      this.send(command);
      return await seen;
    } finally {
      if (watcher) this.watchers.delete(watcher);
      clearTimeout(timer);
    }
  }

  /** What came first: the ready signal, the exit, or the definition's start timeout. */
  async waitReady(): Promise<'ready' | 'exit' | 'timeout'> {
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      this.ready.then(() => 'ready' as const),
      this.proc.exited.then(() => 'exit' as const),
      new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), this.def.startTimeoutMs))),
    ]);
    clearTimeout(timer);
    return outcome;
  }

  /** Why a start failed, for the action's error: the outcome, how the process ended and its last words. */
  startFailure(outcome: 'exit' | 'timeout', exit: ExitInfo, lastLines: string[]): Failure {
    const lines = lastLines.join(' | ');
    return outcome === 'timeout'
      ? { code: 'start_timeout', detail: `The game was not ready within ${this.def.startTimeoutMs} ms and was killed. Last console lines: ${lines}` }
      : { code: 'start_failed', detail: `The game exited while starting (${describeExit(exit)}). Last console lines: ${lines}` };
  }

  /** What the telemetry sampler reads of it; players are 0 until the game reported them. */
  live(serverId: string): LiveServer {
    const p = this.reported;
    const usage = this.proc.usage ? { usage: this.proc.usage() } : {};
    return { serverId, pid: this.proc.pid, tps: this.tps, players_online: p?.online ?? 0, players_max: p?.max ?? 0, ...usage };
  }

  /** Who is online: the last IPC report, or a fresh Minecraft ping for ping-probed software. */
  async players(now: number): Promise<Players> {
    if (this.def.players === 'none') throw new AppError('invalid_state', `${this.def.id} does not report its players.`);
    if (this.def.players === 'minecraft-ping') return this.ping(now);
    return this.reported ?? { online: 0, max: this.plan.player_slots, players: [] };
  }

  /**
   * Who the game last said is online: its last IPC report, or for ping-probed software the last ping's list,
   * polled while it runs (at most PING_EVERY_MS old). Empty before the first report.
   */
  online(): Player[] {
    return this.reported?.players ?? [];
  }

  /** For ping-probed software, pings when the last ping is older than PING_EVERY_MS (failures are ignored). */
  pollPlayers(now: number): void {
    if (this.def.players === 'minecraft-ping' && now - this.lastPingAt > PING_EVERY_MS) this.ping(now).catch(() => undefined);
  }

  private async ping(now: number): Promise<Players> {
    this.lastPingAt = now;
    return (this.reported = await pingPlayers(this.address.host, this.address.port));
  }

  /** Lets the process go, still running (GameProcess.detach), saying so on the console; false if it cannot. */
  detach(console: ConsoleBuffer): boolean {
    if (!this.proc.detach) return false;
    this.proc.detach();
    console.push('system', `process ${this.proc.pid} let go, still running, to be adopted again`);
    return true;
  }

  /**
   * Tells the game to disconnect a player it reported online (the definition's kick_command, which the caller
   * checked it has), with `reason`; their leaving within KICK_WINDOW_MS is reported as `kick`, as done by `by`. Returns the text
   * sent, for the console's input line; invalid_state as send().
   */
  kick(player: Player, reason: string, by?: Actor): string {
    // Functions, not strings, as replacements: a reason's `$&` or `$'` must reach the player as typed.
    const { kickCommand } = this.def;
    if (kickCommand === null) throw new Error(`${this.def.id} has no kick command`);
    const text = kickCommand.replace('{name}', () => player.name).replace('{reason}', () => reason).trimEnd();
    this.send(text);
    this.kicked.set(player.uuid, { at: this.now(), by });
    return text;
  }

  /** Writes one console command; invalid_state when the process's console is already closed (it is exiting). */
  send(text: string): void {
    try {
      this.proc.sendCommand(text);
    } catch {
      throw new AppError('invalid_state', 'The game process is exiting; its console is closed.');
    }
  }

  /**
   * Kills the process when its resident memory is over the plan's, saying so on the console; true if it did.
   * Never where the environment enforces memory (a cgroup or container ends it with outOfMemory itself).
   */
  killIfOverPlan(console: ConsoleBuffer): boolean {
    if (this.proc.enforcesMemory) return false;
    const rss = this.proc.rssBytes();
    if (rss === null || rss <= this.plan.memory_mb * 1024 * 1024) return false;
    console.push('system', `resident memory ${Math.round(rss / 1024 / 1024)} MB exceeds the plan's ${this.plan.memory_mb} MB; killing it`);
    void this.proc.kill();
    return true;
  }
}

export function describeExit(exit: ExitInfo): string {
  return (exit.signal ? `signal ${exit.signal}` : `exit code ${exit.code}`) + (exit.outOfMemory ? ', out of memory' : '');
}
