// Backups kept after their server is deleted (openapi/v1.yaml deleteServer `keep_backups`, listKeptBackups): on
// installed, stopped servers (no game), with a marker file in the world standing for the world. A real world's
// backup and restore: test/e2e/backups.test.ts.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createTestApp, type TestApp } from '../helpers/app';
import { until } from '../helpers/wait';

jest.setTimeout(120_000);

let t: TestApp;
let token: string;
const auth = () => ({ Authorization: `Bearer ${token}` });

async function start(env: Record<string, string> = {}) {
  t = await createTestApp({ env });
  token = t.token();
}
afterEach(async () => {
  await t.runtime.idle();
  await t.finish();
});

async function server(name: string, version = 'flying-squid-1.20'): Promise<string> {
  const id = (await t.http.post('/v1/servers').set(auth()).send({ name, plan: 'micro', version })).body.id as string;
  await until(`${name} installed`, async () => (await t.http.get(`/v1/servers/${id}`).set(auth())).body.state === 'stopped');
  return id;
}
const world = (id: string) => path.join(t.dir, 'servers', id, 'world');
async function backUp(id: string, marker: string) {
  fs.mkdirSync(world(id), { recursive: true });
  fs.writeFileSync(path.join(world(id), 'marker.txt'), marker);
  const res = await t.http.post(`/v1/servers/${id}/backups`).set(auth()).send({ name: marker });
  expect(res.status).toBe(202);
  await t.runtime.idle();
  const ready = (await t.http.get(res.headers.location).set(auth())).body;
  expect(ready.status).toBe('ready');
  return ready as { id: string; sha256: string; size_bytes: number };
}
async function remove(id: string, query: Record<string, string>) {
  const res = await t.http.delete(`/v1/servers/${id}`).set(auth()).query(query);
  if (res.status === 202) {
    await t.runtime.idle();
    await until('removed', async () => (await t.http.get(`/v1/servers/${id}`).set(auth())).status === 404);
  }
  return res;
}
const keptList = async () => (await t.http.get('/v1/backups').set(auth())).body.data as Array<Record<string, unknown>>;

test.each<[string, Record<string, string>, boolean]>([
  ['keep_backups=true keeps', { keep_backups: 'true' }, true],
  ['keep_backups=false deletes', { keep_backups: 'false' }, false],
  ['no keep_backups deletes', {}, false],
])('deleting a server with %s its ready backups', async (_name, query, keeps) => {
  await start();
  const id = await server('doomed');
  const a = await backUp(id, 'first');
  const b = await backUp(id, 'second');
  expect((await remove(id, query)).status).toBe(202);
  expect(fs.existsSync(path.join(t.dir, 'backups', id))).toBe(false); // the server's archive folder is gone either way
  const kept = await keptList();
  if (!keeps) {
    expect(kept).toEqual([]);
    expect(fs.readdirSync(t.dir).includes('kept-backups') ? fs.readdirSync(path.join(t.dir, 'kept-backups')) : []).toEqual([]);
    expect((await t.http.get(`/v1/backups/${a.id}`).set(auth())).status).toBe(404);
    return;
  }
  expect(kept).toEqual([a, b].map((x, i) => ({
    id: x.id, server_id: id, server_name: 'doomed', version: 'flying-squid-1.20', name: ['first', 'second'][i], automatic: false,
    size_bytes: x.size_bytes, sha256: x.sha256, created_at: expect.any(String), kept_at: expect.any(String),
  })));
  expect((await t.http.get(`/v1/backups/${a.id}`).set(auth())).body).toEqual(kept[0]);
  const archive = await t.http.get(`/v1/backups/${a.id}/archive`).set(auth()).buffer(true).parse((res, done) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => done(null, Buffer.concat(chunks)));
  });
  expect(archive.status).toBe(200);
  expect(crypto.createHash('sha256').update(archive.body as Buffer).digest('hex')).toBe(a.sha256);
  const part = await t.http.get(`/v1/backups/${a.id}/archive`).set(auth()).set('Range', 'bytes=0-9');
  expect([part.status, part.headers['content-range']]).toEqual([206, `bytes 0-9/${a.size_bytes}`]);
});

test('a kept backup restores into another server of the same version, and only of the same version', async () => {
  await start();
  const old = await server('old');
  const backup = await backUp(old, 'the old world');
  await remove(old, { keep_backups: 'true' });
  const fresh = await server('fresh');
  fs.writeFileSync(path.join(world(fresh), 'marker.txt'), 'a new world');

  const other = await server('other', 'flying-squid-1.16.5');
  const refused = await t.http.post(`/v1/servers/${other}/actions`).set(auth()).send({ type: 'restore', backup_id: backup.id });
  expect([refused.status, refused.body.code]).toEqual([409, 'invalid_state']);
  expect(refused.body.detail).toContain('flying-squid-1.20');
  expect((await t.http.get(`/v1/servers/${other}/actions`).set(auth())).body.data).toEqual([]);

  const restore = await t.http.post(`/v1/servers/${fresh}/actions`).set(auth()).send({ type: 'restore', backup_id: backup.id });
  expect(restore.status).toBe(202);
  await t.runtime.idle();
  expect((await t.http.get(restore.headers.location).set(auth())).body).toMatchObject({ status: 'succeeded', error: null });
  expect(fs.readFileSync(path.join(world(fresh), 'marker.txt'), 'utf8')).toBe('the old world');
  expect((await keptList()).map((k) => k.id)).toEqual([backup.id]); // restoring keeps it
});

