// The console is no side door around the other permissions (issue 39 §2; src/runtime/software/command-permissions.ts): a
// member holding only `console` of a real flying-squid server stopped it with `stop` (202, and their `start` was
// 403) and made a player operator with `players operators add mallory` or `op mallory` while PUT
// …/players/operators answered them 403. Such commands now need the permission of the operation they act as, in
// every form the console could take them; the owner and a member holding it still may. Ports 29460-29469.
import { createTestApp, type TestApp } from '../helpers/app';
import { until } from '../helpers/wait';

jest.setTimeout(180_000);

let t: TestApp;
const auth = (token: string) => ({ Authorization: `Bearer ${token}` });

beforeAll(async () => {
  t = await createTestApp({ boot: true, env: { GAME_PORT_RANGE: '29460-29469' }, runtime: { stopTimeoutMs: 10_000, reconcileMs: 500 } });
});
afterAll(() => t.finish());

test('a console-only member cannot stop the server or change its players through the console; a member with the permission can', async () => {
  const owner = t.token('owner@example.com');
  const consoleOnly = t.token('console@example.com');
  const trusted = t.token('trusted@example.com');
  const id = (await t.http.post('/v1/servers').set(auth(owner)).send({ name: 'shared', plan: 'micro', version: 'flying-squid-1.20' })).body.id as string;
  const invite = (email: string, permissions: string[]) => t.http.post(`/v1/servers/${id}/members`).set(auth(owner)).send({ email, permissions });
  expect((await invite('console@example.com', ['console'])).status).toBe(201);
  expect((await invite('trusted@example.com', ['console', 'power', 'players'])).status).toBe(201);
  await until('installed', async () => (await t.http.get(`/v1/servers/${id}`).set(auth(owner))).body.state === 'stopped', 30_000);
  expect((await t.http.post(`/v1/servers/${id}/actions`).set(auth(owner)).send({ type: 'start' })).status).toBe(202);
  await until('running', async () => (await t.http.get(`/v1/servers/${id}`).set(auth(owner))).body.state === 'running', 120_000);
  const send = (token: string, command: string) => t.http.post(`/v1/servers/${id}/console`).set(auth(token)).send({ command });
  const consoleText = async () => (await t.http.get(`/v1/servers/${id}/console?limit=1000`).set(auth(owner))).body.data.map((l: { text: string }) => l.text);

  // Every form of each finding, refused with the permission and the command named; nothing reaches the game.
  const refused: [string, string, string][] = [
    ['stop', 'power', 'stop'],
    ['STOP', 'power', 'stop'],
    ['/stop', 'power', 'stop'],
    ['  stop now', 'power', 'stop'],
    ['minecraft:stop', 'power', 'stop'],
    ['players operators add mallory', 'players', 'players'],
    ['op mallory', 'players', 'op'],
    ['/OP mallory', 'players', 'op'],
    ['ban mallory', 'players', 'ban'],
    ['players whitelist off', 'players', 'players'],
    ['kick mallory', 'players', 'kick'],
    ['difficulty 3', 'settings', 'difficulty'],
    ['world-saving off 999999', 'backups', 'world-saving'],
  ];
  for (const [command, permission, word] of refused) {
    const res = await send(consoleOnly, command);
    expect({ command, status: res.status, body: res.body }).toMatchObject({
      command,
      status: 403,
      body: { code: 'missing_permission', permission, detail: expect.stringContaining(`"${word}" needs the ${permission} permission`) },
    });
  }
  // Other commands are the console's.
  expect((await send(consoleOnly, 'say hello from the console')).status).toBe(202);
  await until('the say', async () => (await consoleText()).some((l: string) => l.includes('hello from the console')));
  const text = await consoleText();
  expect(text.filter((l: string) => /^(\/?stop|players operators|\/?op )/i.test(l))).toEqual([]);
  expect(text.some((l: string) => l.includes('players: operators add'))).toBe(false);
  expect((await t.http.get(`/v1/servers/${id}`).set(auth(owner))).body).toMatchObject({ state: 'running', desired_state: 'running' });

  // A member holding the permission may, and so may the owner.
  expect((await send(trusted, 'players operators add mallory')).status).toBe(202);
  await until('the game applied it', async () => (await consoleText()).some((l: string) => l.includes('players: operators add mallory')));
  expect((await send(owner, 'players operators remove mallory')).status).toBe(202);
  await until('the game applied it', async () => (await consoleText()).some((l: string) => l.includes('players: operators remove mallory')));
  const stopped = await send(trusted, 'stop');
  expect(stopped.status).toBe(202);
  await until('stopped', async () => (await t.http.get(`/v1/servers/${id}`).set(auth(owner))).body.state === 'stopped', 30_000);
});
