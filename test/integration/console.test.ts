// The console through the API, with the runtime tests' fake game installed as operator software: who sent a
// command, and a stop typed in the console. Game ports 28540-28549.
import path from 'node:path';
import { createTestApp, type TestApp } from '../helpers/app';
import { until } from '../helpers/wait';

let t: TestApp;
let token: string;
const auth = () => ({ Authorization: `Bearer ${token}` });

// Every test starts a game: each gets its own service, database and data folder (docs/conventions.md "Tests").
beforeEach(async () => {
  t = await createTestApp({
    boot: true,
    software: path.join(__dirname, '..', 'runtime', 'fixtures', 'software'),
    env: { GAME_PORT_RANGE: '28540-28549' },
    runtime: { backoffMs: 200, stopTimeoutMs: 3_000, reconcileMs: 500 },
  });
  token = t.token('console@example.com');
});
afterEach(() => t.finish());

/** A fake game, created, installed and started through the API; resolves with its id once it runs. */
async function running(): Promise<string> {
  const created = await t.http.post('/v1/servers').set(auth()).send({ name: 'Console', plan: 'micro', version: 'fake-game-1.0' });
  expect(created.status).toBe(201);
  const id: string = created.body.id;
  await until('installed', async () => (await t.http.get(`/v1/servers/${id}`).set(auth())).body.state === 'stopped');
  expect((await t.http.post(`/v1/servers/${id}/actions`).set(auth()).send({ type: 'start' })).status).toBe(202);
  await until('running', async () => (await t.http.get(`/v1/servers/${id}`).set(auth())).body.state === 'running');
  return id;
}

test("a command's console line names the token it was sent with", async () => {
  const id = await running();
  const tokenId: string = (await t.http.get('/v1/tokens').set(auth())).body.data[0].id;
  const sent = await t.http.post(`/v1/servers/${id}/console`).set(auth()).send({ command: 'hello there' });
  expect(sent.status).toBe(202);
  expect(sent.body).toMatchObject({ stream: 'input', text: 'hello there', token_id: tokenId });
  const lines = await until('the echo', async () => {
    const { body } = await t.http.get(`/v1/servers/${id}/console`).set(auth());
    return body.data.some((l: { text: string }) => l.text === 'echo: hello there') ? body.data : undefined;
  });
  for (const l of lines) expect(l.token_id).toBe(l.seq === sent.body.seq ? tokenId : null);
});

// The issue as reported: four stops typed in the console were four crashes, and the crash loop cap then left the
// server crashed. Each is a stop action by the caller now: stopped, desired stopped, no crash.
test('stop typed in the console, four times over, stops the server like a stop action', async () => {
  const id = await running();
  for (let round = 1; round <= 4; round++) {
    if (round > 1) {
      expect((await t.http.post(`/v1/servers/${id}/actions`).set(auth()).send({ type: 'start' })).status).toBe(202);
      await until('running', async () => (await t.http.get(`/v1/servers/${id}`).set(auth())).body.state === 'running');
    }
    const sent = await t.http.post(`/v1/servers/${id}/console`).set(auth()).send({ command: 'stop' });
    expect(sent.status).toBe(202);
    expect(sent.body).toMatchObject({ stream: 'input', text: 'stop' });
    await until('stopped', async () => (await t.http.get(`/v1/servers/${id}`).set(auth())).body.state === 'stopped', 20_000);
    await t.runtime.idle();
    expect((await t.http.get(`/v1/servers/${id}`).set(auth())).body).toMatchObject({ state: 'stopped', desired_state: 'stopped' });
    expect((await t.http.get(`/v1/servers/${id}/crashes`).set(auth())).body.data).toEqual([]);
    const [newest] = (await t.http.get(`/v1/servers/${id}/actions?limit=1`).set(auth())).body.data;
    expect(newest).toMatchObject({ type: 'stop', status: 'succeeded', error: null });
  }
});
