import type { Logger } from '../../log';
import type { Plan } from '../../catalog/plans';
import type { DiskRow, ServersRepo } from '../../store/servers-repo';
import { diskStop } from '../server/commands';
import type { CrashPolicy } from '../server/crash-policy';
import { MIB } from '../host/disk-usage';
import type { ServerDoor } from '../server/door';
import type { Doors } from '../server/doors';
import { CRASH_LINES } from '../server/server-supervisor';
import type { RuntimeConfig } from '../server/types';

/** At this share of its plan's disk a server's console warns, once per crossing (docs/architecture.md "Disk"). */
export const DISK_NEAR_RATIO = 0.9;

export interface DiskWatcherDeps {
  servers: Pick<ServersRepo, 'diskDue' | 'recordDisk' | 'filesChanged' | 'planOf' | 'stopWanted'>;
  crashPolicy: CrashPolicy;
  doors: Pick<Doors, 'of' | 'isClosing'>;
  plans: readonly Plan[];
  config: Pick<RuntimeConfig, 'diskCheckMs'>;
  log: Logger;
  /**
   * One server's disk use in bytes, or null when it has nothing to measure (not installed, being deleted) or when
   * `stop()` turned true: the one call a pass makes per server, so how a server is measured (disk-usage.ts
   * serverDiskUsage: its files and its backup archives) can change without touching which servers are, and when.
   */
  measure(serverId: string, stop: () => boolean): Promise<number | null>;
}

/**
 * A pass records its measurements in one transaction, or one per this many in a pass that measures more (the first
 * after an upgrade measures every server), so no write holds the event loop for long.
 */
const RECORD_EVERY = 100;

/** A server measured in a pass, before the pass records it. */
interface Measured {
  row: DiskRow;
  bytes: number;
}

/** The watcher's mutable state: one object, owned by createDiskWatcher and handed to the pass and the loop. */
interface State {
  timer: NodeJS.Timeout | null;
  /** start() was called: each pass's end schedules the next. */
  looping: boolean;
  /** stop() was called: for good. */
  closed: boolean;
  /** The pass under way, and the one queued behind it (measureNow). */
  running: Promise<void> | null;
  queued: Promise<void> | null;
}

/** One pass: measures the servers due, one at a time, recording every RECORD_EVERY; never rejects. */
async function pass(deps: DiskWatcherDeps, state: State): Promise<void> {
  const stopping = () => state.closed || deps.doors.isClosing();
  try {
    let measured: Measured[] = [];
    for (const row of deps.servers.diskDue()) {
      if (stopping()) return; // what a pass cut short has not recorded yet is dropped
      const bytes = await deps.measure(row.id, () => state.closed);
      if (bytes !== null) measured.push({ row, bytes });
      if (measured.length >= RECORD_EVERY) {
        record(deps, measured);
        measured = [];
      }
    }
    if (!stopping()) record(deps, measured);
  } catch (err) {
    deps.log.error('measuring server folders failed', { error: String(err) });
  }
}

/** One transaction for these measurements (and their quota.disk_warning events), then what each calls for. */
function record(deps: DiskWatcherDeps, measured: Measured[]): void {
  if (measured.length === 0) return;
  const checked = measured.map(({ row, bytes }) => {
    const server = deps.servers.planOf(row.id); // fresh after the walk: plan and desired state may have changed
    const plan = server && deps.plans.find((p) => p.id === server.plan);
    const limit = plan ? plan.disk_mb * MIB : Infinity;
    const near = DISK_NEAR_RATIO * limit;
    const crossed = bytes >= near && (row.disk_used_bytes === null || row.disk_used_bytes < near);
    return { row, bytes, server, plan, limit, crossed };
  });
  const recorded = deps.servers.recordDisk(checked.map((m) => ({
    id: m.row.id, bytes: m.bytes, seenChanges: m.row.disk_changes, warnLimitBytes: m.crossed ? m.limit : null,
  })));
  for (const { row, bytes, server, plan, limit, crossed } of checked) {
    if (!recorded.has(row.id) || !server || !plan) continue;
    const over = bytes > limit && server.desired_state === 'running';
    if (!crossed && !over) continue;
    const door = deps.doors.of(row.id);
    if (crossed) {
      const percent = Math.floor((bytes / limit) * 100);
      door.console.push('system', `disk use at ${percent}% of ${plan.disk_mb} MB`);
      deps.log.warn('server near its disk quota', { serverId: row.id, percent, limit_mb: plan.disk_mb });
    }
    // What holds the server is left to finish (after a stop nothing is needed; a start is looked at next pass).
    if (over && door.holder() === null && !deps.doors.isClosing()) {
      deps.log.warn('server over its disk quota; stopping it', { serverId: row.id, used_bytes: bytes, limit_mb: plan.disk_mb });
      void door.submit(diskStop(() => recordStop(deps, door, bytes, plan)));
    }
  }
}

