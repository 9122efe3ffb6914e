import { AppError } from '../../src/errors';
import { silentLogger } from '../../src/log';
import { createIdleStop, type IdleSample } from '../../src/runtime/loops/idle-stop';

// The idle stop's count (src/runtime/loops/idle-stop.ts), fed samples by hand: when it asks for a stop, and when not.
// Minutes are 1,000 ms here; each step is [seconds since start, players online, server state].
type Step = [number, number, string];
const cases: Array<[string, { minutes: number | null; steps: Step[]; want: number[] }]> = [
  ['nobody joins: stopped the minutes after the first sample', { minutes: 3, steps: [[0, 0, 'running'], [1, 0, 'running'], [2, 0, 'running'], [3, 0, 'running']], want: [3] }],
  ['a player resets the count', { minutes: 3, steps: [[0, 0, 'running'], [2, 1, 'running'], [3, 0, 'running'], [5, 0, 'running'], [6, 0, 'running']], want: [6] }],
  ['a player online the whole time: never', { minutes: 1, steps: [[0, 2, 'running'], [5, 1, 'running'], [9, 3, 'running']], want: [] }],
  ['off (null): never', { minutes: null, steps: [[0, 0, 'running'], [100, 0, 'running']], want: [] }],
  ['not running: the count starts again', { minutes: 2, steps: [[0, 0, 'running'], [1, 0, 'stopping'], [2, 0, 'running'], [3, 0, 'running'], [4, 0, 'running']], want: [4] }],
  ['asked once, then counted afresh', { minutes: 1, steps: [[0, 0, 'running'], [1, 0, 'running'], [1.5, 0, 'running'], [2.5, 0, 'running']], want: [1, 2.5] }],
];

test.each(cases)('%s', (_name, { minutes, steps, want }) => {
  let listener: (s: IdleSample) => void = () => undefined;
  let state = 'running';
  const asked: number[] = [];
  let now = 0;
  const idle = createIdleStop({
    subscribe: (fn) => ((listener = fn), () => (listener = () => undefined)),
    servers: { idleStopOf: () => ({ userId: 'usr_owner', minutes, state: state as 'running' }) },
    requestAction: (serverId, userId, type, backupId, reason) => {
      expect([serverId, userId, type, backupId, reason]).toEqual(['srv_1', 'usr_owner', 'stop', undefined, 'idle']);
      asked.push(now);
    },
    log: silentLogger,
    minuteMs: 1_000,
  });
  idle.start();
  for (const [s, players, st] of steps) {
    now = s;
    state = st;
    listener({ server_id: 'srv_1', at: new Date(Date.UTC(2026, 0, 1) + s * 1000).toISOString(), players_online: players });
  }
  expect(asked).toEqual(want);
  idle.stop();
});

test('an action already open (action_conflict) is left to the next sample, which asks again', () => {
  let listener: (s: IdleSample) => void = () => undefined;
  let calls = 0;
  const idle = createIdleStop({
    subscribe: (fn) => ((listener = fn), () => undefined),
    servers: { idleStopOf: () => ({ userId: 'usr_owner', minutes: 1, state: 'running' }) },
    requestAction: () => {
      calls++;
      if (calls === 1) throw new AppError('action_conflict', 'busy');
    },
    log: silentLogger,
    minuteMs: 1_000,
  });
  idle.start();
  for (const s of [0, 1, 2]) listener({ server_id: 'srv_1', at: new Date(s * 1000).toISOString(), players_online: 0 });
  expect(calls).toBe(2);
});
