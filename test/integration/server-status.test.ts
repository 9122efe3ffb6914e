// getServerStatus (openapi/v1.yaml): a real flying-squid answers the Minecraft server-list ping with the MOTD it
// was given (its colour codes left out), its version and its players; a stopped server, and a game without the
// ping, are 409 invalid_state saying why. plainMotd flattens the text components games send.
import { createTestApp, type TestApp } from '../helpers/app';
import { until } from '../helpers/wait';
import { plainMotd } from '../../src/runtime/server/status-ping';
import { statusHandlers } from '../../src/http/handlers/status';
import type { Server } from '../../src/store/server-view';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.finish();
  t = undefined;
});

test('a running flying-squid answers its status ping; a stopped one is refused in words', async () => {
  const app = await createTestApp({ boot: true, runtime: { stopTimeoutMs: 10_000 } });
  t = app;
  const auth = { Authorization: `Bearer ${app.token('status@example.com')}` };
  const id = (await app.http.post('/v1/servers').set(auth).send({ name: 'Pinged', plan: 'micro', version: 'flying-squid-1.20' })).body.id as string;
  await until('installed', async () => (await app.http.get(`/v1/servers/${id}`).set(auth)).body.state === 'stopped', 60_000);

  const stopped = await app.http.get(`/v1/servers/${id}/status`).set(auth);
  expect([stopped.status, stopped.body.code, stopped.body.detail]).toEqual([409, 'invalid_state', 'Pinged is stopped: only a running server answers its status ping.']);

  expect((await app.http.patch(`/v1/servers/${id}/settings`).set(auth).send({ motd: 'Welcome §aback', max_players: 3 })).status).toBe(200);
  expect((await app.http.post(`/v1/servers/${id}/actions`).set(auth).send({ type: 'start' })).status).toBe(202);
  await until('running', async () => (await app.http.get(`/v1/servers/${id}`).set(auth)).body.state === 'running', 90_000);

  const res = await app.http.get(`/v1/servers/${id}/status`).set(auth);
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ motd: 'Welcome back', icon: null, online: 0, max: 3 });
  expect(res.body.version_name).toMatch(/1\.20/);
  expect(res.body.latency_ms).toBeGreaterThanOrEqual(0);
  expect((await app.http.post(`/v1/servers/${id}/actions`).set(auth).send({ type: 'stop' })).status).toBe(202);
  await until('stopped', async () => (await app.http.get(`/v1/servers/${id}`).set(auth)).body.state === 'stopped', 60_000);
  app.expectContract();
}, 180_000);

test('a game without the ping, and one that does not answer, are refused with the reason', async () => {
  const server = { id: 'srv_1', name: 'Minetest', version: 'luanti-5.10.0', software: 'luanti', state: 'running', address: { host: '127.0.0.1', port: 1, transport: 'udp' } } as unknown as Server;
  const find = (over: Partial<Server>) => ({ find: () => ({ ...server, ...over }) });
  const call = (handlers: ReturnType<typeof statusHandlers>) => (handlers.getServerStatus as (c: unknown) => Promise<unknown>)({ server: { id: 'srv_1' } });
  const luanti = statusHandlers({ servers: find({}), versions: { resolve: () => ({ game: 'Luanti' }) as never } });
  await expect(call(luanti)).rejects.toMatchObject({ code: 'invalid_state', detail: 'Luanti servers answer no server-list ping; only Minecraft Java Edition servers do.' });
  const silent = statusHandlers({
    servers: find({ name: 'Quiet', software: 'flying-squid', version: 'flying-squid-1.20' }),
    versions: { resolve: () => ({ game: 'Minecraft Java Edition' }) as never },
    ping: () => Promise.reject(new Error('no answer within 5 seconds')),
  });
  await expect(call(silent)).rejects.toMatchObject({ code: 'invalid_state', detail: 'Quiet did not answer its status ping (no answer within 5 seconds); it may still be loading its world.' });
});

test('plainMotd: text components flattened in order, colour codes left out', () => {
  expect(plainMotd('§lA §cred§r day')).toBe('A red day');
  expect(plainMotd({ text: 'Hello ', extra: [{ text: 'there', color: 'gold' }, ' and ', { extra: [{ text: 'beyond' }] }] })).toBe('Hello there and beyond');
  expect(plainMotd({ translate: 'menu.title' })).toBe('');
  expect(plainMotd(null)).toBe('');
});