test('a kept backup is the owner\'s alone to restore: to a member with the backups permission it is backup_not_found', async () => {
  await start();
  const old = await server('old');
  const kept = await backUp(old, 'the old world');
  await remove(old, { keep_backups: 'true' });
  const shared = await server('shared');
  const own = await backUp(shared, 'its own');
  expect((await t.http.post(`/v1/servers/${shared}/members`).set(auth()).send({ email: 'member@example.com', permissions: ['backups'] })).status).toBe(201);
  const member = { Authorization: `Bearer ${t.token('member@example.com')}` };

  const refused = await t.http.post(`/v1/servers/${shared}/actions`).set(member).send({ type: 'restore', backup_id: kept.id });
  expect([refused.status, refused.body.code]).toEqual([404, 'backup_not_found']);
  const allowed = await t.http.post(`/v1/servers/${shared}/actions`).set(member).send({ type: 'restore', backup_id: own.id });
  expect(allowed.status).toBe(202); // the server's own backup: the member's to restore
  await t.runtime.idle();
  expect((await t.http.get(allowed.headers.location).set(auth())).body).toMatchObject({ status: 'succeeded', type: 'restore' });
  expect((await t.http.get(`/v1/servers/${shared}/actions`).set(auth())).body.data).toHaveLength(1); // the refusal recorded none
});

test('past KEPT_BACKUPS_PER_USER the delete answers 403 quota_exceeded and changes nothing', async () => {
  await start({ KEPT_BACKUPS_PER_USER: '1' });
  const id = await server('two backups');
  await backUp(id, 'one');
  await backUp(id, 'two');
  const res = await t.http.delete(`/v1/servers/${id}`).set(auth()).query({ keep_backups: 'true' });
  expect(res.status).toBe(403);
  expect(res.body).toMatchObject({ code: 'quota_exceeded', quota: 'kept_backups', limit: 1, used: 0 });
  const after = (await t.http.get(`/v1/servers/${id}`).set(auth())).body;
  expect(after.state).toBe('stopped');
  expect(t.db.prepare('SELECT keep_backups FROM servers WHERE id = ?').pluck().get(id)).toBe(0);
  expect((await t.http.get(`/v1/servers/${id}/backups`).set(auth())).body.data).toHaveLength(2);
  // Without keeping, the same delete goes through.
  expect((await remove(id, {})).status).toBe(202);
});

test('a removal past its transfer counts its backups once against KEPT_BACKUPS_PER_USER', async () => {
  await start({ KEPT_BACKUPS_PER_USER: '2' });
  const first = await server('first');
  await backUp(first, 'one');
  // The first server's removal copied its backup into the kept ones, and its row is not gone yet.
  t.runtime.keptBackups.promise(first);
  await t.runtime.keptBackups.release(first, path.join(t.dir, 'backups', first));
  const second = await server('second');
  await backUp(second, 'two');
  expect((await t.http.delete(`/v1/servers/${second}`).set(auth()).query({ keep_backups: 'true' })).status).toBe(202);
});

test('deleting a kept backup removes its archive and records backup.deleted; another account never sees it', async () => {
  await start();
  const id = await server('gone');
  const backup = await backUp(id, 'kept');
  await remove(id, { keep_backups: 'true' });
  const file = path.join(t.dir, 'kept-backups', `${backup.id}.tar.gz`);
  expect(fs.existsSync(file)).toBe(true);

  const stranger = t.token('stranger@example.com');
  for (const url of [`/v1/backups/${backup.id}`, `/v1/backups/${backup.id}/archive`]) {
    expect((await t.http.get(url).set({ Authorization: `Bearer ${stranger}` })).status).toBe(404);
  }
  expect((await t.http.delete(`/v1/backups/${backup.id}`).set({ Authorization: `Bearer ${stranger}` })).status).toBe(404);
  expect((await t.http.get('/v1/backups').set({ Authorization: `Bearer ${stranger}` })).body.data).toEqual([]);

  expect((await t.http.delete(`/v1/backups/${backup.id}`).set(auth())).status).toBe(204);
  expect(fs.existsSync(file)).toBe(false);
  expect(await keptList()).toEqual([]);
  const deleted = (await t.http.get('/v1/events').query({ type: 'backup.deleted' }).set(auth())).body.data;
  expect(deleted.map((e: { server_id: string; data: { backup: { id: string } } }) => [e.server_id, e.data.backup.id])).toEqual([[id, backup.id]]);
  expect((await t.http.delete(`/v1/backups/${backup.id}`).set(auth())).status).toBe(404);
});

test('a removal run again after a crash keeps each backup once, with its archive', async () => {
  await start();
  const id = await server('crashy');
  const backup = await backUp(id, 'once');
  t.runtime.keptBackups.promise(id);
  // The first life moved the archives, then died before the row went; the next boot runs the removal again.
  await t.runtime.keptBackups.release(id, path.join(t.dir, 'backups', id));
  await remove(id, { keep_backups: 'true' });
  expect((await keptList()).map((k) => k.id)).toEqual([backup.id]);
  expect(fs.existsSync(path.join(t.dir, 'kept-backups', `${backup.id}.tar.gz`))).toBe(true);
});

test('a keep_backups that is not true or false answers 400 and deletes nothing', async () => {
  await start();
  const id = await server('kept anyway');
  const res = await t.http.delete(`/v1/servers/${id}`).set(auth()).query({ keep_backups: 'yes' });
  expect(res.status).toBe(400);
  expect(res.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(['/query/keep_backups']);
  expect((await t.http.get(`/v1/servers/${id}`).set(auth())).body.state).toBe('stopped');
});
