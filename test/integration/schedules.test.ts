import fs from 'node:fs';
import path from 'node:path';
import { createTestApp, manualClock, tempDir, type TestApp } from '../helpers/app';
import { until } from '../helpers/wait';

/**
 * Schedules (issue 30 §2; docs/architecture.md "Schedules") on a real game process (the runtime tests' fake game):
 * a schedule running a command, a restart chain with its delay, a run that would overlap or whose condition fails
 * recorded as skipped, the limits, a time missed while the service was down run once after it restarts, and a run
 * cut short by a shutdown or a kill -9. The clock is a manual one, the loop's look is called by hand (`tick`), and a
 * task's second lasts 20 ms.
 */

const software = path.join(__dirname, '..', 'runtime', 'fixtures', 'software');
const MINUTE = 60_000;
let t: TestApp;
let clock: ReturnType<typeof manualClock>;
let token: string;
const auth = () => ({ Authorization: `Bearer ${token}` });

async function service(dataDir?: string, env: Record<string, string> = {}) {
  return createTestApp({
    clock,
    boot: true,
    software,
    env: { GAME_PORT_RANGE: '27740-27749', ...(dataDir ? { DATA_DIR: dataDir } : {}), ...env },
    runtime: { stopTimeoutMs: 3_000, reconcileMs: 60_000 },
    schedules: { checkMs: 3_600_000, secondMs: 20 },
  });
}

/** The fake game's server, installed and (unless `stopped`) running. */
async function gameServer(stopped = false): Promise<string> {
  const id = (await t.http.post('/v1/servers').set(auth()).send({ name: 'scheduled', plan: 'micro', version: 'fake-game-1.0' })).body.id as string;
  await until('installed', async () => (await t.http.get(`/v1/servers/${id}`).set(auth())).body.state === 'stopped', 15_000);
  if (stopped) return id;
  await t.http.post(`/v1/servers/${id}/actions`).set(auth()).send({ type: 'start' });
  await until('running', async () => (await t.http.get(`/v1/servers/${id}`).set(auth())).body.state === 'running', 30_000);
  return id;
}

const schedule = (server: string, body: Record<string, unknown>) => t.http.post(`/v1/servers/${server}/schedules`).set(auth()).send({ name: 'test', cron: '* * * * *', ...body });
const runs = async (server: string, id: string) => (await t.http.get(`/v1/servers/${server}/schedules/${id}/runs`).set(auth())).body.data as Array<Record<string, any>>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Moves the clock past the schedule's next time, looks for due schedules, and waits for the runs to end. */
async function due(): Promise<void> {
  clock.advance(MINUTE);
  t.runtime.schedules.tick();
  await t.runtime.idle();
}

beforeEach(() => {
  clock = manualClock(Date.parse('2026-11-22T08:00:30.000Z'));
});
afterEach(async () => {
  // Every event of these lives (installs, starts, restarts, runs) names who did it: none is left to `unknown`.
  const unknown = t.db.prepare(`SELECT type FROM events WHERE actor IS NULL OR json_extract(actor, '$.cause') = 'unknown'`).pluck().all();
  expect(unknown).toEqual([]);
  await t.finish();
});

test('a schedule runs a command at its time, as itself: the console names it, the run and its event say how it went', async () => {
  t = await service();
  token = t.token();
  const server = await gameServer();
  const made = await schedule(server, { tasks: [{ type: 'command', command: 'hello from a schedule' }] });
  expect(made.status).toBe(201);
  expect(made.body.next_run_at).toBe('2026-11-22T08:01:00.000Z');
  await due();
  const [run] = await runs(server, made.body.id);
  expect(run).toMatchObject({ trigger: 'scheduled', status: 'succeeded', due_at: '2026-11-22T08:01:00.000Z', detail: null });
  expect(run.tasks).toEqual([expect.objectContaining({ type: 'command', status: 'succeeded', error: null })]);
  const lines = (await t.http.get(`/v1/servers/${server}/console`).set(auth())).body.data as Array<{ stream: string; text: string; actor: unknown }>;
  const actor = { type: 'service', cause: 'schedule', schedule_id: made.body.id };
  expect(lines).toContainEqual(expect.objectContaining({ stream: 'input', text: 'hello from a schedule', actor }));
  await until('the game echoes it', async () => ((await t.http.get(`/v1/servers/${server}/console`).set(auth())).body.data as Array<{ text: string }>).some((l) => l.text === 'echo: hello from a schedule'), 10_000);
  const [event] = (await t.http.get('/v1/events').query({ type: 'schedule.ran' }).set(auth())).body.data;
  expect(event).toMatchObject({ actor, data: { run: { id: run.id, status: 'succeeded' }, schedule: { id: made.body.id } } });
  expect((await t.http.get(`/v1/servers/${server}/schedules/${made.body.id}`).set(auth())).body.next_run_at).toBe('2026-11-22T08:02:00.000Z');
  t.expectContract();
}, 60_000);

