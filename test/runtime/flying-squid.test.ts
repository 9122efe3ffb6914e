// Real flying-squid servers under the runtime: a real player joins with mineflayer (offline auth), the console
// round-trips, stop/kill/restart, a kill behind the service's back, remove. Ports 26100-26119.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import mineflayer from 'mineflayer';
import { pingPlayers } from '../../src/runtime/server/probes';
import { hostPerTest, insertServer, isPidAlive, sender, waitAction, waitFor, waitState } from './helpers';

const BASE_PORT = 26100;
const GAME_VERSION = '1.20.5';

const t = hostPerTest('flying-squid', { stopTimeoutMs: 15_000 }); // generous: a loaded machine saves the world slowly

/** Installs and starts a real flying-squid server; resolves with its id once it is running. */
async function running(gameVersion = GAME_VERSION, port = BASE_PORT): Promise<string> {
  const id = insertServer(t.host.db, { software: 'flying-squid', gameVersion, port });
  await t.runtime.lifecycle.install(id);
  expect(await act(id, 'start')).toMatchObject({ status: 'succeeded' });
  return id;
}

async function act(id: string, type: 'start' | 'stop' | 'restart' | 'kill') {
  return waitAction(t.runtime, id, t.runtime.power.requestAction(id, 'usr_test', type).id);
}

function pidOf(id: string): number | undefined {
  return (t.host.db.prepare('SELECT pid FROM runtime_processes WHERE server_id = ?').get(id) as { pid: number } | undefined)?.pid;
}

test('a real player joins and shows up in players() and live()', async () => {
  const a = await running();
  const bot = mineflayer.createBot({ host: '127.0.0.1', port: BASE_PORT, username: 'probe_player', auth: 'offline', version: GAME_VERSION });
  try {
    await new Promise<void>((resolve, reject) => {
      bot.once('spawn', () => resolve());
      bot.once('error', reject);
      bot.once('kicked', (reason) => reject(new Error(`kicked: ${reason}`)));
    });
    await waitFor('player in players()', () => t.runtime.doors.live().find((l) => l.serverId === a && l.players_online === 1));
    const players = await t.runtime.consoles.players(a);
    expect(players).toMatchObject({ online: 1, max: 5 });
    expect(players.players).toEqual([{ name: 'probe_player', uuid: expect.stringMatching(/^[0-9a-f-]{36}$/) }]);
    // The probe an operator's jar would use (Server List Ping) agrees with the IPC report.
    expect(await pingPlayers('127.0.0.1', BASE_PORT)).toMatchObject({ online: 1, max: 5 });
    const live = t.runtime.doors.live().find((l) => l.serverId === a)!;
    expect(live.pid).toBe(pidOf(a));
    await waitFor('a tps report', () => (t.runtime.doors.live().find((l) => l.serverId === a)?.tps ?? 0) > 0);
    expect(t.runtime.doors.live().find((l) => l.serverId === a)!.tps).toBeLessThanOrEqual(20);
  } finally {
    bot.end();
  }
  await waitFor('player gone', () => t.runtime.doors.live().find((l) => l.serverId === a && l.players_online === 0));
}, 180_000);

test('a console command round-trips through the game', async () => {
  const a = await running();
  const before = t.runtime.consoles.recent(a, 1000).at(-1)?.seq ?? 0;
  const seen: string[] = [];
  const unsubscribe = t.runtime.consoles.subscribe(a, (line) => seen.push(line.text), { afterSeq: before });
  t.runtime.consoles.sendCommand(a, 'ping 4', sender); // flying-squid answers 'pong [n+1]!' (it reads only the first digit)
  await waitFor('pong', () => seen.some((t) => t.includes('pong [5]!')));
  unsubscribe();
  // The file is appended through a write stream, after subscribers saw the line (console-buffer.ts): wait for it.
  const logFile = path.join(t.host.dataDir, 'servers', a, 'logs', 'console.log');
  await waitFor('pong in console.log', () => fs.readFileSync(logFile, 'utf8').includes('pong [5]!'));
}, 180_000);

