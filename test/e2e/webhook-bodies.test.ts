// Webhook deliveries keep to the spec (issue 42 §1; openapi/v1.yaml top-level `webhooks`; docs/architecture.md
// "Events and webhooks"): every event type is caused for real on one service, delivered to a real HTTP receiver on
// loopback, and each delivery's headers and body are checked against the spec's `webhooks` entry for its type
// (test/helpers/contract.ts createWebhookChecker, Ajv as for answers), its signature verified (Standard Webhooks),
// and its body compared with the event as GET /v1/events shows it. Games: the runtime tests' fake game
// (test/runtime/fixtures/software) and, for players and an alert on them, a real flying-squid server with a real
// Minecraft client (mineflayer), as test/e2e/alerts.test.ts. The table below is the one list of event types and how
// each is caused; the spec's `webhooks` must be exactly its types, and every one must have been delivered and
// validated, so a new event type without a cause here fails this test.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import mineflayer from 'mineflayer';
import { Webhook } from 'standardwebhooks';
import { createTestApp, tempDirsOfFile, type TestApp } from '../helpers/app';
import { createWebhookChecker } from '../helpers/contract';
import { until } from '../helpers/wait';
import type { EventType } from '../../src/store/events-repo';
import { recoveredData } from '../../src/store/recoveries-repo';

jest.setTimeout(300_000);

const MIB = 1024 * 1024;

/**
 * The operator's software: the runtime tests' fake game (test/runtime/fixtures/software) as `fake-game-backups`,
 * whose world is backed up with the game stopped (the fixture itself has no `backup`), and `fake-game-crash`,
 * which exits at once.
 */
const fixtures = path.join(__dirname, '..', 'runtime', 'fixtures', 'software');
const softwareDir = tempDirsOfFile('webhook-bodies');
let software: string;
beforeAll(() => {
  software = softwareDir();
  for (const file of ['fake-game.cjs', 'fake-game-crash.json']) fs.copyFileSync(path.join(fixtures, file), path.join(software, file));
  const def = JSON.parse(fs.readFileSync(path.join(fixtures, 'fake-game.json'), 'utf8'));
  const backups = { ...def, id: 'fake-game-backups', backup: { paths: ['world'], consistency: 'stop' } };
  fs.writeFileSync(path.join(software, 'fake-game-backups.json'), JSON.stringify(backups));
});

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A receiver on an ephemeral loopback port that answers every delivery with `status`. */
async function receiver(status: number) {
  const got: Received[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      got.push({ headers: req.headers, body });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    got,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

let t: TestApp;
let token: string;
let rx: Awaited<ReturnType<typeof receiver>>;
let failing: Awaited<ReturnType<typeof receiver>>;
let hook: { id: string; secret: string };
/** The fake game's server most steps act on. */
let fake: string;
/** The flying-squid server of the last steps. */
let squid: string;
const auth = () => ({ Authorization: `Bearer ${token}` });
const get = (p: string) => t.http.get(p).set(auth());
const post = (p: string, body: object = {}) => t.http.post(p).set(auth()).send(body);
const del = (p: string) => t.http.delete(p).set(auth());
const state = async (id: string): Promise<string> => (await get(`/v1/servers/${id}`)).body.state;

async function createServer(name: string, version: string): Promise<string> {
  const res = await post('/v1/servers', { name, plan: 'micro', version });
  expect(res.status).toBe(201);
  await until(`${name} installed`, async () => (await state(res.body.id)) === 'stopped', 60_000);
  return res.body.id;
}

async function start(id: string, want: 'succeeded' | 'failed'): Promise<void> {
  const res = await post(`/v1/servers/${id}/actions`, { type: 'start' });
  expect(res.status).toBe(202);
  await until(`the start ${want}`, async () => (await get(res.headers.location)).body.status === want, 60_000);
}

/** Makes a schedule of `tasks` on the fake game's server and runs it now. */
async function runSchedule(tasks: object[]): Promise<void> {
  const made = await post(`/v1/servers/${fake}/schedules`, { name: 'now', cron: '0 0 1 1 *', tasks });
  expect(made.status).toBe(201);
  expect((await post(`/v1/servers/${fake}/schedules/${made.body.id}/run`)).status).toBe(202);
}

/** A real client joins (the game reports it: player.joined); resolves with the client. */
async function join(port: number, username: string): Promise<mineflayer.Bot> {
  const bot = mineflayer.createBot({ host: '127.0.0.1', port, username, auth: 'offline', version: '1.20', hideErrors: true });
  bot.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    bot.once('spawn', () => resolve());
    bot.once('kicked', (reason) => reject(new Error(`kicked: ${reason}`)));
  });
  return bot;
}

