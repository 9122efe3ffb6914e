// Backups through the API on an installed, stopped server (no game): retention per plan, what is refused. A real
// world, its download and restore: test/e2e/backups.test.ts.
import fs from 'node:fs';
import path from 'node:path';
import { createTestApp, type TestApp } from '../helpers/app';
import { until } from '../helpers/wait';

jest.setTimeout(180_000);

let t: TestApp;
let token: string;
let id: string;
const auth = () => ({ Authorization: `Bearer ${token}` });

let offset = 0; // the service's clock runs this far ahead of the wall clock (backup schedules)
beforeEach(async () => {
  offset = 0;
  t = await createTestApp({ clock: { now: () => Date.now() + offset } });
  token = t.token();
  id = (await t.http.post('/v1/servers').set(auth()).send({ name: 'kept', plan: 'micro', version: 'flying-squid-1.20' })).body.id;
  await until('installed', async () => (await t.http.get(`/v1/servers/${id}`).set(auth())).body.state === 'stopped');
});
afterEach(async () => {
  await t.runtime.idle();
  await t.finish();
});

async function backUp() {
  const res = await t.http.post(`/v1/servers/${id}/backups`).set(auth()).send({});
  if (res.status !== 202) return res;
  await t.runtime.idle();
  return t.http.get(res.headers.location).set(auth());
}

test('a server keeps as many backups as its plan says; past that, 409 until one is deleted', async () => {
  const plans = (await t.http.get('/v1/plans').set(auth())).body.data;
  expect(plans.find((p: { id: string }) => p.id === 'micro').backups).toBe(2);
  const first = await backUp();
  expect(first.body).toMatchObject({ status: 'ready' });
  expect((await backUp()).body.status).toBe('ready');
  const third = await backUp();
  expect(third.status).toBe(409);
  expect(third.body.code).toBe('backup_limit_reached');
  expect((await t.http.get(`/v1/servers/${id}/backups`).set(auth())).body.data).toHaveLength(2);
  expect((await t.http.delete(`/v1/servers/${id}/backups/${first.body.id}`).set(auth())).status).toBe(204);
  expect((await backUp()).body.status).toBe('ready');
});

test('a backup leaves backup.created, backup.ready and backup.deleted events, each with the backup as it was then', async () => {
  const ready = await backUp();
  expect(ready.body.status).toBe('ready');
  expect((await t.http.delete(`/v1/servers/${id}/backups/${ready.body.id}`).set(auth())).status).toBe(204);
  const events = (await t.http.get('/v1/events').query({ server_id: id, limit: 100 }).set(auth())).body.data
    .filter((e: { type: string }) => e.type.startsWith('backup.'));
  expect(events.map((e: { type: string; server_id: string; data: { backup: { id: string; status: string } } }) => [e.type, e.server_id, e.data.backup.id, e.data.backup.status])).toEqual([
    ['backup.created', id, ready.body.id, 'pending'],
    ['backup.ready', id, ready.body.id, 'ready'],
    ['backup.deleted', id, ready.body.id, 'ready'],
  ]);
  expect(events[1].data.backup).toEqual(ready.body); // size and checksum as the API shows them
});

test('a backup that cannot be made leaves backup.failed with its error', async () => {
  const userId = t.store.tokens.authenticate(token)!.userId;
  const created = t.store.backups.create(id, null, { limit: 10 });
  if (!('backup' in created)) throw new Error('a backup was already pending');
  t.store.backups.markFailed(created.backup.id, 'The archive could not be made: disk full');
  const failed = t.store.events.after(userId, 0, 100, { type: 'backup.failed' });
  expect(failed.map((e) => e.event.data)).toEqual([{ backup: expect.objectContaining({ id: created.backup.id, status: 'failed', error: 'The archive could not be made: disk full' }) }]);
  t.store.backups.markFailed(created.backup.id, 'again'); // no longer pending: nothing changes, no second event
  expect(t.store.events.after(userId, 0, 100, { type: 'backup.failed' })).toHaveLength(1);
});

