// A node lost for good (issue 41 §3; docs/architecture.md "When a node is lost"), the service in a process of its
// own (test/helpers/service-main.cjs) on two engines (the second from scripts/docker-node.sh). A running flying-squid
// server on node two, with a file in its world, a backup of it, a file written after the backup, and a member; then
// engine two is stopped and its data removed, the service killed (SIGKILL), and `gsh node lose two`, carried out by
// the service's next life, recovers the server: same id, running on node
// one at an address of its range, the backup's file there and the later one gone (read through the Files API),
// server.recovered naming the backup and its age, server.updated with the new address, the member's token still
// working on it; `node list` shows two lost. Engine two then answers again (empty): the server is left alone on node
// one, nothing of it runs on two. Ports 29440-29459.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { LABEL_SERVER } from '../../src/runtime/host/docker/docker-environment';
import { tempDir } from '../helpers/app';
import { until } from '../helpers/wait';
import { containersOf, DOCKER_HOST, engine, ensureEngine, gsh, putIntoVolume, removeContainersOf, secondEngine, type SecondEngine, serviceProcesses } from './engine';

jest.setTimeout(900_000);
const PORTS = { one: [29440, 29449], two: [29450, 29459] } as const;
let lease: { release(): Promise<void> };
let two: SecondEngine;
const dataDir = tempDir('node-lose');

beforeAll(async () => {
  lease = await ensureEngine();
  two = await secondEngine();
}, 1_500_000); // it may wait its turn for the second engine (lockSecondEngine in ./engine.ts)

afterAll(async () => {
  services.killAll();
  await removeContainersOf(dataDir, engine);
  await removeContainersOf(dataDir, two.engine).catch(() => undefined);
  await two?.release();
  await lease?.release();
  fs.rmSync(dataDir, { recursive: true, force: true });
}, 180_000);

const services = serviceProcesses(dataDir);
const { logTail } = services;
const startService = services.start;

/** The server's recovery as the database holds it (what the service recorded). */
function lastRecovery(serverId: string): { status: string; leftover: string | null; to_node: string | null } | undefined {
  const db = new Database(path.join(dataDir, 'gsh.sqlite'), { readonly: true });
  try {
    return db.prepare('SELECT status, leftover, to_node FROM server_recoveries WHERE server_id = ? ORDER BY id DESC LIMIT 1').get(serverId) as never;
  } finally {
    db.close();
  }
}

test('a lost node: its server recovered on the other from its newest backup, same id, told to its owner, a member still in', async () => {
  try {
    await loseAndRecover();
  } catch (err) {
    (err as Error).message += `\nthe service's last log lines:\n${logTail.join('\n')}`;
    throw err;
  }
});

