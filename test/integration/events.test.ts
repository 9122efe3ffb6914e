import http from 'node:http';
import { createTestApp, manualClock, type TestApp } from '../helpers/app';
import { until } from '../helpers/wait';

/**
 * Events (docs/architecture.md "Events and webhooks"): each change a customer cares about is recorded in the same
 * transaction as the change, read as cursor pages filtered by type and server, and followed live over SSE with
 * Last-Event-ID resume; one user never sees another's.
 */

let t: TestApp;
const auth = (token: string) => ({ Authorization: `Bearer ${token}` });
afterEach(async () => {
  await t.finish();
});

interface Ev {
  id: string;
  type: string;
  server_id: string | null;
  data: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

async function all(token: string, query = ''): Promise<Ev[]> {
  const out: Ev[] = [];
  let cursor: string | null = null;
  do {
    const q: string = `limit=2${query}${cursor ? `&starting_after=${cursor}` : ''}`;
    const res: { status: number; body: { data: Ev[]; next_cursor: string | null } } = await t.http.get(`/v1/events?${q}`).set(auth(token));
    expect(res.status).toBe(200);
    out.push(...res.body.data);
    cursor = res.body.next_cursor;
  } while (cursor);
  return out;
}

async function createServer(token: string, name = 'evented'): Promise<string> {
  const res = await t.http.post('/v1/servers').set(auth(token)).send({ name, plan: 'micro', version: 'flying-squid-1.20' });
  expect(res.status).toBe(201);
  await until('the install', async () => (await t.http.get(`/v1/servers/${res.body.id}`).set(auth(token))).body.state === 'stopped', 15_000);
  return res.body.id;
}

test('a server, an action, a crash and tokens each leave their event, paged and filtered by type and server', async () => {
  t = await createTestApp({ env: { GAME_PORT_RANGE: '29100-29109' } });
  const token = t.token('owner@example.com');
  const server = await createServer(token);
  expect((await t.http.patch(`/v1/servers/${server}`).set(auth(token)).send({ name: 'renamed' })).status).toBe(200);
  const act = await t.http.post(`/v1/servers/${server}/actions`).set(auth(token)).send({ type: 'stop' });
  await until('the stop', async () => (await t.http.get(act.headers.location).set(auth(token))).body.status === 'succeeded', 15_000);
  t.store.crashes.record(server, { reason: 'exited', exit_code: 1, signal: null, last_lines: ['boom'] });
  const made = await t.http.post('/v1/tokens').set(auth(token)).send({ name: 'bot', scopes: ['servers:read'] });
  expect((await t.http.delete(`/v1/tokens/${made.body.id}`).set(auth(token))).status).toBe(204);

  const events = await all(token);
  expect(events.map((e) => e.type)).toEqual([
    'server.created', 'server.state_changed', 'server.updated', 'action.succeeded', 'server.crashed', 'token.created', 'token.revoked',
  ]);
  expect(events[0].data.server.name).toBe('evented');
  expect(events[1].data).toEqual({ from: 'installing', to: 'stopped' });
  expect(events[2].data.server.name).toBe('renamed');
  expect(events[3].data.action.id).toBe(act.body.id);
  expect(events[4].data.crash.reason).toBe('exited');
  expect(events[5]).toMatchObject({ server_id: null, data: { token: { id: made.body.id, name: 'bot' } } });
  expect(JSON.stringify(events)).not.toContain(made.body.token); // never a secret
  expect((await all(token, '&type=server.state_changed')).map((e) => e.id)).toEqual([events[1].id]);
  expect((await all(token, `&server_id=${server}`)).length).toBe(5);
  // order=desc: newest first, two at a time, each page's cursor continuing with older events (a timeline).
  const newest: string[] = [];
  let cursor = '';
  for (;;) {
    const res = await t.http.get(`/v1/events?order=desc&limit=2&server_id=${server}${cursor}`).set(auth(token));
    newest.push(...res.body.data.map((e: { id: string }) => e.id));
    if (!res.body.has_more) break;
    cursor = `&starting_after=${res.body.next_cursor}`;
  }
  expect(newest).toEqual(events.slice(0, 5).map((e) => e.id).reverse());

  // Deleting: the state change to `deleting` at once, server.deleted when the row is gone.
  expect((await t.http.delete(`/v1/servers/${server}`).set(auth(token))).status).toBe(202);
  await until('the removal', async () => (await t.http.get(`/v1/servers/${server}`).set(auth(token))).status === 404, 15_000);
  const tail = (await all(token, `&server_id=${server}`)).slice(5);
  expect(tail.map((e) => [e.type, e.data])).toEqual([
    ['server.state_changed', { from: 'stopped', to: 'deleting' }],
    ['server.deleted', { name: 'renamed' }],
  ]);
}, 60_000);

test('a refused change records no event (same transaction); an expired cursor continues after its time', async () => {
  t = await createTestApp({ env: { GAME_PORT_RANGE: '29110-29119', QUOTA_SERVERS: '1' } });
  const token = t.token('owner@example.com');
  await createServer(token);
  const before = await all(token);
  const refused = await t.http.post('/v1/servers').set(auth(token)).send({ name: 'two', plan: 'micro', version: 'flying-squid-1.20' });
  expect(refused.status).toBe(403);
  expect(await all(token)).toEqual(before);
  const gone = before[0].id.replace(/^evt_(.{9}).*$/, 'evt_$1') + '0'; // same time, sorts before the real one
  const after = await t.http.get(`/v1/events?starting_after=${gone}`).set(auth(token));
  expect(after.status).toBe(200);
  expect(after.body.data.map((e: Ev) => e.id)).toEqual(before.slice(0, 20).map((e) => e.id));
}, 90_000);

test('tenant isolation: a user sees none of another user\'s events, by list, filter, cursor or stream', async () => {
  t = await createTestApp({ env: { GAME_PORT_RANGE: '29120-29129' } });
  const { base, close } = await t.listen();
  try {
    const alice = t.token('alice@example.com');
    const mallory = t.token('mallory@example.com');
    const stream = await openStream(base, '/v1/events/stream', mallory);
    const server = await createServer(alice);
    const aliceEvents = await all(alice);
    expect(aliceEvents.length).toBeGreaterThan(0);
    expect(await all(mallory)).toEqual([]);
    expect(await all(mallory, `&server_id=${server}`)).toEqual([]);
    const cursor = await t.http.get(`/v1/events?starting_after=${aliceEvents[0].id}`).set(auth(mallory));
    expect([cursor.status, cursor.body.data]).toEqual([200, []]);
    // Alice's id as Last-Event-ID replays nothing to mallory; her own event does reach her stream.
    const resumed = await openStream(base, '/v1/events/stream', mallory, aliceEvents[0].id);
    await createServer(mallory, 'mallory-own');
    await until('mallory\'s own event', () => stream.body.includes('mallory-own') && resumed.body.includes('mallory-own'), 10_000);
    for (const s of [stream, resumed]) {
      expect(s.body).not.toContain(server);
      expect(s.body).not.toContain('evented');
      s.close();
    }
  } finally {
    await close();
  }
}, 90_000);

test('the stream follows live and resumes after Last-Event-ID with the events it missed, in order', async () => {
  t = await createTestApp({ env: { GAME_PORT_RANGE: '29130-29139' } });
  const { base, close } = await t.listen();
  try {
    const token = t.token('owner@example.com');
    const live = await openStream(base, '/v1/events/stream?type=server.created', token);
    await createServer(token, 'first');
    await createServer(token, 'second');
    await until('two live events', () => (live.body.match(/event: server.created/g) ?? []).length === 2, 10_000);
    live.close();
    const events = await all(token);
    const resumed = await openStream(base, '/v1/events/stream', token, events[0].id);
    await until('the replay', () => resumed.body.includes(`id: ${events[events.length - 1].id}`), 10_000);
    const ids = [...resumed.body.matchAll(/^id: (\S+)$/gm)].map((m) => m[1]);
    expect(ids).toEqual(events.slice(1).map((e) => e.id));
    resumed.close();
  } finally {
    await close();
  }
}, 90_000);

test('events older than EVENT_RETENTION_DAYS are purged', async () => {
  const clock = manualClock();
  t = await createTestApp({ clock, env: { GAME_PORT_RANGE: '29140-29149', EVENT_RETENTION_DAYS: '2' } });
  const token = t.token('owner@example.com');
  await t.http.post('/v1/tokens').set(auth(token)).send({ name: 'old', scopes: ['servers:read'] });
  clock.advance(86_400_000);
  await t.http.post('/v1/tokens').set(auth(token)).send({ name: 'newer', scopes: ['servers:read'] });
  clock.advance(86_400_000 + 1);
  t.purge();
  expect((await all(token)).map((e) => e.data.token.name)).toEqual(['newer']);

  // The clock steps back a day and a half, so the next event is stamped before 'newer' though written after it.
  // The purge goes by the order events were written (EventsRepo.purge): such an event may be kept longer, never
  // deleted early.
  clock.advance(-1.5 * 86_400_000); // day 0.5
  await t.http.post('/v1/tokens').set(auth(token)).send({ name: 'stepped back', scopes: ['servers:read'] });
  clock.advance(1.5 * 86_400_000); // day 2
  await t.http.post('/v1/tokens').set(auth(token)).send({ name: 'latest', scopes: ['servers:read'] });
  clock.advance(0.75 * 86_400_000); // day 2.75: the cutoff is day 0.75, 'newer' (day 1) is not expired
  t.purge();
  expect((await all(token)).map((e) => e.data.token.name)).toEqual(['newer', 'stepped back', 'latest']);
  clock.advance(0.75 * 86_400_000); // day 3.5: the cutoff is day 1.5
  t.purge();
  expect((await all(token)).map((e) => e.data.token.name)).toEqual(['latest']);
});

function openStream(base: string, path: string, token: string, lastEventId?: string): Promise<{ body: string; close(): void }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...auth(token), ...(lastEventId ? { 'Last-Event-ID': lastEventId } : {}) };
    const req = http.get(`${base}${path}`, { headers }, (res) => {
      expect(res.statusCode).toBe(200);
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.once('data', () => resolve({ get body() { return body; }, close: () => req.destroy() }));
    });
    req.on('error', reject);
  });
}