test('unknown backups answer 404, a restore without one 400, and nothing changes', async () => {
  const missing = 'bkp_missing0000000';
  for (const path of [`backups/${missing}`, `backups/${missing}/archive`]) {
    const res = await t.http.get(`/v1/servers/${id}/${path}`).set(auth());
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('backup_not_found');
  }
  const restore = await t.http.post(`/v1/servers/${id}/actions`).set(auth()).send({ type: 'restore', backup_id: missing });
  expect(restore.status).toBe(404);
  const stop = await t.http.post(`/v1/servers/${id}/actions`).set(auth()).send({ type: 'stop', backup_id: missing });
  expect(stop.status).toBe(400);
  expect(stop.body.errors).toEqual([{ pointer: '/body/backup_id', detail: 'is not a known property', rule: 'additionalProperties' }]); // PowerActionRequest
  expect((await t.http.get(`/v1/servers/${id}/actions`).set(auth())).body.data).toEqual([]);
});

describe('backup schedules', () => {
  const MINUTE = 60_000;
  const backups = async () => (await t.http.get(`/v1/servers/${id}/backups`).set(auth()).query({ limit: 100 })).body.data as Array<{ id: string; automatic: boolean; status: string }>;
  const runSchedules = async () => {
    const started = t.runtime.backupScheduler.runDue();
    await t.runtime.idle();
    return started;
  };

  test('every_hours makes automatic backups; at the plan\'s limit the oldest automatic one goes, never one you asked for', async () => {
    const set = await t.http.patch(`/v1/servers/${id}`).set(auth()).send({ backup_schedule: { every_hours: 1 } });
    expect(set.status).toBe(200);
    expect(set.body.backup_schedule).toEqual({ every_hours: 1 });
    expect(await runSchedules()).toEqual([]); // not an hour yet
    offset = 61 * MINUTE;
    expect(await runSchedules()).toEqual([id]);
    expect(await runSchedules()).toEqual([]); // made: the next one is an hour after it
    const [auto1] = await backups();
    expect(auto1).toMatchObject({ automatic: true, status: 'ready' });
    const manual1 = (await backUp()).body; // micro keeps 2: now full
    expect(manual1).toMatchObject({ automatic: false, status: 'ready' });

    offset = 122 * MINUTE;
    expect(await runSchedules()).toEqual([id]);
    const after = await backups();
    expect(after.map((b) => [b.id === manual1.id ? 'manual1' : b.id === auto1.id ? 'auto1' : 'new', b.automatic, b.status])).toEqual([
      ['manual1', false, 'ready'],
      ['new', true, 'ready'],
    ]);
    expect(fs.existsSync(path.join(t.dir, 'backups', id, `${auto1.id}.tar.gz`))).toBe(false); // its archive went too

    // A backup you ask for at the limit makes room the same way; with only yours left, 409.
    const manual2 = (await backUp()).body;
    expect((await backups()).map((b) => b.id)).toEqual([manual1.id, manual2.id]);
    const full = await backUp();
    expect([full.status, full.body.code]).toEqual([409, 'backup_limit_reached']);

    const off = await t.http.patch(`/v1/servers/${id}`).set(auth()).send({ backup_schedule: null });
    expect(off.body.backup_schedule).toBeNull();
    offset = 1000 * MINUTE;
    expect(await runSchedules()).toEqual([]);
  });

  // Neither or both of every_hours and cron is the schema's rule (BackupSchedule, a oneOf): each branch names what it
  // lacks or does not take; cron that parses and keep within the plan are the service's.
  test.each<[string, object, string[]]>([
    ['both an interval and cron', { every_hours: 1, cron: '0 4 * * *' }, ['/body/backup_schedule/cron', '/body/backup_schedule/every_hours']],
    ['neither an interval nor cron', { keep: 1 }, ['/body/backup_schedule/every_hours', '/body/backup_schedule/cron']],
    ['cron that does not parse', { cron: '0 4 * * * *' }, ['/body/backup_schedule/cron']],
    ['keep past the plan', { every_hours: 1, keep: 5 }, ['/body/backup_schedule/keep']],
  ])('a schedule with %s is refused and changes nothing', async (_name, schedule, pointers) => {
    const res = await t.http.patch(`/v1/servers/${id}`).set(auth()).send({ backup_schedule: schedule });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(pointers);
    expect((await t.http.get(`/v1/servers/${id}`).set(auth())).body.backup_schedule).toBeNull();
  });
});