/** Ends the client and waits for its connection to close (test/e2e/players-left.test.ts quit). */
async function quit(bot: mineflayer.Bot): Promise<void> {
  if (bot._client.ended) return;
  const closed = new Promise<void>((resolve) => bot.once('end', () => resolve()));
  bot.end();
  await closed;
}

/**
 * The one list of event types, each with how it is caused: run in order on one service, each step waiting for
 * its types to be delivered before the next. Later steps build on earlier ones (the fake game's server).
 */
const steps: Array<[how: string, types: EventType[], cause: () => Promise<unknown>]> = [
  ['a token made and revoked through the API', ['token.created', 'token.revoked'], async () => {
    const made = await post('/v1/tokens', { name: 'bot', scopes: ['servers:read'] });
    expect(made.status).toBe(201);
    expect((await del(`/v1/tokens/${made.body.id}`)).status).toBe(204);
  }],
  ['a test delivery asked for (testWebhook)', ['webhook.test'], async () => {
    expect((await post(`/v1/webhooks/${hook.id}/test`)).status).toBe(202);
  }],
  ['a second webhook whose receiver answers 500 for longer than the disable delay', ['webhook.disabled'], async () => {
    const other = await post('/v1/webhooks', { url: failing.url, event_types: ['token.created'] });
    expect(other.status).toBe(201);
    expect((await post('/v1/tokens', { name: 'for the failing one', scopes: ['servers:read'] })).status).toBe(201);
    await until('the failing webhook disabled', async () => (await get(`/v1/webhooks/${other.body.id}`)).body.enabled === false, 30_000);
  }],
  ['a fake game server created (and installed)', ['server.created', 'server.state_changed'], async () => {
    fake = await createServer('fake', 'fake-game-backups-1.0');
  }],
  ['the server renamed', ['server.updated'], async () => {
    expect((await t.http.patch(`/v1/servers/${fake}`).set(auth()).send({ name: 'renamed' })).status).toBe(200);
  }],
  [
    "the fake game server recovered after its node was lost: the recovery's event as RecoveriesRepo.restored raises it (this service has no nodes; test/docker/node-lose.test.ts makes it whole on two engines)",
    ['server.recovered'],
    async () => {
      const made = await post(`/v1/servers/${fake}/backups`, { name: 'before the loss' });
      expect(made.status).toBe(202);
      await until('the backup ready', async () => (await get(made.headers.location)).body.status === 'ready', 60_000);
      const backup = (await get(made.headers.location)).body as { id: string; created_at: string };
      const server = t.store.servers.find(fake)!;
      t.store.events.raise('server.recovered', recoveredData(server, { id: backup.id, createdAt: backup.created_at }, Date.now()), { serverId: fake });
    },
  ],
  ['a backup made while stopped, then deleted', ['backup.created', 'backup.ready', 'backup.deleted'], async () => {
    const asked = await post(`/v1/servers/${fake}/backups`, { name: 'kept' });
    expect(asked.status).toBe(202);
    await until('the backup ready', async () => (await get(asked.headers.location)).body.status === 'ready', 60_000);
    expect((await del(asked.headers.location)).status).toBe(204);
  }],
  ["a backup whose archive cannot be written (the server's backup folder is a file)", ['backup.created', 'backup.failed'], async () => {
    const folder = path.join(t.config.dataDir, 'backups', fake);
    fs.rmSync(folder, { recursive: true, force: true });
    fs.writeFileSync(folder, 'not a folder'); // the service runs as root here: a read-only folder would not stop it
    try {
      const asked = await post(`/v1/servers/${fake}/backups`, { name: 'lost' });
      expect(asked.status).toBe(202);
      await until('the backup failed', async () => (await get(asked.headers.location)).body.status === 'failed', 60_000);
    } finally {
      fs.rmSync(folder, { force: true });
    }
  }],
  ["a schedule's command task run while the server is stopped (a command needs it running)", ['schedule.failed'], async () => {
    await runSchedule([{ type: 'command', command: 'hello' }]);
  }],
  ['the server started', ['action.succeeded'], async () => {
    await start(fake, 'succeeded');
  }],
  ["a schedule's command task run on the running game", ['schedule.ran'], async () => {
    await runSchedule([{ type: 'command', command: 'hello' }]);
  }],
  [
    "a member added, their permissions changed, their schedule made, then the member removed: their schedule is disabled (the Schedules tag)",
    ['member.added', 'member.updated', 'schedule.disabled', 'member.removed'],
    async () => {
      const invited = await post(`/v1/servers/${fake}/members`, { email: 'member@example.com', permissions: ['console'] });
      expect(invited.status).toBe(201);
      const changed = await t.http.patch(`/v1/servers/${fake}/members/${invited.body.id}`).set(auth()).send({ permissions: ['console', 'players'] });
      expect(changed.status).toBe(200);
      const member = { Authorization: `Bearer ${t.token('member@example.com')}` };
      const made = await t.http.post(`/v1/servers/${fake}/schedules`).set(member).send({ name: 'theirs', cron: '0 0 1 1 *', tasks: [{ type: 'command', command: 'hello' }] });
      expect(made.status).toBe(201);
      expect((await del(`/v1/servers/${fake}/members/${invited.body.id}`)).status).toBe(204);
    },
  ],
  [
    'disk use over the plan (a sparse file), measured by the disk watcher: the game is stopped as a crash',
    ['quota.disk_warning', 'quota.disk_exceeded', 'server.crashed'],
    async () => {
      const blob = path.join(t.config.dataDir, 'servers', fake, 'world', 'blob');
      fs.mkdirSync(path.dirname(blob), { recursive: true });
      fs.writeFileSync(blob, '');
      fs.truncateSync(blob, 2100 * MIB); // micro: 2,048 MB
      t.runtime.diskWatcher.changed(fake);
      await t.runtime.diskWatcher.measureNow();
      await until('stopped', async () => (await state(fake)) === 'stopped', 60_000);
    },
  ],
  ['a start of a game that exits at once (fake-game-crash)', ['action.failed'], async () => {
    const crashing = await createServer('crashing', 'fake-game-crash-1.0');
    await start(crashing, 'failed');
    await t.runtime.idle();
    expect((await del(`/v1/servers/${crashing}`)).status).toBe(202);
  }],
  ['the fake game server deleted', ['server.deleted'], async () => {
    expect((await del(`/v1/servers/${fake}`)).status).toBe(202);
  }],
  [
    'a flying-squid server with a "players_online above 0" alert rule; a real client (mineflayer) joins and leaves',
    ['player.joined', 'alert.triggered', 'player.left', 'alert.resolved'],
    async () => {
      const id = (squid = await createServer('squid', 'flying-squid-1.20'));
      const rule = await post(`/v1/servers/${id}/alerts`, { kind: 'metric', metric: 'players_online', comparison: 'above', threshold: 0, duration_seconds: 0 });
      expect(rule.status).toBe(201);
      await start(id, 'succeeded');
      const bot = await join((await get(`/v1/servers/${id}`)).body.address.port, 'Hooked');
      try {
        await until('the rule firing', async () => (await get(`/v1/servers/${id}/alerts/${rule.body.id}`)).body.state === 'firing', 60_000);
      } finally {
        await quit(bot);
      }
      await until('the rule resolved', async () => (await get(`/v1/servers/${id}/alerts/${rule.body.id}`)).body.state === 'ok', 60_000);
    },
  ],
  ['a name banned and a setting changed on the running flying-squid server', ['player_list.changed', 'settings.changed'], async () => {
    expect((await t.http.put(`/v1/servers/${squid}/players/bans/Griefer`).set(auth())).status).toBe(200);
    expect((await t.http.patch(`/v1/servers/${squid}/settings`).set(auth()).send({ difficulty: 'hard' })).status).toBe(200);
  }],
];

