// Idempotency-Key on every POST that creates or acts (docs/conventions.md "Idempotency"): a power action, a
// console command and a token, each replayed once with the same key and refused with another request.
// The fake game runs on game ports 29150-29159.
import path from 'node:path';
import { createTestApp, type TestApp } from '../helpers/app';
import { until } from '../helpers/wait';

let t: TestApp;
let token: string;
const auth = () => ({ Authorization: `Bearer ${token}` });

// Each test changes state: its own service and database (docs/conventions.md "Tests").
beforeEach(async () => {
  t = await createTestApp({
    boot: true,
    software: path.join(__dirname, '..', 'runtime', 'fixtures', 'software'),
    env: { GAME_PORT_RANGE: '29150-29159' },
    runtime: { backoffMs: 200, stopTimeoutMs: 3_000, reconcileMs: 500 },
  });
  token = t.token('retry@example.com');
});
afterEach(() => t.finish());

async function installed(): Promise<string> {
  const created = await t.http.post('/v1/servers').set(auth()).send({ name: 'Retry', plan: 'micro', version: 'fake-game-1.0' });
  const id: string = created.body.id;
  await until('installed', async () => (await t.http.get(`/v1/servers/${id}`).set(auth())).body.state === 'stopped');
  return id;
}

test('a power action with a key runs once: the retry replays its answer and Location', async () => {
  const id = await installed();
  const post = (key: string, type = 'start') => t.http.post(`/v1/servers/${id}/actions`).set(auth()).set('Idempotency-Key', key).send({ type });
  const first = await post('start-1');
  const again = await post('start-1');
  expect(first.status).toBe(202);
  expect(again.status).toBe(202);
  expect(again.body.id).toBe(first.body.id);
  expect(again.headers.location).toBe(first.headers.location);
  expect(again.headers['idempotent-replayed']).toBe('true');
  expect(first.headers['idempotent-replayed']).toBeUndefined();
  // Another request under the same key is refused and does nothing.
  const other = await post('start-1', 'stop');
  expect([other.status, other.body.code]).toEqual([422, 'idempotency_key_reused']);
  await until('running', async () => (await t.http.get(`/v1/servers/${id}`).set(auth())).body.state === 'running');
  const actions = (await t.http.get(`/v1/servers/${id}/actions`).set(auth())).body.data;
  expect(actions.map((a: { type: string }) => a.type)).toEqual(['start']);
  t.expectContract();
});

test('a console command with a key is sent once', async () => {
  const id = await installed();
  await t.http.post(`/v1/servers/${id}/actions`).set(auth()).send({ type: 'start' });
  await until('running', async () => (await t.http.get(`/v1/servers/${id}`).set(auth())).body.state === 'running');
  const send = () => t.http.post(`/v1/servers/${id}/console`).set(auth()).set('Idempotency-Key', 'say-1').send({ command: 'say once' });
  const first = await send();
  const again = await send();
  expect([first.status, again.status]).toEqual([202, 202]);
  expect(again.body).toEqual(first.body);
  expect(again.headers['idempotent-replayed']).toBe('true');
  const lines = (await t.http.get(`/v1/servers/${id}/console?limit=1000`).set(auth())).body.data;
  expect(lines.filter((l: { stream: string; text: string }) => l.stream === 'input' && l.text === 'say once')).toHaveLength(1);
  t.expectContract();
});

test('a token with a key is made once; only the same token replays its secret, and the database holds none', async () => {
  const body = { name: 'ci', scopes: ['servers:read'] };
  const make = (as: string) => t.http.post('/v1/tokens').set({ Authorization: `Bearer ${as}` }).set('Idempotency-Key', 'tok-1').send(body);
  const first = await make(token);
  const again = await make(token);
  expect([first.status, again.status]).toEqual([201, 201]);
  expect(again.body).toEqual(first.body);
  expect(again.headers.location).toBe(first.headers.location);
  expect(again.headers['idempotent-replayed']).toBe('true');
  const stored = t.db.prepare('SELECT response_body FROM idempotency_keys').all() as Array<{ response_body: string }>;
  expect(stored.map((r) => r.response_body).join('')).not.toContain(first.body.token);
  // Another token of the same user, same key: refused, no secret shown, nothing made.
  const second = t.token('retry@example.com');
  const other = await make(second);
  expect([other.status, other.body.code]).toEqual([422, 'idempotency_key_reused']);
  const names = (await t.http.get('/v1/tokens').set(auth())).body.data.map((k: { name: string }) => k.name);
  expect(names.filter((n: string) => n === 'ci')).toHaveLength(1);
  t.expectContract();
});
