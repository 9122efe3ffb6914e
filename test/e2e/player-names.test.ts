// Players whose names the game itself would refuse (issue 39 §3), with a real flying-squid server and real
// Minecraft clients (mineflayer). flying-squid in offline mode took any name: "grief\u0007er" and a 200-character
// one were listed by GET …/players (past the spec's Player.name maxLength 64) and could be neither kicked nor
// banned through the API; a name with ESC, U+202E and a line break forged a console line; player.joined events,
// and so webhooks, carried the raw characters. Now the launcher refuses at login what Minecraft refuses (3–16
// letters, digits, underscores), a player is kicked by UUID as well as by name, and no console line holds a bidi
// control. Ports 29470-29479.
import mineflayer from 'mineflayer';
import { createTestApp, type TestApp } from '../helpers/app';
import { until } from '../helpers/wait';

jest.setTimeout(240_000);

let t: TestApp;
let token: string;
const auth = () => ({ Authorization: `Bearer ${token}` });
const bots: mineflayer.Bot[] = [];

beforeEach(async () => {
  t = await createTestApp({ boot: true, env: { GAME_PORT_RANGE: '29470-29479' }, runtime: { stopTimeoutMs: 10_000, reconcileMs: 500 } });
  token = t.token('names@example.com');
});
afterEach(async () => {
  for (const bot of bots.splice(0)) bot.end();
  await t.finish();
});

/** A real client joins: 'joined' once it spawned, else refused with the reason it was given ('' if none). */
function join(port: number, username: string): Promise<{ joined: boolean; reason: string; bot: mineflayer.Bot }> {
  const bot = mineflayer.createBot({ host: '127.0.0.1', port, username, auth: 'offline', version: '1.20', hideErrors: true });
  bot.on('error', () => undefined);
  bots.push(bot);
  return new Promise((resolve) => {
    bot.once('spawn', () => resolve({ joined: true, reason: '', bot }));
    bot.once('kicked', (reason) => resolve({ joined: false, reason: String(reason), bot }));
    bot.once('end', () => resolve({ joined: false, reason: '', bot }));
  });
}

async function running(): Promise<{ id: string; port: number }> {
  const created = await t.http.post('/v1/servers').set(auth()).send({ name: 'names', plan: 'micro', version: 'flying-squid-1.20' });
  expect(created.status).toBe(201);
  const id: string = created.body.id;
  await until('installed', async () => (await t.http.get(`/v1/servers/${id}`).set(auth())).body.state === 'stopped', 30_000);
  expect((await t.http.post(`/v1/servers/${id}/actions`).set(auth()).send({ type: 'start' })).status).toBe(202);
  await until('running', async () => (await t.http.get(`/v1/servers/${id}`).set(auth())).body.state === 'running', 120_000);
  return { id, port: created.body.address.port };
}

/** The player `name` as GET …/players lists them, once it does. */
const listed = (id: string, name: string) =>
  until(`${name} listed`, async () => {
    const { body } = await t.http.get(`/v1/servers/${id}/players`).set(auth());
    return body.players.find((p: { name: string }) => p.name === name) as { name: string; uuid: string } | undefined;
  });

type PlayerEvent = { type: string; data: { player: { name: string; uuid: string }; reason?: string } };
const playerEvents = async (id: string): Promise<PlayerEvent[]> =>
  (await t.http.get('/v1/events').set(auth()).query({ server_id: id, limit: 100 })).body.data.filter((e: PlayerEvent) => e.type.startsWith('player.'));

test('names Minecraft refuses are refused at login: never listed, never in an event, never forging a console line', async () => {
  const { id, port } = await running();
  const hostile = [
    'grief\u0007er',
    'x'.repeat(200),
    'm\u001b[2J\u202e\nFORGED: owner banned alice',
    'ab', // too short for Minecraft
    'bad-name', // a dash: Luanti's, not Minecraft's
  ];
  for (const name of hostile) {
    const outcome = await join(port, name);
    expect({ name, joined: outcome.joined }).toEqual({ name, joined: false });
    expect(outcome.reason).toMatch(/not a valid Minecraft name/);
  }
  // A valid name still joins, and once it is reported every earlier line and report is in.
  expect((await join(port, 'alice')).joined).toBe(true);
  await until('alice reported', async () => (await playerEvents(id)).some((e) => e.type === 'player.joined' && e.data.player.name === 'alice'));

  const players = (await t.http.get(`/v1/servers/${id}/players`).set(auth())).body;
  expect(players.players.map((p: { name: string }) => p.name)).toEqual(['alice']);
  expect((await playerEvents(id)).map((e) => `${e.type} ${e.data.player.name}`)).toEqual(['player.joined alice']);

  const lines: string[] = (await t.http.get(`/v1/servers/${id}/console?limit=1000`).set(auth())).body.data.map((l: { text: string }) => l.text);
  expect(lines.filter((l) => l.startsWith('FORGED'))).toEqual([]);
  expect(lines.filter((l) => /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/.test(l))).toEqual([]);
  // The operator is told, in ASCII, what was refused.
  expect(lines.some((l) => l.includes('refused a player whose name Minecraft does not allow: "grief\\u0007er"'))).toBe(true);
});

test('a player is kicked by UUID as well as by name', async () => {
  const { id, port } = await running();
  expect((await join(port, 'alice')).joined).toBe(true);
  const alice = await listed(id, 'alice');
  const kick = (body: object) => t.http.post(`/v1/servers/${id}/kicks`).set(auth()).send(body);
  // Exactly one of the two.
  expect((await kick({})).status).toBe(400);
  expect((await kick({ player: 'alice', uuid: alice.uuid })).status).toBe(400);
  expect((await kick({ uuid: 'not-a-uuid' })).status).toBe(400);
  expect((await kick({ uuid: '00000000-0000-3000-8000-000000000000' })).body.code).toBe('player_not_online');

  const kicked = await kick({ uuid: alice.uuid.toUpperCase(), reason: 'By UUID.' });
  expect(kicked.status).toBe(202);
  expect(kicked.body).toEqual({ player: alice, reason: 'By UUID.' });
  await until('alice left, kicked', async () => (await playerEvents(id)).some((e) => e.type === 'player.left' && e.data.reason === 'kick'));
});

test('a player is banned by UUID as well as by name (issue 39 §3), and taken off the list the same way', async () => {
  const { id, port } = await running();
  expect((await join(port, 'mallory')).joined).toBe(true);
  const mallory = await listed(id, 'mallory');
  // A UUID nobody online has is refused; mallory's stands for their name.
  expect((await t.http.put(`/v1/servers/${id}/players/bans/00000000-0000-3000-8000-000000000000`).set(auth())).body.code).toBe('player_not_online');
  const banned = await t.http.put(`/v1/servers/${id}/players/bans/${mallory.uuid}`).set(auth());
  expect(banned.status).toBe(200);
  expect(banned.body).toMatchObject({ name: 'mallory' });
  expect((await t.http.get(`/v1/servers/${id}/players/bans`).set(auth())).body.data.map((e: { name: string }) => e.name)).toEqual(['mallory']);
  await until('mallory left, banned', async () => (await playerEvents(id)).some((e) => e.type === 'player.left' && e.data.player.name === 'mallory'));
  expect((await join(port, 'mallory')).joined).toBe(false);
  expect((await t.http.delete(`/v1/servers/${id}/players/bans/mallory`).set(auth())).status).toBe(204);
  expect((await t.http.get(`/v1/servers/${id}/players/bans`).set(auth())).body.data).toEqual([]);
  t.expectContract();
});
