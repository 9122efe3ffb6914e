// Types of the runtime's own (not in the spec): its configuration and what it reports to the rest of the service.
import type { ServerState } from './states';
import type { Actor } from '../../actors';

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
  /** How long the disk watcher rests between two passes over every server's folder (DISK_CHECK_INTERVAL_S). */
  diskCheckMs: number;
  /** How often backup schedules are looked at (backup-schedule.ts). */
  backupScheduleMs: number;
  /** How many backups an account may keep after deleting their servers (KEPT_BACKUPS_PER_USER). */
  keptBackupsPerUser: number;
  /** Uploads, downloads and extractions of server files one user may have under way (FILES_TRANSFERS_PER_USER). */
  filesTransfersPerUser: number;
}

export const runtimeConfigDefaults: Omit<RuntimeConfig, 'dataDir'> = {
  stopTimeoutMs: 30_000,
  crashLoop: { maxRestarts: 3, windowMs: 10 * 60_000 },
  backoffMs: 2_000,
  memoryCheckMs: 2_000,
  reconcileMs: 10_000,
  diskCheckMs: 60_000,
  backupScheduleMs: 60_000,
  keptBackupsPerUser: 20,
  filesTransfersPerUser: 4,
};

/**
 * A running server as the telemetry sampler reads it (Doors.live()). tps is null until the game reported it;
 * players are 0 until it did.
 */
export interface LiveServer {
  serverId: string;
  pid: number;
  tps: number | null;
  players_online: number;
  players_max: number;
  /**
   * The environment's measure (a container's engine stats); absent where telemetry reads /proc by pid, null
   * while the environment has none yet (environment.ts GameProcess.usage).
   */
  usage?: { cpuMs: number; rssBytes: number } | null;
}

/** Published on every real change of a server's observed state (runtime.on('state')). */
export interface StateChange {
  serverId: string;
  state: ServerState;
  previous: ServerState;
}

/** What the runtime publishes: state changes, and the end of a removal (its row is about to go). */
export interface RuntimeEvents {
  state: StateChange;
  removed: { serverId: string };
}

/** Who sends a console command (src/actors.ts): an account and its token, or the service itself (a schedule). */
export type CommandSender = Actor;
