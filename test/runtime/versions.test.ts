// Every flying-squid version the catalog offers really starts: the launcher reports ready on a real port.
// Through the local environment directly (no database); ports 26400-26403, four at a time.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLocalEnvironment } from '../../src/runtime/host/local-environment';
import { writeFolder } from '../../src/runtime/host/local-storage';
import { silentLogger } from '../../src/log';
import { loadSoftwareCatalog, renderCommand } from '../../src/runtime/software/software-catalog';

const BASE_PORT = 26400;
const PARALLEL = 4;
const def = loadSoftwareCatalog().get('flying-squid');
// No cgroups: this test is about the versions, and runs four games at once without a plan.
const env = createLocalEnvironment({ gameEnv: { PATH: process.env.PATH ?? '' }, cgroupRoot: null, instance: 'versions', log: silentLogger });
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsh-versions-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function startsAndStops(version: string, port: number): Promise<string> {
  const serverDir = path.join(dir, version);
  await writeFolder(serverDir, ['world', 'logs'], { 'settings.json': JSON.stringify(def.settings) });
  const argv = renderCommand(def, {
    node: process.execPath, server_id: `srv_v${port}`, game_version: version, memory_mb: '512', heap_mb: '384',
    port: String(port), host: '127.0.0.1', max_players: '2', dir: serverDir,
  });
  const proc = await env.spawn({ serverId: `srv_v${port}`, argv, cwd: serverDir, address: { host: '127.0.0.1', port }, ipc: true, limits: { memoryMb: 512, cpuPercent: 100 } });
  const ready = new Promise<string>((resolve) => proc.onMessage((m) => (m as { type?: string }).type === 'ready' && resolve('ready')));
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => (timer = setTimeout(() => resolve('not ready within 120 s'), 120_000)));
  const outcome = await Promise.race([ready, late, proc.exited.then((e) => `exited ${JSON.stringify(e)}`)]);
  clearTimeout(timer);
  const exit = await proc.stop(def.stopCommand, 30_000); // generous: a loaded machine saves slowly
  return `${outcome}, stopped ${exit.forced ? 'by SIGKILL' : `with code ${exit.code}`}`;
}

test(`all ${def.gameVersions.length} offered versions start and stop cleanly`, async () => {
  const results: Record<string, string> = {};
  const queue = [...def.gameVersions];
  await Promise.all(Array.from({ length: PARALLEL }, async (_, i) => {
    for (let v = queue.shift(); v; v = queue.shift()) results[v] = await startsAndStops(v, BASE_PORT + i);
  }));
  expect(results).toEqual(Object.fromEntries(def.gameVersions.map((v) => [v, 'ready, stopped with code 0'])));
}, 600_000);
