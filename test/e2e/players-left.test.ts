// Players who leave when a server stops (issue 27 §5; openapi/v1.yaml PlayerEvent, PlayerLeftReason): a real
// flying-squid server and a real Minecraft client (mineflayer). Whatever stops the game (a stop, a restart, a kill,
// a backup that stops the game, a crash behind the service's back), every player it had reported online gets a
// `player.left` with that cause, and `GET …/players` no longer lists them. A kick through the API (kickServerPlayer)
// is a `player.left` with reason `kick` while the game runs on.
import fs from 'node:fs';
import path from 'node:path';
import mineflayer from 'mineflayer';
import { builtinSoftwareDir } from '../../src/runtime/host/select-environment';
import { createTestApp, tempDir, type TestApp } from '../helpers/app';
import { until } from '../helpers/wait';

jest.setTimeout(300_000);

let t: TestApp;
let token: string;
const auth = () => ({ Authorization: `Bearer ${token}` });
const get = (path: string) => t.http.get(path).set(auth());
const post = (path: string, body: object) => t.http.post(path).set(auth()).send(body);

/**
 * flying-squid backs up `live`, with its players connected (test/e2e/live-backup.test.ts); a backup that stops the
 * game is that of software whose backups do (`consistency: stop`, as Luanti's): here an operator's copy of
 * flying-squid's definition that says so.
 */
let software: string;
beforeAll(() => {
  software = tempDir('stop-backups');
  const def = JSON.parse(fs.readFileSync(path.join(builtinSoftwareDir(), 'flying-squid.json'), 'utf8'));
  const copy = { ...def, id: 'squid-stop', launcher: path.join(builtinSoftwareDir(), def.launcher), backup: { paths: ['world'], consistency: 'stop' } };
  fs.writeFileSync(path.join(software, 'squid-stop.json'), JSON.stringify(copy));
});
afterAll(() => fs.rmSync(software, { recursive: true, force: true }));

beforeEach(async () => {
  t = await createTestApp({ boot: true, software, runtime: { backoffMs: 300, stopTimeoutMs: 10_000, reconcileMs: 500 } });
  token = t.token('leavers@example.com');
});
afterEach(() => t.finish());

type PlayerEvent = { type: string; actor: Record<string, unknown>; data: { player: { name: string }; reason?: string } };

const playerEvents = async (id: string): Promise<PlayerEvent[]> =>
  (await get('/v1/events').query({ server_id: id, limit: 100 })).body.data.filter((e: PlayerEvent) => e.type.startsWith('player.'));

const state = async (id: string): Promise<string> => (await get(`/v1/servers/${id}`)).body.state;

/** What stops the game in each case, and the reason its players' `player.left` must carry. */
const causes: [string, { reason: string; stop: (id: string) => Promise<unknown> }][] = [
  ['a stop action', { reason: 'stop', stop: (id) => post(`/v1/servers/${id}/actions`, { type: 'stop' }) }],
  ['a restart action', { reason: 'restart', stop: (id) => post(`/v1/servers/${id}/actions`, { type: 'restart' }) }],
  ['a kill action', { reason: 'kill', stop: (id) => post(`/v1/servers/${id}/actions`, { type: 'kill' }) }],
  ['a backup', { reason: 'backup', stop: (id) => post(`/v1/servers/${id}/backups`, { name: 'with a player on' }) }],
  [
    'a crash',
    {
      reason: 'crash',
      stop: async (id) => process.kill(t.runtime.doors.live().find((l) => l.serverId === id)!.pid, 'SIGKILL'),
    },
  ],
];

/** A real client joins and the game reports it (player.joined); resolves with the client. */
async function join(id: string, port: number, username: string): Promise<mineflayer.Bot> {
  // The server going away resets the connection: that is the point, so the client's errors are not logged.
  const bot = mineflayer.createBot({ host: '127.0.0.1', port, username, auth: 'offline', version: '1.20', hideErrors: true });
  bot.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    bot.once('spawn', () => resolve());
    bot.once('kicked', (reason) => reject(new Error(`kicked: ${reason}`)));
  });
  await until(`${username} listed`, async () => (await get(`/v1/servers/${id}/players`)).body.players?.some((p: { name: string }) => p.name === username));
  return bot;
}

/**
 * Ends the client unless the server did already, and waits for its connection to close (minecraft-protocol's end()
 * on a closed connection would leave a 30 s timer behind).
 */
async function quit(bot: mineflayer.Bot): Promise<void> {
  if (bot._client.ended) return;
  const closed = new Promise<void>((resolve) => bot.once('end', () => resolve()));
  bot.end();
  await closed;
}

