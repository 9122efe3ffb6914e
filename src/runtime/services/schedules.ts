// Schedules (openapi/v1.yaml, the Schedules tag; docs/architecture.md "Schedules"): a server's tasks on a cron, run
// in order with their delays, through the same services as requests, acting as the schedule, for its author.
import { serviceActor, type Actors } from '../../actors';
import { iso } from '../../clock';
import { AppError, invalidState, type ErrorCode, messageOf } from '../../errors';
import type { Logger } from '../../log';
import type { RunTrigger, Schedule, ScheduleFields, ScheduleLimits, ScheduleRun, SchedulesRepo, ScheduleTask, TaskOutcome } from '../../store/schedules-repo';
import type { MemberPermission } from '../../store/server-view';
import type { BackupsService } from './backups';
import type { Consoles } from './consoles';
import type { Doors } from '../server/doors';
import type { PowerService } from './power';
import { authority, check, commandsAllowed, nextTime, permissionsOf, type AuthorityDeps } from './schedule-rules';

export { nextTime, scheduleFieldErrors, TASK_PERMISSION } from './schedule-rules';

export interface SchedulesConfig extends ScheduleLimits {
  /** How often due schedules are looked for (cron's resolution is a minute). */
  checkMs: number;
  /** How long a second of a task's `delay_seconds` is: 1,000 ms, shortened by tests only. */
  secondMs: number;
}

export interface SchedulesDeps extends AuthorityDeps {
  repo: SchedulesRepo;
  doors: Pick<Doors, 'of' | 'isClosing'>;
  power: Pick<PowerService, 'begin'>;
  backups: Pick<BackupsService, 'begin' | 'get'>;
  consoles: Pick<Consoles, 'sendCommand'>;
  /** The server's owner: a schedule's actions are recorded for them, as its quotas are theirs. */
  ownerOf(serverId: string): string | undefined;
  actors: Actors;
  now(): number;
  log: Logger;
  /** Tracks a run until it ends (Runtime idle()). */
  track(p: Promise<unknown>): void;
  config: SchedulesConfig;
}

/** What a task answered when it failed, as a TaskOutcome's error. */
function taskError(err: unknown): { code: ErrorCode; detail: string } {
  return err instanceof AppError ? { code: err.code, detail: err.detail } : { code: 'internal_error', detail: String(err) };
}

/** The schedules' mutable state: one object, owned by createSchedules and handed to the pieces below. */
interface State {
  /** The runs under way, by run id: how to end each early (stop) and when it has ended (settled). */
  runs: Map<string, { abort: AbortController; done: Promise<void> }>;
  /** The loop's interval, while it is started. */
  timer: NodeJS.Timeout | null;
  /** When this life of the service began: a run due before it was missed while the service was down. */
  bootAt: number;
}

/** A schedule's next time from now, or null while it is disabled. */
function next(deps: SchedulesDeps, s: Pick<Schedule, 'cron' | 'time_zone' | 'enabled'>): string | null {
  return s.enabled ? iso(nextTime(s, deps.now())) : null;
}

/** Waits `ms`, or less when the run is aborted. */
function delay(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(t);
      resolve();
    }, { once: true });
  });
}

/** One task, through the service a request would use; resolves with what it made, throws why it failed. */
async function perform(deps: SchedulesDeps, serverId: string, task: ScheduleTask, outcome: TaskOutcome, permissions: readonly MemberPermission[]): Promise<void> {
  if (task.type === 'command') {
    deps.consoles.sendCommand(serverId, task.command, deps.actors.current(), [...permissions]);
    return;
  }
  if (task.type === 'power') {
    const { action, done } = deps.power.begin(serverId, deps.ownerOf(serverId) ?? '', task.action);
    outcome.action_id = action.id;
    const failure = await done;
    if (failure) throw new AppError(failure.code, failure.detail);
    return;
  }
  const { backup, done } = deps.backups.begin(serverId, null, true);
  outcome.backup_id = backup.id;
  await done;
  const made = deps.backups.get(serverId, backup.id);
  if (made.status !== 'ready') throw new AppError('internal_error', made.error ?? 'The backup was not made.');
}

