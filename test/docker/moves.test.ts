// Moving a server between nodes (issue 26 §4; docs/architecture.md "Moving a server"), the service in a process of
// its own (test/helpers/service-main.cjs) on two engines (the second from scripts/docker-node.sh). A running
// flying-squid server with a block set through its console and 64 MiB more in its world is moved by `gsh server
// move`, live (issue 41 §2: a first pass while the game runs, then stopped for what changed); the service is killed
// with SIGKILL while the first pass streams into the second engine: the server is whole on the first (its row there,
// its game still running there, nothing on the second), and the next service life finishes the move: running on the
// second node at a new address (server.updated), the old volume gone, the block and the file in its world. `gsh node
// drain --evacuate` moves it back; a move killed while it copies what changed since the first pass (a file written
// during that pass) leaves it whole and stopped on the first, and the next life finishes it with that file; a move
// whose target engine stops midway fails, and the server runs
// again where it was, the partial copy removed once that engine answers again; a move whose source engine stops
// midway fails too, and the server runs again on that node once it answers. All along, the server never runs on
// both nodes at once. Ports 29060-29079.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { instanceName } from '../../src/runtime/host/cgroups';
import { LABEL_SERVER, volumeName } from '../../src/runtime/host/docker/docker-environment';
import { LABEL_HELPER } from '../../src/runtime/host/docker/helper-containers';
import type { Engine } from '../../src/runtime/host/docker/engine';
import { tempDir } from '../helpers/app';
import { until } from '../helpers/wait';
import { blockIn } from '../helpers/world';
import { containersOf, DOCKER_HOST, engine, ensureEngine, gsh, putIntoVolume, removeContainersOf, secondEngine, volumesOf, type SecondEngine, serviceProcesses } from './engine';

jest.setTimeout(600_000);
const MIB = 1024 * 1024;
const PORTS = { one: [29060, 29069], two: [29070, 29079] } as const;
let lease: { release(): Promise<void> };
let two: SecondEngine;
const dataDir = tempDir('moves');

beforeAll(async () => {
  lease = await ensureEngine();
  two = await secondEngine();
}, 1_500_000); // it may wait its turn for the second engine (lockSecondEngine in ./engine.ts)

afterAll(async () => {
  services.killAll();
  await removeContainersOf(dataDir, engine);
  await removeContainersOf(dataDir, two.engine).catch(() => undefined);
  await two?.release();
  await lease?.release();
  fs.rmSync(dataDir, { recursive: true, force: true });
}, 180_000);

const services = serviceProcesses(dataDir);
const { logTail } = services;
const startService = services.start;

/** The newest move of the server as the database holds it (what the service recorded). */
function lastMove(serverId: string): { status: string; leftover: string | null; error: string | null } | undefined {
  const db = new Database(path.join(dataDir, 'gsh.sqlite'), { readonly: true });
  try {
    return db.prepare('SELECT status, leftover, error FROM server_moves WHERE server_id = ? ORDER BY id DESC LIMIT 1').get(serverId) as never;
  } finally {
    db.close();
  }
}

/** Whether a helper container works on the server's files on the engine (a copy streaming in, on the target). */
async function helperOn(on: Engine, serverId: string): Promise<boolean> {
  const filters = encodeURIComponent(JSON.stringify({ label: [`${LABEL_HELPER}=${serverId}`] }));
  return (await on.json<unknown[]>('GET', `/containers/json?all=1&filters=${filters}`).catch(() => [])).length > 0;
}

