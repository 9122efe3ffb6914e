// Players online when the service dies by kill -9 (issue 27 §5; openapi/v1.yaml PlayerLeftReason): a real
// flying-squid server in a service process of its own and a real Minecraft client (mineflayer). The game goes with
// the service (its launcher exits when the IPC channel closes); the next life finds it gone and writes the
// player.left (reason `shutdown`) nobody could write before, and the game it starts again lists nobody. Port 26320.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import mineflayer from 'mineflayer';
import type { Runtime } from '../../src/service';
import { createTestHost, insertServer, waitFor, waitState, type TestHost } from './helpers';

const PORT = 26320;
let host: TestHost;
let service: ChildProcess | null = null;
let runtime: Runtime | null = null;
let bot: mineflayer.Bot | null = null;

beforeEach(() => {
  host = createTestHost('players-restart');
});

afterEach(async () => {
  service?.kill('SIGKILL');
  if (bot && !bot._client.ended) bot.end();
  await runtime?.close();
  host.cleanup();
}, 60_000);

/** The runtime in a process of its own (fixtures/service.cjs), once the servers run. */
async function startService(serverIds: string[]): Promise<void> {
  service = spawn(process.execPath, [path.join(__dirname, 'fixtures', 'service.cjs'), host.dbFile, JSON.stringify(host.config), ...serverIds], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<string>((resolve, reject) => {
    readline.createInterface({ input: service!.stdout! }).once('line', resolve);
    service!.once('exit', (code) => reject(new Error(`service exited with ${code}`)));
  });
}

/** The server's player events as stored: type and, for player.left, the reason. */
const playerEvents = (id: string) =>
  host.db.prepare(`SELECT type, json_extract(data, '$.player.name') AS name, json_extract(data, '$.reason') AS reason
    FROM events WHERE server_id = ? AND type LIKE 'player.%' ORDER BY seq`).all(id);

test('a player online when the service is killed gets player.left (shutdown) from its next life, once', async () => {
  const id = insertServer(host.db, { software: 'flying-squid', gameVersion: '1.20', port: PORT });
  host.db.prepare(`UPDATE servers SET desired_state = 'running' WHERE id = ?`).run(id);
  await startService([id]);

  bot = mineflayer.createBot({ host: '127.0.0.1', port: PORT, username: 'Ghost', auth: 'offline', version: '1.20', hideErrors: true });
  bot.on('error', () => undefined); // the game going away resets the connection
  await new Promise<void>((resolve) => bot!.once('spawn', () => resolve()));
  await waitFor('player.joined recorded', () => playerEvents(id).length === 1, 30_000);

  service!.kill('SIGKILL');
  await new Promise((r) => service!.once('exit', r));
  service = null;
  await waitFor('the client disconnected with the game', () => bot!._client.ended, 30_000);

  runtime = host.newRuntime();
  await runtime.start();
  expect(playerEvents(id)).toEqual([
    { type: 'player.joined', name: 'Ghost', reason: null },
    { type: 'player.left', name: 'Ghost', reason: 'shutdown' },
  ]);
  await waitState(runtime, id, 'running'); // desired running: started again, with nobody on it
  expect((await runtime.consoles.players(id)).players).toEqual([]);
  expect(playerEvents(id)).toHaveLength(2);
  expect(host.errors).toEqual([]);
}, 120_000);
