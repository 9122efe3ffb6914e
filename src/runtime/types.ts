// Types shared by the runtime modules and its callers (main.ts, the HTTP layer, the telemetry sampler).
import type { ErrorCode } from '../errors';
import type { ServerState } from './states';

/** Why an action failed, as stored on the action row (error registry code + words for a person). */
export interface Failure {
  code: ErrorCode;
  detail: string;
}

export interface Plan {
  memory_mb: number;
  cpu_shares: number;
  max_players: number;
}

export interface RuntimeLog {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export interface RuntimeConfig {
  /** Server folders live in `<dataDir>/servers/<id>`. */
  dataDir: string;
  /** How long a graceful stop waits after the stop command before SIGKILL. */
  stopTimeoutMs: number;
  /** More than maxRestarts crashes within windowMs: the server stays crashed until a start action. */
  crashLoop: { maxRestarts: number; windowMs: number };
  /** First automatic restart delay; doubles with each crash in the window. */
  backoffMs: number;
  /** How often the RSS watchdog reads /proc. */
  memoryCheckMs: number;
  /** How often the reconcile loop makes actual state follow desired state. */
  reconcileMs: number;
}

export const runtimeConfigDefaults: Omit<RuntimeConfig, 'dataDir'> = {
  stopTimeoutMs: 30_000,
  crashLoop: { maxRestarts: 3, windowMs: 10 * 60_000 },
  backoffMs: 2_000,
  memoryCheckMs: 2_000,
  reconcileMs: 10_000,
};

/** What the telemetry sampler reads for each running server. tps/players are null until the game reported them. */
export interface LiveServer {
  serverId: string;
  pid: number;
  tps: number | null;
  players_online: number | null;
  players_max: number | null;
}

export interface StateChange {
  serverId: string;
  state: ServerState;
  previous: ServerState;
}

