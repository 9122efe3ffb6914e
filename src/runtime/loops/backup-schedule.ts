// Backup schedules (openapi/v1.yaml BackupSchedule; docs/architecture.md "Backups"): when a server's next automatic
// backup is due, and the loop that makes the backups that are due (whether a schedule is valid: server-rules.ts).
import { AppError } from '../../errors';
import type { Logger } from '../../log';
import type { BackupSchedule, StoredSchedule } from '../../store/servers-repo';
import { nextTime, parseCron } from '../services/cron';

/** The first time after `after` (ms) that the schedule is due (ms). */
export function nextBackupAt(schedule: BackupSchedule, after: number): number {
  if ('every_hours' in schedule) return after + schedule.every_hours * 3_600_000;
  // A cron that names no time never comes due (creation refuses one: cronProblem).
  return nextTime(parseCron(schedule.cron), 'UTC', after) ?? Infinity;
}

export interface BackupSchedulerDeps {
  /** Every server with a schedule, with the time of its newest automatic backup (RFC 3339) or null. */
  scheduled(): Array<{ serverId: string; schedule: StoredSchedule; lastAutomatic: string | null }>;
  /** Starts an automatic backup (runtime backups.create); throws an AppError when it cannot start now. */
  backUp(serverId: string): void;
  now(): number;
  log: Logger;
  /** How often schedules are looked at (60 s). */
  everyMs: number;
}

/**
 * Every `everyMs`, starts the automatic backups that are due: a schedule is due at its next time after the
 * server's newest automatic backup (or after it was set). One that cannot start now (an action or a backup under
 * way, a server being installed or deleted) is tried at the next look; a missed time is made up once, not once per
 * time missed.
 */
export function createBackupScheduler(deps: BackupSchedulerDeps) {
  let timer: NodeJS.Timeout | null = null;

  function runDue(): string[] {
    const started: string[] = [];
    for (const { serverId, schedule, lastAutomatic } of deps.scheduled()) {
      const after = Math.max(Date.parse(lastAutomatic ?? schedule.since), Date.parse(schedule.since));
      if (nextBackupAt(schedule, after) > deps.now()) continue;
      try {
        deps.backUp(serverId);
        started.push(serverId);
      } catch (err) {
        if (!(err instanceof AppError)) deps.log.error('a scheduled backup failed to start', { server_id: serverId, error: String(err) });
      }
    }
    return started;
  }

  return {
    start(): void {
      timer ??= setInterval(() => {
        try {
          runDue();
        } catch (err) {
          deps.log.error('looking at backup schedules failed; tried again at the next look', { error: String(err) });
        }
      }, deps.everyMs).unref();
    },
    stop(): void {
      if (timer) clearInterval(timer);
      timer = null;
    },
    /** Looks now (tests); returns the servers whose backup started. */
    runDue,
  };
}
