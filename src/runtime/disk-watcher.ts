import type { Logger } from '../log';
import type { Plan } from '../catalog/plans';
import type { DiskRow, ServersRepo } from '../store/servers-repo';
import { diskStop } from './commands';
import type { CrashPolicy } from './crash-policy';
import { folderBytes, MIB } from './disk-usage';
import type { ServerStorage } from './storage';
import type { ServerDoor } from './door';
import type { Doors } from './doors';
import { CRASH_LINES } from './server-supervisor';
import type { RuntimeConfig } from './types';

/** At this share of its plan's disk a server's console warns, once per crossing (docs/architecture.md "Disk"). */
export const DISK_NEAR_RATIO = 0.9;

export interface DiskWatcherDeps {
  servers: Pick<ServersRepo, 'diskRows' | 'recordDisk' | 'find' | 'stopWanted'>;
  crashPolicy: CrashPolicy;
  doors: Pick<Doors, 'forServer' | 'isClosing'>;
  plans: readonly Plan[];
  config: Pick<RuntimeConfig, 'diskCheckMs'>;
  log: Logger;
  /** How one server's files are measured (storage.ts usage: a folder walk here, through the engine on a node). */
  storage: Pick<ServerStorage, 'usage'>;
  /** Where a server's backup archives are (backups.ts): they count toward its disk use. */
  backupsFolder: (serverId: string) => string;
}

/**
 * Measures every server's folder, one folder at a time, every `diskCheckMs` after the previous pass ended, so at
 * most one walk runs; records each measurement on its row; warns on the console when a server crosses
 * DISK_NEAR_RATIO of its plan's disk; stops a server over it that should run (docs/architecture.md "Disk").
 */
export function createDiskWatcher(deps: DiskWatcherDeps) {
  let timer: NodeJS.Timeout | null = null;
  let looping = false;
  let closed = false;
  let running: Promise<void> | null = null;
  let queued: Promise<void> | null = null;

  async function pass(): Promise<void> {
    try {
      for (const row of deps.servers.diskRows()) {
        if (closed || deps.doors.isClosing()) return;
        if (row.state !== 'deleting') await measure(row);
      }
    } catch (err) {
      deps.log.error('measuring server folders failed', { error: String(err) });
    }
  }

  async function measure(row: DiskRow): Promise<void> {
    const door = deps.doors.forServer(row);
    const own = await deps.storage.usage(row.id, () => closed); // its files, wherever they are (storage.ts)
    // Its backups count too (a missing folder, no backup yet, is 0); a walk cut short by closing counts nothing.
    const archives = await folderBytes(deps.backupsFolder(row.id), () => closed);
    if (own === null || closed) return;
    const bytes = own + (archives ?? 0);
    const server = deps.servers.find(row.id); // fresh after the walk: plan and desired state may have changed
    const plan = server && deps.plans.find((p) => p.id === server.plan);
    const limit = plan ? plan.disk_mb * MIB : Infinity;
    const near = DISK_NEAR_RATIO * limit;
    const crossed = bytes >= near && (row.disk_used_bytes === null || row.disk_used_bytes < near);
    // The crossing's quota.disk_warning event is written with the measurement (one transaction).
    if (!deps.servers.recordDisk(row.id, bytes, crossed ? { limitBytes: limit } : null)) return;
    if (!server || !plan) return;
    if (crossed) {
      const percent = Math.floor((bytes / limit) * 100);
      door.console.push('system', `disk use at ${percent}% of ${plan.disk_mb} MB`);
      deps.log.warn('server near its disk quota', { serverId: row.id, percent, limit_mb: plan.disk_mb });
    }
    // What holds the server is left to finish (after a stop nothing is needed; a start is looked at next pass).
    if (bytes > limit && server.desired_state === 'running' && door.holder() === null && !deps.doors.isClosing()) {
      deps.log.warn('server over its disk quota; stopping it', { serverId: row.id, used_bytes: bytes, limit_mb: plan.disk_mb });
      void door.submit(diskStop(() => recordStop(door, bytes, plan)));
    }
  }

  /**
   * What the stop records before it stops the game (commands.ts diskStop, like the owner's stop): a crash with
   * reason disk_quota_exceeded, as the RSS watchdog records memory_limit, and desired state `stopped`, so neither
   * reconcile nor the crash policy starts it again; a crashed server is cleared to `stopped`.
   */
  function recordStop(door: ServerDoor, usedBytes: number, plan: Plan): void {
    door.console.push('system', `disk use ${Math.ceil(usedBytes / MIB)} MB exceeds the plan's ${plan.disk_mb} MB; stopping it`);
    deps.crashPolicy.record(door.id, 'disk_quota_exceeded', { code: null, signal: null }, door.console.lastTexts(CRASH_LINES));
    deps.servers.stopWanted(door.id, { usedBytes, limitBytes: plan.disk_mb * MIB });
  }

  /** A fresh pass: runs now, or after the one under way (joining a pass already queued behind it). */
  function measureNow(): Promise<void> {
    if (!running) {
      running = pass().finally(() => (running = null));
      return running;
    }
    queued ??= running.then(() => {
      queued = null;
      return measureNow();
    });
    return queued;
  }

  function schedule(): void {
    if (looping && !closed) timer = setTimeout(() => void measureNow().then(schedule), deps.config.diskCheckMs);
  }

  return {
    /** Measures now, then every diskCheckMs after each pass ends. */
    start(): void {
      if (looping || closed) return;
      looping = true;
      void measureNow().then(schedule);
    },
    /** A pass now (or after the one under way); tests and the loop call it. Nothing once stopped. */
    measureNow,
    /** Stops the loop for good; resolves once a walk under way has given up. */
    async stop(): Promise<void> {
      closed = true;
      if (timer) clearTimeout(timer);
      timer = null;
      await queued;
      await running;
    },
  };
}

export type DiskWatcher = ReturnType<typeof createDiskWatcher>;
