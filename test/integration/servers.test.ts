import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createTestApp, type TestApp } from '../helpers/app';
import { fixtureSoftwareDir } from '../runtime/helpers';

let t: TestApp;
let alice: string;
let bob: string;

/** A fresh app (game ports 41000-41004: room for exactly five servers) with a token each for alice and bob. */
async function startApp() {
  t = await createTestApp({ env: { GAME_PORT_RANGE: '41000-41004' } });
  alice = t.token('alice@example.com');
  bob = t.token('bob@example.com');
}

const closeApp = () => t.finish();

const auth = (token: string) => ({ Authorization: `Bearer ${token}` });
const create = (token: string, name: string, extra: Record<string, string> = {}) =>
  t.http.post('/v1/servers').set(auth(token)).set(extra).send({ name, plan: 'micro', version: 'flying-squid-1.20' });

/** The five servers that fill the port range. */
const five = ['Survival', 's0', 's1', 's2', 's3'];

/** Creates alice's servers in this order; with `installed`, waits until every one has installed (stopped). */
async function setup(names: string[], { installed = false } = {}) {
  for (const name of names) expect((await create(alice, name)).status).toBe(201);
  if (installed) {
    await waitFor(async () => (await t.http.get('/v1/servers?state=stopped').set(auth(alice))).body.data.length === names.length);
  }
}