/**
 * Runs the tasks in order, each after its delay, each with the permissions the author holds as it begins (a run
 * whose author lost access meanwhile fails at its next task: a delay can be an hour); the first failure ends it
 * (the rest are skipped).
 */
async function execute(deps: SchedulesDeps, schedule: Schedule, run: ScheduleRun, signal: AbortSignal): Promise<void> {
  const { repo, config } = deps;
  const tasks = run.tasks.map((t) => ({ ...t }));
  let failed: string | null = null;
  for (const [i, task] of schedule.tasks.entries()) {
    const outcome = tasks[i];
    if (failed === null) await delay((task.delay_seconds ?? 0) * config.secondMs, signal);
    if (failed !== null || signal.aborted || !repo.exists(schedule.id)) {
      outcome.status = 'skipped';
      continue;
    }
    Object.assign(outcome, { status: 'running', started_at: iso(deps.now()) });
    repo.progress(run.id, tasks);
    try {
      const { problem, permissions } = authority(deps, schedule);
      if (problem) throw new AppError('missing_permission', problem);
      await perform(deps, schedule.server_id, task, outcome, permissions);
      outcome.status = 'succeeded';
    } catch (err) {
      const error = taskError(err);
      Object.assign(outcome, { status: 'failed', error });
      failed = `Task ${i + 1} (${task.type}) failed: ${error.detail}`;
    }
    outcome.finished_at = iso(deps.now());
    repo.progress(run.id, tasks);
  }
  if (failed === null && signal.aborted) failed = 'The service stopped during the run; the tasks left were skipped.';
  repo.finish(run.id, failed === null ? 'succeeded' : 'failed', failed, tasks);
}

/** Starts a recorded run in the background, as the schedule (src/actors.ts), for its author. */
function launch(deps: SchedulesDeps, state: State, schedule: Schedule, run: ScheduleRun): void {
  const abort = new AbortController();
  const done = deps.actors
    .run(serviceActor('schedule', schedule.id), () => execute(deps, schedule, run, abort.signal))
    .catch((err: unknown) => deps.log.error('a schedule run failed unexpectedly', { schedule_id: schedule.id, error: String(err) }))
    .finally(() => state.runs.delete(run.id));
  state.runs.set(run.id, { abort, done });
  deps.track(done);
}

/** Why a scheduled run would do nothing now, or null: its `only_when` does not hold. */
function conditionFails(deps: SchedulesDeps, schedule: Schedule): string | null {
  if (schedule.only_when === null) return null;
  const door = deps.doors.of(schedule.server_id);
  if (door.state !== 'running') return `The server was ${door.state}; the schedule runs only while it is running.`;
  if (schedule.only_when === 'players_online' && (door.live?.players_online ?? 0) === 0) return 'Nobody was online; the schedule runs only while someone is.';
  return null;
}

/**
 * Starts the runs that are due (the loop; tests call it with a manual clock). Returns the runs recorded. Each
 * schedule is on its own: one whose run cannot even be recorded (its next time cannot be computed) gets a failed
 * run and is disabled, and the schedules due after it still run (openapi/v1.yaml, the Schedules tag).
 */
function tick(deps: SchedulesDeps, state: State): ScheduleRun[] {
  const { repo } = deps;
  if (deps.doors.isClosing()) return [];
  const begun: ScheduleRun[] = [];
  for (const schedule of repo.due(iso(deps.now()))) {
    const trigger: RunTrigger = schedule.next_run_at !== null && Date.parse(schedule.next_run_at) < state.bootAt ? 'missed' : 'scheduled';
    const due = { trigger, dueAt: schedule.next_run_at };
    deps.actors.run(serviceActor('schedule', schedule.id), () => {
      try {
        const { problem } = authority(deps, schedule);
        const skipped = repo.isRunning(schedule.id) ? 'The previous run was still under way.' : conditionFails(deps, schedule);
        const run = repo.begin(schedule, problem ? { ...due, failed: problem } : skipped ? { ...due, skipped } : due, problem ? null : next(deps, schedule));
        if (problem) repo.disable(schedule.id, problem);
        else if (!skipped) launch(deps, state, schedule, run);
        begun.push(run);
      } catch (err) {
        begun.push(...contain(deps, schedule, due, err));
      }
    });
  }
  return begun;
}