test('a restart chain: a warning, then after its delay a restart that the game really goes through, acting as the schedule', async () => {
  t = await service();
  token = t.token();
  const server = await gameServer();
  const pid = () => t.runtime.doors.of(server).live?.pid;
  const before = pid();
  const made = await schedule(server, { tasks: [{ type: 'command', command: 'say restarting in 50' }, { type: 'power', action: 'restart', delay_seconds: 50 }] });
  clock.advance(MINUTE);
  t.runtime.schedules.tick();
  // The warning is sent at once; the restart waits its delay (50 of the test's 20 ms seconds): the game runs on.
  await until('the warning sent', async () => (await runs(server, made.body.id))[0].tasks[0].status === 'succeeded', 5_000);
  expect((await runs(server, made.body.id))[0].tasks.map((task: { status: string }) => task.status)).toEqual(['succeeded', 'pending']);
  expect(pid()).toBe(before);
  await t.runtime.idle();
  const [run] = await runs(server, made.body.id);
  expect(run.status).toBe('succeeded');
  const [warn, restart] = run.tasks;
  expect([warn.status, restart.status]).toEqual(['succeeded', 'succeeded']);
  const action = (await t.http.get(`/v1/servers/${server}/actions/${restart.action_id}`).set(auth())).body;
  expect(action).toMatchObject({ type: 'restart', status: 'succeeded' });
  expect(pid()).not.toBe(before);
  const actor = { type: 'service', cause: 'schedule', schedule_id: made.body.id };
  const changes = (await t.http.get('/v1/events').query({ type: 'server.state_changed', server_id: server, order: 'desc', limit: 4 }).set(auth())).body.data;
  expect(changes.map((e: { data: { to: string } }) => e.data.to).reverse()).toEqual(['stopping', 'stopped', 'starting', 'running']);
  expect(changes.every((e: { actor: unknown }) => JSON.stringify(e.actor) === JSON.stringify(actor))).toBe(true);
  const [succeeded] = (await t.http.get('/v1/events').query({ type: 'action.succeeded', order: 'desc', limit: 1 }).set(auth())).body.data;
  expect(succeeded).toMatchObject({ actor, data: { action: { id: restart.action_id } } });
  t.expectContract();
}, 60_000);

test('a run never overlaps the previous one, and a condition that fails skips the run; failures end it and say why', async () => {
  t = await service();
  token = t.token();
  const server = await gameServer(true);
  const slow = (await schedule(server, { tasks: [{ type: 'command', command: 'late', delay_seconds: 100 }] })).body.id;
  const conditional = (await schedule(server, { only_when: 'running', tasks: [{ type: 'power', action: 'stop' }] })).body.id;
  clock.advance(MINUTE);
  t.runtime.schedules.tick(); // the slow run begins and waits its 2 s
  clock.advance(MINUTE);
  t.runtime.schedules.tick();
  await t.runtime.idle();
  const slowRuns = await runs(server, slow);
  expect(slowRuns.map((r) => [r.status, r.detail])).toEqual([
    ['skipped', 'The previous run was still under way.'],
    ['failed', 'Task 1 (command) failed: The server is stopped; commands need it running.'],
  ]);
  expect(slowRuns[1].tasks[0]).toMatchObject({ status: 'failed', error: { code: 'invalid_state' } });
  const skipped = await runs(server, conditional);
  expect(skipped.map((r) => [r.status, r.tasks[0].status])).toEqual([['skipped', 'skipped'], ['skipped', 'skipped']]);
  expect(skipped[0].detail).toMatch(/runs only while it is running/);
  // Asked now, a run with one under way is refused; a server's deletion refuses a run too.
  const first = await t.http.post(`/v1/servers/${server}/schedules/${slow}/run`).set(auth());
  expect(first.status).toBe(202);
  expect((await t.http.post(`/v1/servers/${server}/schedules/${slow}/run`).set(auth())).body.code).toBe('schedule_running');
  // Deleted mid-run: its record goes with it.
  expect((await t.http.delete(`/v1/servers/${server}/schedules/${slow}`).set(auth())).status).toBe(204);
  await t.runtime.idle();
  expect((await t.http.get(first.headers.location).set(auth())).status).toBe(404);
  t.expectContract();
}, 60_000);