beforeEach(async () => {
  t = await createTestApp({
    boot: true,
    software,
    env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_TIMEOUT_S: '1', METRICS_INTERVAL_S: '1' },
    runtime: { backoffMs: 300, stopTimeoutMs: 10_000, reconcileMs: 500 },
    webhooks: { retryBaseMs: 50, retryMaxMs: 200, pollMs: 50, disableAfterMs: 1_000 },
  });
  t.dispatcher.start();
  token = t.token('hooked@example.com');
  rx = await receiver(204);
  failing = await receiver(500);
});
afterEach(async () => {
  await rx.close();
  await failing.close();
  await t.finish();
});

test('every webhook delivery, of every event type the spec lists, keeps to its `webhooks` entry and is the event GET /v1/events shows', async () => {
  const { check, entries } = await createWebhookChecker();
  const made = await post('/v1/webhooks', { url: rx.url, event_types: entries });
  expect(made.status).toBe(201);
  hook = made.body;

  for (const [how, types, cause] of steps) {
    const from = rx.got.length;
    await cause();
    await until(`${types.join(', ')} delivered after ${how}`, () => {
      const seen = new Set(rx.got.slice(from).map((r) => JSON.parse(r.body).type));
      return types.every((type) => seen.has(type));
    }, 60_000);
  }
  await t.runtime.idle();

  // Every delivery: the spec's headers and body for its type, signed with its webhook's secret, the webhook-id its
  // event's id (Standard Webhooks), and the body the very event GET /v1/events shows.
  const shown = new Map<string, unknown>();
  for (let cursor: string | null = null, first = true; first || cursor; first = false) {
    const page = await get(`/v1/events?limit=100${cursor ? `&starting_after=${cursor}` : ''}`);
    expect(page.status).toBe(200);
    for (const e of page.body.data) shown.set(e.id, e);
    cursor = page.body.next_cursor;
  }
  const validated = new Set<string>();
  const all = [...rx.got.map((r) => ({ r, secret: hook.secret })), ...failing.got.map((r) => ({ r, secret: '' }))];
  expect(failing.got.length).toBeGreaterThan(0);
  for (const { r, secret } of all) {
    const body = JSON.parse(r.body) as { id: string; type: string };
    expect([body.type, check(r)]).toEqual([body.type, []]);
    expect(r.headers['webhook-id']).toBe(body.id);
    if (secret) expect(() => new Webhook(secret.slice('whsec_'.length)).verify(r.body, r.headers as Record<string, string>)).not.toThrow();
    expect(body).toEqual(shown.get(body.id));
    validated.add(body.type);
  }
  // Every entry of the spec's webhooks was delivered and validated (a new one needs a cause in the table above),
  // and the table names no type the spec does not list.
  expect(entries.filter((type) => !validated.has(type))).toEqual([]);
  expect(steps.flatMap(([, types]) => types).filter((type) => !entries.includes(type))).toEqual([]);

  // The check can fail: a body without its actor (what the outbox sent before issue 42 §1) is refused.
  const { actor, ...withoutActor } = JSON.parse(rx.got[0].body);
  expect(actor).toBeDefined();
  expect(check({ headers: rx.got[0].headers, body: JSON.stringify(withoutActor) }).join()).toMatch(/required property 'actor'/);
  // Closed as answers are (createWebhookChecker): a member the spec does not document is refused too.
  expect(check({ headers: rx.got[0].headers, body: JSON.stringify({ ...JSON.parse(rx.got[0].body), extra: 1 }) }).join()).toMatch(/additional properties/);
  expect(check({ headers: { ...rx.got[0].headers, 'webhook-signature': 'v1,short' }, body: rx.got[0].body }).join()).toMatch(/webhook-signature/);
});
