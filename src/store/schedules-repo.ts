import { required, type Db } from './db';
import type { Clock } from '../clock';
import { iso } from '../clock';
import { newId } from '../ids';
import { AppError, quotaExceeded } from '../errors';
import type { components } from '../../generated/v1';
import type { EventsRepo } from './events-repo';

export type ScheduleTask = components['schemas']['ScheduleTask'];
/** A schedule as stored, its commands' text whole (the API's Schedule shows it as `scheduleShown` says). */
export type Schedule = Omit<components['schemas']['Schedule'], 'tasks'> & { tasks: ScheduleTask[] };
type MemberPermission = components['schemas']['MemberPermission'];
export type ScheduleRun = components['schemas']['ScheduleRun'];
export type TaskOutcome = components['schemas']['TaskOutcome'];
export type RunTrigger = components['schemas']['ScheduleRunTrigger'];

/** A schedule's fields as stored (the API's, checked by the runtime's schedules, src/runtime/services/schedules.ts). */
export type ScheduleFields = Pick<Schedule, 'name' | 'cron' | 'time_zone' | 'enabled' | 'only_when' | 'tasks'>;

/** How many a server may have (SCHEDULES_PER_SERVER) and how many tasks each (TASKS_PER_SCHEDULE). */
export interface ScheduleLimits {
  perServer: number;
  tasksPerSchedule: number;
}

interface ScheduleRow {
  id: string;
  server_id: string;
  name: string;
  cron: string;
  time_zone: string;
  enabled: 0 | 1;
  only_when: Schedule['only_when'];
  tasks: string;
  next_run_at: string | null;
  /** Migration 033. */
  created_by: string;
  updated_by: string;
  disabled_reason: string | null;
  created_at: string;
  updated_at: string;
}

interface RunRow {
  id: string;
  schedule_id: string;
  server_id: string;
  trigger: RunTrigger;
  status: components['schemas']['ScheduleRunStatus'];
  due_at: string | null;
  started_at: string;
  finished_at: string | null;
  detail: string | null;
  tasks: string;
}

function toSchedule(row: ScheduleRow): Schedule {
  return {
    id: row.id, server_id: row.server_id, name: row.name, cron: row.cron, time_zone: row.time_zone, enabled: row.enabled === 1,
    only_when: row.only_when, tasks: JSON.parse(row.tasks) as ScheduleTask[], next_run_at: row.next_run_at,
    created_by: row.created_by, updated_by: row.updated_by, disabled_reason: row.disabled_reason, created_at: row.created_at, updated_at: row.updated_at,
  };
}

function toRun(row: RunRow): ScheduleRun {
  return {
    id: row.id, schedule_id: row.schedule_id, server_id: row.server_id, trigger: row.trigger, status: row.status, due_at: row.due_at,
    started_at: row.started_at, finished_at: row.finished_at, detail: row.detail, tasks: JSON.parse(row.tasks) as TaskOutcome[],
  };
}

/**
 * A schedule as shown to a reader holding `permissions` (openapi/v1.yaml ShownScheduleTasks): a command may hold a
 * secret, so its text is `null` to those who may not use the console.
 */
export function scheduleShown(schedule: Schedule, permissions: readonly MemberPermission[]): components['schemas']['Schedule'] {
  if (permissions.includes('console')) return schedule;
  return { ...schedule, tasks: schedule.tasks.map((t) => (t.type === 'command' ? { ...t, command: null } : t)) };
}

const HIDDEN_FAILURE = 'The command failed; what it said is shown to those who may use the console.';

/**
 * A run as shown to a reader holding `permissions` (TaskOutcome.error): a failed command task's detail, and the
 * run's detail that repeats it, may quote the command, so those who may not use the console read only that it failed.
 */
export function runShown(run: ScheduleRun, permissions: readonly MemberPermission[]): ScheduleRun {
  if (permissions.includes('console')) return run;
  let detail = run.detail;
  const tasks = run.tasks.map((t, i) => {
    if (t.type !== 'command' || t.error === null) return t;
    if (detail?.startsWith(`Task ${i + 1} (command) failed:`)) detail = `Task ${i + 1} (command) failed: ${HIDDEN_FAILURE}`;
    return { ...t, error: { ...t.error, detail: HIDDEN_FAILURE } };
  });
  return { ...run, detail, tasks };
}

/** Runs kept per schedule (openapi/v1.yaml listServerScheduleRuns): older ones go as a new one is recorded. */
export const RUNS_KEPT = 100;

const notFound = (id: string) => new AppError('schedule_not_found', `There is no schedule ${id} on this server.`);

