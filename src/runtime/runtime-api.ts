// The Runtime's contract, apart from its implementation (runtime.ts), so callers read one short file.
import type { Action, ActionReason, ActionType } from '../store/actions-repo';
import type { Crash } from '../store/crashes-repo';
import type { NewServer, Server } from '../store/servers-repo';
import type { ConsoleLine, ConsoleListener } from './console-buffer';
import type { Players } from './probes';
import type { ServerData } from './server-data';
import type { SettingValues } from './settings';
import type { ServerState } from './states';
import type { CommandSender, LiveServer, RuntimeEvents } from './types';

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
  /** Starts the scheduled backups that are due now (backup-schedule.ts; the loop does it every minute). */
  runBackupSchedules(): string[];
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
   * disk_quota_exceeded for a start or restart while its last disk measurement is over its plan's. `reason`
   * (Action.reason) is `requested` unless the service itself asks (`idle`: idle-stop.ts).
   */
  requestAction(serverId: string, userId: string, type: ActionType, backupId?: string, reason?: ActionReason): Action;
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
    /** Whether every line after `afterSeq` is still buffered (ConsoleBuffer.holdsAllAfter). */
    holdsAllAfter(serverId: string, afterSeq: number): boolean;
  };
  /** The servers' settings, player lists and backups (server-data.ts). */
  data: ServerData;
  /** Every running game, for the telemetry sampler. */
  live(): LiveServer[];
  on<E extends keyof RuntimeEvents>(event: E, fn: (e: RuntimeEvents[E]) => void): void;
  off<E extends keyof RuntimeEvents>(event: E, fn: (e: RuntimeEvents[E]) => void): void;
}
