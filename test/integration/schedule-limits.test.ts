import path from 'node:path';
import { createTestApp, manualClock, type TestApp } from '../helpers/app';
import { until } from '../helpers/wait';

/**
 * Schedules that cannot stall the service, and that act for their author (issue 39 §1 and §2; openapi/v1.yaml, the
 * Schedules tag): a cron's times cost little however it is written; a schedule whose time cannot be computed fails
 * alone; a DST end of 30 minutes (Lord Howe) runs as documented beside another tenant's schedule; a schedule acts
 * for the account that last wrote it and is disabled, with `schedule.disabled`, when that account loses what its
 * tasks need. The clock is a manual one and the loop's look is called by hand (`tick`).
 */

const software = path.join(__dirname, '..', 'runtime', 'fixtures', 'software');
let t: TestApp;
let clock: ReturnType<typeof manualClock>;
const auth = (token: string) => ({ Authorization: `Bearer ${token}` });
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function service(start: string) {
  clock = manualClock(Date.parse(start));
  t = await createTestApp({
    clock,
    boot: true,
    software,
    env: { GAME_PORT_RANGE: '27750-27759' },
    runtime: { stopTimeoutMs: 3_000, reconcileMs: 60_000 },
    schedules: { checkMs: 3_600_000, secondMs: 20 },
  });
}

/** A fake game's server of `token`'s account, running. */
async function gameServer(token: string): Promise<string> {
  const id = (await t.http.post('/v1/servers').set(auth(token)).send({ name: 'scheduled', plan: 'micro', version: 'fake-game-1.0' })).body.id as string;
  await until('installed', async () => (await t.http.get(`/v1/servers/${id}`).set(auth(token))).body.state === 'stopped', 15_000);
  await t.http.post(`/v1/servers/${id}/actions`).set(auth(token)).send({ type: 'start' });
  await until('running', async () => (await t.http.get(`/v1/servers/${id}`).set(auth(token))).body.state === 'running', 30_000);
  return id;
}

const schedule = async (token: string, server: string, body: Json): Promise<Json> => {
  const res = await t.http.post(`/v1/servers/${server}/schedules`).set(auth(token)).send({ name: 'test', cron: '* * * * *', tasks: [{ type: 'command', command: 'say hi' }], ...body });
  expect(res.status).toBe(201);
  return res.body as Json;
};
const runs = async (token: string, server: string, id: string): Promise<Json[]> => (await t.http.get(`/v1/servers/${server}/schedules/${id}/runs`).set(auth(token))).body.data as Json[];
const events = async (token: string, type: string): Promise<Json[]> => (await t.http.get('/v1/events').query({ type }).set(auth(token))).body.data as Json[];

/** A running server of owner@example.com's on a service whose clock is at 08:00:30, and a way to share it. */
async function sharedServer() {
  await service('2026-11-22T08:00:30.000Z');
  const owner = t.token('owner@example.com');
  const server = await gameServer(owner);
  const add = async (email: string, permissions: string[]) => (await t.http.post(`/v1/servers/${server}/members`).set(auth(owner)).send({ email, permissions })).body.id as string;
  return { owner, server, add };
}

/** Moves the clock to `at`, looks for due schedules, and waits for the runs to end. */
async function tickAt(at: string): Promise<void> {
  clock.advance(Date.parse(at) - clock.now());
  t.runtime.schedules.tick();
  await t.runtime.idle();
}

afterEach(async () => {
  await t.finish();
});

