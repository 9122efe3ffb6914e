import type { SchedulesService } from '../../runtime/services/schedules';
import type { IdempotencyRepo } from '../../store/idempotency-repo';
import { runShown, scheduleShown } from '../../store/schedules-repo';
import type { Handlers } from '../types';
import { idempotent } from './idempotent';
import { page, withCursor } from './paging';

/**
 * Schedules tag: listServerSchedules, createServerSchedule, getServerSchedule, updateServerSchedule,
 * deleteServerSchedule, runServerSchedule, listServerScheduleRuns, getServerScheduleRun, and listScheduleTimes (a
 * cron's next times; src/runtime/services/schedules.ts does the work). A member's writes passed the access check for every
 * task's permission (their x-permission); the caller becomes the schedule's author. Every schedule and run is shown
 * as the caller's permissions allow (a command's text only with `console`: scheduleShown, runShown).
 */
export function scheduleHandlers(deps: { schedules: SchedulesService; idempotency: IdempotencyRepo }): Handlers {
  const { schedules } = deps;
  return {
    listServerSchedules: ({ server, query }) => {
      const { data, has_more } = schedules.list(server.id, page(query));
      return { status: 200, body: withCursor({ data: data.map((s) => scheduleShown(s, server.access.permissions)), has_more }) };
    },

    createServerSchedule: (call) => {
      const { principal, server, body } = call;
      return idempotent(deps.idempotency, call, { operation: 'createServerSchedule', path: server.id, body }, () => {
        const schedule = schedules.create(server.id, principal.userId, body);
        const location = `/v1/servers/${server.id}/schedules/${schedule.id}`;
        return { status: 201 as const, body: scheduleShown(schedule, server.access.permissions), headers: { Location: location } };
      });
    },

    getServerSchedule: ({ server, path }) => ({ status: 200, body: scheduleShown(schedules.get(server.id, path.schedule_id), server.access.permissions) }),

    updateServerSchedule: ({ principal, server, path, body }) => ({
      status: 200,
      body: scheduleShown(schedules.update(server.id, path.schedule_id, principal.userId, body), server.access.permissions),
    }),

    deleteServerSchedule: ({ server, path }) => {
      schedules.remove(server.id, path.schedule_id);
      return { status: 204, body: undefined };
    },

    runServerSchedule: (call) => {
      const { server, path } = call;
      const where = `${server.id}/${path.schedule_id}`;
      return idempotent(deps.idempotency, call, { operation: 'runServerSchedule', path: where, body: null }, () => {
        const run = schedules.runNow(server.id, path.schedule_id, server.access.permissions);
        const location = `/v1/servers/${server.id}/schedules/${path.schedule_id}/runs/${run.id}`;
        return { status: 202 as const, body: runShown(run, server.access.permissions), headers: { Location: location } };
      });
    },

    listServerScheduleRuns: ({ server, path, query }) => {
      const { data, has_more } = schedules.runs(server.id, path.schedule_id, page(query));
      return { status: 200, body: withCursor({ data: data.map((r) => runShown(r, server.access.permissions)), has_more }) };
    },

    getServerScheduleRun: ({ server, path }) => ({
      status: 200,
      body: runShown(schedules.run(server.id, path.schedule_id, path.run_id), server.access.permissions),
    }),

    listScheduleTimes: ({ query }) => ({
      status: 200,
      body: { data: schedules.times(query.cron, query.time_zone ?? 'UTC', query.count ?? 5) },
    }),
  };
}
