// Nodes and placement (issue 11 part 3) on two real engines: the host's dockerd as node `one` and a second
// engine with its own data, socket and bridge (scripts/docker-node.sh) as node `two`. Two servers
// whose plans do not fit on one node land on one each; stopping the second engine makes its server
// `unreachable` and leaves the first untouched; when it returns, its server is running again. Every container
// and engine started here is removed or stopped by id. Ports 29000-29019.
import fs from 'node:fs';
import path from 'node:path';
import { pingPlayers } from '../../src/runtime/server/probes';
import { createTestApp, tempDir } from '../helpers/app';
import { until } from '../helpers/wait';
import { containersOf, DOCKER_HOST, engine, ensureEngine, FIRST_IMAGE_MS, gsh, REMOVAL_MS, removeContainersOf, secondEngine, type SecondEngine } from './engine';

const PORTS = { one: '29000-29009', two: '29010-29019' };
let lease: { release(): Promise<void> };
let two: SecondEngine;

beforeAll(async () => {
  lease = await ensureEngine();
  two = await secondEngine();
}, 1_500_000); // it may wait its turn for the second engine (lockSecondEngine in ./engine.ts)

afterAll(async () => {
  await two?.release();
  await lease?.release();
}, 180_000);

test('`gsh node add` refuses an engine that does not answer, and writes nothing', async () => {
  const dataDir = tempDir('nodes-cli');
  try {
    const refused = await gsh(dataDir, 'node', 'add', '--name', 'ghost', '--docker-host', `unix://${dataDir}/none.sock`);
    expect(refused.code).toBe(1);
    expect(refused.out).toMatch(/did not answer.*nothing was added/);
    expect((await gsh(dataDir, 'node', 'list')).out).toMatch(/^No nodes/);
    const bad = await gsh(dataDir, 'node', 'add', '--name', 'Two Words', '--docker-host', DOCKER_HOST);
    expect(bad.code).toBe(2);
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

test('two plans that do not fit on one node land on two; the second engine stopping marks only its server', async () => {
  const dataDir = tempDir('nodes');
  // Each node holds 800 MiB of plan memory: one micro server (512 MiB) each, and a third fits nowhere.
  for (const [name, host, ports] of [['one', DOCKER_HOST, PORTS.one], ['two', two.dockerHost, PORTS.two]]) {
    const added = await gsh(dataDir, 'node', 'add', '--name', name, '--docker-host', host, '--public-host', '127.0.0.1', '--memory-mb', '800', '--ports', ports);
    expect(added).toMatchObject({ code: 0 });
  }
  const app = await createTestApp({
    boot: true,
    env: { DATA_DIR: dataDir, RUNTIME: 'docker', DOCKER_HOST, NODE_CHECK_INTERVAL_S: '1', GAME_PORT_RANGE: '29020-29029' },
    runtime: { backoffMs: 300, stopTimeoutMs: 10_000, reconcileMs: 500 },
  });
  try {
    const auth = { Authorization: `Bearer ${app.token('nodes@example.com')}` };
    const get = (id: string) => app.http.get(`/v1/servers/${id}`).set(auth);
    const create = (name: string) => app.http.post('/v1/servers').set(auth).send({ name, plan: 'micro', version: 'flying-squid-1.20' });
    const a = await create('A');
    const b = await create('B');
    expect([a.status, b.status]).toEqual([201, 201]);
    const full = await create('C');
    expect(full.status).toBe(503);
    expect(full.body).toMatchObject({ code: 'capacity_exhausted', status: 503 });
    expect(full.headers['retry-after']).toMatch(/^\d+$/);
    expect(JSON.stringify(full.body)).not.toMatch(/\bone\b|\btwo\b|docker/); // tenants never see nodes

    const ids = [a.body.id as string, b.body.id as string];
    for (const id of ids) {
      await until('installed', async () => (await get(id)).body.state === 'stopped');
      expect((await app.http.post(`/v1/servers/${id}/actions`).set(auth).send({ type: 'start' })).status).toBe(202);
    }
    for (const id of ids) await until('running', async () => (await get(id)).body.state === 'running', 150_000);

    // One container on each engine; each server's port is its node's, and players reach both.
    const onOne = await containersOf(dataDir, engine);
    const onTwo = await containersOf(dataDir, two.engine);
    expect([onOne.length, onTwo.length]).toEqual([1, 1]);
    const idOnTwo = onTwo[0].Labels['io.gsh.server'];
    const idOnOne = onOne[0].Labels['io.gsh.server'];
    expect([idOnOne, idOnTwo].sort()).toEqual([...ids].sort());
    const serverOn = async (id: string) => (await get(id)).body as { address: { host: string; port: number }; state: string };
    expect((await serverOn(idOnOne)).address.port).toBeLessThanOrEqual(29009);
    expect((await serverOn(idOnTwo)).address.port).toBeGreaterThanOrEqual(29010);
    for (const id of ids) {
      const { address } = await serverOn(id);
      expect((await pingPlayers(address.host, address.port)).max).toBeGreaterThan(0);
    }
    expect((await gsh(dataDir, 'node', 'list')).out).toMatch(/one\tactive.*1 servers\tmemory 512\/800 MiB/);

    await two.stop();
    await until('unreachable', async () => (await get(idOnTwo)).body.state === 'unreachable', 30_000);
    // Nothing else stalls: the other node's server keeps running and answering, through the API and to players.
    expect((await serverOn(idOnOne)).state).toBe('running');
    expect((await pingPlayers('127.0.0.1', (await serverOn(idOnOne)).address.port)).max).toBeGreaterThan(0);
    const refused = await app.http.post(`/v1/servers/${idOnTwo}/actions`).set(auth).send({ type: 'stop' });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('invalid_state');
    expect((await gsh(dataDir, 'node', 'list')).out).toMatch(/two\tunreachable since /);

    await two.start();
    await until('running again', async () => (await get(idOnTwo)).body.state === 'running', 150_000);
    expect((await serverOn(idOnOne)).state).toBe('running');
    expect(await containersOf(dataDir, two.engine)).toHaveLength(1); // reconciled, no duplicate
    expect((await gsh(dataDir, 'node', 'list')).out).toMatch(/two\tactive/);

    for (const id of ids) expect((await app.http.delete(`/v1/servers/${id}`).set(auth)).status).toBe(202);
    for (const id of ids) await until('deleted', async () => (await get(id)).status === 404, REMOVAL_MS);
    expect(await containersOf(dataDir, engine)).toEqual([]);
    expect(await containersOf(dataDir, two.engine)).toEqual([]);
    expect((await gsh(dataDir, 'node', 'remove', 'two')).code).toBe(0);
  } finally {
    await app.finish();
    await removeContainersOf(dataDir, engine);
    await removeContainersOf(dataDir, two.engine).catch(() => undefined);
    fs.rmSync(path.join(dataDir), { recursive: true, force: true });
  }
}, FIRST_IMAGE_MS + 600_000); // the boot may build the game image on both engines, cold