test('a cron, a time zone and the limits are checked, nothing written when refused', async () => {
  t = await service(undefined, { SCHEDULES_PER_SERVER: '1', TASKS_PER_SCHEDULE: '2' });
  token = t.token();
  const server = await gameServer(true);
  const cases: Array<[Record<string, unknown>, number, Record<string, unknown>]> = [
    [{ cron: '* * * *', tasks: [{ type: 'backup' }] }, 400, { errors: [expect.objectContaining({ pointer: '/body/cron' })] }],
    [{ cron: '61 * * * *', tasks: [{ type: 'backup' }] }, 400, { errors: [expect.objectContaining({ pointer: '/body/cron' })] }],
    [{ time_zone: 'Mars/Olympus', tasks: [{ type: 'backup' }] }, 400, { errors: [expect.objectContaining({ pointer: '/body/time_zone' })] }],
    [{ tasks: [{ type: 'backup' }, { type: 'backup' }, { type: 'backup' }] }, 403, { quota: 'schedule_tasks', limit: 2, used: 3 }],
    [{ time_zone: 'Europe/Berlin', cron: '0 4 * * *', tasks: [{ type: 'backup' }] }, 201, { next_run_at: '2026-11-23T03:00:00.000Z' }],
    [{ tasks: [{ type: 'backup' }] }, 403, { quota: 'schedules', limit: 1, used: 1 }],
  ];
  for (const [body, status, want] of cases) {
    const res = await schedule(server, body);
    expect([body, res.status, res.body]).toEqual([body, status, expect.objectContaining(want)]);
  }
  expect(t.db.prepare('SELECT COUNT(*) FROM schedules').pluck().get()).toBe(1);
  // The cron helper's answer: the next times from now, or the same refusals, at the query.
  const times = await t.http.get('/v1/schedule-times').query({ cron: '30 4 * * 1', time_zone: 'America/New_York', count: 2 }).set(auth());
  expect(times.body).toEqual({ data: ['2026-11-23T09:30:00.000Z', '2026-11-30T09:30:00.000Z'] });
  const bad = await t.http.get('/v1/schedule-times').query({ cron: '61 * * * *', time_zone: 'Nowhere/Land' }).set(auth());
  expect([bad.status, bad.body.errors.map((e: { pointer: string }) => e.pointer).sort()]).toEqual([400, ['/query/cron', '/query/time_zone']]);
  t.expectContract();
}, 30_000);

test('a time missed while the service was down runs once when it is back, and says so', async () => {
  const dataDir = tempDir('missed');
  try {
    t = await service(dataDir);
    token = t.token();
    const server = await gameServer(true);
    const made = await schedule(server, { cron: '*/5 * * * *', tasks: [{ type: 'power', action: 'stop' }] });
    expect(made.body.next_run_at).toBe('2026-11-22T08:05:00.000Z');
    t.expectContract();
    await t.close();
    // Down for an hour: twelve times passed.
    clock.advance(60 * MINUTE);
    t = await service(dataDir);
    token = t.token();
    t.runtime.schedules.tick();
    await t.runtime.idle();
    t.runtime.schedules.tick(); // nothing more is due
    await t.runtime.idle();
    const all = await runs(server, made.body.id);
    expect(all.map((r) => [r.trigger, r.due_at, r.status])).toEqual([['missed', '2026-11-22T08:05:00.000Z', 'succeeded']]);
    expect(all[0].tasks[0].action_id).toMatch(/^act_/);
    expect((await t.http.get(`/v1/servers/${server}/schedules/${made.body.id}`).set(auth())).body.next_run_at).toBe('2026-11-22T09:05:00.000Z');
    t.expectContract();
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}, 60_000);

test('a run cut short ends failed with its tasks not begun skipped: by a shutdown, and by a kill -9 at the next boot', async () => {
  const dataDir = tempDir('cut');
  const killedDir = tempDir('killed');
  const lastRun = async (server: string, id: string) => (await runs(server, id))[0];
  try {
    t = await service(dataDir);
    token = t.token();
    const server = await gameServer(true);
    const made = await schedule(server, { tasks: [{ type: 'command', command: 'never sent', delay_seconds: 1_000 }] });
    clock.advance(MINUTE);
    t.runtime.schedules.tick(); // the run begins and waits its 20 s
    expect(await lastRun(server, made.body.id)).toMatchObject({ status: 'running', tasks: [{ status: 'pending' }] });
    // What a kill -9 now would leave on disk: the data directory as it is, the database with its write-ahead log
    // (not its shared-memory index, which the next open rebuilds).
    fs.cpSync(dataDir, killedDir, { recursive: true, filter: (src) => !src.endsWith('-shm') });
    t.expectContract();
    await t.close(); // a shutdown ends the wait at once
    t = await service(dataDir);
    token = t.token();
    expect(await lastRun(server, made.body.id)).toMatchObject({
      status: 'failed',
      detail: 'The service stopped during the run; the tasks left were skipped.',
      tasks: [{ status: 'skipped' }],
    });
    t.expectContract();
    await t.close();
    t = await service(killedDir);
    token = t.token();
    expect(await lastRun(server, made.body.id)).toMatchObject({ status: 'failed', detail: 'Interrupted by a restart of the service.', tasks: [{ status: 'skipped' }] });
    t.expectContract();
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(killedDir, { recursive: true, force: true });
  }
}, 60_000);