/** A due schedule whose run could not begin: a failed run says why, and the schedule is disabled. Never throws. */
function contain(deps: SchedulesDeps, schedule: Schedule, due: { trigger: RunTrigger; dueAt: string | null }, err: unknown): ScheduleRun[] {
  const reason = `The service could not run it: ${messageOf(err)}`;
  deps.log.error('a due schedule failed; it is disabled', { schedule_id: schedule.id, error: String(err) });
  try {
    const run = deps.repo.begin(schedule, { ...due, failed: reason }, null);
    deps.repo.disable(schedule.id, reason);
    return [run];
  } catch (again) {
    deps.log.error('a failed schedule could not be recorded', { schedule_id: schedule.id, error: String(again) });
    return [];
  }
}

/** What the API's schedule operations call: the CRUD (validated, with the next time), a run now, the runs, the times. */
function requests(deps: SchedulesDeps, state: State) {
  const { repo, config } = deps;
  return {
    list: (serverId: string, opts: { limit: number; startingAfter?: string }) => repo.page(serverId, opts),
    get: (serverId: string, id: string): Schedule => repo.get(serverId, id),
    /**
     * A new schedule by `author`, whose runs act for them, with its next time (validation_failed, quota_exceeded:
     * SchedulesRepo.create).
     */
    create(serverId: string, author: string, body: Partial<ScheduleFields> & Pick<ScheduleFields, 'name' | 'cron' | 'tasks'>): Schedule {
      const fields: ScheduleFields = { time_zone: 'UTC', enabled: true, only_when: null, ...body };
      check(fields);
      commandsAllowed(deps, serverId, fields.tasks, permissionsOf(deps, serverId, author) ?? []);
      return repo.create(serverId, author, fields, next(deps, fields), config);
    },
    /**
     * Changes the fields given, by `author`, whose schedule it becomes (its runs act for them); a new cron, time zone
     * or `enabled` moves the next time to the first from now.
     */
    update(serverId: string, id: string, author: string, patch: Partial<ScheduleFields>): Schedule {
      check(patch);
      const current = repo.get(serverId, id);
      const { name, cron, time_zone, enabled, only_when, tasks } = { ...current, ...patch };
      const fields: ScheduleFields = { name, cron, time_zone, enabled, only_when, tasks };
      // It becomes the author's: its commands must be ones they could send themselves.
      commandsAllowed(deps, serverId, fields.tasks, permissionsOf(deps, serverId, author) ?? []);
      const moved = patch.cron !== undefined || patch.time_zone !== undefined || patch.enabled !== undefined;
      return repo.update(serverId, id, author, fields, moved ? next(deps, fields) : current.next_run_at, config.tasksPerSchedule);
    },
    /**
     * After a change of the server's members (a removal, new permissions): disables, each with its
     * `schedule.disabled` event, the enabled schedules whose author can no longer run them. Returns their ids.
     */
    membersChanged(serverId: string): string[] {
      const disabled: string[] = [];
      for (const schedule of repo.enabled(serverId)) {
        const { problem } = authority(deps, schedule);
        if (problem && repo.disable(schedule.id, problem)) disabled.push(schedule.id);
      }
      return disabled;
    },
    /** Deletes it; a run under way ends after its current task (the rest are skipped; its record goes with it). */
    remove: (serverId: string, id: string): void => repo.remove(serverId, id),
    /**
     * Runs it now, whatever its cron and condition (schedule_running while a run is under way), for its author. The
     * caller (holding `callerPermissions`) must be able to do what its commands do, as at a change: running someone
     * else's schedule never borrows their permissions (missing_permission).
     */
    runNow(serverId: string, id: string, callerPermissions: readonly MemberPermission[]): ScheduleRun {
      const schedule = repo.get(serverId, id);
      commandsAllowed(deps, serverId, schedule.tasks, callerPermissions);
      if (deps.doors.isClosing()) throw new AppError('service_unavailable', 'The service is shutting down; try again shortly.');
      const serverState = deps.doors.of(serverId).state;
      if (serverState === 'deleting') throw invalidState(serverState, 'The server is being deleted.');
      if (repo.isRunning(id)) throw new AppError('schedule_running', `A run of schedule ${id} is still under way; wait for it to end.`);
      const { problem } = authority(deps, schedule);
      const run = repo.begin(schedule, problem ? { trigger: 'manual', dueAt: null, failed: problem } : { trigger: 'manual', dueAt: null });
      if (problem) repo.disable(schedule.id, problem);
      else launch(deps, state, schedule, run);
      return run;
    },
    runs: (serverId: string, id: string, opts: { limit: number; startingAfter?: string }) => repo.runs(serverId, id, opts),
    /** The next `count` times of a cron in a time zone, from now (listScheduleTimes); validation_failed as for a schedule. */
    times(cron: string, timeZone: string, count: number): string[] {
      check({ cron, time_zone: timeZone }, '/query');
      const times: string[] = [];
      for (let after = deps.now(); times.length < count; ) times.push(iso((after = nextTime({ cron, time_zone: timeZone }, after))));
      return times;
    },
    run: (serverId: string, id: string, runId: string): ScheduleRun => repo.run(serverId, id, runId),
  };
}

