// Server names in DNS (issue 43; openapi/v1.yaml DnsName, ServerDns; docs/architecture.md "DNS names"): a real
// authoritative server (Knot DNS, test/helpers/knot.ts) takes the service's signed updates, dig reads them, and a
// real Minecraft client (mineflayer) joins a real flying-squid game by its name alone, through the SRV record, with
// Node's resolver pointed at the test's DNS server (Knot.pointNodeResolver) (as a player's is at the public DNS that delegates the zone).
import mineflayer from 'mineflayer';
import { createTestApp, type TestApp } from '../helpers/app';
import { startKnot, type Knot } from '../helpers/knot';
import { until } from '../helpers/wait';

jest.setTimeout(180_000);

let knot: Knot;
let t: TestApp;
let token: string;
const auth = () => ({ Authorization: `Bearer ${token}` });
const get = (path: string) => t.http.get(path).set(auth());
const post = (path: string, body: object) => t.http.post(path).set(auth()).send(body);
const patch = (path: string, body: object) => t.http.patch(path).set(auth()).send(body);

const dnsEnv = () => ({ DNS_ZONE: knot.zone, DNS_SERVER: `127.0.0.1:${knot.port}`, DNS_TSIG_KEY: knot.key, DNS_TTL_S: '30' });

let restoreResolver = () => undefined as void;

beforeAll(async () => {
  knot = await startKnot();
});
afterAll(async () => {
  restoreResolver();
  await knot.stop();
});
afterEach(() => t.finish());

const published = (id: string) => until(`${id}'s records published`, async () => (await get(`/v1/servers/${id}`)).body.dns?.status === 'published');

test('without DNS_ZONE nothing changes: no dns, and a name is refused with 409 dns_not_configured', async () => {
  t = await createTestApp();
  token = t.token();
  const plain = await post('/v1/servers', { name: 'plain', plan: 'micro', version: 'flying-squid-1.20' });
  expect(plain.status).toBe(201);
  expect([plain.body.dns_name, plain.body.dns]).toEqual([null, null]);
  const named = await post('/v1/servers', { name: 'named', plan: 'micro', version: 'flying-squid-1.20', dns_name: 'survival' });
  expect([named.status, named.body.code]).toEqual([409, 'dns_not_configured']);
  expect((await get('/v1/servers')).body).toMatchObject({ data: [expect.anything()], dns_zone: null });
});

test('names are published, refused, renamed, removed and reconciled, as dig reads them', async () => {
  t = await createTestApp({ boot: true, env: dnsEnv(), dns: { sweepMs: 200 } });
  token = t.token();
  const created = await post('/v1/servers', { name: 'Survival', plan: 'micro', version: 'flying-squid-1.20', dns_name: 'Survival' });
  expect(created.status).toBe(201);
  const id: string = created.body.id;
  const { port } = created.body.address;
  expect(created.body.dns_name).toBe('survival');
  expect(created.body.dns).toMatchObject({ name: 'survival.play.test', ttl_seconds: 30 });
  expect((await get('/v1/servers')).body.dns_zone).toBe('play.test'); // ServerList.dns_zone: the dashboard's create form
  await published(id);
  expect(knot.dig('survival.play.test', 'A')).toEqual(['127.0.0.1']);
  expect(knot.dig('_minecraft._tcp.survival.play.test', 'SRV')).toEqual([`0 5 ${port} survival.play.test.`]);

  // Refusals, each changing nothing.
  const refusals: [string, string, number, string][] = [
    ['the same name in other letters', 'SURVIVAL', 409, 'dns_name_taken'],
    ['a name the operator keeps', 'www', 409, 'dns_name_reserved'],
    ['two labels', 'a.b', 400, 'validation_failed'],
    ['a leading hyphen', '-x', 400, 'validation_failed'],
    ['an underscore', 'my_world', 400, 'validation_failed'],
  ];
  for (const [label, dnsName, status, code] of refusals) {
    const r = await post('/v1/servers', { name: 'other', plan: 'micro', version: 'flying-squid-1.20', dns_name: dnsName });
    expect([label, r.status, r.body.code]).toEqual([label, status, code]);
    expect(r.body.errors?.[0]?.pointer).toBe('/body/dns_name');
  }
  expect((await get('/v1/servers')).body.data).toHaveLength(1);

  // An internationalised name is kept as its A-label.
  const idn = await post('/v1/servers', { name: 'Café', plan: 'micro', version: 'flying-squid-1.20', dns_name: 'café' });
  expect([idn.status, idn.body.dns_name, idn.body.dns.name]).toEqual([201, 'xn--caf-dma', 'xn--caf-dma.play.test']);
  await published(idn.body.id);
  expect(knot.dig('xn--caf-dma.play.test', 'A')).toEqual(['127.0.0.1']);

  // A rename moves the records; null removes them; a delete removes them.
  const renamed = await patch(`/v1/servers/${id}`, { dns_name: 'creative' });
  expect([renamed.status, renamed.body.dns.name]).toEqual([200, 'creative.play.test']);
  await published(id);
  expect(knot.dig('_minecraft._tcp.creative.play.test', 'SRV')).toEqual([`0 5 ${port} creative.play.test.`]);
  expect(knot.dig('_minecraft._tcp.survival.play.test', 'SRV')).toEqual([]);
  expect(knot.dig('survival.play.test', 'A')).toEqual([]);
  const cleared = await patch(`/v1/servers/${id}`, { dns_name: null });
  expect([cleared.status, cleared.body.dns_name, cleared.body.dns]).toEqual([200, null, null]);
  await until('creative removed', async () => knot.dig('creative.play.test', 'A').length === 0);
  expect(knot.dig('_minecraft._tcp.creative.play.test', 'SRV')).toEqual([]);
  expect((await t.http.delete(`/v1/servers/${idn.body.id}`).set(auth())).status).toBe(202);
  await until('the deleted server\'s name removed', async () => knot.dig('xn--caf-dma.play.test', 'A').length === 0);
});