/** The server's running game containers on each engine, sampled until stopped: the most seen at once. */
function watchRunning(serverId: string): { stop(): Promise<number> } {
  let most = 0;
  let on = true;
  const loop = (async () => {
    while (on) {
      const counts = await Promise.all([engine, two.engine].map(async (e) =>
        (await containersOf(dataDir, e).catch(() => [])).filter((c) => c.Labels[LABEL_SERVER] === serverId && c.State === 'running').length));
      most = Math.max(most, counts[0] + counts[1]);
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  return { stop: async () => ((on = false), await loop, most) };
}

test('a live move survives kill -9 in its first pass and in its last, and keeps the world; evacuate moves it back; either engine gone undoes a move', async () => {
  try {
    await movesAndFailures();
  } catch (err) {
    (err as Error).message += `\nthe services' last log lines:\n${logTail.join('\n')}`;
    throw err;
  }
});

async function movesAndFailures() {
  for (const [name, host, [low, high]] of [['one', DOCKER_HOST, PORTS.one], ['two', two.dockerHost, PORTS.two]] as const) {
    expect(await gsh(dataDir, 'node', 'add', '--name', name, '--docker-host', host, '--public-host', '127.0.0.1', '--memory-mb', '2000', '--ports', `${low}-${high}`)).toMatchObject({ code: 0 });
  }
  expect((await gsh(dataDir, 'node', 'drain', 'two')).code).toBe(0); // the server is made on node one
  const token = (await gsh(dataDir, 'token', 'create', '--email', 'mover@example.com', '--name', 'test')).out.split('\n').pop()!;
  const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
  let service = await startService();
  const api = async (method: string, p: string, body?: object) => {
    const res = await fetch(`${service.base}${p}`, { method, headers, body: body && JSON.stringify(body) });
    return { status: res.status, body: (await res.json().catch(() => null)) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
  };
  const server = async () => (await api('GET', `/v1/servers/${id}`)).body as { state: string; address: { host: string; port: number } };
  const inRange = (port: number, [low, high]: readonly [number, number]) => port >= low && port <= high;

  const created = await api('POST', '/v1/servers', { name: 'Mover', plan: 'micro', version: 'flying-squid-1.20' });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  await until('installed', async () => (await server()).state === 'stopped', 180_000);
  await putIntoVolume(engine, dataDir, id, { 'world/filler.bin': Buffer.alloc(64 * MIB, 7) });
  expect((await api('POST', `/v1/servers/${id}/actions`, { type: 'start' })).status).toBe(202);
  await until('running', async () => (await server()).state === 'running', 180_000);
  expect(inRange((await server()).address.port, PORTS.one)).toBe(true);
  expect((await api('POST', `/v1/servers/${id}/console`, { command: 'setblock 3 100 3 gold_block' })).status).toBe(202);
  expect((await gsh(dataDir, 'node', 'drain', 'two', '--undo')).code).toBe(0);
  const running = watchRunning(id);

  // The move, and the service killed while the first pass streams into the second engine, the game running.
  const asked = await gsh(dataDir, 'server', 'move', id, '--to', 'two', '--no-wait');
  expect(asked).toMatchObject({ code: 0 });
  await until('the first pass streaming into node two', async () => (lastMove(id)?.status === 'syncing' && (await helperOn(two.engine, id))) || undefined, 120_000);
  service.child.kill('SIGKILL');
  await new Promise((r) => service.child.once('exit', r));
  // Whole on node one: its row there, its game still running there (the first pass never stops it), none on two.
  expect(lastMove(id)?.status).toBe('syncing');
  expect((await containersOf(dataDir, engine)).filter((c) => c.State === 'running')).toHaveLength(1);
  expect((await containersOf(dataDir, two.engine)).filter((c) => c.State === 'running')).toEqual([]);
  expect((await volumesOf(dataDir, engine)).map((v) => v.Name)).toEqual([volumeName(instanceName(dataDir), id)]);

  // The next life finishes it: running on node two at a new address, the old volume gone.
  service = await startService();
  await until('the move done', async () => lastMove(id)?.status === 'done' || undefined, 240_000);
  await until('running on node two', async () => (await server()).state === 'running' || undefined, 120_000);
  const moved = await server();
  expect(inRange(moved.address.port, PORTS.two)).toBe(true);
  const events = (await api('GET', `/v1/events?server_id=${id}&limit=100&order=desc`)).body.data as { type: string; data: { server?: { address: { port: number } } } }[];
  expect(events.find((e) => e.type === 'server.updated')?.data.server?.address.port).toBe(moved.address.port);
  expect([(await containersOf(dataDir, engine)).length, (await containersOf(dataDir, two.engine)).length]).toEqual([0, 1]);
  // Its game runs in the container started ahead while the last pass copied (moves.ts startAhead), told to go.
  expect((await containersOf(dataDir, two.engine))[0].Labels['io.gsh.held']).toBe(id);
  // The volume goes first, then the move's row says so (a crash in between removes it again at the next boot).
  await until('the old volume removed, and the move says so', async () =>
    ((await volumesOf(dataDir, engine)).length === 0 && lastMove(id)?.leftover === null) || undefined, 30_000);

  // The world came along: a backup made on node two holds the block and the file.
  const backup = await api('POST', `/v1/servers/${id}/backups`, {});
  expect(backup.status).toBe(202);
  const ready = await until('the backup', async () => {
    const b = (await api('GET', `/v1/servers/${id}/backups/${backup.body.id}`)).body;
    return b.status !== 'pending' ? b : undefined;
  });
  expect(ready).toMatchObject({ status: 'ready', consistency: 'live' });
  const out = tempDir('moved-world');
  try {
    const res = await fetch(`${service.base}/v1/servers/${id}/backups/${backup.body.id}/archive`, { headers });
    fs.writeFileSync(path.join(out, 'a.tar.gz'), Buffer.from(await res.arrayBuffer()));
    execFileSync('tar', ['-xzf', 'a.tar.gz'], { cwd: out });
    expect([await blockIn(path.join(out, 'world'), 3, 100, 3), fs.statSync(path.join(out, 'world', 'filler.bin')).size]).toEqual(['gold_block', 64 * MIB]);
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }

  // Evacuating node two moves it back to node one, one server at a time.
  const evacuated = await gsh(dataDir, 'node', 'drain', 'two', '--evacuate');
  expect(evacuated).toMatchObject({ code: 0 });
  expect(evacuated.out).toContain(`Moved ${id} to node one`);
  await until('running on node one', async () => (await server()).state === 'running' || undefined, 120_000);
  expect(inRange((await server()).address.port, PORTS.one)).toBe(true);

  // A file written during the first pass is what changed; the service is killed while that is copied, the game
  // stopped by then: whole and stopped on node one, and the next life finishes the move with the file.
  expect((await gsh(dataDir, 'node', 'drain', 'two', '--undo')).code).toBe(0);
  expect((await gsh(dataDir, 'server', 'move', id, '--to', 'two', '--no-wait')).code).toBe(0);
  await until('the first pass streaming into node two', async () => (lastMove(id)?.status === 'syncing' && (await helperOn(two.engine, id))) || undefined, 120_000);
  await putIntoVolume(engine, dataDir, id, { 'world/late.bin': Buffer.alloc(64 * MIB, 5) });
  // The Files API waits for the move: a write meanwhile is refused (issue 40 §3) and makes nothing.
  expect(await api('POST', `/v1/servers/${id}/files/folders`, { path: 'during-the-move' })).toMatchObject({ status: 409, body: { code: 'action_conflict' } });
  // The move's helper on node two stays from the first pass on (move-helpers.ts): the last pass is under way once the
  // game stopped on node one (64 MiB changed, so it lasts).
  const stoppedOnOne = async () => (await containersOf(dataDir, engine)).every((c) => c.State !== 'running');
  await until('what changed streaming into node two', async () => (lastMove(id)?.status === 'delta' && (await helperOn(two.engine, id)) && (await stoppedOnOne())) || undefined, 120_000);
  service.child.kill('SIGKILL');
  await new Promise((r) => service.child.once('exit', r));
  expect(lastMove(id)?.status).toBe('delta');
  expect((await containersOf(dataDir, engine)).filter((c) => c.State === 'running')).toEqual([]);
  // On node two at most the container started ahead, its game held (the next life's start removes it).
  expect((await containersOf(dataDir, two.engine)).filter((c) => c.State === 'running' && c.Labels['io.gsh.held'] !== id)).toEqual([]);
  service = await startService();
  await until('the move done', async () => lastMove(id)?.status === 'done' || undefined, 240_000);
  await until('running on node two', async () => (await server()).state === 'running' || undefined, 120_000);
  expect(inRange((await server()).address.port, PORTS.two)).toBe(true);
  expect((await api('GET', `/v1/servers/${id}/files/metadata?path=world/late.bin`)).body).toMatchObject({ size: 64 * MIB });
  expect((await gsh(dataDir, 'node', 'drain', 'two', '--evacuate')).code).toBe(0);
  await until('running on node one', async () => (await server()).state === 'running' || undefined, 120_000);

  // The target engine stops while the copy streams in: the move fails, the server runs again on node one, and the
  // partial copy goes once node two answers again.
  expect((await gsh(dataDir, 'node', 'drain', 'two', '--undo')).code).toBe(0);
  expect((await gsh(dataDir, 'server', 'move', id, '--to', 'two', '--no-wait')).code).toBe(0);
  await until('the first pass streaming into node two', async () => (lastMove(id)?.status === 'syncing' && (await helperOn(two.engine, id))) || undefined, 120_000);
  await two.stop();
  await until('the move failed', async () => lastMove(id)?.status === 'failed' || undefined, 180_000);
  expect(lastMove(id)).toMatchObject({ leftover: 'two' });
  await until('running on node one again', async () => (await server()).state === 'running' || undefined, 120_000);
  expect(inRange((await server()).address.port, PORTS.one)).toBe(true);
  await two.start();
  await until('the partial copy removed', async () => (lastMove(id)?.leftover === null && (await volumesOf(dataDir, two.engine)).length === 0) || undefined, 120_000);

  // The source engine stops while the copy streams out of it (128 MiB more, so the copy outlasts the engine's
  // stop): the move fails, the server stays on node two (`unreachable` while its engine is away, running again
  // there once it answers), and the partial copy on node one goes at once.
  expect(await gsh(dataDir, 'server', 'move', id, '--to', 'two')).toMatchObject({ code: 0 });
  await until('running on node two', async () => (await server()).state === 'running' || undefined, 120_000);
  await putIntoVolume(two.engine, dataDir, id, { 'world/filler-2.bin': Buffer.alloc(128 * MIB, 9) });
  expect((await gsh(dataDir, 'server', 'move', id, '--to', 'one', '--no-wait')).code).toBe(0);
  await until('the first pass streaming into node one', async () => (lastMove(id)?.status === 'syncing' && (await helperOn(engine, id))) || undefined, 120_000);
  await two.stop();
  await until('the move failed', async () => lastMove(id)?.status === 'failed' || undefined, 180_000);
  await until('the partial copy on node one removed', async () => (lastMove(id)?.leftover === null && (await volumesOf(dataDir, engine)).length === 0) || undefined, 60_000);
  await until('unreachable on node two', async () => (await server()).state === 'unreachable' || undefined, 60_000);
  await two.start();
  await until('running on node two again', async () => (await server()).state === 'running' || undefined, 180_000);
  expect(inRange((await server()).address.port, PORTS.two)).toBe(true);
  expect([(await containersOf(dataDir, engine)).length, (await volumesOf(dataDir, two.engine)).length]).toEqual([0, 1]);

  expect(await running.stop()).toBe(1); // never on both nodes at once
  expect((await api('DELETE', `/v1/servers/${id}`)).status).toBe(202);
  await until('deleted', async () => (await api('GET', `/v1/servers/${id}`)).status === 404);
  service.child.kill('SIGTERM');
  await new Promise((r) => service.child.once('exit', r));
}
