// A server's DNS name follows it to another node (issue 43; docs/architecture.md "DNS names", "Moving a server"): two
// real engines (the host's dockerd as node `one`, scripts/docker-node.sh's as node `two`), a real authoritative DNS
// server (Knot, test/helpers/knot.ts) and a real Minecraft client. The nodes have different public hosts, 127.0.0.1
// and 127.0.0.2 (both loopback on Linux: the whole 127.0.0.0/8 is local, and each engine publishes the game's port
// on its node's public host, docker-environment.ts containerConfig), so the move shows in the A record as well as
// in the SRV record's port. The client joins by the name alone before and after `gsh server move`, with Node's
// resolver pointed at Knot (as in test/e2e/dns-names.test.ts). Ports 29080-29099.
import fs from 'node:fs';
import mineflayer from 'mineflayer';
import { createTestApp, tempDir, type TestApp } from '../helpers/app';
import { startKnot, type Knot } from '../helpers/knot';
import { until } from '../helpers/wait';
import { DOCKER_HOST, ensureEngine, gsh, removeContainersOf, engine, secondEngine, type SecondEngine } from './engine';

jest.setTimeout(900_000);
const PORTS = { one: [29080, 29089], two: [29090, 29099] } as const;
const HOSTS = { one: '127.0.0.1', two: '127.0.0.2' } as const;
let lease: { release(): Promise<void> };
let two: SecondEngine;
let knot: Knot;
let app: TestApp | undefined;
const dataDir = tempDir('dns-moves');

let restoreResolver = () => undefined as void;

beforeAll(async () => {
  lease = await ensureEngine();
  two = await secondEngine();
  knot = await startKnot();
}, 1_500_000); // it may wait its turn for the second engine (lockSecondEngine in ./engine.ts)

afterAll(async () => {
  restoreResolver();
  await app?.close().catch(() => undefined);
  await removeContainersOf(dataDir, engine).catch(() => undefined);
  await removeContainersOf(dataDir, two?.engine).catch(() => undefined);
  await knot?.stop();
  await two?.release();
  await lease?.release();
  fs.rmSync(dataDir, { recursive: true, force: true });
}, 180_000);

/** A real client joins by `name` alone (no port: minecraft-protocol follows the SRV record) and leaves again. */
async function joinByName(name: string, username: string): Promise<void> {
  const bot = mineflayer.createBot({ host: name, username, auth: 'offline', version: '1.20', hideErrors: true });
  bot.on('error', () => undefined);
  try {
    await new Promise<void>((resolve, reject) => {
      bot.once('spawn', () => resolve());
      bot.once('kicked', (reason) => reject(new Error(`kicked: ${reason}`)));
      bot.once('end', (reason) => reject(new Error(`ended: ${reason}`)));
    });
  } finally {
    bot.end();
  }
}

test('the A and SRV records follow a move to the other node, and a client joins by name before and after', async () => {
  for (const [name, host, [low, high]] of [['one', DOCKER_HOST, PORTS.one], ['two', two.dockerHost, PORTS.two]] as const) {
    const added = await gsh(dataDir, 'node', 'add', '--name', name, '--docker-host', host, '--public-host', HOSTS[name], '--memory-mb', '2000', '--ports', `${low}-${high}`);
    expect(added).toMatchObject({ code: 0 });
  }
  expect((await gsh(dataDir, 'node', 'drain', 'two')).code).toBe(0); // the server is made on node one
  app = await createTestApp({
    boot: true,
    env: {
      DATA_DIR: dataDir, RUNTIME: 'docker', DOCKER_HOST, NODE_CHECK_INTERVAL_S: '1',
      DNS_ZONE: knot.zone, DNS_SERVER: `127.0.0.1:${knot.port}`, DNS_TSIG_KEY: knot.key, DNS_TTL_S: '30',
    },
    runtime: { backoffMs: 300, stopTimeoutMs: 10_000, reconcileMs: 500 },
  });
  const auth = { Authorization: `Bearer ${app.token('wanderer@example.com')}` };
  const get = async () => (await app!.http.get(`/v1/servers/${id}`).set(auth)).body as { state: string; address: { host: string; port: number }; dns: { status: string } | null };
  const created = await app.http.post('/v1/servers').set(auth).send({ name: 'Wanderer', plan: 'micro', version: 'flying-squid-1.20', dns_name: 'wanderer' });
  expect(created.status).toBe(201);
  const id: string = created.body.id;
  await until('installed', async () => (await get()).state === 'stopped', 600_000);
  expect((await app.http.post(`/v1/servers/${id}/actions`).set(auth).send({ type: 'start' })).status).toBe(202);
  await until('running', async () => (await get()).state === 'running', 180_000);

  // On node one: the name points at its public host, the SRV record at its port.
  const before = await get();
  expect(before.address.host).toBe(HOSTS.one);
  await until('published on node one', async () => (await get()).dns?.status === 'published');
  expect(knot.dig('wanderer.play.test', 'A')).toEqual([HOSTS.one]);
  expect(knot.dig('_minecraft._tcp.wanderer.play.test', 'SRV')).toEqual([`0 5 ${before.address.port} wanderer.play.test.`]);
  restoreResolver = knot.pointNodeResolver();
  await joinByName('wanderer.play.test', 'Before');

  // The move: the service stops it, copies it to node two, gives it an address there and starts it again.
  expect((await gsh(dataDir, 'node', 'drain', 'two', '--undo')).code).toBe(0);
  expect(await gsh(dataDir, 'server', 'move', id, '--to', 'two')).toMatchObject({ code: 0 });
  await until('running on node two', async () => ((await get()).state === 'running' && (await get()).address.host === HOSTS.two) || undefined, 180_000);
  const after = await get();
  expect(after.address.port).toBeGreaterThanOrEqual(PORTS.two[0]);
  expect(after.address.port).toBeLessThanOrEqual(PORTS.two[1]);
  // The records follow: the publisher is nudged by the move's server.updated (src/dns/index.ts), its sweep catches
  // any change it missed.
  await until('published on node two', async () => (await get()).dns?.status === 'published' || undefined, 60_000);
  expect(knot.dig('wanderer.play.test', 'A')).toEqual([HOSTS.two]);
  expect(knot.dig('_minecraft._tcp.wanderer.play.test', 'SRV')).toEqual([`0 5 ${after.address.port} wanderer.play.test.`]);
  await joinByName('wanderer.play.test', 'After');
  // The game saw both: the joins are the server's own events, not only the client's word.
  await until('both joins seen by the game', async () => {
    const events = (await app!.http.get(`/v1/events?server_id=${id}&limit=100`).set(auth)).body.data as { type: string; data: { player?: { name: string } } }[];
    const names = events.filter((e) => e.type === 'player.joined').map((e) => e.data.player?.name);
    return (names.includes('Before') && names.includes('After')) || undefined;
  }, 60_000);

  // Deleted: its records go.
  expect((await app.http.delete(`/v1/servers/${id}`).set(auth)).status).toBe(202);
  await until('the records removed', async () => knot.dig('wanderer.play.test', 'A').length === 0 || undefined, 120_000);
  expect(knot.dig('_minecraft._tcp.wanderer.play.test', 'SRV')).toEqual([]);
  await until('deleted', async () => (await app!.http.get(`/v1/servers/${id}`).set(auth)).status === 404, 180_000);
});