/** The loop and the service's life: the tick, boot (start), and the two steps of shutdown (stop, settled). */
function loop(deps: SchedulesDeps, state: State) {
  const { repo, config } = deps;
  return {
    tick: (): ScheduleRun[] => tick(deps, state),
    /** Boot: runs a previous life left `running` end `failed`; then the loop starts (times missed meanwhile run once). */
    start(): void {
      state.bootAt = deps.now();
      deps.actors.run(serviceActor('boot'), () => {
        for (const run of repo.interrupted()) {
          const tasks = run.tasks.map((t) => (t.status === 'pending' || t.status === 'running' ? { ...t, status: 'skipped' as const } : t));
          repo.finish(run.id, 'failed', 'Interrupted by a restart of the service.', tasks);
        }
      });
      state.timer ??= setInterval(() => {
        try {
          tick(deps, state);
        } catch (err) {
          deps.log.error('looking for due schedules failed; looked again at the next tick', { error: String(err) });
        }
      }, config.checkMs).unref();
    },
    /** Shutdown, first step: no new run; the runs under way skip the tasks they have not begun. */
    stop(): void {
      if (state.timer) clearInterval(state.timer);
      state.timer = null;
      for (const r of state.runs.values()) r.abort.abort();
    },
    /** Resolves once every run under way has ended (after the doors' shutdown failed what they waited for). */
    async settled(): Promise<void> {
      await Promise.all([...state.runs.values()].map((r) => r.done));
    },
  };
}

/**
 * The runtime's schedules: their CRUD (validated, with their next time), the loop that starts the runs that are due,
 * and the runs themselves. A run never overlaps its schedule's previous one (a time that comes meanwhile is recorded
 * `skipped`); a time missed while the service was down runs once, `missed`, since the schedule's next time moves
 * from now, not from the time missed.
 */
export function createSchedules(deps: SchedulesDeps) {
  const state: State = { runs: new Map(), timer: null, bootAt: deps.now() };
  return { ...requests(deps, state), ...loop(deps, state) };
}

export type SchedulesService = ReturnType<typeof createSchedules>;
