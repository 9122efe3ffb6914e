'use strict';
/**
 * `node scripts/bench/webhooks-ab.js <other dist/src>` (after `npm run build` here and in the other checkout):
 * this build's webhook write path and delivery against another's, in one process, 6 alternated rounds, so other
 * work on the host weighs on both alike (BENCHMARKS.md §9):
 * - what appending an event (`EventsRepo.raise`, `append` before 1.3.0) costs per event with one webhook listening, in a transaction of its own, with
 *   `synchronous = OFF`, so the statements are measured, not the fsync that dominates a real commit;
 * - deliveries per second to a local receiver answering 204 at once, 3,000 events over 100 servers, one webhook.
 * Prints the medians.
 */
const http = require('node:http');
const path = require('node:path');
const fs = require('node:fs');
const os = require('node:os');
const trees = { old: path.resolve(process.argv[2] ?? ''), new: path.join(__dirname, '..', '..', 'dist', 'src') };
if (!process.argv[2]) throw new Error('usage: node scripts/bench/webhooks-ab.js <other checkout>/dist/src');
const load = (tree, m) => require(path.join(trees[tree], m));
function setup(tree) {
  const { openDb } = load(tree, 'store/db');
  const { createStore } = load(tree, 'store');
  const { plans } = load(tree, 'catalog/plans');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ab-'));
  const db = openDb(path.join(dir, 'gsh.sqlite'));
  // A tree with actors (1.3.0 on) takes the actor after the quota settings and raises events; an older one appends.
  let actors;
  try { actors = load(tree, 'actors'); } catch { actors = undefined; }
  const pool = { host: '127.0.0.1', portRange: [30000, 60000] };
  const quotas = { defaults: { servers: 1e9, running: 1e9, memory_mb: 1e9 }, plans };
  const store = actors ? createStore(db, { now: () => Date.now() }, pool, quotas, () => actors.serviceActor('operator')) : createStore(db, { now: () => Date.now() }, pool, quotas);
  const userId = store.users.ensure('bench@example.com').id;
  const changed = (serverId) => actors
    ? store.events.raise('server.state_changed', { from: 'stopped', to: 'starting' }, { userId, serverId })
    : store.events.append(userId, serverId, 'server.state_changed', { from: 'stopped', to: 'starting' });
  return { db, store, userId, changed };
}
function appendCost(tree, n) {
  const s = setup(tree);
  s.db.pragma('synchronous = OFF');
  s.store.webhooks.create(s.userId, { url: 'http://127.0.0.1:9/', event_types: ['server.state_changed'] }, 10);
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) s.db.transaction(() => s.changed(`srv_${i % 10}`))();
  const us = Number(process.hrtime.bigint() - t0) / 1e3 / n;
  s.db.close();
  return us;
}
function receiver() {
  let count = 0;
  const server = http.createServer((req, res) => { req.resume(); req.on('end', () => { count++; res.writeHead(204).end(); }); });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${server.address().port}/hook`, count: () => count, close: () => new Promise((r) => (server.closeAllConnections(), server.close(r))) })));
}
async function throughput(tree, n) {
  const { createEventFeed } = load(tree, 'events/feed');
  const { createDispatcher, dispatcherDefaults } = load(tree, 'webhooks/dispatcher');
  const { silentLogger } = load(tree, 'log');
  const s = setup(tree);
  const rx = await receiver();
  s.store.webhooks.create(s.userId, { url: rx.url, event_types: ['server.state_changed'] }, 10);
  s.db.transaction(() => { for (let i = 0; i < n; i++) s.changed(`srv_bench${i % 100}`); })();
  const feed = createEventFeed({ events: s.store.events, pollMs: 250, log: silentLogger });
  const d = createDispatcher({ outbox: s.store.outbox, feed, clock: { now: () => Date.now() }, log: silentLogger, config: { ...dispatcherDefaults, allowPrivate: true, timeoutMs: 10000, disableAfterMs: 3 * 86400000 } });
  const t0 = Date.now();
  d.start();
  while (rx.count() < n) await new Promise((r) => setTimeout(r, 20));
  const per = n / ((Date.now() - t0) / 1000);
  await d.close(); feed.close(); await rx.close(); s.db.close();
  return per;
}
(async () => {
  const res = { append: { old: [], new: [] }, tput: { old: [], new: [] } };
  for (let r = 0; r < 6; r++) for (const tree of r % 2 ? ['new', 'old'] : ['old', 'new']) {
    res.append[tree].push(appendCost(tree, 3000));
    res.tput[tree].push(await throughput(tree, 3000));
  }
  const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(JSON.stringify(res));
  console.log('append µs/event (median of 6): old', med(res.append.old).toFixed(1), 'new', med(res.append.new).toFixed(1));
  console.log('deliveries/s (median of 6): old', med(res.tput.old).toFixed(0), 'new', med(res.tput.new).toFixed(0));
})();