type Statements = ReturnType<typeof statements>;

/** The repository's statements, prepared once (docs/conventions.md "Code layout"). */
function statements(db: Db) {
  return {
    insert: db.prepare(`INSERT INTO schedules (id, server_id, name, cron, time_zone, enabled, only_when, tasks, next_run_at, created_by, updated_by, created_at, updated_at)
      VALUES (@id, @server_id, @name, @cron, @time_zone, @enabled, @only_when, @tasks, @next_run_at, @author, @author, @created_at, @created_at)`),
    update: db.prepare(`UPDATE schedules SET name = @name, cron = @cron, time_zone = @time_zone, enabled = @enabled,
      only_when = @only_when, tasks = @tasks, next_run_at = @next_run_at, updated_by = @author, disabled_reason = NULL, updated_at = @updated_at WHERE id = @id`),
    disable: db.prepare(`UPDATE schedules SET enabled = 0, next_run_at = NULL, disabled_reason = ? WHERE id = ? AND enabled = 1`),
    enabledOf: db.prepare<unknown[], ScheduleRow>('SELECT * FROM schedules WHERE server_id = ? AND enabled = 1 ORDER BY id'),
    get: db.prepare<unknown[], ScheduleRow>('SELECT * FROM schedules WHERE server_id = ? AND id = ?'),
    byId: db.prepare<unknown[], ScheduleRow>('SELECT * FROM schedules WHERE id = ?'),
    page: db.prepare<unknown[], ScheduleRow>('SELECT * FROM schedules WHERE server_id = ? AND id > ? ORDER BY id LIMIT ?'),
    count: db.prepare<unknown[], number>('SELECT COUNT(*) FROM schedules WHERE server_id = ?').pluck(),
    remove: db.prepare('DELETE FROM schedules WHERE server_id = ? AND id = ?'),
    due: db.prepare<unknown[], ScheduleRow>(`SELECT sc.* FROM schedules sc JOIN servers s ON s.id = sc.server_id
      WHERE sc.next_run_at IS NOT NULL AND sc.next_run_at <= ? AND s.state != 'deleting' ORDER BY sc.next_run_at`),
    setNext: db.prepare('UPDATE schedules SET next_run_at = ? WHERE id = ?'),
    running: db.prepare(`SELECT id FROM schedule_runs WHERE schedule_id = ? AND status = 'running'`).pluck(),
    allRunning: db.prepare<unknown[], RunRow>(`SELECT * FROM schedule_runs WHERE status = 'running'`),
    insertRun: db.prepare(`INSERT INTO schedule_runs (id, schedule_id, server_id, trigger, status, due_at, started_at, finished_at, detail, tasks)
      VALUES (@id, @schedule_id, @server_id, @trigger, @status, @due_at, @started_at, @finished_at, @detail, @tasks)`),
    prune: db.prepare(`DELETE FROM schedule_runs WHERE schedule_id = @schedule_id AND id NOT IN
      (SELECT id FROM schedule_runs WHERE schedule_id = @schedule_id ORDER BY id DESC LIMIT ${RUNS_KEPT})`),
    runTasks: db.prepare('UPDATE schedule_runs SET tasks = ? WHERE id = ?'),
    endRun: db.prepare(`UPDATE schedule_runs SET status = @status, detail = @detail, tasks = @tasks, finished_at = @finished_at
      WHERE id = @id AND status = 'running'`),
    run: db.prepare<unknown[], RunRow>('SELECT * FROM schedule_runs WHERE server_id = ? AND schedule_id = ? AND id = ?'),
    runById: db.prepare<unknown[], RunRow>('SELECT * FROM schedule_runs WHERE id = ?'),
    runsFirst: db.prepare<unknown[], RunRow>('SELECT * FROM schedule_runs WHERE server_id = ? AND schedule_id = ? ORDER BY id DESC LIMIT ?'),
    runsAfter: db.prepare<unknown[], RunRow>('SELECT * FROM schedule_runs WHERE server_id = ? AND schedule_id = ? AND id < ? ORDER BY id DESC LIMIT ?'),
  };
}

/** The server's schedule by id; schedule_not_found when it has none by that id. */
function scheduleOf(st: Statements, serverId: string, id: string): Schedule {
  const row = st.get.get(serverId, id);
  if (!row) throw notFound(id);
  return toSchedule(row);
}

function tooManyTasks(n: number, limit: number) {
  return quotaExceeded('schedule_tasks', limit, n, `A schedule may have ${limit} tasks; this one would have ${n}.`);
}

