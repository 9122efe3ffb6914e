// What a schedule may be and who may run it (openapi/v1.yaml, the Schedules tag; docs/architecture.md "Schedules"):
// its cron and time zone (checked, and its times, through cron.ts), and its author's authority, the permissions the
// account that last wrote it holds when a run begins. src/runtime/services/schedules.ts uses both.
import { AppError, type FieldError } from '../../errors';
import type { MembersRepo } from '../../store/members-repo';
import type { Schedule, ScheduleTask } from '../../store/schedules-repo';
import type { MemberPermission } from '../../store/server-view';
import { checkCommandPermissions, type ConsolePermissions } from '../software/command-permissions';
import { cronProblem, nextTime as cronNext, parseCron } from './cron';

/** What deciding a schedule's authority reads: an account's standing, the server's software's console rules. */
export interface AuthorityDeps {
  /** An account's standing on a server: the permissions a schedule's author holds when a run begins. */
  standing: MembersRepo['standing'];
  /** The server's software's console rules (command-permissions.ts): a command task needs what the console would. */
  softwareOf(serverId: string): { consolePermissions: ConsolePermissions } | undefined;
}

/**
 * The first time after `after` (ms) that the cron names in its time zone (ms); bounded in cost (cron.ts). Throws when
 * there is none, which creation refuses (cronProblem), so only a cron stored by an older version can.
 */
export function nextTime(schedule: Pick<Schedule, 'cron' | 'time_zone'>, after: number): number {
  const at = cronNext(parseCron(schedule.cron), schedule.time_zone, after);
  if (at === null) throw new Error(`the cron "${schedule.cron}" names no time that exists`);
  return at;
}

/**
 * A schedule's rules beyond its schema: a five-field cron that parses and names a day that exists, a time zone the
 * runtime knows. Pointers are under `at` (`/body`, or `/query` for listScheduleTimes).
 */
export function scheduleFieldErrors(fields: Partial<Pick<Schedule, 'cron' | 'time_zone'>>, at = '/body'): FieldError[] {
  const errors: FieldError[] = [];
  if (fields.time_zone !== undefined) {
    try {
      new Intl.DateTimeFormat('en', { timeZone: fields.time_zone });
    } catch {
      errors.push({ pointer: `${at}/time_zone`, detail: 'is not an IANA time zone name' });
    }
  }
  const problem = fields.cron === undefined ? null : cronProblem(fields.cron);
  if (problem) errors.push({ pointer: `${at}/cron`, detail: problem.slice(0, 200) });
  return errors;
}

/** Throws validation_failed with scheduleFieldErrors, if any. */
export function check(fields: Partial<Pick<Schedule, 'cron' | 'time_zone'>>, at = '/body'): void {
  const errors = scheduleFieldErrors(fields, at);
  if (errors.length > 0) throw new AppError('validation_failed', 'The schedule is not valid.', errors);
}


/**
 * The permission each task type needs: the same as the spec's `x-permission: { tasks }` of the schedule operations
 * (openapi/v1.yaml; a test holds the two equal).
 */
export const TASK_PERMISSION: Record<ScheduleTask['type'], MemberPermission> = { command: 'console', power: 'power', backup: 'backups' };

/** The permissions `userId` holds on the server now (every one for its owner), or null when it is not theirs or shared. */
export function permissionsOf(deps: AuthorityDeps, serverId: string, userId: string): readonly MemberPermission[] | null {
  return deps.standing(serverId, userId)?.permissions ?? null;
}

/** Why the schedule's author cannot run its tasks now (a sentence), or null; with the permissions they hold. */
export function authority(deps: AuthorityDeps, schedule: Schedule): { problem: string | null; permissions: readonly MemberPermission[] } {
  const permissions = permissionsOf(deps, schedule.server_id, schedule.updated_by);
  if (permissions === null) return { problem: `Its author (${schedule.updated_by}) no longer has access to this server.`, permissions: [] };
  for (const task of schedule.tasks) {
    const need = TASK_PERMISSION[task.type];
    if (!permissions.includes(need)) return { problem: `Its author (${schedule.updated_by}) no longer has the ${need} permission its ${task.type} task needs.`, permissions };
  }
  try {
    commandsAllowed(deps, schedule.server_id, schedule.tasks, permissions);
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return { problem: `Its author (${schedule.updated_by}) no longer has what it needs: ${err.detail}`, permissions };
  }
  return { problem: null, permissions };
}

/** Throws missing_permission when a command task's command needs a permission `held` lacks (as the console would). */
export function commandsAllowed(deps: AuthorityDeps, serverId: string, tasks: readonly ScheduleTask[], held: readonly MemberPermission[]): void {
  const software = deps.softwareOf(serverId);
  if (!software) return;
  for (const task of tasks) if (task.type === 'command') checkCommandPermissions(software, task.command, held);
}

