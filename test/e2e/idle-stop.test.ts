// Idle stop (openapi/v1.yaml IdleStopMinutes) with a real flying-squid server and a real Minecraft client
// (mineflayer): the server runs on while a player is online past its idle minutes, and stops that long after the
// player leaves, by a stop action whose reason is `idle`, announced as action.succeeded. A minute is shortened to
// a second here (BuildOptions.idleMinuteMs); samples come every second (METRICS_INTERVAL_S).
import mineflayer from 'mineflayer';
import { createTestApp, type TestApp } from '../helpers/app';
import { until } from '../helpers/wait';

jest.setTimeout(180_000);

const IDLE_MINUTES = 15; // 15 s here
let t: TestApp;
let token: string;
const auth = () => ({ Authorization: `Bearer ${token}` });
const get = (path: string) => t.http.get(path).set(auth());

beforeEach(async () => {
  t = await createTestApp({
    boot: true,
    env: { GAME_PORT_RANGE: '29400-29404', METRICS_INTERVAL_S: '1' },
    runtime: { backoffMs: 300, stopTimeoutMs: 10_000, reconcileMs: 500 },
    idleMinuteMs: 1_000,
  });
  token = t.token('idle@example.com');
});
afterEach(() => t.finish());

test('a server stops after idle_stop_minutes with nobody online, not while a real player is on', async () => {
  // Off at create, on once the player is in: a slow start and join can take no idle minute away from the check.
  const created = await t.http.post('/v1/servers').set(auth()).send({ name: 'idle', plan: 'micro', version: 'flying-squid-1.20', idle_stop_minutes: null });
  expect(created.status).toBe(201);
  expect(created.body.idle_stop_minutes).toBeNull();
  const id: string = created.body.id;
  await until('installed', async () => (await get(`/v1/servers/${id}`)).body.state === 'stopped');
  const start = await t.http.post(`/v1/servers/${id}/actions`).set(auth()).send({ type: 'start' });
  expect(start.body.reason).toBe('requested');
  await until('running', async () => (await get(`/v1/servers/${id}`)).body.state === 'running');
  const { port } = (await get(`/v1/servers/${id}`)).body.address;

  const bot = mineflayer.createBot({ host: '127.0.0.1', port, username: 'Idler', auth: 'offline', version: '1.20' });
  try {
    await new Promise<void>((resolve, reject) => {
      bot.once('spawn', () => resolve());
      bot.once('error', reject);
    });
    await until('the player online', async () => (await get(`/v1/servers/${id}/players`)).body.online === 1);
    const on = await t.http.patch(`/v1/servers/${id}`).set(auth()).send({ idle_stop_minutes: IDLE_MINUTES });
    expect([on.status, on.body.idle_stop_minutes]).toEqual([200, IDLE_MINUTES]);
    const joinedAt = Date.now();
    // Past the idle minutes with the player on: still running, no stop asked for.
    await new Promise((r) => setTimeout(r, (IDLE_MINUTES + 3) * 1000));
    expect((await get(`/v1/servers/${id}`)).body.state).toBe('running');
    expect((await get(`/v1/servers/${id}/actions`)).body.data.map((a: { type: string }) => a.type)).toEqual(['start']);
    expect(Date.now() - joinedAt).toBeGreaterThan(IDLE_MINUTES * 1000);
  } finally {
    bot.end();
  }
  const leftAt = Date.now();
  await until('stopped for idleness', async () => (await get(`/v1/servers/${id}`)).body.state === 'stopped', 90_000);
  expect(Date.now() - leftAt).toBeGreaterThanOrEqual((IDLE_MINUTES - 1) * 1000); // counted from the last sample with the player

  const [stop] = (await get(`/v1/servers/${id}/actions`)).body.data;
  expect(stop).toMatchObject({ type: 'stop', reason: 'idle', status: 'succeeded' });
  const events = (await get('/v1/events').query({ type: 'action.succeeded', server_id: id })).body.data;
  expect(events.map((e: { data: { action: { type: string; reason: string } } }) => [e.data.action.type, e.data.action.reason])).toEqual([
    ['start', 'requested'],
    ['stop', 'idle'],
  ]);
  expect((await get(`/v1/servers/${id}`)).body.desired_state).toBe('stopped'); // reconcile does not start it again

  // Off again: null.
  const off = await t.http.patch(`/v1/servers/${id}`).set(auth()).send({ idle_stop_minutes: null });
  expect(off.status).toBe(200);
  expect(off.body.idle_stop_minutes).toBeNull();
});
