'use strict';
/**
 * `node scripts/bench/run.js fairness` (BENCHMARKS.md §9; docs/architecture.md "Events and webhooks"): one tenant
 * cannot delay another's webhooks. The store, the event feed and the dispatcher as the service wires them, with
 * their defaults (WEBHOOK_TIMEOUT_S 10), and real HTTP receivers on loopback:
 * - B has one webhook to a receiver that answers 204 at once, and records an event every 150 ms; B's latency is the
 *   time from the event's commit to its arrival at the receiver.
 * - Baseline window: A idle. Attacked window: A has 10 webhooks to a receiver that accepts every connection and never
 *   answers, and A's 10 servers and a token make 110 deliveries at once (issue 27's attack), then one more event on
 *   one of its servers every 500 ms (10 deliveries each: the API's 120 requests a minute).
 * The two windows run one after the other in the same process, so other work on the host weighs on both.
 */
const http = require('node:http');
const path = require('node:path');
const { dist, tempDir, quantile, sleep, fmt } = require('./lib');

/** A receiver on loopback: 'fast' answers 204 at once, 'dead' never answers. Counts requests still held open. */
function receiver(mode, onDelivery = () => undefined) {
  let open = 0;
  let openMax = 0;
  const server = http.createServer((req, res) => {
    open++;
    openMax = Math.max(openMax, open);
    res.once('close', () => open--); // answered, or its connection closed (the dispatcher's time limit)
    req.resume();
    req.on('end', () => {
      onDelivery(req.headers['webhook-id']);
      if (mode === 'fast') res.writeHead(204).end();
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    url: `http://127.0.0.1:${server.address().port}/hook`,
    openMax: () => openMax,
    close: () => new Promise((r) => (server.closeAllConnections(), server.close(r))),
  })));
}

async function runFairness({ windowS = 30 } = {}) {
  const { openDb } = dist('store/db');
  const { createStore } = dist('store');
  const { plans } = dist('catalog/plans');
  const { createEventFeed } = dist('events/feed');
  const { createDispatcher, dispatcherDefaults } = dist('webhooks/dispatcher');
  const { silentLogger } = dist('log');
  const clock = { now: () => Date.now() };
  const db = openDb(path.join(tempDir('fairness'), 'gsh.sqlite'));
  const store = createStore(db, clock, { host: '127.0.0.1', portRange: [30000, 60000] }, { defaults: { servers: 1e9, running: 1e9, memory_mb: 1e9 }, plans }, () => dist('actors').serviceActor('operator'));
  const a = store.users.ensure('a@example.com').id;
  const b = store.users.ensure('b@example.com').id;
  const sentAt = new Map();
  const latencies = [];
  const fast = await receiver('fast', (id) => sentAt.has(id) && latencies.push(Date.now() - sentAt.get(id)));
  const dead = await receiver('dead');
  store.webhooks.create(b, { url: fast.url, event_types: ['token.created'] }, 10);
  const feed = createEventFeed({ events: store.events, pollMs: 250, log: silentLogger });
  const config = { ...dispatcherDefaults, allowPrivate: true, timeoutMs: 10_000, disableAfterMs: 3 * 86_400_000 };
  const dispatcher = createDispatcher({ outbox: store.outbox, feed, clock, log: silentLogger, config });
  dispatcher.start();
  let inFlightMax = 0;
  const watch = setInterval(() => (inFlightMax = Math.max(inFlightMax, dispatcher.inFlight())), 20);

  /** B's events every 150 ms for windowS seconds; the latencies of those delivered. */
  async function measureB() {
    latencies.length = 0;
    const end = Date.now() + windowS * 1000;
    let n = 0;
    while (Date.now() < end) {
      const e = store.events.raise('token.created', { token: { id: `tok_bench${n++}`, name: 'b', prefix: 'gsh_bench', scopes: ['servers:read'], created_at: new Date().toISOString(), expires_at: null, last_used_at: null } }, { userId: b });
      sentAt.set(e.id, Date.now());
      await sleep(150);
    }
    await sleep(2000); // the last ones arrive
    return { events: n, delivered: latencies.length, p50_ms: quantile(latencies, 0.5), p99_ms: quantile(latencies, 0.99), max_ms: Math.max(...latencies) };
  }

  const idle = await measureB();
  console.log(`  B alone: p50 ${fmt(idle.p50_ms)} ms, p99 ${fmt(idle.p99_ms)} ms (${idle.delivered}/${idle.events})`);
  inFlightMax = 0;
  for (let k = 0; k < 10; k++) store.webhooks.create(a, { url: dead.url, event_types: ['server.state_changed', 'token.created'] }, 10);
  const changed = (i) => store.events.raise('server.state_changed', { from: 'stopped', to: 'starting' }, { userId: a, serverId: `srv_a${i % 10}` });
  for (let i = 0; i < 10; i++) changed(i);
  store.events.raise('token.created', { token: { id: 'tok_a', name: 'a', prefix: 'gsh_aaaa', scopes: ['servers:read'], created_at: new Date().toISOString(), expires_at: null, last_used_at: null } }, { userId: a });
  let i = 0;
  const attacker = setInterval(() => changed(i++), 500);
  const attacked = await measureB();
  clearInterval(attacker);
  console.log(`  B while A's 10 webhooks hang: p50 ${fmt(attacked.p50_ms)} ms, p99 ${fmt(attacked.p99_ms)} ms (${attacked.delivered}/${attacked.events}); A held ${dead.openMax()} at once, all ${inFlightMax}`);
  clearInterval(watch);
  await dispatcher.close();
  feed.close();
  await Promise.all([fast.close(), dead.close()]);
  db.close();
  return { window_s: windowS, dead_webhooks: 10, idle, attacked, ratio_p99: attacked.p99_ms / idle.p99_ms, a_in_flight_max: dead.openMax(), in_flight_max: inFlightMax };
}

module.exports = { runFairness };
