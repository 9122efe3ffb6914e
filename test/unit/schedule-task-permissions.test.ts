import { TASK_PERMISSION } from '../../src/runtime/services/schedules';
import { specOperations } from '../security/helpers';

/**
 * A schedule's run checks its author's permissions with TASK_PERMISSION (src/runtime/services/schedules.ts); a request's
 * access check reads the spec's `x-permission: { tasks }` of the schedule operations. The two must be one rule.
 */
test("each schedule operation's x-permission tasks rule is the runtime's TASK_PERMISSION", () => {
  const rules = specOperations()
    .operations.map((op) => (op as unknown as { operationId: string; 'x-permission'?: unknown }))
    .filter((op) => typeof op['x-permission'] === 'object' && op['x-permission'] !== null && 'tasks' in (op['x-permission'] as object));
  expect(rules.map((op) => op.operationId).sort()).toEqual(['createServerSchedule', 'deleteServerSchedule', 'runServerSchedule', 'updateServerSchedule']);
  for (const op of rules) expect({ op: op.operationId, tasks: (op['x-permission'] as { tasks: unknown }).tasks }).toEqual({ op: op.operationId, tasks: TASK_PERMISSION });
});
