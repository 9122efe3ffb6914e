// Player lists with real clients (docs/architecture.md "Player lists"): lists set before the start reach the game
// through its lists file, changes while it runs through its console. Whitelisted mineflayer bots join, others are
// refused, a banned one is refused (and kicked when banned while online). Ports 29260-29269.
import mineflayer from 'mineflayer';
import { createTestApp, type TestApp } from '../helpers/app';
import { until } from '../helpers/wait';

jest.setTimeout(240_000);

let t: TestApp;
let token: string;
const auth = () => ({ Authorization: `Bearer ${token}` });
const bots: mineflayer.Bot[] = [];

beforeEach(async () => {
  t = await createTestApp({ boot: true, env: { GAME_PORT_RANGE: '29260-29269' }, runtime: { stopTimeoutMs: 10_000, reconcileMs: 500 } });
  token = t.token('lists@example.com');
});
afterEach(async () => {
  for (const bot of bots.splice(0)) bot.end();
  await t.finish();
});

const action = async (id: string, type: string) => {
  const res = await t.http.post(`/v1/servers/${id}/actions`).set(auth()).send({ type });
  expect(res.status).toBe(202);
  return until(`${type} to finish`, async () => {
    const a = (await t.http.get(`/v1/servers/${id}/actions/${res.body.id}`).set(auth())).body;
    return a.status === 'succeeded' || a.status === 'failed' ? a : undefined;
  });
};

/** A real client joins: 'joined' once it spawned, else 'refused' (kicked or disconnected before spawning). */
function join(port: number, username: string): Promise<{ outcome: 'joined' | 'refused'; bot: mineflayer.Bot }> {
  const bot = mineflayer.createBot({ host: '127.0.0.1', port, username, auth: 'offline', version: '1.20' });
  bots.push(bot);
  return new Promise((resolve, reject) => {
    bot.once('spawn', () => resolve({ outcome: 'joined', bot }));
    bot.once('kicked', () => resolve({ outcome: 'refused', bot }));
    bot.once('end', () => resolve({ outcome: 'refused', bot }));
    bot.once('error', reject);
  });
}

test('a whitelisted bot joins, one not whitelisted and a banned one are refused; changes apply live', async () => {
  const created = await t.http.post('/v1/servers').set(auth()).send({ name: 'lists', plan: 'micro', version: 'flying-squid-1.20' });
  const { id, address } = created.body;
  const put = (list: string, name: string) => t.http.put(`/v1/servers/${id}/players/${list}/${name}`).set(auth());
  for (const name of ['alice', 'Mallory']) expect((await put('whitelist', name)).status).toBe(200);
  expect((await put('bans', 'mallory')).status).toBe(200); // names match whatever their case
  const on = await t.http.patch(`/v1/servers/${id}/players/whitelist`).set(auth()).send({ enabled: true });
  expect(on.status).toBe(200);
  expect(on.body).toMatchObject({ enabled: true, data: [{ name: 'alice' }, { name: 'Mallory' }] });
  expect(await action(id, 'start')).toMatchObject({ status: 'succeeded' });

  expect((await join(address.port, 'alice')).outcome).toBe('joined');
  expect((await join(address.port, 'bob')).outcome).toBe('refused'); // not whitelisted
  expect((await join(address.port, 'Mallory')).outcome).toBe('refused'); // whitelisted, but banned

  // While it runs: bob is whitelisted through the console and joins; alice, online, is banned and kicked.
  expect((await put('whitelist', 'bob')).status).toBe(200);
  expect((await join(address.port, 'bob')).outcome).toBe('joined');
  // She gets the game's reason (refusing bob and Mallory at login once cut every online player's connection, so
  // no reason came and hers hung for 30 s); a generous 20 s for what takes milliseconds.
  const alice = bots.find((b) => b.username === 'alice')!;
  const kicked = new Promise<string>((resolve) => alice.once('kicked', (reason) => resolve(String(reason))));
  const ended = new Promise<void>((resolve) => alice.once('end', () => resolve()));
  expect((await put('bans', 'alice')).status).toBe(200);
  let timer: NodeJS.Timeout | undefined;
  const noKick = new Promise<string>((resolve) => (timer = setTimeout(() => resolve('no kick within 20 s'), 20_000)));
  expect(await Promise.race([kicked, noKick])).toMatch(/banned/);
  clearTimeout(timer);
  await ended;
  expect((await join(address.port, 'alice')).outcome).toBe('refused');
  const bans = await t.http.get(`/v1/servers/${id}/players/bans`).set(auth());
  expect(bans.body).toMatchObject({ enabled: null, data: [{ name: 'mallory' }, { name: 'alice' }] });

  // Taken off the list, alice may come back, also after a restart (the file carries the lists).
  expect((await t.http.delete(`/v1/servers/${id}/players/bans/alice`).set(auth())).status).toBe(204);
  expect(await action(id, 'restart')).toMatchObject({ status: 'succeeded' });
  expect((await join(address.port, 'alice')).outcome).toBe('joined');
  expect((await join(address.port, 'carol')).outcome).toBe('refused');
  expect(await action(id, 'stop')).toMatchObject({ status: 'succeeded' });
});
