import type { SchedulesService } from '../../runtime/schedules';
import type { IdempotencyRepo } from '../../store/idempotency-repo';
import type { Handlers } from '../types';
import { idempotent } from './idempotent';
import { page, withCursor } from './paging';

/**
 * Schedules tag: listServerSchedules, createServerSchedule, getServerSchedule, updateServerSchedule,
 * deleteServerSchedule, runServerSchedule, listServerScheduleRuns, getServerScheduleRun, and listScheduleTimes (a
 * cron's next times; src/runtime/schedules.ts does the work). A member's writes passed the access check for every task's permission (their x-permission).
 */
export function scheduleHandlers(deps: { schedules: SchedulesService; idempotency: IdempotencyRepo }): Handlers {
  const { schedules } = deps;
  return {
    listServerSchedules: ({ server, query }) => ({ status: 200, body: withCursor(schedules.list(server.id, page(query))) }),

    createServerSchedule: (call) => {
      const { server, body } = call;
      return idempotent(deps.idempotency, call, { operation: 'createServerSchedule', path: server.id, body }, () => {
        const schedule = schedules.create(server.id, body);
        return { status: 201 as const, body: schedule, headers: { Location: `/v1/servers/${server.id}/schedules/${schedule.id}` } };
      });
    },

    getServerSchedule: ({ server, path }) => ({ status: 200, body: schedules.get(server.id, path.schedule_id) }),

    updateServerSchedule: ({ server, path, body }) => ({ status: 200, body: schedules.update(server.id, path.schedule_id, body) }),

    deleteServerSchedule: ({ server, path }) => {
      schedules.remove(server.id, path.schedule_id);
      return { status: 204, body: undefined };
    },

    runServerSchedule: (call) => {
      const { server, path } = call;
      const where = `${server.id}/${path.schedule_id}`;
      return idempotent(deps.idempotency, call, { operation: 'runServerSchedule', path: where, body: null }, () => {
        const run = schedules.runNow(server.id, path.schedule_id);
        const location = `/v1/servers/${server.id}/schedules/${path.schedule_id}/runs/${run.id}`;
        return { status: 202 as const, body: run, headers: { Location: location } };
      });
    },

    listServerScheduleRuns: ({ server, path, query }) => ({
      status: 200,
      body: withCursor(schedules.runs(server.id, path.schedule_id, page(query))),
    }),

    getServerScheduleRun: ({ server, path }) => ({ status: 200, body: schedules.run(server.id, path.schedule_id, path.run_id) }),

    listScheduleTimes: ({ query }) => ({
      status: 200,
      body: { data: schedules.times(query.cron, query.time_zone ?? 'UTC', query.count === undefined ? 5 : Number(query.count)) },
    }),
  };
}
