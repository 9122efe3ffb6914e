// Backups of a real world (docs/architecture.md "Backups"): a running flying-squid server is stopped for a
// consistent archive and started again; the archive downloads (streamed, Content-Length, Repr-Digest), unpacks and
// matches its SHA-256; a second backup or a power action meanwhile is 409; a backup a restart interrupted (kill -9)
// shows failed, never ready. Ports 29270-29279.
import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createTestApp, tempDir, type TestApp } from '../helpers/app';
import { until } from '../helpers/wait';

jest.setTimeout(240_000);

let t: TestApp;
let token: string;
const auth = () => ({ Authorization: `Bearer ${token}` });

afterEach(async () => {
  await t.finish();
});

const action = async (id: string, type: string) => {
  const res = await t.http.post(`/v1/servers/${id}/actions`).set(auth()).send({ type });
  expect(res.status).toBe(202);
  return until(`${type} to finish`, async () => {
    const a = (await t.http.get(`/v1/servers/${id}/actions/${res.body.id}`).set(auth())).body;
    return a.status === 'succeeded' || a.status === 'failed' ? a : undefined;
  });
};

test('a running server is backed up consistently and started again; the archive downloads, unpacks and matches', async () => {
  t = await createTestApp({ boot: true, env: { GAME_PORT_RANGE: '29270-29279' }, runtime: { stopTimeoutMs: 10_000, reconcileMs: 500 } });
  token = t.token('backups@example.com');
  const { id } = (await t.http.post('/v1/servers').set(auth()).send({ name: 'world', plan: 'micro', version: 'flying-squid-1.20' })).body;
  expect(await action(id, 'start')).toMatchObject({ status: 'succeeded' });

  const created = await t.http.post(`/v1/servers/${id}/backups`).set(auth()).send({ name: 'before the update' });
  expect(created.status).toBe(202);
  expect(created.body).toMatchObject({ status: 'pending', name: 'before the update', size_bytes: null, sha256: null });
  expect(created.headers.location).toBe(`/v1/servers/${id}/backups/${created.body.id}`);
  // While it is made: another backup and a power action wait.
  expect((await t.http.post(`/v1/servers/${id}/backups`).set(auth()).send({})).status).toBe(409);
  const start = await t.http.post(`/v1/servers/${id}/actions`).set(auth()).send({ type: 'restart' });
  expect(start.status).toBe(409);
  expect(start.body.code).toBe('action_conflict');

  const ready = await until('the backup to finish', async () => {
    const b = (await t.http.get(created.headers.location).set(auth())).body;
    return b.status !== 'pending' ? b : undefined;
  });
  expect(ready).toMatchObject({ status: 'ready', error: null });
  await until('the server to run again', async () => (await t.http.get(`/v1/servers/${id}`).set(auth())).body.state === 'running');

  const { base, close } = await t.listen();
  try {
    const res = await fetch(`${base}${created.headers.location}/archive`, { headers: auth() });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/gzip');
    expect(Number(res.headers.get('content-length'))).toBe(ready.size_bytes);
    const bytes = Buffer.from(await res.arrayBuffer());
    const sha256 = crypto.createHash('sha256').update(bytes).digest('hex');
    expect(sha256).toBe(ready.sha256);
    expect(res.headers.get('repr-digest')).toBe(`sha-256=:${Buffer.from(sha256, 'hex').toString('base64')}:`);
    const out = tempDir('unpacked');
    fs.writeFileSync(path.join(out, 'a.tar.gz'), bytes);
    execFileSync('tar', ['-xzf', 'a.tar.gz'], { cwd: out });
    expect(fs.existsSync(path.join(out, 'world', 'level.dat'))).toBe(true);
    fs.rmSync(out, { recursive: true, force: true });
    expect(res.headers.get('accept-ranges')).toBe('bytes');

    // An interrupted download resumes (RFC 9110 §14): the parts put together are the archive.
    const size = bytes.length;
    const ranged = (range: string) => fetch(`${base}${created.headers.location}/archive`, { headers: { ...auth(), Range: range } });
    const head = await ranged('bytes=0-99');
    expect([head.status, head.headers.get('content-range'), head.headers.get('content-length')]).toEqual([206, `bytes 0-99/${size}`, '100']);
    const tail = await ranged('bytes=100-');
    expect([tail.status, tail.headers.get('content-range')]).toEqual([206, `bytes 100-${size - 1}/${size}`]);
    const joined = Buffer.concat([Buffer.from(await head.arrayBuffer()), Buffer.from(await tail.arrayBuffer())]);
    expect(crypto.createHash('sha256').update(joined).digest('hex')).toBe(ready.sha256);
    const cases: Array<[string, number, string | null]> = [
      [`bytes=${size}-`, 416, `bytes */${size}`], // past the end
      ['bytes=0-1,5-6', 200, null], // several ranges: the whole archive
      ['items=0-5', 200, null], // not a byte range: ignored
    ];
    for (const [range, status, contentRange] of cases) {
      const r = await ranged(range);
      expect([range, r.status, r.headers.get('content-range')]).toEqual([range, status, contentRange]);
      if (status === 200) expect(Buffer.from(await r.arrayBuffer()).length).toBe(size);
      else expect(((await r.json()) as { code: string }).code).toBe('range_not_satisfiable');
    }
  } finally {
    await close();
  }
  const list = await t.http.get(`/v1/servers/${id}/backups`).set(auth());
  expect(list.body).toEqual({ data: [ready], has_more: false, next_cursor: null });
  expect((await t.http.delete(created.headers.location).set(auth())).status).toBe(204);
  expect((await t.http.get(created.headers.location).set(auth())).status).toBe(404);
  expect(await action(id, 'stop')).toMatchObject({ status: 'succeeded' });
});

