// Self-contained nodes (issue 26 §2): a server on the second engine (scripts/docker-node.sh), its files a volume
// there, every file operation through that engine. Through the API: settings and player lists reach the game (a
// status ping, a refused and an admitted mineflayer player), the console round-trips and is logged here, disk use
// counts a file put into the volume, a live backup keeps the player connected and holds a block set just before,
// a restore puts the world back; all along, no container on either engine mounts a path of this host. A server
// from before volumes (its folder under DATA_DIR) is read from there and moved into its volume by its next write.
// One service and one game server are shared by the steps of the first test (CI time). Ports 29040-29059.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import mineflayer from 'mineflayer';
import { ping } from 'minecraft-protocol';
import { instanceName } from '../../src/runtime/host/cgroups';
import { volumeName } from '../../src/runtime/host/docker/docker-environment';
import { createTestApp, tempDir, type TestApp } from '../helpers/app';
import { until } from '../helpers/wait';
import { blockIn } from '../helpers/world';
import { containerOnVolume, containersOf, DOCKER_HOST, engine, ensureEngine, gsh, putIntoVolume, REMOVAL_MS, removeContainersOf, secondEngine, volumesOf, watchMounts, type SecondEngine } from './engine';

jest.setTimeout(600_000); // each test's waits together, a deletion's included (REMOVAL_MS)
const MIB = 1024 * 1024;
let lease: { release(): Promise<void> };
let two: SecondEngine;
let dataDir: string;
let t: TestApp;
let mounts: ReturnType<typeof watchMounts> | undefined;
let token: string;
const auth = () => ({ Authorization: `Bearer ${token}` });
const get = (p: string) => t.http.get(p).set(auth());
const post = (p: string, body: object) => t.http.post(p).set(auth()).send(body);

beforeAll(async () => {
  lease = await ensureEngine();
  two = await secondEngine();
  dataDir = tempDir('volumes');
  for (const [name, host, ports] of [['one', DOCKER_HOST, '29040-29049'], ['two', two.dockerHost, '29050-29059']]) {
    expect(await gsh(dataDir, 'node', 'add', '--name', name, '--docker-host', host, '--public-host', '127.0.0.1', '--memory-mb', '2000', '--ports', ports)).toMatchObject({ code: 0 });
  }
  expect((await gsh(dataDir, 'node', 'drain', 'one')).code).toBe(0); // every server of this file goes to node two
  t = await createTestApp({
    boot: true,
    env: { DATA_DIR: dataDir, RUNTIME: 'docker', DOCKER_HOST, NODE_CHECK_INTERVAL_S: '1', METRICS_INTERVAL_S: '1' },
    runtime: { backoffMs: 300, stopTimeoutMs: 10_000, reconcileMs: 500 },
  });
  token = t.token('far@example.com');
}, 1_500_000); // it may wait its turn for the second engine (lockSecondEngine in ./engine.ts)

afterAll(async () => {
  await mounts?.stop();
  await t?.finish();
  await removeContainersOf(dataDir, engine);
  await removeContainersOf(dataDir, two.engine).catch(() => undefined);
  await two?.release();
  await lease?.release();
  fs.rmSync(dataDir, { recursive: true, force: true });
}, 180_000);

const state = async (id: string) => (await get(`/v1/servers/${id}`)).body.state as string;

/** The server's status as a Minecraft client's server list sees it. */
async function status(port: number): Promise<{ motd: string; max: number }> {
  const res = (await ping({ host: '127.0.0.1', port })) as { description: unknown; players: { max: number } };
  const text = (d: unknown): string =>
    typeof d === 'string' ? d : d && typeof d === 'object' ? String((d as { text?: string }).text ?? '') + ((d as { extra?: unknown[] }).extra ?? []).map(text).join('') : '';
  return { motd: text(res.description), max: res.players.max };
}

/** A real client joins: 'joined' once it spawned, else 'refused'. */
function join(port: number, username: string): Promise<{ outcome: 'joined' | 'refused'; bot: mineflayer.Bot }> {
  const bot = mineflayer.createBot({ host: '127.0.0.1', port, username, auth: 'offline', version: '1.20', hideErrors: true });
  bot.on('error', () => undefined);
  return new Promise((resolve) => {
    bot.once('spawn', () => resolve({ outcome: 'joined', bot }));
    bot.once('end', () => resolve({ outcome: 'refused', bot }));
  });
}

async function backUp(id: string): Promise<{ id: string; status: string; consistency: string | null; location: string }> {
  const created = await post(`/v1/servers/${id}/backups`, {});
  expect(created.status).toBe(202);
  const done = await until('the backup', async () => {
    const b = (await get(created.headers.location)).body;
    return b.status !== 'pending' ? b : undefined;
  });
  return { ...done, location: created.headers.location };
}