describe('servers', () => {
  // Every test here creates, changes or deletes servers: each gets its own app and makes what it needs.
  beforeEach(startApp);
  afterEach(closeApp);

  test('create answers 201 with Location and the full record', async () => {
    const res = await create(alice, 'Survival');
    expect(res.status).toBe(201);
    expect(res.headers.location).toBe(`/v1/servers/${res.body.id}`);
    expect(res.body).toMatchObject({
      id: expect.stringMatching(/^srv_/),
      name: 'Survival',
      plan: 'micro',
      version: 'flying-squid-1.20',
      software: 'flying-squid',
      game_version: '1.20',
      state: 'installing',
      desired_state: 'stopped',
      address: { host: '127.0.0.1', port: expect.any(Number) },
    });
    expect(res.body.address.port).toBeGreaterThanOrEqual(41000);
    expect(res.body.address.port).toBeLessThanOrEqual(41004);
    const got = await t.http.get(res.headers.location).set(auth(alice));
    expect(got.body).toEqual(res.body);
  });

  test('each server gets its own port until the range is full, and running out is a clear 503', async () => {
    const ports = [];
    for (const name of five) ports.push((await create(alice, name)).body.address.port);
    expect([...ports].sort((a, b) => a - b)).toEqual([41000, 41001, 41002, 41003, 41004]);
    const full = await create(alice, 'one too many');
    expect(full.status).toBe(503);
    expect(full.body.code).toBe('capacity_exhausted');
  });

  test('list pages through every server exactly once, oldest first', async () => {
    await setup(five);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = cursor ? `?limit=2&starting_after=${cursor}` : '?limit=2';
      const res = await t.http.get(`/v1/servers${q}`).set(auth(alice));
      expect(res.status).toBe(200);
      expect(res.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.data.map((s: { name: string }) => s.name));
      cursor = res.body.next_cursor;
      expect(res.body.has_more).toBe(cursor !== null);
      pages++;
    } while (cursor);
    expect(seen).toEqual(['Survival', 's0', 's1', 's2', 's3']);
    expect(pages).toBe(3);
  });

  test('servers install (installing → stopped) and the list filters by state', async () => {
    await setup(five);
    await waitFor(async () => (await t.http.get('/v1/servers?state=stopped').set(auth(alice))).body.data.length === 5);
    expect((await t.http.get('/v1/servers?state=installing').set(auth(alice))).body.data).toEqual([]);
    const running = await t.http.get('/v1/servers?state=running').set(auth(alice));
    expect(running.body).toEqual({ data: [], has_more: false, next_cursor: null, dns_zone: null });
  });

  // A plan change while running is refused with 409: test/e2e/game-server.test.ts runs a real game for that.
  test('rename and change the plan of a stopped server; an unknown plan is 422', async () => {
    await setup(['Survival'], { installed: true });
    const { body: server } = await t.http.get('/v1/servers?limit=1').set(auth(alice)).then((r) => ({ body: r.body.data[0] }));
    const renamed = await t.http.patch(`/v1/servers/${server.id}`).set(auth(alice)).send({ name: 'Creative' });
    expect(renamed.status).toBe(200);
    expect(renamed.body.name).toBe('Creative');
    expect(Date.parse(renamed.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(server.updated_at));
    const plan = await t.http.patch(`/v1/servers/${server.id}`).set(auth(alice)).send({ plan: 'large' });
    expect(plan.status).toBe(200);
    expect(plan.body.plan).toBe('large');
    const unknown = await t.http.patch(`/v1/servers/${server.id}`).set(auth(alice)).send({ plan: 'nope' });
    expect(unknown.status).toBe(422);
    expect((await t.http.get(`/v1/servers/${server.id}`).set(auth(alice))).body.plan).toBe('large');
  });

  // A removal runs in the background and usually ends within milliseconds, so the test holds the server in
  // `deleting` the way a service that died mid-removal leaves it: this app never boots, so nothing resumes it.
  test.each([
    ['a rename', { name: 'Creative' }],
    ['a plan change', { plan: 'large' }],
    ['both', { name: 'Creative', plan: 'large' }],
  ])('%s of a server being deleted is 409 invalid_state and changes nothing', async (_name, patch) => {
    await setup(['Survival'], { installed: true });
    const id: string = (await t.http.get('/v1/servers?limit=1').set(auth(alice))).body.data[0].id;
    t.db.prepare("UPDATE servers SET state = 'deleting', desired_state = 'stopped' WHERE id = ?").run(id);
    const before = (await t.http.get(`/v1/servers/${id}`).set(auth(alice))).body;
    const res = await t.http.patch(`/v1/servers/${id}`).set(auth(alice)).send(patch);
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('invalid_state');
    expect(res.body.state).toBe('deleting'); // the state in the way, as a member (docs/conventions.md "Errors")
    expect((await t.http.get(`/v1/servers/${id}`).set(auth(alice))).body).toEqual(before);
  });

  // A start that holds the server (a game that never says it is ready, until its start timeout) and a second action
  // meanwhile: the server's door holds the start (src/runtime/server/door.ts), and the answer names it.
  test('an action while another holds the server is 409 action_conflict naming that action and the state', async () => {
    await t.finish();
    t = await createTestApp({ env: { GAME_PORT_RANGE: '41000-41004' }, software: fixtureSoftwareDir });
    alice = t.token('alice@example.com');
    const id: string = (await t.http.post('/v1/servers').set(auth(alice)).send({ name: 'slow', plan: 'micro', version: 'fake-game-mute-1.0' })).body.id;
    await t.runtime.idle(); // installed
    const start = await t.http.post(`/v1/servers/${id}/actions`).set(auth(alice)).send({ type: 'start' });
    expect(start.status).toBe(202);
    const res = await t.http.post(`/v1/servers/${id}/actions`).set(auth(alice)).send({ type: 'stop' });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'action_conflict', action_id: start.body.id, state: expect.stringMatching(/^(stopped|starting)$/) });
    expect((await t.http.post(`/v1/servers/${id}/actions`).set(auth(alice)).send({ type: 'kill' })).status).toBe(202); // kill overtakes
    await t.runtime.idle();
    expect((await t.http.get(`/v1/servers/${id}/actions/${start.body.id}`).set(auth(alice))).body.error.code).toBe('action_cancelled');
  });

  // The app never boots, so no pass runs on its own: runtime.diskWatcher.measureNow() is the pass the loop would run.
  test('a server shows its folder\'s disk use; over its plan\'s disk_mb, start and restart are 409 disk_quota_exceeded', async () => {
    await setup(['Survival'], { installed: true });
    const id: string = (await t.http.get('/v1/servers?limit=1').set(auth(alice))).body.data[0].id;
    const get = async () => (await t.http.get(`/v1/servers/${id}`).set(auth(alice))).body;
    const before = await get();
    expect(before).toMatchObject({ disk_used_mb: null, disk_measured_at: null });

    const dir = path.join(t.config.dataDir, 'servers', id);
    fs.writeFileSync(path.join(dir, 'world', 'blob'), crypto.randomBytes(3 * 1024 * 1024));
    await t.runtime.diskWatcher.measureNow();
    const measured = await get();
    expect(measured.disk_used_mb).toBeGreaterThan(3); // 3 MiB and the install's files, rounded up
    expect(measured.disk_used_mb).toBeLessThan(8);
    expect(Date.parse(measured.disk_measured_at)).toBeGreaterThanOrEqual(Date.parse(before.created_at));
    expect(measured.updated_at).toBe(before.updated_at); // a measurement is not a change to the server
    expect((await t.http.get('/v1/servers').set(auth(alice))).body.data[0]).toEqual(measured);

    // micro has 2,048 MB: a sparse file counts as its length, so the test needs no real 2 GB.
    fs.truncateSync(path.join(dir, 'world', 'blob'), 2049 * 1024 * 1024);
    t.runtime.diskWatcher.changed(id); // stopped: measured again only once told its files changed (a backup, a restore)
    await t.runtime.diskWatcher.measureNow();
    expect((await get()).disk_used_mb).toBeGreaterThan(2049);
    for (const type of ['start', 'restart']) {
      const res = await t.http.post(`/v1/servers/${id}/actions`).set(auth(alice)).send({ type });
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ code: 'disk_quota_exceeded', instance: `/v1/servers/${id}/actions` });
      expect(res.body.detail).toMatch(/over its plan's 2048 MB/);
    }
    expect((await t.http.get(`/v1/servers/${id}/actions`).set(auth(alice))).body.data).toEqual([]); // refused: nothing recorded
    expect((await get()).desired_state).toBe('stopped');
  });

  test('delete answers 202 deleting, then the server, its files and its port are gone', async () => {
    // A full port range, so the server created after the delete can only get the freed port.
    await setup(five, { installed: true });
    const list = await t.http.get('/v1/servers').set(auth(alice));
    const victim = list.body.data[1];
    const res = await t.http.delete(`/v1/servers/${victim.id}`).set(auth(alice));
    expect(res.status).toBe(202);
    expect(res.body.state).toBe('deleting');
    await waitFor(async () => (await t.http.get(`/v1/servers/${victim.id}`).set(auth(alice))).status === 404);
    expect(fs.existsSync(path.join(t.config.dataDir, 'servers', victim.id))).toBe(false);
    const again = await create(alice, 'reuses the port');
    expect(again.status).toBe(201);
    expect(again.body.address.port).toBe(victim.address.port);
  });
});

