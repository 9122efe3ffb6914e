// The service dies by kill -9 and comes back: no orphan, no duplicate, desired-running servers run again, and a
// recorded pid that now belongs to someone else is left alone. Ports 26300-26309.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import type { Runtime } from '../../src/service';
import { createTestHost, insertServer, isPidAlive, waitFor, waitState, type TestHost } from './helpers';

const BASE_PORT = 26300;
let host: TestHost;
let service: ChildProcess | null = null;
let runtime: Runtime | null = null;
let bystander: ChildProcess | null = null;

beforeAll(() => {
  host = createTestHost('service-restart');
});

afterAll(async () => {
  service?.kill('SIGKILL');
  bystander?.kill('SIGKILL');
  await runtime?.close();
  host.cleanup();
}, 60_000);

/** Every live process whose environment names this server (GSH_SERVER_ID), found by scanning /proc. */
function processesOf(serverId: string): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || !isPidAlive(Number(entry))) continue;
    try {
      const env = fs.readFileSync(path.join('/proc', entry, 'environ'), 'utf8').split('\0');
      if (env.includes(`GSH_SERVER_ID=${serverId}`)) pids.push(Number(entry));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return pids;
}

async function startService(serverIds: string[]): Promise<Record<string, number>> {
  const script = path.join(__dirname, 'fixtures', 'service.cjs');
  service = spawn(process.execPath, [script, host.dbFile, JSON.stringify(host.config), ...serverIds], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = readline.createInterface({ input: service.stdout! });
  const first = await new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    service!.once('exit', (code) => reject(new Error(`service exited with ${code}`)));
  });
  return JSON.parse(first) as Record<string, number>;
}

test('kill -9 of the service: the IPC launcher exits by itself, the next life kills the rest and restarts both', async () => {
  const squid = insertServer(host.db, { software: 'flying-squid', gameVersion: '1.21.4', port: BASE_PORT });
  const fake = insertServer(host.db, { software: 'fake-game', gameVersion: '1.0', port: BASE_PORT + 1 });
  // Both were started by a user in the past: desired running; the booting service installs and starts them.
  host.db.prepare(`UPDATE servers SET desired_state = 'running'`).run();

  const pids = await startService([squid, fake]);
  expect(Object.keys(pids).sort()).toEqual([squid, fake].sort());
  service!.kill('SIGKILL');
  await new Promise((r) => service!.once('exit', r));
  service = null;

  // flying-squid's launcher notices the IPC channel closing and exits; the fake game (no IPC) is orphaned.
  await waitFor('the launcher to exit by itself', () => !isPidAlive(pids[squid]), 20_000);
  expect(isPidAlive(pids[fake])).toBe(true);

  // A recorded pid that now belongs to an unrelated process must survive the next boot.
  bystander = spawn('sleep', ['60'], { stdio: 'ignore' });
  const other = insertServer(host.db, { software: 'fake-game', gameVersion: '1.0', port: BASE_PORT + 2 });
  host.db.prepare(`INSERT INTO runtime_processes (server_id, pid, cmdline, started_at) VALUES (?, ?, ?, ?)`)
    .run(other, bystander.pid, ['sleep', '60'].join('\0'), new Date().toISOString());

  runtime = host.newRuntime();
  await runtime.start();
  expect(isPidAlive(pids[fake])).toBe(false); // the orphan was verified through /proc and killed
  expect(isPidAlive(bystander.pid!)).toBe(true); // its environment does not name the server: not ours

  await waitState(runtime, squid, 'running');
  await waitState(runtime, fake, 'running');
  expect(processesOf(squid)).toHaveLength(1);
  expect(processesOf(fake)).toHaveLength(1);
  expect(runtime.doors.live().map((l) => l.serverId).sort()).toEqual([squid, fake].sort());
  expect(runtime.power.crashes(squid)).toEqual([]); // a service restart is not the game's crash
  expect(host.errors).toEqual([]);
}, 120_000);
