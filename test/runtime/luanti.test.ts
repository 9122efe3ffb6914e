// Real Luanti (minetest-server 5.6.1) servers under the runtime, through the data-only software definition
// src/runtime/software/luanti.json: running on the real ready signal, a UDP port that answers the game's own
// protocol, telemetry from the project's mod (steps per second as tps, players), the console through the mod,
// a graceful /shutdown, kill, a crash restarted, and a real client (Debian's `minetest` under Xvfb) joining and
// being kicked.
// Ports 29300-29319.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { loadSoftwareCatalog } from '../../src/runtime/software/software-catalog';
import { startLuantiClient } from '../helpers/luanti-client';
import { hostPerTest, insertServer, waitAction, waitFor, waitState } from './helpers';
import { luantiAnswers } from './luanti-probe';
import { userActor } from '../../src/actors';

const BASE_PORT = 29300;
const BINARY = '/usr/lib/minetest/minetestserver';

const t = hostPerTest('luanti');

async function act(id: string, type: 'start' | 'stop' | 'restart' | 'kill') {
  return waitAction(t.runtime, id, t.runtime.power.requestAction(id, 'usr_test', type).id);
}

async function running(port: number): Promise<string> {
  const id = insertServer(t.host.db, { software: 'luanti', gameVersion: '5.6.1', port, transport: 'udp' });
  await t.runtime.lifecycle.install(id);
  expect(await act(id, 'start')).toMatchObject({ status: 'succeeded' });
  return id;
}

test('the definition offers the version the installed server reports', () => {
  const version = execFileSync(BINARY, ['--version']).toString().split('\n')[0]; // "Minetest 5.6.1 (Linux)"
  const luanti = loadSoftwareCatalog().get('luanti');
  expect(luanti.gameVersions.map((v) => `Minetest ${v} (Linux)`)).toContain(version);
  expect(luanti).toMatchObject({ game: 'Luanti', transport: 'udp' });
});

test('a Luanti server runs: its UDP port answers, steps per second and players arrive, the console works', async () => {
  const id = await running(BASE_PORT);
  expect(await luantiAnswers('127.0.0.1', BASE_PORT)).toBe(true);
  // The dedicated server steps every 0.09 s (dedicated_server_step): about 11 steps a second (a one-second window
  // can hold one step more or less).
  // The first reports can fall in the map's generation on a busy machine: wait for one past 5.
  const tps = await waitFor('a tps report above 5', () => t.runtime.doors.live().find((l) => l.serverId === id && (l.tps ?? 0) > 5)?.tps);
  expect(tps).toBeLessThanOrEqual(13);
  expect(await t.runtime.consoles.players(id)).toMatchObject({ online: 0, max: 5, players: [] });

  // The world is the server's own, in its folder.
  const dir = path.join(t.host.dataDir, 'servers', id);
  expect(fs.existsSync(path.join(dir, 'world', 'world.mt'))).toBe(true);
  expect(fs.existsSync(path.join(dir, 'world', 'worldmods', 'gsh_report', 'init.lua'))).toBe(true);

  t.runtime.consoles.sendCommand(id, '/status', userActor('usr_test', 'tok_test'));
  await waitFor('the /status answer', () => t.runtime.consoles.recent(id, 200).some((l) => /version: 5\.6\.1/.test(l.text)));

  // A graceful stop is the software's /shutdown: the game exits by itself, nothing is recorded as a crash.
  expect(await act(id, 'stop')).toMatchObject({ status: 'succeeded' });
  expect(t.runtime.lifecycle.state(id)).toBe('stopped');
  expect(t.runtime.consoles.recent(id, 200).some((l) => l.text.includes('Shutting down'))).toBe(true);
  expect(t.runtime.power.crashes(id)).toEqual([]);
  expect(await luantiAnswers('127.0.0.1', BASE_PORT, 1000, 1)).toBe(false);
}, 120_000);

test('a typed /shutdown is a stop; kill works; a crash behind the service\'s back is restarted', async () => {
  const id = await running(BASE_PORT + 1);
  expect(await act(id, 'kill')).toMatchObject({ status: 'succeeded' });
  expect(t.runtime.lifecycle.state(id)).toBe('stopped');

  expect(await act(id, 'start')).toMatchObject({ status: 'succeeded' });
  const server = (t.host.db.prepare('SELECT pid FROM runtime_processes WHERE server_id = ?').get(id) as { pid: number }).pid;
  // The game itself (the launcher's child) dies: the launcher exits with it, which is a crash, restarted.
  const game = Number(execFileSync('pgrep', ['-P', String(server), '-f', 'minetestserver']).toString().trim().split('\n')[0]);
  process.kill(game, 'SIGKILL');
  await waitState(t.runtime, id, 'crashed');
  await waitState(t.runtime, id, 'running', 60_000);
  expect(t.runtime.power.crashes(id)[0]).toMatchObject({ reason: 'exited' });
  expect(await luantiAnswers('127.0.0.1', BASE_PORT + 1)).toBe(true);

  t.runtime.consoles.sendCommand(id, '/shutdown', userActor('usr_test', 'tok_test'));
  await waitState(t.runtime, id, 'stopped');
  expect(t.runtime.power.crashes(id)).toHaveLength(1);
}, 120_000);

test('a real Luanti client joins and shows up in players, and is kicked', async () => {
  const port = BASE_PORT + 2;
  const id = await running(port);
  const client = startLuantiClient(port, 'botone');
  try {
    const joined = await waitFor('the client in players', () => t.runtime.doors.live().find((l) => l.serverId === id && l.players_online === 1), 90_000);
    expect(joined).toBeTruthy();
    expect(await t.runtime.consoles.players(id)).toMatchObject({
      online: 1,
      players: [{ name: 'botone', uuid: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-3[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/) }],
    });
    expect(t.runtime.consoles.recent(id, 200).some((l) => /botone \[127\.0\.0\.1\] joins game/.test(l.text))).toBe(true);
    // Kicked through the definition's kick_command (builtin /kick, run by the mod's console): the game reports
    // the player gone, and says why on its console.
    expect(t.runtime.consoles.kick(id, 'BOTONE', 'Time for bed.', { type: 'user', user_id: 'usr_test', token_id: null })).toMatchObject({ player: { name: 'botone' } });
    await waitFor('the client gone', () => t.runtime.doors.live().find((l) => l.serverId === id && l.players_online === 0), 90_000);
    expect(t.runtime.consoles.recent(id, 200).map((l) => l.text)).toEqual(expect.arrayContaining(['/kick botone Time for bed.']));
  } finally {
    await client.stop();
  }
}, 240_000);
