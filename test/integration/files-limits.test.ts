// The Files API's limits on the local runtime (openapi/v1.yaml tag Files; issue 40 §3): a body with no
// Content-Length (411), the plan's disk enforced before the bytes land, counting what was written since the last
// measurement (507, with how much room is left), and no write while a restore of the server is under way (409).
// The runtime tests' fake game (operator software) is the game: it can be told to ignore a stop, which holds a
// restore in its stop for the stop timeout, long enough to try writes against it. Game ports 28660-28669.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import tar from 'tar-stream';
import { createTestApp, tempDir, type TestApp } from '../helpers/app';
import { until } from '../helpers/wait';

jest.setTimeout(60_000);
const MIB = 1024 * 1024;
let t: TestApp;
let token: string;
const auth = () => ({ Authorization: `Bearer ${token}` });
const get = (p: string) => t.http.get(p).set(auth());
const put = (id: string, p: string, body: Buffer) =>
  t.http.put(`/v1/servers/${id}/files/content`).query({ path: p }).set(auth()).set('Content-Type', 'application/octet-stream').send(body);

/** The fixtures, and the fake game once more as `fake-game-kept`, which can be backed up (its `world`, stopped). */
function software(): string {
  const dir = tempDir('software');
  const fixtures = path.join(__dirname, '..', 'runtime', 'fixtures', 'software');
  fs.cpSync(fixtures, dir, { recursive: true });
  const def = JSON.parse(fs.readFileSync(path.join(fixtures, 'fake-game.json'), 'utf8')) as Record<string, unknown>;
  fs.writeFileSync(path.join(dir, 'fake-game-kept.json'), JSON.stringify({ ...def, id: 'fake-game-kept', backup: { paths: ['world'], consistency: 'stop' } }));
  return dir;
}

beforeAll(async () => {
  t = await createTestApp({
    boot: true,
    software: software(),
    env: { GAME_PORT_RANGE: '28660-28669' },
    runtime: { backoffMs: 200, stopTimeoutMs: 5_000, reconcileMs: 500 },
  });
  token = t.token('files-limits@example.com');
});
afterAll(async () => {
  await t.runtime.idle();
  await t.finish();
});

async function installed(name: string, version = 'fake-game-1.0'): Promise<string> {
  const created = await t.http.post('/v1/servers').set(auth()).send({ name, plan: 'micro', version });
  expect(created.status).toBe(201);
  await until('installed', async () => (await get(`/v1/servers/${created.body.id}`)).body.state === 'stopped');
  return created.body.id as string;
}

async function tarGzOf(files: Record<string, Buffer>): Promise<Buffer> {
  const pack = tar.pack();
  for (const [name, content] of Object.entries(files)) pack.entry({ name }, content);
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const c of pack as AsyncIterable<Buffer>) chunks.push(c);
  return zlib.gzipSync(Buffer.concat(chunks));
}

test('an upload or an archive with no Content-Length (chunked) is refused with 411, nothing written', async () => {
  const id = await installed('chunked');
  const { base, close } = await t.listen();
  try {
    for (const [method, sub] of [['PUT', '/files/content?path=chunked.txt'], ['POST', '/files/extract?path=world']]) {
      const body = new ReadableStream({
        start(c) {
          c.enqueue(new TextEncoder().encode('no length given'));
          c.close();
        },
      });
      const res = await fetch(`${base}/v1/servers/${id}${sub}`, {
        method, headers: { ...auth(), 'Content-Type': 'application/octet-stream' }, body, duplex: 'half',
      } as RequestInit);
      const problem = (await res.json()) as { code: string };
      expect([method, res.status, problem.code]).toEqual([method, 411, 'length_required']);
    }
  } finally {
    await close();
  }
  expect(fs.existsSync(path.join(t.config.dataDir, 'servers', id, 'chunked.txt'))).toBe(false);
});