const stored = (f: ScheduleFields) => ({ ...f, enabled: f.enabled ? 1 : 0, tasks: JSON.stringify(f.tasks) });

/** Creating, changing and deleting a schedule, each within its limits. */
function scheduleEdits(db: Db, st: Statements, clock: Clock, events: Pick<EventsRepo, 'raise'>) {
  return {
    /** quota_exceeded past `perServer` schedules or `tasksPerSchedule` tasks; one transaction with the count. */
    create(serverId: string, author: string, fields: ScheduleFields, nextRunAt: string | null, limits: ScheduleLimits): Schedule {
      if (fields.tasks.length > limits.tasksPerSchedule) throw tooManyTasks(fields.tasks.length, limits.tasksPerSchedule);
      return db.transaction(() => {
        const used = required(st.count.get(serverId));
        if (used >= limits.perServer) {
          throw quotaExceeded('schedules', limits.perServer, used, `The server has ${used} schedules, the most allowed; delete one first.`);
        }
        const id = newId('sch', clock.now());
        st.insert.run({ id, server_id: serverId, ...stored(fields), next_run_at: nextRunAt, author, created_at: iso(clock.now()) });
        return scheduleOf(st, serverId, id);
      }).immediate();
    },

    /**
     * Writes the schedule as `fields` say, with its next time, and `author` as the account its runs act for (a
     * change by anyone makes it theirs; a reason the service disabled it goes); quota_exceeded past
     * `tasksPerSchedule` tasks.
     */
    update(serverId: string, id: string, author: string, fields: ScheduleFields, nextRunAt: string | null, tasksPerSchedule: number): Schedule {
      if (fields.tasks.length > tasksPerSchedule) throw tooManyTasks(fields.tasks.length, tasksPerSchedule);
      scheduleOf(st, serverId, id);
      st.update.run({ id, ...stored(fields), next_run_at: nextRunAt, author, updated_at: iso(clock.now()) });
      return scheduleOf(st, serverId, id);
    },

    /**
     * The service disables an enabled schedule, saying why, with its `schedule.disabled` event (one transaction);
     * false, changing nothing, when it is gone or already disabled.
     */
    disable(id: string, reason: string): boolean {
      return db.transaction(() => {
        if (st.disable.run(reason.slice(0, 500), id).changes === 0) return false;
        const schedule = toSchedule(required(st.byId.get(id)));
        events.raise('schedule.disabled', { schedule }, { serverId: schedule.server_id });
        return true;
      })();
    },

    /** Deletes the schedule and its runs' records (cascade). */
    remove(serverId: string, id: string): void {
      if (st.remove.run(serverId, id).changes === 0) throw notFound(id);
    },
  };
}

/** Reading schedules: one, a page of the server's, the due ones and whether one is running. */
function scheduleReads(st: Statements) {
  return {
    get: (serverId: string, id: string): Schedule => scheduleOf(st, serverId, id),

    page(serverId: string, opts: { limit: number; startingAfter?: string }): { data: Schedule[]; has_more: boolean } {
      const rows = st.page.all(serverId, opts.startingAfter ?? '', opts.limit + 1);
      return { data: rows.slice(0, opts.limit).map(toSchedule), has_more: rows.length > opts.limit };
    },

    /** The task types of the server's schedule, or undefined when it has none by that id (the access check). */
    taskTypes(serverId: string, id: string): string[] | undefined {
      const row = st.get.get(serverId, id);
      return row && (JSON.parse(row.tasks) as ScheduleTask[]).map((t) => t.type);
    },

    /** Whether the schedule still exists (a run checks between tasks). */
    exists: (id: string): boolean => st.byId.get(id) !== undefined,

    /** The enabled schedules whose next time is at or before `now` (RFC 3339), on servers not being deleted. */
    due: (now: string): Schedule[] => st.due.all(now).map(toSchedule),

    /** The server's enabled schedules (to find those a change of its members leaves unable to run). */
    enabled: (serverId: string): Schedule[] => st.enabledOf.all(serverId).map(toSchedule),

    /** Whether a run of the schedule is under way (a run never overlaps its schedule's previous one). */
    isRunning: (scheduleId: string): boolean => st.running.get(scheduleId) !== undefined,
  };
}

