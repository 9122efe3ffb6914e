// A real Luanti client joins a server by its DNS name and port (issue 43; docs/architecture.md "DNS names";
// openapi/v1.yaml ServerDns: Luanti players type the name and the port). Luanti is UDP, so the service publishes
// an A record at `<name>.<zone>` and no SRV record; the client (Debian's minetest under Xvfb,
// test/helpers/luanti-client.ts) is given `blocks.play.test` and the port, and resolves the name itself with the
// system's resolver (glibc getaddrinfo).
//
// How the client's resolver reaches the test's DNS server, contained to that one client: it runs in a mount
// namespace of its own in which /etc/resolv.conf is a file of the test's, naming 127.0.0.153 (port 53: the system
// resolver takes no other port); there a small UDP relay in this test hands each query to Knot (its own port on
// 127.0.0.1) and the answer back, noting the names asked. Nothing else on the machine sees the change.
//
// What this proves: the records the service published are what a real player's client resolves, through the
// ordinary system resolver (the relay only carries bytes; the answers are Knot's), and the address they give
// plus the port the dashboard shows reach the game: the game itself reports the player. What it does not prove:
// that a public zone is delegated to the DNS server (the operator's, README "DNS names"), or how long recursive
// resolvers on the way keep the old record (DNS_TTL_S bounds it).
// Ports 29030-29034.
import dgram from 'node:dgram';
import fs from 'node:fs';
import path from 'node:path';
import { createTestApp, tempDir, type TestApp } from '../helpers/app';
import { startKnot, type Knot } from '../helpers/knot';
import { startLuantiClient, type LuantiClient } from '../helpers/luanti-client';
import { until } from '../helpers/wait';

jest.setTimeout(300_000);

const RELAY_HOST = '127.0.0.153';
let knot: Knot;
let t: TestApp | undefined;
let client: LuantiClient | undefined;
let relay: { asked: string[]; close(): Promise<void> } | undefined;
const dir = tempDir('dns-luanti');

beforeAll(async () => {
  knot = await startKnot();
});
afterAll(async () => {
  await client?.stop();
  await relay?.close();
  await t?.finish();
  await knot?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The question's name of a DNS message (RFC 1035 §4.1.2: labels from offset 12, no compression in a question). */
function questionName(msg: Buffer): string {
  const labels: string[] = [];
  for (let at = 12; at < msg.length && msg[at] !== 0; at += msg[at] + 1) labels.push(msg.subarray(at + 1, at + 1 + msg[at]).toString('ascii'));
  return labels.join('.').toLowerCase();
}

/** A UDP relay on RELAY_HOST:53 to Knot: each query is sent on to it from a socket of its own, its answer sent back. */
async function startRelay(): Promise<NonNullable<typeof relay>> {
  const asked: string[] = [];
  const socket = dgram.createSocket('udp4');
  socket.on('message', (query, from) => {
    asked.push(questionName(query));
    const upstream = dgram.createSocket('udp4');
    const timer = setTimeout(() => upstream.close(), 3_000);
    upstream.once('message', (answer) => {
      clearTimeout(timer);
      socket.send(answer, from.port, from.address);
      upstream.close();
    });
    upstream.send(query, knot.port, '127.0.0.1');
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(53, RELAY_HOST, () => resolve());
  });
  return { asked, close: () => new Promise<void>((resolve) => socket.close(() => resolve())) };
}

test('a Luanti client given the name and the port resolves the A record and joins', async () => {
  t = await createTestApp({
    boot: true,
    env: { GAME_PORT_RANGE: '29030-29034', DNS_ZONE: knot.zone, DNS_SERVER: `127.0.0.1:${knot.port}`, DNS_TSIG_KEY: knot.key, DNS_TTL_S: '30' },
    dns: { sweepMs: 200 },
    runtime: { stopTimeoutMs: 15_000, reconcileMs: 500 },
  });
  const auth = { Authorization: `Bearer ${t.token('luanti-dns@example.com')}` };
  const get = async (p: string) => (await t!.http.get(p).set(auth)).body;
  const created = await t.http.post('/v1/servers').set(auth).send({ name: 'Blocks', plan: 'micro', version: 'luanti-5.6.1', dns_name: 'blocks' });
  expect(created.status).toBe(201);
  const { id, address } = created.body as { id: string; address: { host: string; port: number; transport: string } };
  expect(address.transport).toBe('udp');
  await until('installed', async () => (await get(`/v1/servers/${id}`)).state === 'stopped', 120_000);
  expect((await t.http.post(`/v1/servers/${id}/actions`).set(auth).send({ type: 'start' })).status).toBe(202);
  await until('running', async () => (await get(`/v1/servers/${id}`)).state === 'running', 120_000);
  await until('published', async () => (await get(`/v1/servers/${id}`)).dns?.status === 'published');

  // What the DNS server answers: the address the game listens on, and no SRV record (no port to carry for UDP).
  expect(knot.dig('blocks.play.test', 'A')).toEqual([address.host]);
  expect(knot.dig('_minecraft._tcp.blocks.play.test', 'SRV')).toEqual([]);

  relay = await startRelay();
  const resolvConf = path.join(dir, 'resolv.conf');
  fs.writeFileSync(resolvConf, `nameserver ${RELAY_HOST}\noptions timeout:2 attempts:2\n`);
  client = startLuantiClient(address.port, 'byname', { address: 'blocks.play.test', resolvConf });
  await until('byname to join', async () => (await get(`/v1/servers/${id}/players`)).players?.some((p: { name: string }) => p.name === 'byname') || undefined, 120_000);
  // The client's own resolver asked for the name: the join went through DNS, not a fixed address.
  expect(relay.asked).toContain('blocks.play.test');
});