test('a cron decades apart across DST answers its times at a small cost of CPU, holding up nobody', async () => {
  await service('2026-11-27T00:00:00.000Z');
  const token = t.token();
  const hostile = [
    ['0 0 * 2 1#5', 'America/Santiago', '2044-02-29T03:00:00.000Z'],
    ['0 1-3 * * *', 'Australia/Lord_Howe', '2026-11-27T14:00:00.000Z'],
    ['0 0 29 2 1', 'Pacific/Chatham', '2027-01-31T10:15:00.000Z'], // 29 February or a Monday of February
  ];
  // The CPU this process spends (the service runs in it), not the time on the clock, which a busy machine stretches:
  // cron-parser spent 0.5-2 s of it on each of these; now each costs a few milliseconds.
  const cpu = process.cpuUsage();
  const answers = await Promise.all([1, 2, 3].flatMap(() => hostile.map(([cron, time_zone]) => t.http.get('/v1/schedule-times').query({ cron, time_zone, count: 10 }).set(auth(token)))));
  const { user, system } = process.cpuUsage(cpu);
  for (const [i, res] of answers.entries()) {
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(10);
    expect(res.body.data[0]).toBe(hostile[i % hostile.length][2]);
  }
  // Generous: nine requests within 2 s of CPU, with their HTTP, validation and the first calls' compiling (about
  // 0.3 s is measured; cron-parser needed 4.5 s or more for these nine).
  expect((user + system) / 1000).toBeLessThan(2000);
  expect((await t.http.get('/v1/schedule-times').query({ cron: '0 0 30 2 *' }).set(auth(token))).body).toMatchObject({
    code: 'validation_failed',
    errors: [{ pointer: '/query/cron', detail: 'names no day that exists (such as 30 February), so it would never run' }],
  });
  t.expectContract();
});

test("Lord Howe's 30-minute DST end runs as documented, and another tenant's schedule runs at every tick", async () => {
  await service('2027-04-03T13:58:50.000Z');
  const [alice, bob] = [t.token('alice@example.com'), t.token('bob@example.com')];
  const [aliceServer, bobServer] = [await gameServer(alice), await gameServer(bob)];
  const howe = await schedule(alice, aliceServer, { cron: '0 1-3 * * *', time_zone: 'Australia/Lord_Howe' });
  const every = await schedule(bob, bobServer, { cron: '*/30 * * * *' });
  expect(howe.next_run_at).toBe('2027-04-03T14:00:00.000Z');
  for (const at of ['2027-04-03T14:00:00.000Z', '2027-04-03T14:30:00.000Z', '2027-04-03T15:00:00.000Z', '2027-04-03T15:30:00.000Z', '2027-04-03T16:00:00.000Z', '2027-04-03T16:30:00.000Z']) {
    await tickAt(at);
  }
  const howeRuns = (await runs(alice, aliceServer, howe.id as string)).map((r) => [r.due_at, r.status]);
  expect(howeRuns.reverse()).toEqual([
    ['2027-04-03T14:00:00.000Z', 'succeeded'], // 01:00 +11:00, before the clocks go back
    ['2027-04-03T15:30:00.000Z', 'succeeded'], // 02:00 +10:30
    ['2027-04-03T16:30:00.000Z', 'succeeded'], // 03:00 +10:30
  ]);
  expect((await runs(bob, bobServer, every.id as string)).filter((r) => r.status === 'succeeded')).toHaveLength(6);
  t.expectContract();
});

test('a schedule whose next time cannot be computed fails alone: a failed run, disabled with a reason, the others run', async () => {
  await service('2026-11-22T08:00:30.000Z');
  const token = t.token();
  const server = await gameServer(token);
  const [broken, fine] = [await schedule(token, server, { name: 'old' }), await schedule(token, server, { name: 'fine' })];
  // As an older version could have stored it: a cron that names no day that exists.
  t.db.prepare('UPDATE schedules SET cron = ? WHERE id = ?').run('0 0 30 2 *', broken.id);
  await tickAt('2026-11-22T08:01:00.000Z');
  const [failedRun] = await runs(token, server, broken.id as string);
  expect(failedRun).toMatchObject({ status: 'failed', due_at: '2026-11-22T08:01:00.000Z' });
  expect(failedRun.detail).toMatch(/^The service could not run it: the cron "0 0 30 2 \*" names no time that exists/);
  expect(failedRun.tasks).toEqual([expect.objectContaining({ status: 'skipped' })]);
  const now = (await t.http.get(`/v1/servers/${server}/schedules/${broken.id}`).set(auth(token))).body;
  expect(now).toMatchObject({ enabled: false, next_run_at: null, disabled_reason: failedRun.detail });
  expect((await events(token, 'schedule.failed')).map((e) => e.data.schedule.id)).toEqual([broken.id]);
  expect((await events(token, 'schedule.disabled')).map((e) => [e.data.schedule.id, e.data.schedule.disabled_reason])).toEqual([[broken.id, failedRun.detail]]);
  expect((await runs(token, server, fine.id as string)).map((r) => r.status)).toEqual(['succeeded']);
  await tickAt('2026-11-22T08:02:00.000Z'); // disabled: no more runs of it, and no more failures
  expect(await runs(token, server, broken.id as string)).toHaveLength(1);
  expect(await runs(token, server, fine.id as string)).toHaveLength(2);
  t.expectContract();
});

