// A Luanti server's settings and player lists through the API (src/runtime/software/luanti.json `user_settings`,
// `player_lists`; docs/architecture.md "Settings", "Player lists"), checked against the game itself: settings as
// the engine's own `/set <name>` reports them, and real clients (Debian's `minetest` under Xvfb) refused by a ban
// set before the start, or kicked by one set while they play. Backups of a Luanti world: test/e2e/backups.test.ts
// covers the mechanism; here one is made and restored. Ports 29420-29429.
import { createTestApp, type TestApp } from '../helpers/app';
import { startLuantiClient, type LuantiClient } from '../helpers/luanti-client';
import { until } from '../helpers/wait';

jest.setTimeout(300_000);

let t: TestApp;
let token: string;
const auth = () => ({ Authorization: `Bearer ${token}` });
const clients: LuantiClient[] = [];

beforeEach(async () => {
  t = await createTestApp({ boot: true, env: { GAME_PORT_RANGE: '29420-29429' }, runtime: { stopTimeoutMs: 15_000, reconcileMs: 500 } });
  token = t.token('luanti-data@example.com');
});
afterEach(async () => {
  for (const c of clients.splice(0)) await c.stop();
  await t.finish();
});

const action = async (id: string, type: string, extra: object = {}) => {
  const res = await t.http.post(`/v1/servers/${id}/actions`).set(auth()).send({ type, ...extra });
  expect(res.status).toBe(202);
  return until(`${type} to finish`, async () => {
    const a = (await t.http.get(`/v1/servers/${id}/actions/${res.body.id}`).set(auth())).body;
    return a.status === 'succeeded' || a.status === 'failed' ? a : undefined;
  }, 120_000);
};
const consoleText = async (id: string) =>
  ((await t.http.get(`/v1/servers/${id}/console`).query({ limit: 500 }).set(auth())).body.data as Array<{ text: string }>).map((l) => l.text);

/** What the running engine says a setting is: its own `/set <name>` answer. */
async function engineSetting(id: string, name: string): Promise<string> {
  const before = (await consoleText(id)).length;
  expect((await t.http.post(`/v1/servers/${id}/console`).set(auth()).send({ command: `/set ${name}` })).status).toBe(202);
  const pattern = new RegExp(`\\[console\\] ${name} = (.*)$`);
  return until(`the engine's ${name}`, async () => {
    const lines = (await consoleText(id)).slice(Math.max(0, before - 1));
    for (const line of lines.reverse()) {
      const m = pattern.exec(line);
      if (m) return m[1];
    }
    return undefined;
  }, 30_000);
}

function client(port: number, name: string): void {
  clients.push(startLuantiClient(port, name));
}
const online = async (id: string) => (await t.http.get(`/v1/servers/${id}/players`).set(auth())).body;

test('settings given at create reach the engine; motd applies at once, server_name at the next start', async () => {
  const created = await t.http.post('/v1/servers').set(auth()).send({
    name: 'luanti settings', plan: 'micro', version: 'luanti-5.6.1',
    settings: { server_name: 'Made by the API', creative_mode: true, enable_damage: false, max_users: 3 },
  });
  expect(created.status).toBe(201);
  const { id } = created.body;
  expect(await action(id, 'start')).toMatchObject({ status: 'succeeded' });
  expect(await engineSetting(id, 'server_name')).toBe('Made by the API');
  expect(await engineSetting(id, 'creative_mode')).toBe('true');
  expect(await engineSetting(id, 'enable_damage')).toBe('false');
  expect(await engineSetting(id, 'max_users')).toBe('3');

  const tooMany = await t.http.patch(`/v1/servers/${id}/settings`).set(auth()).send({ max_users: 50 });
  expect([tooMany.status, tooMany.body.errors?.[0]?.pointer]).toEqual([400, '/body/max_users']);

  const changed = await t.http.patch(`/v1/servers/${id}/settings`).set(auth()).send({ motd: 'Changed live', server_name: 'Renamed' });
  expect(changed.status).toBe(200);
  expect(changed.body.restart_pending).toEqual(['server_name']); // motd went through the console
  expect(await engineSetting(id, 'motd')).toBe('Changed live');
  expect(await engineSetting(id, 'server_name')).toBe('Made by the API');

  expect(await action(id, 'restart')).toMatchObject({ status: 'succeeded' });
  expect(await engineSetting(id, 'server_name')).toBe('Renamed');
  expect(await engineSetting(id, 'motd')).toBe('Changed live');
  expect((await t.http.get(`/v1/servers/${id}/settings`).set(auth())).body.restart_pending).toEqual([]);
});

test('a banned client is refused; one banned while it plays is kicked; a backup of the world restores', async () => {
  const created = await t.http.post('/v1/servers').set(auth()).send({ name: 'luanti lists', plan: 'micro', version: 'luanti-5.6.1' });
  const { id, address } = created.body;
  const detail = (await t.http.get('/v1/versions/luanti-5.6.1').set(auth())).body;
  expect(detail.player_lists).toEqual(['whitelist', 'bans']);
  expect((await t.http.put(`/v1/servers/${id}/players/bans/botbanned`).set(auth())).status).toBe(200);
  expect(await action(id, 'start')).toMatchObject({ status: 'succeeded' });

  client(address.port, 'botbanned');
  await until('the ban refusing botbanned', async () => (await consoleText(id)).some((l) => l.includes('[gsh] refused botbanned: You are banned')), 120_000);
  expect((await online(id)).online).toBe(0);

  client(address.port, 'botplays');
  await until('botplays to join', async () => (await online(id)).players.some((p: { name: string }) => p.name === 'botplays'), 120_000);
  expect((await t.http.put(`/v1/servers/${id}/players/bans/botplays`).set(auth())).status).toBe(200);
  await until('botplays to be kicked', async () => (await online(id)).online === 0, 30_000);
  expect((await consoleText(id)).some((l) => l.includes('/gsh_players bans add botplays'))).toBe(true);
  expect((await t.http.get(`/v1/servers/${id}/players/bans`).set(auth())).body.data.map((e: { name: string }) => e.name).sort()).toEqual(['botbanned', 'botplays']);

  // Backups work unchanged: the world's own map database comes back.
  const backup = await t.http.post(`/v1/servers/${id}/backups`).set(auth()).send({ name: 'luanti world' });
  expect(backup.status).toBe(202);
  const ready = await until('the backup', async () => {
    const b = (await t.http.get(backup.headers.location).set(auth())).body;
    return b.status === 'pending' ? undefined : b;
  }, 120_000);
  expect(ready).toMatchObject({ status: 'ready', error: null });
  expect(await action(id, 'restore', { backup_id: ready.id })).toMatchObject({ status: 'succeeded' });
  expect((await t.http.get(`/v1/servers/${id}`).set(auth())).body.state).toBe('running');
});
