// Supervisor behaviour with the fake game fixture (fast, deterministic): actions and their recorded outcomes,
// crash policy, start timeout, port checks, restart of the t.runtime. Ports 26200-26239. (Memory limits, the
// cgroup's and the watchdog's, are in cgroups.test.ts.)
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { AppError } from '../../src/errors';
import type { StateChange } from '../../src/runtime/server/types';
import { hostPerTest, insertServer, isPidAlive, sender, waitAction, waitFor, waitState } from './helpers';

const BASE_PORT = 26200;
let nextPort = BASE_PORT;

const t = hostPerTest('lifecycle', { crashLoop: { maxRestarts: 2, windowMs: 60_000 }, stopTimeoutMs: 1_500 });

async function installed(software = 'fake-game', plan: 'small' | 'tiny' = 'small'): Promise<string> {
  const id = insertServer(t.host.db, { software, gameVersion: '1.0', port: nextPort++, plan });
  await t.runtime.lifecycle.install(id);
  expect(t.runtime.lifecycle.state(id)).toBe('stopped');
  return id;
}

async function act(id: string, type: 'start' | 'stop' | 'restart' | 'kill') {
  const pending = t.runtime.power.requestAction(id, 'usr_test', type);
  expect(pending.status).toBe('pending');
  return waitAction(t.runtime, id, pending.id);
}

test('install creates the folder and settings, installing → stopped', async () => {
  const id = await installed();
  const dir = path.join(t.host.dataDir, 'servers', id);
  for (const sub of ['world', 'logs', 'settings.json']) expect(fs.existsSync(path.join(dir, sub))).toBe(true);
});

test('start → running on the ready line; commands round-trip; stop; stop again is a no-op', async () => {
  const id = await installed();
  const seen: StateChange[] = [];
  t.runtime.events.on('state', (e) => e.serverId === id && seen.push(e));
  expect(await act(id, 'start')).toMatchObject({ status: 'succeeded', error: null });
  expect(t.runtime.lifecycle.state(id)).toBe('running');
  t.runtime.consoles.sendCommand(id, 'hello there', sender);
  await waitFor('echo', () => t.runtime.consoles.recent(id, 50).find((l) => l.stream === 'stdout' && l.text === 'echo: hello there'));
  expect(t.runtime.consoles.recent(id, 50).some((l) => l.stream === 'input' && l.text === 'hello there')).toBe(true);
  expect(await act(id, 'stop')).toMatchObject({ status: 'succeeded' });
  expect(t.runtime.lifecycle.state(id)).toBe('stopped');
  expect(seen.map((e) => e.state)).toEqual(['starting', 'running', 'stopping', 'stopped']);
  expect(await act(id, 'stop')).toMatchObject({ status: 'succeeded' });
  expect(() => t.runtime.consoles.sendCommand(id, 'hello', sender)).toThrow(expect.objectContaining({ code: 'invalid_state' }));
  // The file is appended through a write stream, after the ring buffer took the line (console-buffer.ts).
  const logFile = path.join(t.host.dataDir, 'servers', id, 'logs', 'console.log');
  await waitFor('the echo in console.log', () => fs.readFileSync(logFile, 'utf8').includes('echo: hello there'));
  expect(t.host.db.prepare('SELECT desired_state FROM servers WHERE id = ?').get(id)).toEqual({ desired_state: 'stopped' });
});

test('a second action while one runs is refused; kill overtakes it', async () => {
  const id = await installed('fake-game-mute'); // never ready: the start stays in flight
  const start = t.runtime.power.requestAction(id, 'usr_test', 'start');
  expect(() => t.runtime.power.requestAction(id, 'usr_test', 'stop')).toThrow(expect.objectContaining({ code: 'action_conflict' }));
  await waitState(t.runtime, id, 'starting');
  const kill = t.runtime.power.requestAction(id, 'usr_test', 'kill');
  expect(await waitAction(t.runtime, id, kill.id)).toMatchObject({ status: 'succeeded' });
  expect(t.runtime.power.getAction(id, start.id)).toMatchObject({ status: 'failed', error: expect.objectContaining({ code: 'action_cancelled' }) });
  expect(t.runtime.power.getAction(id, start.id).error?.detail).toContain(kill.id);
  expect(t.runtime.lifecycle.state(id)).toBe('stopped');
  expect(t.runtime.power.listActions(id, { limit: 20 }).data.map((a) => a.id)).toEqual([kill.id, start.id]); // newest first
});

test('a start that never becomes ready fails with the reason and the process is killed', async () => {
  const id = await installed('fake-game-mute');
  const started = act(id, 'start');
  const pid = (await waitFor('pid', () => t.runtime.consoles.recent(id, 10).length > 0 && pidOf(id))) as number;
  const action = await started;
  expect(action).toMatchObject({ status: 'failed', error: expect.objectContaining({ code: 'start_timeout' }) });
  expect(action.error?.detail).toMatch(/not ready within 1500 ms/);
  expect(t.runtime.power.crashes(id)[0]).toMatchObject({ reason: 'start_timeout' });
  expect(isPidAlive(pid)).toBe(false);
  await act(id, 'stop'); // desired stopped: no more automatic restarts
  await waitState(t.runtime, id, 'stopped');
});