async function loseAndRecover() {
  for (const [name, host, [low, high]] of [['one', DOCKER_HOST, PORTS.one], ['two', two.dockerHost, PORTS.two]] as const) {
    expect(await gsh(dataDir, 'node', 'add', '--name', name, '--docker-host', host, '--public-host', '127.0.0.1', '--memory-mb', '2000', '--ports', `${low}-${high}`)).toMatchObject({ code: 0 });
  }
  expect((await gsh(dataDir, 'node', 'drain', 'one')).code).toBe(0); // the server is made on node two
  const token = (await gsh(dataDir, 'token', 'create', '--email', 'owner@example.com', '--name', 'test')).out.split('\n').pop()!;
  const memberToken = (await gsh(dataDir, 'token', 'create', '--email', 'friend@example.com', '--name', 'test')).out.split('\n').pop()!;
  let service = await startService();
  const api = async (method: string, p: string, body?: object, as = token) => {
    const res = await fetch(`${service.base}${p}`, { method, headers: { Authorization: `Bearer ${as}`, 'Content-Type': 'application/json' }, body: body && JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, text, body: (() => { try { return JSON.parse(text); } catch { return null; } })() as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
  };
  const server = async () => (await api('GET', `/v1/servers/${id}`)).body as { id: string; state: string; address: { host: string; port: number } };
  const inRange = (port: number, [low, high]: readonly [number, number]) => port >= low && port <= high;

  const created = await api('POST', '/v1/servers', { name: 'Lost', plan: 'micro', version: 'flying-squid-1.20' });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  await until('installed', async () => (await server()).state === 'stopped', 180_000);
  expect(inRange((await server()).address.port, PORTS.two)).toBe(true);
  await putIntoVolume(two.engine, dataDir, id, { 'world/marker.txt': Buffer.from('from before the backup\n') });
  expect((await api('POST', `/v1/servers/${id}/actions`, { type: 'start' })).status).toBe(202);
  await until('running', async () => (await server()).state === 'running', 180_000);
  expect((await api('POST', `/v1/servers/${id}/members`, { email: 'friend@example.com', permissions: ['console'] })).status).toBe(201);

  const asked = await api('POST', `/v1/servers/${id}/backups`, { name: 'before the loss' });
  expect(asked.status).toBe(202);
  const backup = await until('the backup', async () => {
    const b = (await api('GET', `/v1/servers/${id}/backups/${asked.body.id}`)).body;
    return b.status !== 'pending' ? b : undefined;
  }, 120_000);
  expect(backup).toMatchObject({ status: 'ready' });
  const later = await fetch(`${service.base}/v1/servers/${id}/files/content?path=world/later.txt`, {
    method: 'PUT', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/octet-stream' }, body: 'after the backup\n',
  });
  expect(later.status).toBeLessThan(300);

  // Engine two is gone for good: stopped, and its data removed.
  await two.stop();
  fs.rmSync(two.dockerHost.replace(/^unix:\/\//, '').replace(/\/docker\.sock$/, ''), { recursive: true, force: true });
  await until('unreachable', async () => (await server()).state === 'unreachable' || undefined, 60_000);
  expect((await gsh(dataDir, 'node', 'drain', 'one', '--undo')).code).toBe(0);

  // The service is killed (SIGKILL) and the operator loses the node meanwhile: the request waits in the database,
  // and the next service life carries it out (at boot, before its first reconcile pass could start anything).
  service.child.kill('SIGKILL');
  await new Promise((r) => service.child.once('exit', r));
  const losing = gsh(dataDir, 'node', 'lose', 'two');
  await until('the recovery asked for', () => lastRecovery(id)?.status === 'pending' || undefined, 30_000);
  service = await startService();
  const lost = await losing;
  expect(lost.out).toContain(`Recovered ${id} on node one from backup ${backup.id} of ${backup.created_at}.`);
  expect(lost.code).toBe(0);
  expect((await gsh(dataDir, 'node', 'list')).out).toMatch(/^two\tlost since \S+\t/m);

  // Running on node one, same id, at an address of its range; the backup's file there, the later one lost.
  await until('running on node one', async () => (await server()).state === 'running' || undefined, 180_000);
  const recovered = await server();
  expect(recovered.id).toBe(id);
  expect(inRange(recovered.address.port, PORTS.one)).toBe(true);
  expect((await api('GET', `/v1/servers/${id}/files/content?path=world/marker.txt`)).text).toBe('from before the backup\n');
  expect((await api('GET', `/v1/servers/${id}/files/content?path=world/later.txt`)).status).toBe(404);
  const running = (await containersOf(dataDir, engine)).filter((c) => c.Labels[LABEL_SERVER] === id && c.State === 'running');
  expect(running).toHaveLength(1);

  // The owner is told: server.recovered with the backup and its age, server.updated with the new address.
  const events = (await api('GET', `/v1/events?server_id=${id}&limit=100&order=desc`)).body.data as { type: string; data: Record<string, any> }[]; // eslint-disable-line @typescript-eslint/no-explicit-any
  const told = events.find((e) => e.type === 'server.recovered');
  expect(told?.data).toMatchObject({ backup_id: backup.id, backup_created_at: backup.created_at, server: { id, address: { port: recovered.address.port } } });
  expect(told?.data.backup_age_seconds).toBeGreaterThanOrEqual(0);
  expect(told?.data.backup_age_seconds).toBeLessThan(3600);
  expect(events.find((e) => e.type === 'server.updated')?.data.server.address.port).toBe(recovered.address.port);

  // The member's token works on it as before.
  const asMember = await api('GET', `/v1/servers/${id}`, undefined, memberToken);
  expect(asMember.status).toBe(200);
  expect(asMember.body).toMatchObject({ id, state: 'running' });
  expect((await api('GET', `/v1/servers/${id}/console`, undefined, memberToken)).status).toBe(200);

  // Engine two answers again (empty): the server is left alone on node one, and nothing of it runs on two.
  await two.start();
  await until('the lost node swept', async () => lastRecovery(id)?.leftover === null || undefined, 120_000);
  expect(lastRecovery(id)).toMatchObject({ status: 'done', to_node: 'one' });
  expect((await server()).state).toBe('running');
  expect(await containersOf(dataDir, two.engine)).toEqual([]);
  service.child.kill('SIGTERM');
  await new Promise((r) => service.child.once('exit', r));
}