test('every player online gets a player.left with the cause when the server stops, and GET players agrees', async () => {
  const created = await post('/v1/servers', { name: 'leavers', plan: 'micro', version: 'squid-stop-1.20' });
  expect(created.status).toBe(201);
  const id: string = created.body.id;
  await until('installed', async () => (await state(id)) === 'stopped');

  for (const [i, [name, { reason, stop }]] of causes.entries()) {
    if ((await state(id)) !== 'running') {
      expect((await post(`/v1/servers/${id}/actions`, { type: 'start' })).status).toBe(202);
      await until('running', async () => (await state(id)) === 'running');
    }
    const { port } = (await get(`/v1/servers/${id}`)).body.address;
    const username = `Leaver${i}`;
    const bot = await join(id, port, username);
    try {
      await stop(id);
      const left = await until(`${username}'s player.left after ${name}`, async () =>
        (await playerEvents(id)).find((e) => e.type === 'player.left' && e.data.player.name === username),
      60_000);
      expect([name, left.data.reason]).toEqual([name, reason]);
      // GET players agrees: stopped, nobody is known online (409); running again (restart, backup, the crash
      // policy's restart), the player is not listed.
      await until(`${name}: settled`, async () => ['running', 'stopped'].includes(await state(id)) && (await t.runtime.idle(), true));
      const players = await get(`/v1/servers/${id}/players`);
      if (players.status === 200) expect(players.body.players.map((p: { name: string }) => p.name)).not.toContain(username);
      else expect([players.status, players.body.code]).toEqual([409, 'invalid_state']);
    } finally {
      await quit(bot);
    }
  }
  // One player.joined and one player.left per player, in that order: no ghost, no double.
  const events = await playerEvents(id);
  for (const [i] of causes.entries()) {
    expect(events.filter((e) => e.data.player.name === `Leaver${i}`).map((e) => e.type)).toEqual(['player.joined', 'player.left']);
  }
  t.expectContract();
});

test('a kick through the API disconnects the player with its reason; their player.left says kick; refusals change nothing', async () => {
  const created = await post('/v1/servers', { name: 'kicker', plan: 'micro', version: 'flying-squid-1.20' });
  const id: string = created.body.id;
  await until('installed', async () => (await state(id)) === 'stopped');
  // Stopped: nobody to kick.
  const stopped = await post(`/v1/servers/${id}/kicks`, { player: 'Steve' });
  expect([stopped.status, stopped.body.code]).toEqual([409, 'invalid_state']);
  expect((await post(`/v1/servers/${id}/actions`, { type: 'start' })).status).toBe(202);
  await until('running', async () => (await state(id)) === 'running');
  const { port } = (await get(`/v1/servers/${id}`)).body.address;
  const bot = await join(id, port, 'Rowdy');
  try {
    const table: [string, object, number, string | undefined][] = [
      ['nobody of that name online', { player: 'Nobody' }, 409, 'player_not_online'],
      ['a reason over two lines', { player: 'Rowdy', reason: 'one\ntwo' }, 400, 'validation_failed'],
      ['a name no game takes', { player: 'Rowdy!' }, 400, 'validation_failed'],
      ['a field the spec does not know', { player: 'Rowdy', ban: true }, 400, 'validation_failed'],
    ];
    for (const [what, body, status, code] of table) {
      const res = await post(`/v1/servers/${id}/kicks`, body);
      expect([what, res.status, res.body.code]).toEqual([what, status, code]);
    }
    expect(bot._client.ended).toBe(false); // none of those kicked anyone

    const kicked = new Promise<string>((resolve) => bot.once('kicked', (reason) => resolve(String(reason))));
    const res = await post(`/v1/servers/${id}/kicks`, { player: 'rowdy', reason: 'Please keep the chat friendly.' }).set('Idempotency-Key', 'kick-rowdy-1');
    expect([res.status, res.body]).toEqual([202, { player: { name: 'Rowdy', uuid: expect.any(String) }, reason: 'Please keep the chat friendly.' }]);
    expect(await kicked).toContain('Please keep the chat friendly.');
    const left = await until("Rowdy's player.left", async () =>
      (await playerEvents(id)).find((e) => e.type === 'player.left' && e.data.player.name === 'Rowdy'));
    expect(left.data.reason).toBe('kick');
    // Who kicked: the token's account, not the game (the activity log says "Rowdy was kicked by …").
    expect(left.actor).toMatchObject({ type: 'user', token_id: expect.any(String) });
    // A retry of the same request (its answer lost) is the same answer, not a second kick refused as not online.
    const again = await post(`/v1/servers/${id}/kicks`, { player: 'rowdy', reason: 'Please keep the chat friendly.' }).set('Idempotency-Key', 'kick-rowdy-1');
    expect([again.status, again.headers['idempotent-replayed'], again.body]).toEqual([202, 'true', res.body]);
    // The console shows what was sent, with the token that sent it; the game is still running.
    const lines = (await get(`/v1/servers/${id}/console`).query({ limit: 200 })).body.data as { stream: string; text: string; token_id: string | null }[];
    expect(lines.filter((l) => l.stream === 'input').map((l) => l.text)).toContain('kick Rowdy Please keep the chat friendly.');
    expect(await state(id)).toBe('running');
  } finally {
    await quit(bot);
  }
  t.expectContract();
});