/** A schedule's runs: begun with the schedule's next time, their progress, ended with their event, and read. */
function scheduleRuns(db: Db, st: Statements, clock: Clock, events: Pick<EventsRepo, 'raise'>) {
  return {
    /**
     * Records a run as it begins: `running` with every task `pending`; or ended at once with every task `skipped`,
     * `skipped` or `failed` (`detail` says why), with its `schedule.ran` or `schedule.failed` event. A scheduled
     * run also moves the schedule to `nextRunAt`, in the same transaction. Older runs past RUNS_KEPT go.
     */
    begin(schedule: Schedule, run: { trigger: RunTrigger; dueAt: string | null; skipped?: string; failed?: string }, nextRunAt?: string | null): ScheduleRun {
      return db.transaction(() => {
        const now = iso(clock.now());
        const ended = run.failed !== undefined ? 'failed' : run.skipped !== undefined ? 'skipped' : null;
        const tasks: TaskOutcome[] = schedule.tasks.map((t) => ({
          type: t.type, status: ended ? 'skipped' : 'pending', started_at: null, finished_at: null, error: null, action_id: null, backup_id: null,
        }));
        const row: RunRow = {
          id: newId('run', clock.now()), schedule_id: schedule.id, server_id: schedule.server_id, trigger: run.trigger,
          status: ended ?? 'running', due_at: run.dueAt, started_at: now, finished_at: ended ? now : null,
          detail: (run.failed ?? run.skipped)?.slice(0, 500) ?? null, tasks: JSON.stringify(tasks),
        };
        st.insertRun.run(row);
        st.prune.run({ schedule_id: schedule.id });
        if (nextRunAt !== undefined) st.setNext.run(nextRunAt, schedule.id);
        const begun = toRun(row);
        if (ended) events.raise(ended === 'failed' ? 'schedule.failed' : 'schedule.ran', { schedule: scheduleOf(st, schedule.server_id, schedule.id), run: begun }, { serverId: schedule.server_id });
        return begun;
      }).immediate();
    },

    /** A run's task outcomes so far (a task began or ended). */
    progress(runId: string, tasks: TaskOutcome[]): void {
      st.runTasks.run(JSON.stringify(tasks), runId);
    },

    /**
     * Ends a run with its event (`schedule.failed` when `failed`, else `schedule.ran`), one transaction; nothing
     * when the run is gone (its schedule was deleted) or already ended.
     */
    finish(runId: string, status: 'succeeded' | 'failed', detail: string | null, tasks: TaskOutcome[]): void {
      db.transaction(() => {
        const ended = st.endRun.run({ id: runId, status, detail: detail?.slice(0, 500) ?? null, tasks: JSON.stringify(tasks), finished_at: iso(clock.now()) });
        if (ended.changes === 0) return;
        const run = toRun(required(st.runById.get(runId)));
        const schedule = toSchedule(required(st.byId.get(run.schedule_id)));
        events.raise(status === 'failed' ? 'schedule.failed' : 'schedule.ran', { schedule, run }, { serverId: run.server_id });
      })();
    },

    /** The runs a previous service life left `running`: at boot they end `failed`. */
    interrupted: (): ScheduleRun[] => st.allRunning.all().map(toRun),

    run(serverId: string, scheduleId: string, runId: string): ScheduleRun {
      const row = st.run.get(serverId, scheduleId, runId);
      if (!row) throw new AppError('schedule_run_not_found', `There is no run ${runId} of schedule ${scheduleId}.`);
      return toRun(row);
    },

    /** A page of the schedule's runs, newest first (`startingAfter`: the last run of the previous page). */
    runs(serverId: string, scheduleId: string, opts: { limit: number; startingAfter?: string }): { data: ScheduleRun[]; has_more: boolean } {
      scheduleOf(st, serverId, scheduleId);
      const rows = opts.startingAfter
        ? st.runsAfter.all(serverId, scheduleId, opts.startingAfter, opts.limit + 1)
        : st.runsFirst.all(serverId, scheduleId, opts.limit + 1);
      return { data: rows.slice(0, opts.limit).map(toRun), has_more: rows.length > opts.limit };
    },
  };
}

/**
 * The `schedules` and `schedule_runs` tables (migration 029; docs/architecture.md "Schedules"). The runtime's
 * schedules (src/runtime/services/schedules.ts) are the only writer: they check a schedule's cron and time zone, compute its
 * next time and run it. A run's row is written when it begins, with the schedule's next time, in one transaction,
 * so no time runs twice, even across kill -9; its end is written with its `schedule.ran` or `schedule.failed`
 * event. Every read takes the server's id.
 */
export function createSchedulesRepo(db: Db, clock: Clock, events: Pick<EventsRepo, 'raise'>) {
  const st = statements(db);
  return { ...scheduleEdits(db, st, clock, events), ...scheduleReads(st), ...scheduleRuns(db, st, clock, events) };
}

export type SchedulesRepo = ReturnType<typeof createSchedulesRepo>;
