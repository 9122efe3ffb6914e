// The hosting promise end to end, through the public API only: a real flying-squid server is created and
// started, a real Minecraft client (mineflayer, offline auth) joins, and the API reports it among the players
// and in the telemetry (TPS from the game's tick loop, RAM and CPU from /proc), live over SSE too. Then the
// console, a crash behind the service's back, kill and delete.
import mineflayer from 'mineflayer';
import { createTestApp, type TestApp } from '../helpers/app';
import { until } from '../helpers/wait';

jest.setTimeout(180_000);

let t: TestApp;
let server: { base: string; close(): Promise<void> };
let base: string;
let token: string;
const auth = () => ({ Authorization: `Bearer ${token}` });

// Each test gets its own service, database and games (docs/conventions.md "Tests").
beforeEach(async () => {
  t = await createTestApp({
    boot: true,
    env: { GAME_PORT_RANGE: '27000-27009', METRICS_INTERVAL_S: '1' },
    runtime: { backoffMs: 300, stopTimeoutMs: 10_000, reconcileMs: 500 },
  });
  token = t.token('player-host@example.com');
  server = await t.listen();
  base = server.base;
});
afterEach(async () => {
  await server.close();
  await t.finish();
});

const get = (path: string) => t.http.get(path).set(auth());
const action = async (id: string, type: string) => {
  const res = await t.http.post(`/v1/servers/${id}/actions`).set(auth()).send({ type });
  expect(res.status).toBe(202);
  expect(res.headers.location).toBe(`/v1/servers/${id}/actions/${res.body.id}`);
  return until(`${type} to finish`, async () => {
    const a = (await get(res.headers.location)).body;
    return a.status === 'succeeded' || a.status === 'failed' ? a : undefined;
  });
};

/** Reads SSE events from a stream until `stop` says so; returns them. */
async function readEvents(path: string, stop: (events: Array<{ event: string; id: string; data: any }>) => boolean, lastEventId?: string) {
  const controller = new AbortController();
  const res = await fetch(base + path, {
    headers: { ...auth(), ...(lastEventId ? { 'Last-Event-ID': lastEventId } : {}) },
    signal: controller.signal,
  });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const reader = res.body!.getReader();
  const events: Array<{ event: string; id: string; data: any }> = [];
  let buffer = '';
  const decoder = new TextDecoder();
  const deadline = setTimeout(() => controller.abort(), 60_000);
  try {
    while (!stop(events)) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const fields = Object.fromEntries(
          block.split('\n').filter((l) => !l.startsWith(':') && l.includes(': ')).map((l) => [l.slice(0, l.indexOf(': ')), l.slice(l.indexOf(': ') + 2)]),
        );
        if (fields.event) events.push({ event: fields.event, id: fields.id, data: JSON.parse(fields.data) });
      }
    }
  } finally {
    clearTimeout(deadline);
    controller.abort();
  }
  return events;
}

