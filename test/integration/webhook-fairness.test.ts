import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTestApp, type TestApp } from '../helpers/app';
import { until } from '../helpers/wait';

/**
 * One tenant's dead receivers never delay another's deliveries (docs/architecture.md "Events and webhooks",
 * BENCHMARKS.md §8): deliveries are scheduled fairly between users and between a user's webhooks, each with a share
 * of its own. Real HTTP receivers on loopback: one that accepts and never answers, one that answers at once.
 * A delivery that waited for someone else's attempt to time out would take at least TIMEOUT_S; the fair ones take
 * a fraction of it (normally 0.1–0.3 s: the feed polls every 250 ms).
 */
const TIMEOUT_S = 6;

interface Receiver {
  url: string;
  got: Array<{ at: number; type: string; id: string }>;
  close(): Promise<void>;
}

/** A receiver on an ephemeral loopback port that answers 204 at once, or never ('hang'). */
async function receiver(mode: 'fast' | 'hang'): Promise<Receiver> {
  const got: Receiver['got'] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const event = JSON.parse(body) as { type: string; id: string };
      got.push({ at: Date.now(), type: event.type, id: event.id });
      if (mode === 'fast') res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    got,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

let t: TestApp;
const closers: Array<() => Promise<void>> = [];
beforeEach(async () => {
  t = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_TIMEOUT_S: String(TIMEOUT_S) } });
  t.dispatcher.start();
});
afterEach(async () => {
  await t.finish();
  for (const c of closers.splice(0)) await c();
});

const auth = (token: string) => ({ Authorization: `Bearer ${token}` });
async function hook(token: string, url: string) {
  const res = await t.http.post('/v1/webhooks').set(auth(token)).send({ url, event_types: ['token.created', 'server.updated', 'server.state_changed'] });
  expect(res.status).toBe(201);
}

/** How long after the request that caused it a token.created event reached `rx`, in ms. */
async function tokenLatency(token: string, rx: Receiver): Promise<number> {
  const sent = Date.now();
  const made = await t.http.post('/v1/tokens').set(auth(token)).send({ name: 'timed', scopes: ['servers:read'] });
  expect(made.status).toBe(201);
  const arrived = await until('the delivery', () => rx.got.find((g) => g.type === 'token.created' && g.at >= sent), 60_000);
  return arrived.at - sent;
}

/** The attack: 10 webhooks to a dead receiver, 10 renamed servers and a token (about 110 deliveries). */
async function attack(token: string, dead: Receiver): Promise<void> {
  for (let i = 0; i < 10; i++) await hook(token, dead.url);
  for (let i = 0; i < 10; i++) {
    const created = await t.http.post('/v1/servers').set(auth(token)).send({ name: `a${i}`, plan: 'micro', version: 'flying-squid-1.20' });
    expect(created.status).toBe(201);
    expect((await t.http.patch(`/v1/servers/${created.body.id}`).set(auth(token)).send({ name: `renamed ${i}` })).status).toBe(200);
  }
  await t.http.post('/v1/tokens').set(auth(token)).send({ name: 'more', scopes: ['servers:read'] }).expect(201);
  await until('the dead receiver holding attempts', () => dead.got.length >= 10, 30_000);
  expect(t.store.outbox.countByStatus().find((r) => r.status === 'pending')?.count).toBeGreaterThanOrEqual(100);
}

test('a user whose 10 webhooks point at a receiver that never answers does not delay another user\'s delivery', async () => {
  const dead = await receiver('hang');
  const fast = await receiver('fast');
  closers.push(dead.close, fast.close);
  const a = t.token('a@example.com');
  const b = t.token('b@example.com');
  await hook(b, fast.url);
  const idle = await tokenLatency(b, fast);
  await attack(a, dead);
  const latencies = [];
  for (let i = 0; i < 3; i++) latencies.push(await tokenLatency(b, fast));
  // Never a wait for one of A's attempts to time out (TIMEOUT_S), measured against B's own idle figure too.
  expect(Math.max(...latencies)).toBeLessThan((TIMEOUT_S * 1000) / 3);
  expect(idle).toBeLessThan((TIMEOUT_S * 1000) / 3);
  await t.runtime.idle();
}, 120_000);

test('one of a user\'s webhooks pointing at a dead receiver does not delay that user\'s other webhook', async () => {
  const dead = await receiver('hang');
  const fast = await receiver('fast');
  closers.push(dead.close, fast.close);
  const b = t.token('b@example.com');
  await hook(b, dead.url);
  const userId = t.store.tokens.authenticate(b)!.userId;
  // 40 servers' events queued for the dead receiver: 40 queues, each of which could hold an attempt.
  for (let i = 0; i < 40; i++) t.store.events.raise('server.state_changed', { from: 'stopped', to: 'starting' }, { userId, serverId: `srv_busy${i}` });
  await until('the dead receiver holding attempts', () => dead.got.length >= 4, 30_000);
  await hook(b, fast.url);
  const latencies = [];
  for (let i = 0; i < 3; i++) latencies.push(await tokenLatency(b, fast));
  expect(Math.max(...latencies)).toBeLessThan((TIMEOUT_S * 1000) / 3);
}, 120_000);
