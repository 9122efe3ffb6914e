// Supervisor behaviour with the fake game fixture (fast, deterministic): actions and their recorded outcomes,
// crash policy, memory watchdog, start timeout, port checks, restart of the runtime. Ports 26200-26239.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { AppError } from '../../src/errors';
import type { Runtime } from '../../src/runtime/runtime';
import type { StateChange } from '../../src/runtime/runtime';
import { createTestHost, insertServer, isPidAlive, sender, waitAction, waitFor, waitState, type TestHost } from './helpers';

const BASE_PORT = 26200;
let host: TestHost;
let runtime: Runtime;
let nextPort = BASE_PORT;

// Every test gets its own database, data folder and runtime (docs/conventions.md "Tests").
beforeEach(async () => {
  host = createTestHost('lifecycle', { crashLoop: { maxRestarts: 2, windowMs: 60_000 }, stopTimeoutMs: 1_500 });
  runtime = host.newRuntime();
  await runtime.start();
});

afterEach(async () => {
  await runtime.close();
  host.cleanup();
  expect(host.errors).toEqual([]);
});

async function installed(software = 'fake-game', plan: 'small' | 'tiny' = 'small'): Promise<string> {
  const id = insertServer(host.db, { software, gameVersion: '1.0', port: nextPort++, plan });
  await runtime.install(id);
  expect(runtime.state(id)).toBe('stopped');
  return id;
}

async function act(id: string, type: 'start' | 'stop' | 'restart' | 'kill') {
  const pending = runtime.requestAction(id, 'usr_test', type);
  expect(pending.status).toBe('pending');
  return waitAction(runtime, id, pending.id);
}

test('install creates the folder and settings, installing → stopped', async () => {
  const id = await installed();
  const dir = path.join(host.dataDir, 'servers', id);
  for (const sub of ['world', 'logs', 'settings.json']) expect(fs.existsSync(path.join(dir, sub))).toBe(true);
});

test('start → running on the ready line; commands round-trip; stop; stop again is a no-op', async () => {
  const id = await installed();
  const seen: StateChange[] = [];
  runtime.on('state', (e) => e.serverId === id && seen.push(e));
  expect(await act(id, 'start')).toMatchObject({ status: 'succeeded', error: null });
  expect(runtime.state(id)).toBe('running');
  runtime.sendCommand(id, 'hello there', sender);
  await waitFor('echo', () => runtime.console.recent(id, 50).find((l) => l.stream === 'stdout' && l.text === 'echo: hello there'));
  expect(runtime.console.recent(id, 50).some((l) => l.stream === 'input' && l.text === 'hello there')).toBe(true);
  expect(await act(id, 'stop')).toMatchObject({ status: 'succeeded' });
  expect(runtime.state(id)).toBe('stopped');
  expect(seen.map((e) => e.state)).toEqual(['starting', 'running', 'stopping', 'stopped']);
  expect(await act(id, 'stop')).toMatchObject({ status: 'succeeded' });
  expect(() => runtime.sendCommand(id, 'hello', sender)).toThrow(expect.objectContaining({ code: 'invalid_state' }));
  const log = fs.readFileSync(path.join(host.dataDir, 'servers', id, 'logs', 'console.log'), 'utf8');
  expect(log).toContain('echo: hello there');
  expect(host.db.prepare('SELECT desired_state FROM servers WHERE id = ?').get(id)).toEqual({ desired_state: 'stopped' });
});

test('a second action while one runs is refused; kill overtakes it', async () => {
  const id = await installed('fake-game-mute'); // never ready: the start stays in flight
  const start = runtime.requestAction(id, 'usr_test', 'start');
  expect(() => runtime.requestAction(id, 'usr_test', 'stop')).toThrow(expect.objectContaining({ code: 'action_conflict' }));
  await waitState(runtime, id, 'starting');
  const kill = runtime.requestAction(id, 'usr_test', 'kill');
  expect(await waitAction(runtime, id, kill.id)).toMatchObject({ status: 'succeeded' });
  expect(runtime.getAction(id, start.id)).toMatchObject({ status: 'failed', error: expect.objectContaining({ code: 'action_cancelled' }) });
  expect(runtime.getAction(id, start.id).error?.detail).toContain(kill.id);
  expect(runtime.state(id)).toBe('stopped');
  expect(runtime.listActions(id, { limit: 20 }).data.map((a) => a.id)).toEqual([kill.id, start.id]); // newest first
});

test('a start that never becomes ready fails with the reason and the process is killed', async () => {
  const id = await installed('fake-game-mute');
  const started = act(id, 'start');
  const pid = (await waitFor('pid', () => runtime.console.recent(id, 10).length > 0 && pidOf(id))) as number;
  const action = await started;
  expect(action).toMatchObject({ status: 'failed', error: expect.objectContaining({ code: 'start_timeout' }) });
  expect(action.error?.detail).toMatch(/not ready within 1500 ms/);
  expect(runtime.crashes(id)[0]).toMatchObject({ reason: 'start_timeout' });
  expect(isPidAlive(pid)).toBe(false);
  await act(id, 'stop'); // desired stopped: no more automatic restarts
  await waitState(runtime, id, 'stopped');
});

