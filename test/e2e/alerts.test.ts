// Alert rules on a real flying-squid server (openapi/v1.yaml createServerAlertRule): a threshold a real sample
// crosses (a real Minecraft client, mineflayer, joining and leaving), and a crash rule on a game killed behind the
// service's back, resolved when the crash policy has it running again. Samples come every second
// (METRICS_INTERVAL_S). Ports 29430-29434.
import mineflayer from 'mineflayer';
import { createTestApp, type TestApp } from '../helpers/app';
import { until } from '../helpers/wait';

jest.setTimeout(180_000);

let t: TestApp;
let token: string;
const auth = () => ({ Authorization: `Bearer ${token}` });
const get = (path: string) => t.http.get(path).set(auth());

beforeEach(async () => {
  t = await createTestApp({
    boot: true,
    env: { GAME_PORT_RANGE: '29430-29434', METRICS_INTERVAL_S: '1' },
    runtime: { backoffMs: 300, stopTimeoutMs: 10_000, reconcileMs: 500 },
  });
  token = t.token('alerts@example.com');
});
afterEach(() => t.finish());

const alertEvents = async (id: string) =>
  ((await get('/v1/events').query({ server_id: id, limit: 100 })).body.data as Array<{ type: string; data: { alert: { id: string }; value: number | null; reason: string | null } }>)
    .filter((e) => e.type.startsWith('alert.'));

test('a player joining a real server triggers "players_online above 0", leaving resolves it; a crash triggers the crash rule', async () => {
  const id: string = (await t.http.post('/v1/servers').set(auth()).send({ name: 'alerts', plan: 'micro', version: 'flying-squid-1.20' })).body.id;
  const players = (await t.http.post(`/v1/servers/${id}/alerts`).set(auth())
    .send({ kind: 'metric', name: 'Someone is on', metric: 'players_online', comparison: 'above', threshold: 0, duration_seconds: 0 })).body;
  const crash = (await t.http.post(`/v1/servers/${id}/alerts`).set(auth()).send({ kind: 'crash' })).body;
  await until('installed', async () => (await get(`/v1/servers/${id}`)).body.state === 'stopped');
  await t.http.post(`/v1/servers/${id}/actions`).set(auth()).send({ type: 'start' });
  await until('running', async () => (await get(`/v1/servers/${id}`)).body.state === 'running');
  const { port } = (await get(`/v1/servers/${id}`)).body.address;

  const bot = mineflayer.createBot({ host: '127.0.0.1', port, username: 'Watcher', auth: 'offline', version: '1.20' });
  try {
    await new Promise<void>((resolve, reject) => {
      bot.once('spawn', () => resolve());
      bot.once('error', reject);
    });
    await until('the rule firing', async () => (await get(`/v1/servers/${id}/alerts/${players.id}`)).body.state === 'firing', 60_000);
  } finally {
    bot.end();
  }
  await until('the rule resolved', async () => (await get(`/v1/servers/${id}/alerts/${players.id}`)).body.state === 'ok', 60_000);
  expect((await alertEvents(id)).map((e) => [e.type, e.data.alert.id, e.data.value])).toEqual([
    ['alert.triggered', players.id, 1],
    ['alert.resolved', players.id, 0],
  ]);

  // The game dies behind the service's back: a crash, the crash rule fires; the restart's first sample resolves it.
  const pid = t.runtime.doors.live().find((l) => l.serverId === id)!.pid;
  process.kill(pid, 'SIGKILL');
  await until('the crash rule firing', async () => (await get(`/v1/servers/${id}/alerts/${crash.id}`)).body.state === 'firing', 60_000);
  await until('running again, the crash rule resolved', async () => (await get(`/v1/servers/${id}/alerts/${crash.id}`)).body.state === 'ok', 90_000);
  const crashEvents = (await alertEvents(id)).filter((e) => e.data.alert.id === crash.id);
  expect(crashEvents.map((e) => [e.type, e.data.reason])).toEqual([['alert.triggered', expect.any(String)], ['alert.resolved', null]]);
  const [recorded] = (await get(`/v1/servers/${id}/crashes`)).body.data;
  expect(crashEvents[0].data.reason).toBe(recorded.reason);
});