test('a DNS server that is down never blocks the API: pending, then published once it answers', async () => {
  t = await createTestApp({ boot: true, env: dnsEnv(), dns: { sweepMs: 200 } });
  token = t.token();
  await knot.pause();
  let id: string;
  try {
    const created = await post('/v1/servers', { name: 'later', plan: 'micro', version: 'flying-squid-1.20', dns_name: 'later' });
    expect(created.status).toBe(201);
    id = created.body.id;
    const pending = await until('the failed update shown', async () => {
      const s = (await get(`/v1/servers/${id}`)).body;
      return s.dns.error ? s.dns : undefined;
    });
    expect(pending).toMatchObject({ status: 'pending', error: expect.stringMatching(/could not be reached|closed the connection|did not answer/) });
  } finally {
    await knot.resume();
  }
  // The backoff after a few failures is seconds long: the sweep tries again within it.
  await until('published after the DNS server came back', async () => (await get(`/v1/servers/${id}`)).body.dns?.status === 'published', 60_000);
  expect(knot.dig('later.play.test', 'A')).toEqual(['127.0.0.1']);
});

test('a key the DNS server refuses stops the start with a sentence, not the first create', async () => {
  const env = { ...dnsEnv(), DNS_TSIG_KEY: `hmac-sha256:gsh-test:${Buffer.alloc(32, 1).toString('base64')}` };
  t = await createTestApp({ env });
  await expect(t.boot()).rejects.toThrow(/DNS_ZONE play\.test at 127\.0\.0\.1:\d+: the DNS server refused the signature \(TSIG BADSIG\)/);
});

test('at start, records the service forgot are put back and those of gone servers removed', async () => {
  t = await createTestApp({ boot: true, env: dnsEnv(), dns: { sweepMs: 200 } });
  token = t.token();
  const a = await post('/v1/servers', { name: 'kept', plan: 'micro', version: 'flying-squid-1.20', dns_name: 'kept' });
  const b = await post('/v1/servers', { name: 'gone', plan: 'micro', version: 'flying-squid-1.20', dns_name: 'gone' });
  await published(a.body.id);
  await published(b.body.id);
  const dataDir = t.dir;
  const config = t.config;
  await t.shutdown();
  // Behind the service's back: one server's records deleted in the zone, the other server's row deleted.
  const { execFileSync } = await import('node:child_process');
  execFileSync('nsupdate', ['-y', knot.key], { input: `server 127.0.0.1 ${knot.port}\nzone ${knot.zone}\nupdate delete kept.${knot.zone}\nsend\n` });
  expect(knot.dig('kept.play.test', 'A')).toEqual([]);
  const Database = (await import('better-sqlite3')).default;
  const raw = new Database(config.dbFile);
  raw.prepare('DELETE FROM servers WHERE id = ?').run(b.body.id);
  raw.close();
  t = await createTestApp({ boot: true, env: { ...dnsEnv(), DATA_DIR: dataDir }, dns: { sweepMs: 200 } });
  token = t.token();
  await until('the forgotten records put back', async () => knot.dig('kept.play.test', 'A').join() === '127.0.0.1');
  await until('the gone server\'s records removed', async () => knot.dig('gone.play.test', 'A').length === 0);
  expect(knot.dig('_minecraft._tcp.gone.play.test', 'SRV')).toEqual([]);
});

test('a real Minecraft client joins by the name alone', async () => {
  t = await createTestApp({ boot: true, env: dnsEnv(), dns: { sweepMs: 200 }, runtime: { reconcileMs: 500 } });
  token = t.token();
  const created = await post('/v1/servers', { name: 'Join me', plan: 'micro', version: 'flying-squid-1.20', dns_name: 'joinme' });
  const id: string = created.body.id;
  await until('installed', async () => (await get(`/v1/servers/${id}`)).body.state === 'stopped');
  expect((await post(`/v1/servers/${id}/actions`, { type: 'start' })).status).toBe(202);
  await until('running', async () => (await get(`/v1/servers/${id}`)).body.state === 'running', 120_000);
  await published(id);
  restoreResolver = knot.pointNodeResolver();
  // No port: the client looks up _minecraft._tcp.joinme.play.test (minecraft-protocol's tcp_dns) for it.
  const bot = mineflayer.createBot({ host: 'joinme.play.test', username: 'ByName', auth: 'offline', version: '1.20', hideErrors: true });
  bot.on('error', () => undefined);
  try {
    await new Promise<void>((resolve, reject) => {
      bot.once('spawn', () => resolve());
      bot.once('kicked', (reason) => reject(new Error(`kicked: ${reason}`)));
      bot.once('end', (reason) => reject(new Error(`ended: ${reason}`)));
    });
    await until('ByName listed', async () => (await get(`/v1/servers/${id}/players`)).body.players?.some((p: { name: string }) => p.name === 'ByName'));
  } finally {
    bot.end();
    restoreResolver();
  }
});