test('a backup a service restart interrupted (kill -9) shows failed, its partial archive is gone, and an interrupted restore is undone', async () => {
  t = await createTestApp({ env: { GAME_PORT_RANGE: '29280-29289' } });
  token = t.token('backups@example.com');
  const { id } = (await t.http.post('/v1/servers').set(auth()).send({ name: 'world', plan: 'micro', version: 'flying-squid-1.20' })).body;
  // What a kill -9 while archiving leaves: a pending row and a partial file.
  t.db.prepare(`INSERT INTO backups (id, server_id, name, status, created_at) VALUES ('bkp_interrupted1', ?, NULL, 'pending', ?)`).run(id, new Date().toISOString());
  const partial = path.join(t.config.dataDir, 'backups', id, 'bkp_interrupted1.tar.gz.partial');
  fs.mkdirSync(path.dirname(partial), { recursive: true });
  fs.writeFileSync(partial, 'half an archive');
  // And what one during a restore leaves: the world renamed aside, the backup not yet in, a staging folder.
  const dir = path.join(t.config.dataDir, 'servers', id);
  await until('installed', async () => fs.existsSync(path.join(dir, 'world')));
  await t.runtime.idle();
  fs.writeFileSync(path.join(dir, 'world', 'marker'), 'the world as it was');
  fs.renameSync(path.join(dir, 'world'), path.join(dir, '.old-bkp_interrupted1-world'));
  fs.mkdirSync(path.join(dir, '.restore-bkp_interrupted1'));
  await t.boot();
  expect(fs.readFileSync(path.join(dir, 'world', 'marker'), 'utf8')).toBe('the world as it was');
  expect(fs.readdirSync(dir).filter((f) => f.startsWith('.'))).toEqual([]);
  const backup = await t.http.get(`/v1/servers/${id}/backups/bkp_interrupted1`).set(auth());
  expect(backup.body).toMatchObject({ status: 'failed', error: 'Interrupted by a restart of the service.' });
  expect(fs.existsSync(partial)).toBe(false);
  expect((await t.http.get(`/v1/servers/${id}/backups/bkp_interrupted1/archive`).set(auth())).status).toBe(409);
});

/** The block at x, y, z of a stopped server's world, read from its region files (flying-squid's own reader). */
async function blockAt(id: string, x: number, y: number, z: number): Promise<string> {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const registry = require('prismarine-registry')('1.20');
  const { Anvil } = require('prismarine-provider-anvil');
  const { Vec3 } = require('vec3');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const anvil = new (Anvil(registry))(path.join(t.config.dataDir, 'servers', id, 'world', 'region'));
  const chunk = await anvil.load(x >> 4, z >> 4);
  await anvil.close?.();
  return chunk.getBlock(new Vec3(x & 15, y, z & 15)).name;
}