test('crash loop: restarts with backoff, then stays crashed until a start action', async () => {
  const id = await installed('fake-game-crash');
  const action = await act(id, 'start');
  expect(action).toMatchObject({ status: 'failed', error: expect.objectContaining({ code: 'start_failed' }) });
  expect(action.error?.detail).toMatch(/exited while starting \(exit code 3\)/);
  // maxRestarts 2: crash 1, restart, crash 2, restart, crash 3 → capped.
  await waitFor('three crashes', () => t.runtime.power.crashes(id).length === 3);
  await new Promise((r) => setTimeout(r, 1_500)); // longer than any backoff: no fourth attempt
  expect(t.runtime.power.crashes(id)).toHaveLength(3);
  expect(t.runtime.lifecycle.state(id)).toBe('crashed');
  const crash = t.runtime.power.crashes(id)[0];
  expect(crash).toMatchObject({ reason: 'exited', exit_code: 3, signal: null });
  expect(crash.last_lines).toContain('fake-game: crashing on purpose');
  // A user start resets the count and tries again.
  await act(id, 'start');
  await waitFor('three more crashes', () => t.runtime.power.crashes(id).length === 6);
  await act(id, 'stop');
  expect(t.runtime.lifecycle.state(id)).toBe('stopped'); // stop on crashed clears it
});

test('a port taken by someone else fails the start clearly', async () => {
  const id = await installed();
  const port = (t.host.db.prepare('SELECT port FROM servers WHERE id = ?').get(id) as { port: number }).port;
  const squatter = net.createServer().listen(port, '127.0.0.1');
  await new Promise((r) => squatter.once('listening', r));
  try {
    const action = await act(id, 'start');
    expect(action).toMatchObject({ status: 'failed', error: expect.objectContaining({ code: 'port_in_use' }) });
    expect(action.error?.detail).toContain(`Port ${port}`);
    expect(t.runtime.power.crashes(id)[0]).toMatchObject({ reason: 'port_in_use' });
  } finally {
    await act(id, 'stop');
    squatter.close();
  }
});

test('a graceful stop that is ignored ends in SIGKILL after stopTimeoutMs', async () => {
  const id = await installed();
  await act(id, 'start');
  t.runtime.consoles.sendCommand(id, 'ignore-stop', sender); // the fake game stops reading its console
  expect(await act(id, 'stop')).toMatchObject({ status: 'succeeded' });
  expect(t.runtime.consoles.recent(id, 20).some((l) => /did not stop within 1500 ms; killed/.test(l.text))).toBe(true);
});

test('killing the game behind the service\'s back is a crash, followed by a restart', async () => {
  const id = await installed();
  await act(id, 'start');
  const pid = pidOf(id)!;
  process.kill(pid, 'SIGKILL');
  await waitFor('crash record', () => t.runtime.power.crashes(id).length === 1);
  expect(t.runtime.power.crashes(id)[0]).toMatchObject({ reason: 'exited', signal: 'SIGKILL' });
  await waitFor('restarted', () => t.runtime.lifecycle.state(id) === 'running' && pidOf(id) !== pid);
  await act(id, 'kill');
  expect(t.runtime.lifecycle.state(id)).toBe('stopped');
});

test('start while installing waits for the install; start while deleting is refused; remove frees everything and the row', async () => {
  const id = insertServer(t.host.db, { software: 'fake-game', gameVersion: '1.0', port: nextPort++ });
  const start = t.runtime.power.requestAction(id, 'usr_test', 'start');
  void t.runtime.lifecycle.install(id);
  expect(await waitAction(t.runtime, id, start.id)).toMatchObject({ status: 'succeeded' });
  const pid = pidOf(id)!;
  const removing = t.runtime.lifecycle.remove(id);
  expect(() => t.runtime.power.requestAction(id, 'usr_test', 'start')).toThrow(AppError);
  expect(() => t.runtime.power.requestAction(id, 'usr_test', 'start')).toThrow(expect.objectContaining({ code: 'invalid_state' }));
  await removing;
  expect(isPidAlive(pid)).toBe(false);
  expect(t.host.db.prepare('SELECT COUNT(*) AS n FROM servers WHERE id = ?').get(id)).toEqual({ n: 0 });
  expect(fs.existsSync(path.join(t.host.dataDir, 'servers', id))).toBe(false);
  expect(t.host.db.prepare('SELECT COUNT(*) AS n FROM runtime_processes WHERE server_id = ?').get(id)).toEqual({ n: 0 });
});

test('close stops games without touching desired state; a fresh runtime brings them back', async () => {
  const running = await installed();
  const stopped = await installed();
  await act(running, 'start');
  const oldPid = pidOf(running)!;
  await t.runtime.close();
  expect(isPidAlive(oldPid)).toBe(false);
  expect(t.host.db.prepare('SELECT state, desired_state FROM servers WHERE id = ?').get(running)).toEqual({ state: 'stopped', desired_state: 'running' });
  t.runtime = t.host.newRuntime();
  await t.runtime.start();
  await waitState(t.runtime, running, 'running');
  expect(t.runtime.lifecycle.state(stopped)).toBe('stopped');
  expect(t.runtime.doors.live().filter((l) => l.serverId === running)).toHaveLength(1);
  await act(running, 'stop');
});

function pidOf(serverId: string): number | undefined {
  const row = t.host.db.prepare('SELECT pid FROM runtime_processes WHERE server_id = ?').get(serverId) as { pid: number } | undefined;
  return row?.pid;
}