/** A backup's archive downloaded through the API and unpacked; `read` gets the folder. */
async function inArchive<T>(location: string, read: (dir: string) => Promise<T>): Promise<T> {
  const { base, close } = await t.listen();
  const out = tempDir('archive');
  try {
    const res = await fetch(`${base}${location}/archive`, { headers: auth() });
    fs.writeFileSync(path.join(out, 'a.tar.gz'), Buffer.from(await res.arrayBuffer()));
    execFileSync('tar', ['-xzf', 'a.tar.gz'], { cwd: out });
    return await read(out);
  } finally {
    await close();
    fs.rmSync(out, { recursive: true, force: true });
  }
}

test('on the second node: settings, player lists, console, disk use, a live backup with a player on, restore; no host path mounted', async () => {
  mounts = watchMounts(dataDir, [engine, two.engine]);
  const created = await post('/v1/servers', { name: 'Far', plan: 'micro', version: 'flying-squid-1.20', settings: { motd: 'On node two', max_players: 4 } });
  expect(created.status).toBe(201);
  const { id, address } = created.body as { id: string; address: { port: number } };
  expect(address.port).toBeGreaterThanOrEqual(29050);
  await until('installed', async () => (await state(id)) === 'stopped');
  expect((await t.http.put(`/v1/servers/${id}/players/whitelist/Alex`).set(auth())).status).toBe(200);
  expect((await t.http.patch(`/v1/servers/${id}/players/whitelist`).set(auth()).send({ enabled: true })).status).toBe(200);
  expect((await post(`/v1/servers/${id}/actions`, { type: 'start' })).status).toBe(202);
  await until('running', async () => (await state(id)) === 'running', 180_000);
  expect([(await containersOf(dataDir, engine)).length, (await containersOf(dataDir, two.engine)).length]).toEqual([0, 1]);
  expect((await volumesOf(dataDir, two.engine)).map((v) => v.Name)).toEqual([volumeName(instanceName(dataDir), id)]);

  // Settings and player lists were written into the volume before the start, and the game read them.
  expect(await status(address.port)).toEqual({ motd: 'On node two', max: 4 });
  expect((await join(address.port, 'Mallory')).outcome).toBe('refused');
  const { outcome, bot } = await join(address.port, 'Alex');
  expect(outcome).toBe('joined');
  let connected = true;
  bot.on('end', () => void (connected = false));
  const heard: string[] = [];
  bot.on('messagestr', (m) => void heard.push(m));
  let first: Awaited<ReturnType<typeof backUp>>;
  try {
    // The console both ways, and its log on this host (the control plane's record).
    expect((await post(`/v1/servers/${id}/console`, { command: 'say hello from two' })).status).toBe(202);
    await until('the player hears it', async () => heard.some((m) => m.includes('hello from two')) || undefined);
    const log = path.join(dataDir, 'servers', id, 'logs', 'console.log');
    await until('the console log holds the command', async () => fs.readFileSync(log, 'utf8').includes('say hello from two') || undefined);
    expect(fs.readdirSync(path.join(dataDir, 'servers', id))).toEqual(['logs']); // nothing else of the server here

    // Disk use is measured in the volume, through the engine: 24 MiB more, counted.
    await t.runtime.diskWatcher.measureNow();
    const before = (await get(`/v1/servers/${id}`)).body.disk_used_mb as number;
    expect(before).toBeGreaterThan(0);
    await putIntoVolume(two.engine, dataDir, id, { 'world/filler.bin': Buffer.alloc(24 * MIB) });
    await t.runtime.diskWatcher.measureNow();
    expect((await get(`/v1/servers/${id}`)).body.disk_used_mb).toBeGreaterThanOrEqual(before + 24);

    // A live backup: the player stays, the block set just before is in the archive, which is on this host.
    expect((await post(`/v1/servers/${id}/console`, { command: 'setblock 2 100 2 gold_block' })).status).toBe(202);
    first = await backUp(id);
    expect(first).toMatchObject({ status: 'ready', consistency: 'live', error: null });
    expect(connected).toBe(true);
    expect(await inArchive(first.location, async (dir) => [await blockIn(path.join(dir, 'world'), 2, 100, 2), fs.statSync(path.join(dir, 'world', 'filler.bin')).size])).toEqual(['gold_block', 24 * MIB]);
    expect(fs.existsSync(path.join(dataDir, 'backups', id, `${first.id}.tar.gz`))).toBe(true);
  } finally {
    bot.end();
  }

  // Restore: the world changes, then the backup's comes back (read from a second backup's archive).
  expect((await post(`/v1/servers/${id}/console`, { command: 'setblock 2 100 2 diamond_block' })).status).toBe(202);
  const restore = await post(`/v1/servers/${id}/actions`, { type: 'restore', backup_id: first.id });
  expect(restore.status).toBe(202);
  const restored = await until('the restore', async () => {
    const a = (await get(`/v1/servers/${id}/actions/${restore.body.id}`)).body;
    return a.status === 'succeeded' || a.status === 'failed' ? a : undefined;
  }, 120_000);
  expect(restored).toMatchObject({ status: 'succeeded' });
  expect(await state(id)).toBe('running');
  const second = await backUp(id);
  expect(await inArchive(second.location, (dir) => blockIn(path.join(dir, 'world'), 2, 100, 2))).toBe('gold_block');

  expect((await t.http.delete(`/v1/servers/${id}`).set(auth())).status).toBe(202);
  await until('deleted', async () => (await get(`/v1/servers/${id}`)).status === 404, REMOVAL_MS);
  expect(await volumesOf(dataDir, two.engine)).toEqual([]);
  expect(fs.existsSync(path.join(dataDir, 'servers', id))).toBe(false);
  const seen = await mounts.stop();
  mounts = undefined;
  expect(seen.length).toBeGreaterThan(3); // the game's containers and the helpers were seen
  expect(seen.filter((m) => !m.startsWith('volume '))).toEqual([]);
});