test('players() is refused unless the server runs (an older game version)', async () => {
  const b = await running('1.8.8', BASE_PORT + 1);
  expect(await act(b, 'stop')).toMatchObject({ status: 'succeeded' });
  await expect(t.runtime.consoles.players(b)).rejects.toMatchObject({ code: 'invalid_state' });
  expect(t.runtime.consoles.recent(b, 50).some((l) => l.text.includes('Server is closed'))).toBe(true);
}, 180_000);

test('restart gives a new process; kill stops at once', async () => {
  const a = await running();
  const first = pidOf(a)!;
  expect(await act(a, 'restart')).toMatchObject({ status: 'succeeded' });
  const second = pidOf(a)!;
  expect(second).not.toBe(first);
  expect(isPidAlive(first)).toBe(false);
  expect(await act(a, 'kill')).toMatchObject({ status: 'succeeded' });
  expect(t.runtime.lifecycle.state(a)).toBe('stopped');
  expect(isPidAlive(second)).toBe(false);
  expect(t.runtime.power.crashes(a)).toEqual([]);
}, 180_000);

test('SIGKILL behind the service\'s back: crash recorded with the last lines, restarted', async () => {
  const a = await running();
  const pid = pidOf(a)!;
  process.kill(pid, 'SIGKILL');
  await waitFor('crash', () => t.runtime.power.crashes(a).length === 1);
  const crash = t.runtime.power.crashes(a)[0];
  expect(crash).toMatchObject({ reason: 'exited', signal: 'SIGKILL', exit_code: null });
  expect(crash.last_lines.length).toBeGreaterThan(0);
  await waitState(t.runtime, a, 'running');
  expect(pidOf(a)).not.toBe(pid);
}, 180_000);

test('remove kills the game, deletes its folder and row, and frees its port', async () => {
  const a = await running();
  const pid = pidOf(a)!;
  await t.runtime.lifecycle.remove(a);
  expect(isPidAlive(pid)).toBe(false);
  expect(fs.existsSync(path.join(t.host.dataDir, 'servers', a))).toBe(false);
  const probe = net.createServer().listen(BASE_PORT, '127.0.0.1');
  await new Promise((resolve, reject) => probe.once('listening', resolve).once('error', reject));
  probe.close();
  expect(t.host.db.prepare('SELECT COUNT(*) AS n FROM servers WHERE id = ?').get(a)).toEqual({ n: 0 });
  expect(t.host.db.prepare('SELECT COUNT(*) AS n FROM actions WHERE server_id = ?').get(a)).toEqual({ n: 0 });
}, 180_000);

test('with GSH_HOLD the launcher loads and waits: nothing of its folder read or written until "gsh go", then ready (launch_hold)', async () => {
  fs.mkdirSync(t.host.dataDir, { recursive: true });
  const dir = fs.mkdtempSync(path.join(t.host.dataDir, 'held-'));
  const launcher = path.join(__dirname, '..', '..', 'src', 'runtime', 'software', 'flying-squid-launcher.cjs');
  const args = ['--server-id', 'srv_held', '--version', GAME_VERSION, '--port', String(BASE_PORT + 2), '--host', '127.0.0.1', '--max-players', '2', '--dir', dir];
  // No IPC channel: it reports on stdout, as in a container (container-process.ts REPORT_PREFIX).
  const game = spawn(process.execPath, [launcher, ...args], { cwd: dir, env: { PATH: process.env.PATH, GSH_HOLD: '1' }, stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  game.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
  try {
    await new Promise((r) => setTimeout(r, 3000)); // loaded by now on an idle machine; held either way
    expect({ files: fs.readdirSync(dir), out, exited: game.exitCode }).toEqual({ files: [], out: '', exited: null });
    game.stdin.write('gsh go\n');
    await waitFor('ready', () => out.includes('{"type":"ready"}'), 60_000);
    expect(fs.existsSync(path.join(dir, 'world'))).toBe(true);
    game.stdin.write('stop\n'); // console commands after the go reach the game
    await new Promise((resolve) => game.once('exit', resolve));
  } finally {
    game.kill('SIGKILL');
  }
}, 120_000);