/**
 * What the stop records before it stops the game (commands.ts diskStop, like the owner's stop): a crash with
 * reason disk_quota_exceeded, as the RSS watchdog records memory_limit, and desired state `stopped`, so neither
 * reconcile nor the crash policy starts it again; a crashed server is cleared to `stopped`.
 */
function recordStop(deps: Pick<DiskWatcherDeps, 'crashPolicy' | 'servers'>, door: ServerDoor, usedBytes: number, plan: Plan): void {
  door.console.push('system', `disk use ${Math.ceil(usedBytes / MIB)} MB exceeds the plan's ${plan.disk_mb} MB; stopping it`);
  deps.crashPolicy.record(door.id, 'disk_quota_exceeded', { code: null, signal: null }, door.console.lastTexts(CRASH_LINES));
  deps.servers.stopWanted(door.id, { usedBytes, limitBytes: plan.disk_mb * MIB });
}

/**
 * Measures the servers whose disk use may have changed (docs/architecture.md "Disk"): those whose game may run, and
 * those whose files changed since their last measurement (a state change, a backup, a restore: servers.disk_changes),
 * one at a time, every `diskCheckMs` after the previous pass ended, so at most one walk runs; a stopped server is
 * measured once after it stops and not again until something changes it. A pass records its measurements in one
 * transaction (RECORD_EVERY); then it warns on the console of a server that crossed DISK_NEAR_RATIO of its plan's
 * disk and stops one over it that should run.
 */
export function createDiskWatcher(deps: DiskWatcherDeps) {
  const state: State = { timer: null, looping: false, closed: false, running: null, queued: null };

  /** A fresh pass: runs now, or after the one under way (joining a pass already queued behind it). */
  function measureNow(): Promise<void> {
    if (!state.running) {
      state.running = pass(deps, state).finally(() => (state.running = null));
      return state.running;
    }
    state.queued ??= state.running.then(() => {
      state.queued = null;
      return measureNow();
    });
    return state.queued;
  }

  function schedule(): void {
    if (state.looping && !state.closed) state.timer = setTimeout(() => void measureNow().then(schedule), deps.config.diskCheckMs);
  }

  return {
    /**
     * The server's files changed without a state change (a backup made or deleted, a restore): its next pass
     * measures it again, even if no game runs. Stored (servers.disk_changes), so a restart forgets nothing.
     */
    changed: (serverId: string): void => deps.servers.filesChanged(serverId),
    /** Measures now, then every diskCheckMs after each pass ends. */
    start(): void {
      if (state.looping || state.closed) return;
      state.looping = true;
      void measureNow().then(schedule);
    },
    /** A pass now (or after the one under way); tests and the loop call it. Nothing once stopped. */
    measureNow,
    /** Stops the loop for good; resolves once a walk under way has given up. */
    async stop(): Promise<void> {
      state.closed = true;
      if (state.timer) clearTimeout(state.timer);
      state.timer = null;
      await state.queued;
      await state.running;
    },
  };
}

export type DiskWatcher = ReturnType<typeof createDiskWatcher>;