describe('port allocation', () => {
  beforeEach(async () => {
    t = await createTestApp({ env: { GAME_PORT_RANGE: '41100-41199' } });
    alice = t.token('alice@example.com');
  });
  afterEach(closeApp);

  // Lowest-first ports would tell each user how many servers the host holds (SECURITY.md). Drawn at random, 20
  // ports out of 100 come out ascending with probability 1/20!, and are the lowest 20 with 1/C(100,20).
  test('ports are drawn at random from the range, not handed out lowest first', async () => {
    const ports: number[] = [];
    for (let i = 0; i < 20; i++) ports.push((await create(alice, `s${i}`)).body.address.port);
    expect(new Set(ports).size).toBe(20);
    for (const port of ports) expect(port >= 41100 && port <= 41199).toBe(true);
    expect(ports).not.toEqual([...ports].sort((a, b) => a - b));
    expect([...ports].sort((a, b) => a - b)).not.toEqual(Array.from({ length: 20 }, (_, i) => 41100 + i));
  });
});

describe('tenancy: another user\'s server answers exactly like a missing one', () => {
  // Read-only: bob's get, patch and delete are all refused (404) and alice's server is checked unchanged, so these
  // share one app, built once with one server of alice's.
  beforeAll(async () => {
    await startApp();
    await setup(['Survival']);
  });
  afterAll(() => t.close());
  afterEach(() => t.expectContract());

  test.each([
    ['get', 'get', undefined],
    ['patch', 'patch', { name: 'mine now' }],
    ['delete', 'delete', undefined],
  ] as const)('%s', async (_name, method, body) => {
    const { body: list } = await t.http.get('/v1/servers?limit=1').set(auth(alice));
    const id = list.data[0].id;
    let req = t.http[method](`/v1/servers/${id}`).set(auth(bob));
    if (body) req = req.send(body);
    const res = await req;
    const missing = await t.http[method]('/v1/servers/srv_doesnotexist').set(auth(bob)).send(body ?? undefined);
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('server_not_found');
    const same = (b: object) => ({ ...b, detail: '', instance: '', request_id: '' }); // request ids differ per answer by design
    expect(same(res.body)).toEqual(same(missing.body));
    expect((await t.http.get(`/v1/servers/${id}`).set(auth(alice))).body.name).not.toBe('mine now');
  });

  test('lists show only your own', async () => {
    const res = await t.http.get('/v1/servers').set(auth(bob));
    expect(res.body.data).toEqual([]);
  });
});

async function waitFor(cond: () => Promise<boolean>, timeoutMs = 10_000) {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}
