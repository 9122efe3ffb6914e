import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { createTestApp, type TestApp } from '../helpers/app';
import { until } from '../helpers/wait';
import type { Lookup } from '../../src/webhooks/address';

/**
 * Webhooks (docs/architecture.md "Events and webhooks"; Standard Webhooks): signed deliveries to a real HTTP
 * receiver on loopback, retried with backoff after 500s and timeouts, in order per server, a webhook disabled after
 * failing for too long, and SSRF refusals at creation and at each delivery.
 */

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A receiver on an ephemeral loopback port; `respond` decides each answer (a status, or 'hang' for none). */
async function receiver(respond: (r: Received, n: number) => number | 'hang' = () => 204) {
  const got: Received[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const r = { headers: req.headers, body };
      got.push(r);
      const answer = respond(r, got.length);
      if (answer !== 'hang') res.writeHead(answer).end('ok');
    });
  });
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    got,
    connections: () => connections,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

let t: TestApp;
const closers: Array<() => Promise<void>> = [];
const auth = (token: string) => ({ Authorization: `Bearer ${token}` });
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
  await t.finish();
});

/** A service whose dispatcher runs, with short retries; private addresses allowed unless said otherwise. */
async function start(opts: { allowPrivate?: boolean; lookup?: Lookup; disableAfterMs?: number } = {}) {
  t = await createTestApp({
    env: { WEBHOOK_ALLOW_PRIVATE: opts.allowPrivate === false ? 'false' : 'true', WEBHOOK_TIMEOUT_S: '1' },
    webhooks: { retryBaseMs: 50, retryMaxMs: 200, pollMs: 50, ...(opts.lookup ? { lookup: opts.lookup } : {}), ...(opts.disableAfterMs ? { disableAfterMs: opts.disableAfterMs } : {}) },
  });
  t.dispatcher.start();
  return t.token('owner@example.com');
}

async function hook(token: string, url: string, types = ['token.created', 'server.state_changed']) {
  const res = await t.http.post('/v1/webhooks').set(auth(token)).send({ url, event_types: types });
  expect(res.status).toBe(201);
  return res.body as { id: string; secret: string };
}

const userOf = (token: string) => t.store.tokens.authenticate(token)!.userId;

test('deliveries are signed per Standard Webhooks (verified by the standardwebhooks package); a tampered body fails', async () => {
  const token = await start();
  const rx = await receiver();
  closers.push(rx.close);
  const created = await hook(token, rx.url);
  expect(created.secret).toMatch(/^whsec_/);
  expect(JSON.stringify((await t.http.get(`/v1/webhooks/${created.id}`).set(auth(token))).body)).not.toContain(created.secret);
  const made = await t.http.post('/v1/tokens').set(auth(token)).send({ name: 'bot', scopes: ['servers:read'] });
  await until('the delivery', () => rx.got.length === 1, 10_000);
  const [r] = rx.got;
  const verified = new Webhook(created.secret.slice('whsec_'.length)).verify(r.body, r.headers as Record<string, string>) as { type: string; data: { token: { id: string } } };
  expect(verified.type).toBe('token.created');
  expect(verified.data.token.id).toBe(made.body.id);
  expect(() => new Webhook(created.secret.slice('whsec_'.length)).verify(r.body.replace('bot', 'bad'), r.headers as Record<string, string>)).toThrow();
  // After a rotation, only the new secret verifies.
  const rotated = await t.http.post(`/v1/webhooks/${created.id}/secret`).set(auth(token));
  expect(rotated.status).toBe(200);
  expect((await t.http.post(`/v1/webhooks/${created.id}/test`).set(auth(token))).status).toBe(202);
  await until('the test delivery', () => rx.got.length === 2, 10_000);
  const second = rx.got[1];
  expect(JSON.parse(second.body).type).toBe('webhook.test');
  expect(() => new Webhook(created.secret.slice(6)).verify(second.body, second.headers as Record<string, string>)).toThrow();
  expect(() => new Webhook(rotated.body.secret.slice(6)).verify(second.body, second.headers as Record<string, string>)).not.toThrow();
  const deliveries = await t.http.get(`/v1/webhooks/${created.id}/deliveries`).set(auth(token));
  expect(deliveries.body.data.map((d: { event_type: string; status: string }) => [d.event_type, d.status])).toEqual([
    ['webhook.test', 'succeeded'], ['token.created', 'succeeded'],
  ]);
}, 90_000);