test("a schedule acts for its author: a member's is disabled when they are removed or lose a permission, and the owner's change makes it theirs", async () => {
  const { owner, server, add } = await sharedServer();
  const [sam, kim] = [await add('sam@example.com', ['console']), await add('kim@example.com', ['console', 'power'])];
  const [samToken, kimToken] = [t.token('sam@example.com'), t.token('kim@example.com')];
  const samsUser = t.store.users.ensure('sam@example.com').id;
  const says = await schedule(samToken, server, { cron: '* * * * *' });
  expect(says).toMatchObject({ created_by: samsUser, updated_by: samsUser, disabled_reason: null });
  const restarts = await schedule(kimToken, server, { cron: '0 4 * * *', tasks: [{ type: 'power', action: 'restart' }] });
  await tickAt('2026-11-22T08:01:00.000Z');
  expect((await runs(owner, server, says.id as string)).map((r) => r.status)).toEqual(['succeeded']);

  // Sam is removed: at once, their schedule is disabled and the owner is told; it sends nothing more.
  expect((await t.http.delete(`/v1/servers/${server}/members/${sam}`).set(auth(owner))).status).toBe(204);
  const disabled = (await t.http.get(`/v1/servers/${server}/schedules/${says.id}`).set(auth(owner))).body;
  expect(disabled).toMatchObject({ enabled: false, next_run_at: null, disabled_reason: `Its author (${samsUser}) no longer has access to this server.` });
  expect((await events(owner, 'schedule.disabled')).map((e) => e.data.schedule.id)).toEqual([says.id]);
  await tickAt('2026-11-22T08:02:00.000Z');
  expect(await runs(owner, server, says.id as string)).toHaveLength(1);

  // Kim loses `power`: the restart schedule is disabled; a run asked for now fails, saying why.
  expect((await t.http.patch(`/v1/servers/${server}/members/${kim}`).set(auth(owner)).send({ permissions: ['console'] })).status).toBe(200);
  const kims = (await t.http.get(`/v1/servers/${server}/schedules/${restarts.id}`).set(auth(owner))).body;
  expect(kims.disabled_reason).toMatch(/no longer has the power permission its power task needs/);
  const manual = await t.http.post(`/v1/servers/${server}/schedules/${restarts.id}/run`).set(auth(owner));
  expect(manual.status).toBe(202);
  expect(manual.body).toMatchObject({ status: 'failed', detail: kims.disabled_reason });

  // The owner enables it again: it becomes theirs, and runs as theirs.
  const ownersUser = t.store.users.ensure('owner@example.com').id;
  const enabled = (await t.http.patch(`/v1/servers/${server}/schedules/${says.id}`).set(auth(owner)).send({ enabled: true })).body;
  expect(enabled).toMatchObject({ enabled: true, created_by: samsUser, updated_by: ownersUser, disabled_reason: null });
  await tickAt('2026-11-22T08:03:00.000Z');
  expect((await runs(owner, server, says.id as string))[0]).toMatchObject({ status: 'succeeded', due_at: '2026-11-22T08:03:00.000Z' });
  t.expectContract();
});