test('crash loop: restarts with backoff, then stays crashed until a start action', async () => {
  const id = await installed('fake-game-crash');
  const action = await act(id, 'start');
  expect(action).toMatchObject({ status: 'failed', error: expect.objectContaining({ code: 'start_failed' }) });
  expect(action.error?.detail).toMatch(/exited while starting \(exit code 3\)/);
  // maxRestarts 2: crash 1, restart, crash 2, restart, crash 3 → capped.
  await waitFor('three crashes', () => runtime.crashes(id).length === 3);
  await new Promise((r) => setTimeout(r, 1_500)); // longer than any backoff: no fourth attempt
  expect(runtime.crashes(id)).toHaveLength(3);
  expect(runtime.state(id)).toBe('crashed');
  const crash = runtime.crashes(id)[0];
  expect(crash).toMatchObject({ reason: 'exited', exit_code: 3, signal: null });
  expect(crash.last_lines).toContain('fake-game: crashing on purpose');
  // A user start resets the count and tries again.
  await act(id, 'start');
  await waitFor('three more crashes', () => runtime.crashes(id).length === 6);
  await act(id, 'stop');
  expect(runtime.state(id)).toBe('stopped'); // stop on crashed clears it
});

test('memory watchdog kills a process over its plan and records memory_limit', async () => {
  const id = await installed('fake-game-hog', 'tiny');
  await act(id, 'start');
  await waitFor('memory crash', () => runtime.crashes(id).find((c) => c.reason === 'memory_limit'));
  expect(runtime.crashes(id)[0].signal).toBe('SIGKILL');
  await act(id, 'stop');
});

test('a port taken by someone else fails the start clearly', async () => {
  const id = await installed();
  const port = (host.db.prepare('SELECT port FROM servers WHERE id = ?').get(id) as { port: number }).port;
  const squatter = net.createServer().listen(port, '127.0.0.1');
  await new Promise((r) => squatter.once('listening', r));
  try {
    const action = await act(id, 'start');
    expect(action).toMatchObject({ status: 'failed', error: expect.objectContaining({ code: 'port_in_use' }) });
    expect(action.error?.detail).toContain(`Port ${port}`);
    expect(runtime.crashes(id)[0]).toMatchObject({ reason: 'port_in_use' });
  } finally {
    await act(id, 'stop');
    squatter.close();
  }
});

test('a graceful stop that is ignored ends in SIGKILL after stopTimeoutMs', async () => {
  const id = await installed();
  await act(id, 'start');
  runtime.sendCommand(id, 'ignore-stop', sender); // the fake game stops reading its console
  expect(await act(id, 'stop')).toMatchObject({ status: 'succeeded' });
  expect(runtime.console.recent(id, 20).some((l) => /did not stop within 1500 ms; killed/.test(l.text))).toBe(true);
});

test('killing the game behind the service\'s back is a crash, followed by a restart', async () => {
  const id = await installed();
  await act(id, 'start');
  const pid = pidOf(id)!;
  process.kill(pid, 'SIGKILL');
  await waitFor('crash record', () => runtime.crashes(id).length === 1);
  expect(runtime.crashes(id)[0]).toMatchObject({ reason: 'exited', signal: 'SIGKILL' });
  await waitFor('restarted', () => runtime.state(id) === 'running' && pidOf(id) !== pid);
  await act(id, 'kill');
  expect(runtime.state(id)).toBe('stopped');
});

test('start while installing waits for the install; start while deleting is refused; remove frees everything and the row', async () => {
  const id = insertServer(host.db, { software: 'fake-game', gameVersion: '1.0', port: nextPort++ });
  const start = runtime.requestAction(id, 'usr_test', 'start');
  void runtime.install(id);
  expect(await waitAction(runtime, id, start.id)).toMatchObject({ status: 'succeeded' });
  const pid = pidOf(id)!;
  const removing = runtime.remove(id);
  expect(() => runtime.requestAction(id, 'usr_test', 'start')).toThrow(AppError);
  expect(() => runtime.requestAction(id, 'usr_test', 'start')).toThrow(expect.objectContaining({ code: 'invalid_state' }));
  await removing;
  expect(isPidAlive(pid)).toBe(false);
  expect(host.db.prepare('SELECT COUNT(*) AS n FROM servers WHERE id = ?').get(id)).toEqual({ n: 0 });
  expect(fs.existsSync(path.join(host.dataDir, 'servers', id))).toBe(false);
  expect(host.db.prepare('SELECT COUNT(*) AS n FROM runtime_processes WHERE server_id = ?').get(id)).toEqual({ n: 0 });
});

test('close stops games without touching desired state; a fresh runtime brings them back', async () => {
  const running = await installed();
  const stopped = await installed();
  await act(running, 'start');
  const oldPid = pidOf(running)!;
  await runtime.close();
  expect(isPidAlive(oldPid)).toBe(false);
  expect(host.db.prepare('SELECT state, desired_state FROM servers WHERE id = ?').get(running)).toEqual({ state: 'stopped', desired_state: 'running' });
  runtime = host.newRuntime();
  await runtime.start();
  await waitState(runtime, running, 'running');
  expect(runtime.state(stopped)).toBe('stopped');
  expect(runtime.live().filter((l) => l.serverId === running)).toHaveLength(1);
  await act(running, 'stop');
});

function pidOf(serverId: string): number | undefined {
  const row = host.db.prepare('SELECT pid FROM runtime_processes WHERE server_id = ?').get(serverId) as { pid: number } | undefined;
  return row?.pid;
}