test('a 500 and a timeout are retried until the receiver answers 2xx; the deliveries list shows the attempts', async () => {
  const token = await start();
  const rx = await receiver((_r, n) => (n === 1 ? 500 : n === 2 ? 'hang' : 204));
  closers.push(rx.close);
  const created = await hook(token, rx.url);
  await t.http.post('/v1/tokens').set(auth(token)).send({ name: 'bot', scopes: ['servers:read'] });
  await until('three attempts', () => rx.got.length === 3, 15_000);
  expect(new Set(rx.got.map((r) => r.headers['webhook-id'])).size).toBe(1); // the same message each time
  const [d] = (await t.http.get(`/v1/webhooks/${created.id}/deliveries`).set(auth(token))).body.data;
  await until('the outcome', async () => (await t.http.get(`/v1/webhooks/${created.id}/deliveries`).set(auth(token))).body.data[0].status === 'succeeded', 5_000);
  const done = (await t.http.get(`/v1/webhooks/${created.id}/deliveries`).set(auth(token))).body.data[0];
  expect(done).toMatchObject({ id: d.id, status: 'succeeded', attempts: 3, response_status: 204, error: null, next_attempt_at: null });
}, 90_000);

test('one server\'s events arrive in event order, also while the first ones are being retried', async () => {
  const token = await start();
  const rx = await receiver((_r, n) => (n <= 3 ? 500 : 204));
  closers.push(rx.close);
  await hook(token, rx.url);
  const userId = userOf(token);
  const sent: string[] = [];
  for (let i = 0; i < 20; i++) sent.push(t.store.events.raise('server.state_changed', { from: 'stopped', to: 'starting' }, { userId, serverId: 'srv_ordered' })!.id);
  await until('all 20 delivered', () => new Set(rx.got.map((r) => r.headers['webhook-id'])).size === 20, 15_000);
  const order = rx.got.map((r) => r.headers['webhook-id'] as string).filter((id, i, all) => id !== all[i - 1]);
  expect(order).toEqual(sent);
}, 90_000);

test('a backlog over several servers is delivered in order per server, over reused (keep-alive) connections', async () => {
  const token = await start();
  const rx = await receiver();
  closers.push(rx.close);
  await hook(token, rx.url);
  const userId = userOf(token);
  const sent: Record<string, string[]> = {};
  for (let i = 0; i < 60; i++) {
    const server = `srv_queue${i % 4}`;
    (sent[server] ??= []).push(t.store.events.raise('server.state_changed', { from: 'stopped', to: 'starting' }, { userId, serverId: server })!.id);
  }
  await until('all 60 delivered', () => rx.got.length >= 60, 15_000);
  const byServer: Record<string, string[]> = {};
  for (const r of rx.got) {
    const event = JSON.parse(r.body) as { id: string; server_id: string };
    (byServer[event.server_id] ??= []).push(event.id);
  }
  expect(byServer).toEqual(sent);
  // One queue per server, each with at most one attempt at a time: 4 connections at most, not one per delivery.
  expect(rx.connections()).toBeLessThanOrEqual(4);
}, 90_000);

test('a webhook failing for longer than WEBHOOK_DISABLE_AFTER is disabled, with a webhook.disabled event', async () => {
  const token = await start({ disableAfterMs: 500 });
  const rx = await receiver(() => 503);
  closers.push(rx.close);
  const created = await hook(token, rx.url);
  await t.http.post('/v1/tokens').set(auth(token)).send({ name: 'bot', scopes: ['servers:read'] });
  await until('disabled', async () => (await t.http.get(`/v1/webhooks/${created.id}`).set(auth(token))).body.enabled === false, 15_000);
  const now = (await t.http.get(`/v1/webhooks/${created.id}`).set(auth(token))).body;
  expect(now.disabled_reason).toBe('failing');
  const events = (await t.http.get('/v1/events?type=webhook.disabled').set(auth(token))).body.data;
  expect(events.map((e: { data: unknown }) => e.data)).toEqual([{ webhook_id: created.id, url: rx.url }]);
  const [d] = (await t.http.get(`/v1/webhooks/${created.id}/deliveries`).set(auth(token))).body.data;
  expect(d.status).toBe('failed');
  // Enabling it again starts afresh.
  const enabled = await t.http.patch(`/v1/webhooks/${created.id}`).set(auth(token)).send({ enabled: true });
  expect(enabled.body).toMatchObject({ enabled: true, failing_since: null, disabled_reason: null });
}, 90_000);