test("a schedule's commands need what the console needs, and their text is shown only to those who may use the console", async () => {
  const { owner, server, add } = await sharedServer();
  const kim = await add('kim@example.com', ['console', 'power']);
  await add('sam@example.com', ['console']);
  await add('pat@example.com', ['power']);
  const [kimToken, samToken, patToken] = [t.token('kim@example.com'), t.token('sam@example.com'), t.token('pat@example.com')];

  // Sam may use the console but not stop the server: a schedule that would stop it through the console is refused.
  for (const command of ['stop', '/STOP now', 'minecraft:stop']) {
    const refused = await t.http.post(`/v1/servers/${server}/schedules`).set(auth(samToken)).send({ name: 'sneaky', cron: '* * * * *', tasks: [{ type: 'command', command }] });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'missing_permission', permission: 'power' });
  }
  expect((await t.http.get(`/v1/servers/${server}/schedules`).set(auth(owner))).body.data).toEqual([]);

  // Kim may: their schedule stops the server through the console; once Kim loses `power`, it is disabled.
  const secret = await schedule(kimToken, server, { name: 'secret', cron: '0 4 * * *', tasks: [{ type: 'command', command: 'say the password is hunter2' }, { type: 'command', command: 'stop' }] });
  const shownTo = async (token: string) => (await t.http.get(`/v1/servers/${server}/schedules/${secret.id}`).set(auth(token))).body.tasks.map((task: Json) => task.command);
  expect(await shownTo(owner)).toEqual(['say the password is hunter2', 'stop']);
  expect(await shownTo(samToken)).toEqual(['say the password is hunter2', 'stop']);
  expect(await shownTo(patToken)).toEqual([null, null]);
  const run = await t.http.post(`/v1/servers/${server}/schedules/${secret.id}/run`).set(auth(owner));
  expect(run.status).toBe(202);
  await t.runtime.idle();
  // Pat (power, no console) gets the run's event without the commands' text; Sam gets it whole.
  const ranFor = async (token: string) => (await events(token, 'schedule.ran'))[0]?.data.schedule.tasks.map((task: Json) => task.command);
  expect(await ranFor(patToken)).toEqual([null, null]);
  expect(await ranFor(samToken)).toEqual(['say the password is hunter2', 'stop']);
  await until('stopped by the schedule', async () => (await t.http.get(`/v1/servers/${server}`).set(auth(owner))).body.state === 'stopped', 15_000);

  expect((await t.http.patch(`/v1/servers/${server}/members/${kim}`).set(auth(owner)).send({ permissions: ['console'] })).status).toBe(200);
  const disabled = (await t.http.get(`/v1/servers/${server}/schedules/${secret.id}`).set(auth(owner))).body;
  expect(disabled.enabled).toBe(false);
  expect(disabled.disabled_reason).toMatch(/The console command "stop" needs the power permission/);
  t.expectContract();
});

test("running someone else's schedule borrows nothing, and a run stops acting once its author loses access", async () => {
  const { owner, server, add } = await sharedServer();
  const kim = await add('kim@example.com', ['console', 'power']);
  await add('sam@example.com', ['console']);
  const [kimToken, samToken] = [t.token('kim@example.com'), t.token('sam@example.com')];

  // Sam may use the console but not stop the server: running the owner's schedule that stops it is refused.
  const stops = await schedule(owner, server, { name: 'stops', cron: '0 4 * * *', tasks: [{ type: 'command', command: 'stop' }] });
  const refused = await t.http.post(`/v1/servers/${server}/schedules/${stops.id}/run`).set(auth(samToken));
  expect(refused.body).toMatchObject({ status: 403, code: 'missing_permission', permission: 'power' });
  expect(await runs(owner, server, stops.id as string)).toEqual([]);

  // Kim's schedule says one line, waits (100 s: 2 s here), says another; Kim is removed during the wait.
  const slow = await schedule(kimToken, server, { name: 'slow', cron: '0 4 * * *', tasks: [{ type: 'command', command: 'say one' }, { type: 'command', command: 'say two', delay_seconds: 100 }] });
  expect((await t.http.post(`/v1/servers/${server}/schedules/${slow.id}/run`).set(auth(kimToken))).status).toBe(202);
  await until('the first task', async () => (await runs(owner, server, slow.id as string))[0]?.tasks[0].status === 'succeeded', 10_000);
  expect((await t.http.delete(`/v1/servers/${server}/members/${kim}`).set(auth(owner))).status).toBe(204);
  await t.runtime.idle();
  const [run] = await runs(owner, server, slow.id as string);
  expect(run).toMatchObject({ status: 'failed' });
  expect(run.tasks.map((task: Json) => task.status)).toEqual(['succeeded', 'failed']);
  expect(run.detail).toMatch(/no longer has access to this server/);
  const lines = (await t.http.get(`/v1/servers/${server}/console`).set(auth(owner))).body.data as Array<{ stream: string; text: string }>;
  expect(lines.filter((l) => l.stream === 'input').map((l) => l.text)).toEqual(['say one']);
  t.expectContract();
});
