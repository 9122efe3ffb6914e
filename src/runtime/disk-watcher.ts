import type { Logger } from '../log';
import type { Plan } from '../catalog/plans';
import type { ActionsRepo } from '../store/actions-repo';
import type { DiskRow, ServersRepo } from '../store/servers-repo';
import type { CrashPolicy } from './crash-policy';
import { folderBytes, MIB } from './disk-usage';
import { CRASH_LINES, type ServerSupervisor } from './server-supervisor';
import type { Supervisors } from './supervisors';
import type { RuntimeConfig } from './types';

/** At this share of its plan's disk a server's console warns, once per crossing (docs/architecture.md "Disk"). */
export const DISK_NEAR_RATIO = 0.9;

export interface DiskWatcherDeps {
  servers: Pick<ServersRepo, 'diskRows' | 'recordDisk' | 'find' | 'stopWanted'>;
  actions: Pick<ActionsRepo, 'open'>;
  crashPolicy: CrashPolicy;
  supervisors: Supervisors;
  plans: readonly Plan[];
  config: Pick<RuntimeConfig, 'diskCheckMs'>;
  log: Logger;
  /** Where a server's backup archives are (backups.ts): they count toward its disk use. */
  backupsFolder: (serverId: string) => string;
  isClosing: () => boolean;
  /** Tracks a stop the watcher starts, so Runtime.idle() waits for it. */
  track: (p: Promise<unknown>) => void;
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
        if (closed || deps.isClosing()) return;
        if (row.state !== 'deleting') await measure(row);
      }
    } catch (err) {
      deps.log.error('measuring server folders failed', { error: String(err) });
    }
  }

  async function measure(row: DiskRow): Promise<void> {
    const slot = deps.supervisors.forServer(row);
    const own = await folderBytes(slot.dir, () => closed);
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
      slot.console.push('system', `disk use at ${percent}% of ${plan.disk_mb} MB`);
      deps.log.warn('server near its disk quota', { serverId: row.id, percent, limit_mb: plan.disk_mb });
    }
    // An open action is left to finish (after a stop nothing is needed; a start is looked at by the next pass).
    if (bytes > limit && server.desired_state === 'running' && deps.actions.open(row.id).length === 0 && !deps.isClosing()) {
      deps.log.warn('server over its disk quota; stopping it', { serverId: row.id, used_bytes: bytes, limit_mb: plan.disk_mb });
      deps.track(stopOverQuota(slot, bytes, plan));
    }
  }

  /**
   * Like the owner's stop (the software's stop command, SIGKILL after the timeout), but recorded as a crash with
   * reason disk_quota_exceeded, as the RSS watchdog records memory_limit, and with desired state `stopped`, so
   * neither reconcile nor the crash policy starts it again; a crashed server is cleared to `stopped`.
   */
  async function stopOverQuota(slot: ServerSupervisor, usedBytes: number, plan: Plan): Promise<void> {
    slot.console.push('system', `disk use ${Math.ceil(usedBytes / MIB)} MB exceeds the plan's ${plan.disk_mb} MB; stopping it`);
    deps.crashPolicy.record(slot.id, 'disk_quota_exceeded', { code: null, signal: null }, slot.console.lastTexts(CRASH_LINES));
    deps.servers.stopWanted(slot.id, { usedBytes, limitBytes: plan.disk_mb * MIB });
    await slot.whenInstalled();
    await slot.halt('stop', 'disk_quota_exceeded');
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