test('a server from before volumes is backed up from its folder, and moved into its volume by its next write', async () => {
  const { id } = (await post('/v1/servers', { name: 'Old', plan: 'micro', version: 'flying-squid-1.20' })).body;
  await until('installed', async () => (await state(id)) === 'stopped');
  await t.runtime.idle();
  // What a previous release left: no volume, the server's files in its folder here.
  await two.engine.json('DELETE', `/volumes/${volumeName(instanceName(dataDir), id)}`);
  const folder = path.join(dataDir, 'servers', id);
  fs.mkdirSync(path.join(folder, 'world'), { recursive: true });
  fs.writeFileSync(path.join(folder, 'world', 'marker.txt'), 'from the folder');
  fs.writeFileSync(path.join(folder, 'settings.json'), '{}\n');

  const old = await backUp(id);
  expect(old).toMatchObject({ status: 'ready', consistency: 'stop' });
  const restore = await post(`/v1/servers/${id}/actions`, { type: 'restore', backup_id: old.id }); // a write: moves it in
  expect(restore.status).toBe(202);
  await until('the restore', async () => (await get(`/v1/servers/${id}/actions/${restore.body.id}`)).body.status === 'succeeded' || undefined);
  expect(fs.readdirSync(folder)).toEqual(['logs']);
  expect((await volumesOf(dataDir, two.engine)).map((v) => v.Name)).toContain(volumeName(instanceName(dataDir), id));
  const fromVolume = await backUp(id);
  expect(await inArchive(fromVolume.location, async (dir) => fs.readFileSync(path.join(dir, 'world', 'marker.txt'), 'utf8'))).toBe('from the folder');
  expect((await t.http.delete(`/v1/servers/${id}`).set(auth())).status).toBe(202);
  await until('deleted', async () => (await get(`/v1/servers/${id}`)).status === 404, REMOVAL_MS);
});

test('a container left mounting a server\'s volume (its engine went away mid-way) does not hold up the server\'s deletion', async () => {
  const { id } = (await post('/v1/servers', { name: 'Held', plan: 'micro', version: 'flying-squid-1.20' })).body;
  await until('installed', async () => (await state(id)) === 'stopped');
  await t.runtime.idle();
  // What a helper whose engine went away during its run leaves: a container, never started, mounting the volume.
  const volume = volumeName(instanceName(dataDir), id);
  const left = await containerOnVolume(two.engine, dataDir, id);
  try {
    expect((await t.http.delete(`/v1/servers/${id}`).set(auth())).status).toBe(202);
    await until('deleted', async () => (await get(`/v1/servers/${id}`)).status === 404, REMOVAL_MS);
    expect((await volumesOf(dataDir, two.engine)).map((v) => v.Name)).not.toContain(volume);
    expect(await two.engine.json('GET', `/containers/${left}/json`).then(() => 'there', (e: { status?: number }) => e.status)).toBe(404);
  } finally {
    await two.engine.json('DELETE', `/containers/${left}?force=1`).catch(() => undefined); // unlabelled: afterAll would not find it
  }
});

test('a helper whose removal is under way as the server is deleted does not hold up the deletion', async () => {
  const { id } = (await post('/v1/servers', { name: 'Busy', plan: 'micro', version: 'flying-squid-1.20' })).body;
  await until('installed', async () => (await state(id)) === 'stopped');
  await t.runtime.idle();
  // What a backup leaves behind it: the helper that served its archive, removed in the background once the archive
  // was read (volume-storage.ts streamOut), its removal still under way when the deletion drops the volume. The
  // engine answers a second removal of it 409 "already in progress"; the deletion waits for the first instead.
  const helper = await containerOnVolume(two.engine, dataDir, id);
  const removing = two.engine.json('DELETE', `/containers/${helper}?force=1`);
  expect((await t.http.delete(`/v1/servers/${id}`).set(auth())).status).toBe(202);
  await removing;
  await until('deleted', async () => (await get(`/v1/servers/${id}`)).status === 404, REMOVAL_MS);
  expect((await volumesOf(dataDir, two.engine)).map((v) => v.Name)).not.toContain(volumeName(instanceName(dataDir), id));
});