test('a real server: start, a real player, players, telemetry, streams, console, crash, kill, delete', async () => {
  const created = await t.http.post('/v1/servers').set(auth()).send({ name: 'E2E world', plan: 'micro', version: 'flying-squid-1.20' });
  expect(created.status).toBe(201);
  const id: string = created.body.id;
  const port: number = created.body.address.port;
  await until('installed', async () => (await get(`/v1/servers/${id}`)).body.state === 'stopped');

  // Players are only known while the game runs.
  expect((await get(`/v1/servers/${id}/players`)).status).toBe(409);

  // start → running only when the game accepts players.
  const start = await action(id, 'start');
  expect(start).toMatchObject({ type: 'start', status: 'succeeded', error: null });
  const running = (await get(`/v1/servers/${id}`)).body;
  expect(running).toMatchObject({ state: 'running', desired_state: 'running' });

  // One action at a time; and the plan cannot change under a running game.
  const patch = await t.http.patch(`/v1/servers/${id}`).set(auth()).send({ plan: 'small' });
  expect(patch.status).toBe(409);
  expect(patch.body.code).toBe('invalid_state');

  // A real Minecraft client joins.
  const bot = mineflayer.createBot({ host: '127.0.0.1', port, username: 'Steve', auth: 'offline', version: '1.20' });
  await new Promise<void>((resolve, reject) => {
    bot.once('spawn', () => resolve());
    bot.once('error', reject);
    bot.once('kicked', (reason) => reject(new Error(`kicked: ${reason}`)));
  });
  const players = await until('the player to be listed', async () => {
    const res = await get(`/v1/servers/${id}/players`);
    return res.body.online === 1 ? res.body : undefined;
  });
  expect(players).toMatchObject({ online: 1, max: 5, players: [{ name: 'Steve' }] });

  // Telemetry: a fresh sample with the player, TPS from the tick loop, RAM from /proc. Right after a start and
  // a join the game generates chunks and really runs slow, so wait for it to settle (above 15: the other test
  // worker may hold a core).
  const metrics = await until('a settled sample with the player', async () => {
    const res = await get(`/v1/servers/${id}/metrics?range=15m`);
    return res.body.now?.players_online === 1 && res.body.now.tps > 15 ? res.body : undefined;
  });
  expect(metrics.now.tps).toBeLessThanOrEqual(21);
  expect(metrics.now.ram_bytes).toBeGreaterThan(30 * 1024 * 1024);
  expect(metrics.now.cpu_percent).toBeGreaterThanOrEqual(0);
  expect(metrics.now.players_max).toBe(5);
  expect(metrics.points.length).toBeGreaterThan(0);
  expect(metrics.summary.players_online_peak).toBe(1);
  expect(metrics.resolution_seconds).toBe(5);

  // The live stream yields samples as they are taken; Last-Event-ID resumes right after the one given.
  const live = await readEvents(`/v1/servers/${id}/metrics/stream`, (e) => e.length >= 2);
  expect(live.map((e) => e.event)).toEqual(['sample', 'sample']);
  expect(live[1].id > live[0].id).toBe(true);
  expect(live[0].data).toMatchObject({ server_id: id, players_online: 1 });
  const resumed = await readEvents(`/v1/servers/${id}/metrics/stream`, (e) => e.length >= 1, live[0].id);
  expect(resumed[0].id).toBe(live[1].id);

  // Console: a command goes in, is recorded, and the stream carries the game's lines.
  const sent = await t.http.post(`/v1/servers/${id}/console`).set(auth()).send({ command: 'say hello from the API' });
  expect(sent.status).toBe(202);
  expect(sent.body).toMatchObject({ stream: 'input', text: 'say hello from the API' });
  const consoleLines = await readEvents(`/v1/servers/${id}/console/stream`, (e) => e.some((l) => l.data.text === 'say hello from the API'));
  expect(consoleLines.every((e) => e.event === 'line')).toBe(true);
  const recent = await get(`/v1/servers/${id}/console?limit=1000`);
  expect(recent.body.data.map((l: { text: string }) => l.text)).toContain('say hello from the API');
  expect((await t.http.post(`/v1/servers/${id}/console`).set(auth()).send({ command: 'a\nb' })).status).toBe(400);

  // The player leaves: the API and the next samples say so.
  bot.quit();
  await until('the player to leave', async () => (await get(`/v1/servers/${id}/players`)).body.online === 0);
  await until('a sample without the player', async () => (await get(`/v1/servers/${id}/metrics?range=15m`)).body.now?.players_online === 0);

  // A crash behind the service's back is noticed, recorded, and the server comes back.
  const pid = t.runtime.doors.live().find((s) => s.serverId === id)!.pid;
  process.kill(pid, 'SIGKILL');
  const crashes = await until('the crash record', async () => {
    const res = await get(`/v1/servers/${id}/crashes`);
    return res.body.data.length > 0 ? res.body.data : undefined;
  });
  expect(crashes[0]).toMatchObject({ reason: 'exited', signal: 'SIGKILL' });
  await until('running again', async () => {
    const live = t.runtime.doors.live().find((s) => s.serverId === id);
    return live && live.pid !== pid && (await get(`/v1/servers/${id}`)).body.state === 'running';
  });

  // kill: immediate, desired state stopped; history stays readable after the stop.
  const kill = await action(id, 'kill');
  expect(kill.status).toBe('succeeded');
  expect((await get(`/v1/servers/${id}`)).body).toMatchObject({ state: 'stopped', desired_state: 'stopped' });
  const after = await get(`/v1/servers/${id}/metrics?range=15m`);
  expect(after.body.summary.sample_count).toBeGreaterThan(0);

  const history = await get(`/v1/servers/${id}/actions`);
  expect(history.body.data.map((a: { type: string }) => a.type)).toEqual(['kill', 'start']);

  // delete: process gone, files gone, port free, history gone.
  expect((await t.http.delete(`/v1/servers/${id}`).set(auth())).status).toBe(202);
  await until('deleted', async () => (await get(`/v1/servers/${id}`)).status === 404);
  // Ports are drawn at random from the range (SECURITY.md): once the ten-port range is full again, the freed
  // port is among them.
  const reused: number[] = [];
  for (let i = 0; i < 10; i++) {
    reused.push((await t.http.post('/v1/servers').set(auth()).send({ name: `Next ${i}`, plan: 'micro', version: 'flying-squid-1.20' })).body.address.port);
  }
  expect(reused).toContain(port);
});

test('actions: conflicts, no-ops and failures are reported on the action', async () => {
  const created = await t.http.post('/v1/servers').set(auth()).send({ name: 'Actions', plan: 'micro', version: 'flying-squid-1.21.4' });
  const id = created.body.id;
  // Stop on a stopped (here: still installing) server is a harmless no-op.
  expect(await action(id, 'stop')).toMatchObject({ status: 'succeeded' });

  const first = await t.http.post(`/v1/servers/${id}/actions`).set(auth()).send({ type: 'start' });
  const second = await t.http.post(`/v1/servers/${id}/actions`).set(auth()).send({ type: 'restart' });
  expect(second.status).toBe(409);
  expect(second.body.code).toBe('action_conflict');
  const kill = await action(id, 'kill');
  expect(kill.status).toBe('succeeded');
  const overtaken = (await get(`/v1/servers/${id}/actions/${first.body.id}`)).body;
  expect(overtaken.status).toBe('failed');
  expect(overtaken.error.code).toBe('action_cancelled');

  const unknown = await get(`/v1/servers/${id}/actions/act_doesnotexist`);
  expect(unknown.status).toBe(404);
  expect(unknown.body.code).toBe('action_not_found');
  const bad = await t.http.post(`/v1/servers/${id}/actions`).set(auth()).send({ type: 'explode' });
  expect(bad.status).toBe(400);
  expect(bad.body.errors[0].pointer).toBe('/body/type');

  // Another user cannot act on it, see it, or read its streams.
  const other = t.token('intruder@example.com');
  for (const path of ['', '/actions', '/console', '/console/stream', '/players', '/metrics', '/metrics/stream', '/crashes']) {
    const res = await t.http.get(`/v1/servers/${id}${path}`).set('Authorization', `Bearer ${other}`);
    expect([path, res.status, res.body.code]).toEqual([path, 404, 'server_not_found']);
  }
  expect((await t.http.post(`/v1/servers/${id}/actions`).set('Authorization', `Bearer ${other}`).send({ type: 'kill' })).status).toBe(404);
});