test("the plan's disk: a write past it is refused with 507 before it lands, what was written since the last measurement counted", async () => {
  const id = await installed('full');
  const dir = path.join(t.config.dataDir, 'servers', id);
  // A file the game could have made: 2040 of the micro plan's 2048 MiB, counted by its length (sparse here).
  fs.writeFileSync(path.join(dir, 'filler.bin'), '');
  fs.truncateSync(path.join(dir, 'filler.bin'), 2040 * MIB);
  await t.runtime.diskWatcher.measureNow();
  const used = (await get(`/v1/servers/${id}`)).body.disk_used_mb as number;
  expect(used).toBeGreaterThanOrEqual(2040);
  const left = (2048 - used) * MIB;

  const over = await put(id, 'big.bin', Buffer.alloc(left + MIB));
  expect([over.status, over.body.code, over.body.limit]).toEqual([507, 'insufficient_storage', 2048 * MIB]);
  expect(over.body.detail).toMatch(/has \d+ left/);
  expect(fs.existsSync(path.join(dir, 'big.bin'))).toBe(false);

  // Within the room: taken; the same again no longer fits, as the first is counted before any new measurement.
  const half = Math.floor(left / 2) + 1;
  expect((await put(id, 'a.bin', Buffer.alloc(half))).status).toBe(201);
  const second = await put(id, 'b.bin', Buffer.alloc(half));
  expect([second.status, second.body.code]).toEqual([507, 'insufficient_storage']);
  expect(fs.existsSync(path.join(dir, 'b.bin'))).toBe(false);

  // An archive that unpacks past the room: refused before any of it is written.
  const archive = await tarGzOf({ 'data/random.bin': crypto.randomBytes(half) });
  const extracted = await t.http.post(`/v1/servers/${id}/files/extract`).query({ path: '' }).set(auth()).set('Content-Type', 'application/gzip').send(archive);
  expect([extracted.status, extracted.body.code]).toEqual([507, 'insufficient_storage']);
  expect(fs.existsSync(path.join(dir, 'data'))).toBe(false);

  // Room again once the filler is deleted (through the API) and the disk measured.
  expect((await t.http.delete(`/v1/servers/${id}/files`).query({ path: 'filler.bin' }).set(auth())).status).toBe(204);
  await t.runtime.diskWatcher.measureNow();
  expect((await put(id, 'b.bin', Buffer.alloc(half))).status).toBe(201);
});

test('while a restore of the server is under way, every write answers 409 and changes nothing; after it, writes go through', async () => {
  const id = await installed('restoring', 'fake-game-kept-1.0');
  fs.mkdirSync(path.join(t.config.dataDir, 'servers', id, 'world'), { recursive: true });
  const backup = await t.http.post(`/v1/servers/${id}/backups`).set(auth()).send({});
  expect([backup.status, backup.body.detail]).toEqual([202, undefined]);
  await until('the backup', async () => (await get(backup.headers.location)).body.status === 'ready' || undefined);
  expect((await t.http.post(`/v1/servers/${id}/actions`).set(auth()).send({ type: 'start' })).status).toBe(202);
  await until('running', async () => (await get(`/v1/servers/${id}`)).body.state === 'running');
  // The game ignores the stop the restore begins with: the restore waits the stop timeout (5 s) before its kill.
  expect((await t.http.post(`/v1/servers/${id}/console`).set(auth()).send({ command: 'ignore-stop' })).status).toBe(202);
  const restore = await t.http.post(`/v1/servers/${id}/actions`).set(auth()).send({ type: 'restore', backup_id: backup.body.id });
  expect(restore.status).toBe(202);

  const dir = path.join(t.config.dataDir, 'servers', id);
  const attempts = [
    ['upload', await put(id, 'plugin.jar', Buffer.from('jar'))],
    ['mkdir', await t.http.post(`/v1/servers/${id}/files/folders`).set(auth()).send({ path: 'plugins' })],
    ['move', await t.http.post(`/v1/servers/${id}/files/moves`).set(auth()).send({ from: 'world', to: 'world2' })],
    ['delete', await t.http.delete(`/v1/servers/${id}/files`).query({ path: 'world', recursive: true }).set(auth())],
    ['extract', await t.http.post(`/v1/servers/${id}/files/extract`).query({ path: 'mods', replace: 'folder' }).set(auth()).set('Content-Type', 'application/gzip').send(await tarGzOf({ 'a.txt': Buffer.from('a') }))],
  ] as const;
  expect((await get(`/v1/servers/${id}/actions/${restore.body.id}`)).body.status).not.toMatch(/succeeded|failed/); // still under way
  expect(attempts.map(([what, res]) => [what, res.status, res.body.code])).toEqual(attempts.map(([what]) => [what, 409, 'action_conflict']));
  expect(['plugin.jar', 'plugins', 'world2', 'mods'].filter((n) => fs.existsSync(path.join(dir, n)))).toEqual([]);
  expect(fs.existsSync(path.join(dir, 'world'))).toBe(true);
  // Reads still answer meanwhile.
  expect((await get(`/v1/servers/${id}/files`)).status).toBe(200);

  const done = await until('the restore', async () => {
    const a = (await get(`/v1/servers/${id}/actions/${restore.body.id}`)).body;
    return a.status === 'succeeded' || a.status === 'failed' ? a : undefined;
  }, 30_000);
  expect(done.status).toBe('succeeded');
  expect((await put(id, 'plugin.jar', Buffer.from('jar'))).status).toBe(201);
  await t.http.post(`/v1/servers/${id}/actions`).set(auth()).send({ type: 'kill' });
  await until('stopped', async () => ['stopped', 'crashed'].includes((await get(`/v1/servers/${id}`)).body.state) || undefined);
});
