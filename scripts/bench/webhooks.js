'use strict';
/**
 * `npm run bench -- webhooks` (docs/architecture.md "Events and webhooks"):
 * - event write overhead on the create path: ServersRepo.create with its server.created event (and the outbox
 *   insert, with a webhook listening) against the same repository whose events go nowhere;
 * - delivery throughput to a local receiver that answers 204 at once (every attempt a new loopback connection,
 *   every outcome its own fsynced transaction), events spread over 100 servers;
 * - backlog drain: the events of a receiver down for 10 minutes at 10 events/s, each already retried, all due
 *   when it comes back: how long until every one is delivered.
 */
const http = require('node:http');
const path = require('node:path');
const { dist, tempDir, fmt } = require('./lib');

function receiver() {
  let count = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      count++;
      res.writeHead(204).end();
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    url: `http://127.0.0.1:${server.address().port}/hook`,
    count: () => count,
    close: () => new Promise((r) => (server.closeAllConnections(), server.close(r))),
  })));
}

function setup(label) {
  const { openDb } = dist('store/db');
  const { createStore } = dist('store');
  const { plans } = dist('catalog/plans');
  const db = openDb(path.join(tempDir(label), 'gsh.sqlite'));
  const store = createStore(db, { now: () => Date.now() }, { host: '127.0.0.1', portRange: [30000, 60000] }, {
    defaults: { servers: 1e9, running: 1e9, memory_mb: 1e9 }, plans,
  }, () => dist('actors').serviceActor('operator'));
  const userId = store.users.ensure('bench@example.com').id;
  return { db, store, userId };
}

function createsPerSecond(servers, userId, n) {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) servers.create(userId, { name: `s${i}`, plan: 'micro', version: 'v', software: 'flying-squid', game_version: '1.20' });
  return n / (Number(process.hrtime.bigint() - t0) / 1e9);
}

/**
 * Creates per second through the same repository, quotas and placer, with its events (and a webhook's outbox row)
 * and with events that go nowhere; three alternated rounds, each on a fresh database.
 */
function writeOverhead(n) {
  const { createServersRepo } = dist('store/servers-repo');
  const { singleHostPlacer } = dist('store/placement');
  const { createServerWrites } = dist('store/server-writes');
  const { plans } = dist('catalog/plans');
  const memoryOf = (id) => plans.find((p) => p.id === id)?.memory_mb ?? 0;
  const clock = { now: () => Date.now() };
  const repo = (s, events) => createServersRepo(s.db, clock, singleHostPlacer(s.db, { host: '127.0.0.1', portRange: [30000, 60000] }), s.store.quotas, memoryOf, events, createServerWrites(s.db, clock, events));
  const rounds = [];
  for (let round = 0; round < 3; round++) {
    const a = setup('events-on');
    a.store.webhooks.create(a.userId, { url: 'http://127.0.0.1:9/', event_types: ['server.created'] }, 10);
    const on = createsPerSecond(repo(a, a.store.events), a.userId, n);
    const b = setup('events-off');
    const off = createsPerSecond(repo(b, { raise: () => null }), b.userId, n);
    rounds.push({ on, off });
    a.db.close();
    b.db.close();
  }
  const on = rounds.reduce((s, r) => s + r.on, 0) / rounds.length;
  const off = rounds.reduce((s, r) => s + r.off, 0) / rounds.length;
  return { creates: n, with_events_per_s: on, without_events_per_s: off, overhead: 1 - on / off };
}

/** Appends `n` events over `servers` servers (one transaction), optionally as retried ones; times the drain. */
async function drain(n, servers, retried) {
  const { createEventFeed } = dist('events/feed');
  const { createDispatcher, dispatcherDefaults } = dist('webhooks/dispatcher');
  const { silentLogger } = dist('log');
  const { db, store, userId } = setup('deliveries');
  const rx = await receiver();
  store.webhooks.create(userId, { url: rx.url, event_types: ['server.state_changed'] }, 10);
  db.transaction(() => {
    for (let i = 0; i < n; i++) store.events.raise('server.state_changed', { from: 'stopped', to: 'starting' }, { userId, serverId: `srv_bench${i % servers}` });
  })();
  if (retried) db.prepare("UPDATE webhook_deliveries SET attempts = 8, error = 'connect ECONNREFUSED'").run();
  const feed = createEventFeed({ events: store.events, pollMs: 250, log: silentLogger });
  const config = { ...dispatcherDefaults, allowPrivate: true, timeoutMs: 10_000, disableAfterMs: 3 * 86_400_000 };
  const dispatcher = createDispatcher({ outbox: store.outbox, feed, clock: { now: () => Date.now() }, log: silentLogger, config });
  const t0 = Date.now();
  dispatcher.start();
  while (rx.count() < n) await new Promise((r) => setTimeout(r, 20));
  const seconds = (Date.now() - t0) / 1000;
  await dispatcher.close();
  feed.close();
  await rx.close();
  db.close();
  return { deliveries: n, servers, seconds, per_s: n / seconds };
}

async function runWebhooks({ creates = 2000, deliveries = 5000 } = {}) {
  const write = writeOverhead(creates);
  console.log(`  create: ${fmt(write.with_events_per_s)}/s with events, ${fmt(write.without_events_per_s)}/s without (overhead ${fmt(write.overhead * 100, 1)} %)`);
  const throughput = await drain(deliveries, 100, false);
  console.log(`  deliveries: ${throughput.deliveries} in ${fmt(throughput.seconds, 2)} s = ${fmt(throughput.per_s)}/s`);
  const backlog = await drain(6000, 100, true);
  console.log(`  backlog of 10 min at 10 events/s: ${backlog.deliveries} drained in ${fmt(backlog.seconds, 2)} s`);
  return { write, throughput, backlog };
}

module.exports = { runWebhooks };
