// Luanti on Docker (issue 17): the same data-only definition as a container on node `local`, through the API:
// the game image holds the server binary, its libraries and data (luanti.json image_files), its UDP port is
// published, the mod's reports cross the container boundary as report lines. Ports 29320-29329.
import { createTestApp } from '../helpers/app';
import { until } from '../helpers/wait';
import { luantiAnswers } from '../runtime/luanti-probe';
import { containersOf, DOCKER_HOST, ensureEngine, FIRST_IMAGE_MS, REMOVAL_MS, removeContainersOf } from './engine';

let lease: { release(): Promise<void> };

beforeAll(async () => {
  lease = await ensureEngine();
}, 120_000);

afterAll(async () => {
  await lease.release();
}, 60_000);

test('a Luanti server runs in a container: running, its UDP port answers, tps and players arrive, stop', async () => {
  const app = await createTestApp({
    boot: true,
    env: { RUNTIME: 'docker', DOCKER_HOST, GAME_PORT_RANGE: '29320-29329', METRICS_INTERVAL_S: '1' },
    runtime: { backoffMs: 300, stopTimeoutMs: 10_000, reconcileMs: 500 },
  });
  try {
    const auth = { Authorization: `Bearer ${app.token('luanti-docker@example.com')}` };
    const get = (p: string) => app.http.get(p).set(auth);
    const created = await app.http.post('/v1/servers').set(auth).send({ name: 'Blocks', plan: 'micro', version: 'luanti-5.6.1' });
    expect(created.status).toBe(201);
    const { id, address } = created.body as { id: string; address: { host: string; port: number; transport: string } };
    expect(address.transport).toBe('udp');
    await until('installed', async () => (await get(`/v1/servers/${id}`)).body.state === 'stopped');
    expect((await app.http.post(`/v1/servers/${id}/actions`).set(auth).send({ type: 'start' })).status).toBe(202);
    await until('running', async () => (await get(`/v1/servers/${id}`)).body.state === 'running', 150_000);
    expect(await containersOf(app.config.dataDir)).toHaveLength(1);
    expect(await luantiAnswers(address.host, address.port)).toBe(true);
    const sample = await until('a sample with tps', async () => {
      const res = await get(`/v1/servers/${id}/metrics?range=15m`);
      return (res.body.now?.tps ?? 0) > 0 ? res.body.now : undefined;
    });
    expect(sample.tps).toBeLessThanOrEqual(13);
    expect((await get(`/v1/servers/${id}/players`)).body).toMatchObject({ online: 0, players: [] });

    expect((await app.http.post(`/v1/servers/${id}/actions`).set(auth).send({ type: 'stop' })).status).toBe(202);
    await until('stopped', async () => (await get(`/v1/servers/${id}`)).body.state === 'stopped');
    expect((await get(`/v1/servers/${id}/crashes`)).body.data).toEqual([]);
    expect((await app.http.delete(`/v1/servers/${id}`).set(auth)).status).toBe(202);
    await until('deleted', async () => (await get(`/v1/servers/${id}`)).status === 404, REMOVAL_MS);
    expect(await containersOf(app.config.dataDir)).toEqual([]);
  } finally {
    await app.finish();
    await removeContainersOf(app.config.dataDir);
  }
}, FIRST_IMAGE_MS + 300_000 + REMOVAL_MS); // the boot may build the game image on a cold engine