describe('SSRF: private addresses are refused unless WEBHOOK_ALLOW_PRIVATE=true', () => {
  const names: Record<string, string> = { 'rebind.example.com': '203.0.114.10', 'internal.example.com': '10.1.2.3', 'meta.example.com': '169.254.169.254' };
  const lookup: Lookup = async (host) => (host === 'localhost' ? [{ address: '127.0.0.1', family: 4 }] : [{ address: names[host] ?? '93.184.215.14', family: 4 }]);

  test.each([
    ['https://127.0.0.1/hook', 'a loopback literal'],
    ['https://localhost/hook', 'a name resolving to 127.0.0.1'],
    ['https://internal.example.com/hook', 'a name resolving to 10.0.0.0/8'],
    ['https://meta.example.com/latest', 'a name resolving to the metadata address'],
    ['https://[::1]/hook', 'IPv6 loopback'],
    ['https://[::ffff:7f00:1]/hook', 'IPv4-mapped loopback'],
    ['https://[fd00:ec2::254]/hook', 'IPv6 metadata (unique local)'],
    ['https://192.168.1.1/hook', 'RFC 1918'],
    ['http://hooks.example.com/hook', 'plain http'],
    ['https://[::127.0.0.1]/hook', 'IPv4-compatible loopback'],
    ['https://[64:ff9b::a9fe:a9fe]/hook', 'NAT64 of the metadata address'],
    ['https://[2002:a00:1::1]/hook', '6to4 of 10.0.0.1'],
    ['https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hook', 'Teredo with a loopback client'],
    ['https://hooks.example.com:22/hook', 'a port other than 443 and 8443'],
  ])('creation refuses %s (%s) with a 400 at /body/url, writing nothing', async (url) => {
    const token = await start({ allowPrivate: false, lookup });
    const res = await t.http.post('/v1/webhooks').set(auth(token)).send({ url, event_types: ['token.created'] });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].pointer).toBe('/body/url');
    expect((await t.http.get('/v1/webhooks').set(auth(token))).body.data).toEqual([]);
  });

  test('a name that resolved to a public address at creation and to 127.0.0.1 at delivery is refused then (DNS rebinding)', async () => {
    names['rebind.example.com'] = '93.184.215.14';
    const token = await start({ allowPrivate: false, lookup });
    // Port 443 (the only ports allowed are https's): the refusal comes before any connection, as its text says
    // (a connection attempt would end as "no answer").
    const created = await hook(token, 'https://rebind.example.com/hook', ['token.created']);
    names['rebind.example.com'] = '127.0.0.1';
    await t.http.post('/v1/tokens').set(auth(token)).send({ name: 'bot', scopes: ['servers:read'] });
    await until('an attempt', async () => (await t.http.get(`/v1/webhooks/${created.id}/deliveries`).set(auth(token))).body.data[0]?.attempts > 0, 10_000);
    const [d] = (await t.http.get(`/v1/webhooks/${created.id}/deliveries`).set(auth(token))).body.data;
    expect(d.status).toBe('pending');
    expect(d.error).toMatch(/^refused: rebind\.example\.com resolves to a forbidden address/);
  }, 90_000);
});

test('another user\'s webhook answers 404 like a missing one, and its deliveries stay hidden', async () => {
  const token = await start();
  const other = t.token('other@example.com');
  const created = await hook(token, 'http://127.0.0.1:9/hook');
  for (const [method, path] of [['get', ''], ['patch', ''], ['delete', ''], ['post', '/secret'], ['post', '/test'], ['get', '/deliveries']] as const) {
    let req = t.http[method](`/v1/webhooks/${created.id}${path}`).set(auth(other));
    if (method === 'patch') req = req.send({ enabled: false });
    const res = await req;
    expect([method, path, res.status, res.body.code]).toEqual([method, path, 404, 'webhook_not_found']);
  }
  expect((await t.http.get('/v1/webhooks').set(auth(other))).body.data).toEqual([]);
  expect((await t.http.get(`/v1/webhooks/${created.id}`).set(auth(token))).body.enabled).toBe(true);
});