test('setblock, back up, change, restore: the block reads back; a damaged archive fails the restore and changes nothing', async () => {
  t = await createTestApp({ boot: true, env: { GAME_PORT_RANGE: '29290-29299' }, runtime: { stopTimeoutMs: 10_000, reconcileMs: 500 } });
  token = t.token('restore@example.com');
  const { id } = (await t.http.post('/v1/servers').set(auth()).send({ name: 'world', plan: 'micro', version: 'flying-squid-1.20' })).body;
  const command = async (text: string) => expect((await t.http.post(`/v1/servers/${id}/console`).set(auth()).send({ command: text })).status).toBe(202);
  const backUp = async () => {
    const created = await t.http.post(`/v1/servers/${id}/backups`).set(auth()).send({});
    expect(created.status).toBe(202);
    return until('the backup', async () => {
      const b = (await t.http.get(created.headers.location).set(auth())).body;
      return b.status !== 'pending' ? b : undefined;
    });
  };
  expect(await action(id, 'start')).toMatchObject({ status: 'succeeded' });
  await command('setblock 1 100 1 gold_block');
  const backup = await backUp(); // stops the server (its world flushed), archives, starts it again
  expect(backup.status).toBe('ready');
  await until('running again', async () => (await t.http.get(`/v1/servers/${id}`).set(auth())).body.state === 'running');
  await command('setblock 1 100 1 diamond_block');
  expect(await action(id, 'stop')).toMatchObject({ status: 'succeeded' });
  expect(await blockAt(id, 1, 100, 1)).toBe('diamond_block');

  // Concurrent backup and restore on the same server: the second answers 409.
  expect(await action(id, 'start')).toMatchObject({ status: 'succeeded' });
  const second = await t.http.post(`/v1/servers/${id}/backups`).set(auth()).send({});
  expect(second.status).toBe(202);
  const refused = await t.http.post(`/v1/servers/${id}/actions`).set(auth()).send({ type: 'restore', backup_id: backup.id });
  expect(refused.status).toBe(409);
  await until('the second backup', async () => (await t.http.get(second.headers.location).set(auth())).body.status === 'ready' || undefined);
  await until('running again', async () => (await t.http.get(`/v1/servers/${id}`).set(auth())).body.state === 'running');

  const noBackup = await t.http.post(`/v1/servers/${id}/actions`).set(auth()).send({ type: 'restore' });
  expect(noBackup.status).toBe(400);
  expect(noBackup.body.errors).toEqual([{ pointer: '/body/backup_id', detail: 'is required', rule: 'required' }]); // RestoreActionRequest
  const res = await t.http.post(`/v1/servers/${id}/actions`).set(auth()).send({ type: 'restore', backup_id: backup.id });
  expect(res.status).toBe(202);
  const done = await until('the restore', async () => {
    const a = (await t.http.get(`/v1/servers/${id}/actions/${res.body.id}`).set(auth())).body;
    return a.status === 'succeeded' || a.status === 'failed' ? a : undefined;
  });
  expect(done).toMatchObject({ status: 'succeeded' });
  expect((await t.http.get(`/v1/servers/${id}`).set(auth())).body.state).toBe('running'); // it ran, so it runs again
  expect(await action(id, 'stop')).toMatchObject({ status: 'succeeded' });
  expect(await blockAt(id, 1, 100, 1)).toBe('gold_block');

  // A damaged archive: the restore fails and the world stays as it was.
  const archive = path.join(t.config.dataDir, 'backups', id, `${backup.id}.tar.gz`);
  fs.appendFileSync(archive, 'damage');
  const bad = await t.http.post(`/v1/servers/${id}/actions`).set(auth()).send({ type: 'restore', backup_id: backup.id });
  const failed = await until('the failed restore', async () => {
    const a = (await t.http.get(`/v1/servers/${id}/actions/${bad.body.id}`).set(auth())).body;
    return a.status === 'succeeded' || a.status === 'failed' ? a : undefined;
  });
  expect(failed).toMatchObject({ status: 'failed', error: { code: 'restore_failed' } });
  expect(await blockAt(id, 1, 100, 1)).toBe('gold_block');
  expect(fs.readdirSync(path.join(t.config.dataDir, 'servers', id)).filter((f) => f.startsWith('.'))).toEqual([]);
});
