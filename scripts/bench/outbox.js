'use strict';
/**
 * `node scripts/bench/run.js outbox` (BENCHMARKS.md §10; docs/architecture.md "Events and webhooks"): what a large
 * outbox costs a service at rest. Two services run side by side as `npm start` runs them (runtime-service.js, each
 * its own process and DATA_DIR): one over an empty outbox, one over `rows` pending deliveries written straight into
 * its database with SQL before it starts (the receivers are down: every queue's head has been tried and waits for
 * its retry, due 20 to 60 minutes later, as a dead receiver's backoff has it; the rest wait behind their heads;
 * none comes due while measured, which the result says: `attempts_during`). Both are measured in the same windows, so other work on the host weighs on both alike:
 * - idle CPU: each process's own CPU time over `idleS` seconds, nothing asked of it;
 * - another tenant's request latency: GET /v1/quota every 10 ms to each service at the same moments, `requests`
 *   to each in 9 rounds, on a schedule that does not wait for answers (quotaLatencies); the figures are the
 *   medians over the rounds, and the ratio the median of the rounds' ratios.
 */
const http = require('node:http');
const path = require('node:path');
const { fork } = require('node:child_process');
const { dist, tempDir, quantile, median, procUsage, sleep, nextMessage, stopChild, fmt } = require('./lib');

/**
 * `rows` pending deliveries over `users` users with 10 webhooks each (every event goes to the user's 10
 * webhooks) and 10 servers each: 100 queues per user. One transaction; the schema's triggers (migration 025,
 * where present) keep each webhook's count and the heads.
 */
function populate(dir, rows, users) {
  const { openDb } = dist('store/db');
  const db = openDb(path.join(dir, 'gsh.sqlite'));
  const hasHead = db.prepare("SELECT 1 FROM pragma_table_info('webhook_deliveries') WHERE name = 'head'").get() !== undefined;
  const now = Date.now();
  const iso = (ms) => new Date(ms).toISOString();
  const addUser = db.prepare("INSERT INTO users (id, email, created_at) VALUES (?, ?, ?)");
  const addHook = db.prepare(`INSERT INTO webhooks (id, user_id, url, event_types, secret, enabled, failing_since, created_at, updated_at)
    VALUES (?, ?, 'http://127.0.0.1:9/hook', '["server.state_changed"]', 'whsec_YmVuY2g=', 1, ?, ?, ?)`);
  const addEvent = db.prepare(`INSERT INTO events (id, user_id, server_id, type, data, created_at)
    VALUES (?, ?, ?, 'server.state_changed', '{"from":"stopped","to":"starting"}', ?)`);
  const addDelivery = db.prepare(`INSERT INTO webhook_deliveries (id, webhook_id, event_seq, server_key, attempts, error, next_attempt_at,
    last_attempt_at, created_at${hasHead ? ', head' : ''}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?${hasHead ? ', ?' : ''})`);
  const seen = new Set();
  db.transaction(() => {
    const created = iso(now - 3_600_000);
    for (let u = 0; u < users; u++) {
      addUser.run(`usr_bench${u}`, `bench${u}@example.com`, created);
      for (let k = 0; k < 10; k++) addHook.run(`whk_bench${u}_${k}`, `usr_bench${u}`, created, created, created);
    }
    const events = Math.ceil(rows / 10);
    for (let i = 0; i < events; i++) {
      const u = i % users;
      const server = `srv_bench${u}_${Math.floor(i / users) % 10}`;
      const seq = Number(addEvent.run(`evt_bench${i}`, `usr_bench${u}`, server, created).lastInsertRowid);
      for (let k = 0; k < 10 && i * 10 + k < rows; k++) {
        const hook = `whk_bench${u}_${k}`;
        const head = !seen.has(`${hook}/${server}`);
        seen.add(`${hook}/${server}`);
        // A dead receiver's backoff (up to an hour): due 20 to 60 minutes on, after the measurement however long
        // populating took on a busy host (attemptsDuring checks that none came due in it).
        const retry = iso(now + 1_200_000 + Math.random() * 2_400_000);
        const args = [`dlv_bench${i}_${k}`, hook, seq, server, head ? 8 : 0, head ? 'no answer' : null, head ? retry : created, head ? iso(now - 60_000) : null, created];
        addDelivery.run(...args, ...(hasHead ? [head ? 1 : 0] : []));
      }
    }
  })();
  const pending = db.prepare("SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'pending'").pluck().get();
  db.close();
  return pending;
}

/** Delivery attempts the service over the full outbox made since `since` (RFC 3339): 0 when it sat idle. */
function attemptsDuring(dir, since) {
  const { openDb } = dist('store/db');
  const db = openDb(path.join(dir, 'gsh.sqlite'));
  const n = db.prepare('SELECT COUNT(*) FROM webhook_deliveries WHERE last_attempt_at >= ?').pluck().get(since);
  db.close();
  return n;
}

async function startService(dir) {
  const env = JSON.stringify({ WEBHOOK_ALLOW_PRIVATE: 'true' });
  const child = fork(path.join(__dirname, 'runtime-service.js'), [dir, env], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const { port, token } = await nextMessage(child, (m) => m.type === 'listening', 600_000);
  return { child, port, token };
}

/** One GET /v1/quota; resolves with its milliseconds. */
function quotaOnce(svc, agent) {
  const t0 = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port: svc.port, path: '/v1/quota', agent, headers: { Authorization: `Bearer ${svc.token}` } }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`GET /v1/quota answered ${res.statusCode}`));
      res.resume().on('end', () => resolve(Number(process.hrtime.bigint() - t0) / 1e6));
    }).on('error', reject);
  });
}

/**
 * `n` requests to each service on a fixed schedule, one every `everyMs` to each, whether or not earlier ones have
 * been answered (open loop: a request that arrives while the service is busy waits, as a real client's would,
 * instead of the measurement waiting with it). Each request's milliseconds, per service.
 */
async function quotaLatencies(services, n, everyMs) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const lat = Object.fromEntries(Object.keys(services).map((k) => [k, []]));
  const pending = [];
  const order = Object.entries(services);
  for (let i = 0; i < n; i++) {
    for (const [k, svc] of order) pending.push(quotaOnce(svc, agent).then((ms) => lat[k].push(ms)));
    order.reverse(); // neither service is always the second asked
    await sleep(everyMs);
  }
  await Promise.all(pending);
  agent.destroy();
  return lat;
}

async function runOutbox({ rows = 2_000_000, users = 200, idleS = 60, requests = 4500, rounds: roundCount = 9 } = {}) {
  const emptyDir = tempDir('outbox-empty');
  const fullDir = tempDir('outbox-full');
  const t0 = Date.now();
  const pending = populate(fullDir, rows, users);
  console.log(`  populated ${pending} pending deliveries in ${fmt((Date.now() - t0) / 1000, 1)} s`);
  populate(emptyDir, 0, 1);
  const services = { empty: await startService(emptyDir), full: await startService(fullDir) };
  try {
    await sleep(5000); // boot's own work (purge, first polls) out of the window
    const measuredFrom = new Date().toISOString();
    const before = Object.fromEntries(Object.entries(services).map(([k, s]) => [k, procUsage(s.child.pid).cpuMs]));
    await sleep(idleS * 1000);
    const idle = Object.fromEntries(Object.entries(services).map(([k, s]) => [k, ((procUsage(s.child.pid).cpuMs - before[k]) / (idleS * 1000)) * 100]));
    console.log(`  idle CPU % of a core over ${idleS} s: empty ${fmt(idle.empty, 2)}, ${pending} pending ${fmt(idle.full, 2)}`);
    await quotaLatencies(services, 100, 10); // warm up
    // Rounds, each with its own ratio: a burst of other work on the host lands in one round, not in the verdict.
    const stats = (xs) => ({ p50_ms: quantile(xs, 0.5), p90_ms: quantile(xs, 0.9), p99_ms: quantile(xs, 0.99) });
    const rounds = [];
    for (let r = 0; r < roundCount; r++) {
      const lat = await quotaLatencies(services, Math.ceil(requests / roundCount), 10);
      rounds.push({ empty: stats(lat.empty), full: stats(lat.full) });
    }
    const ratio = (q) => median(rounds.map((r) => r.full[q] / r.empty[q]));
    const quota = {
      empty: { p50_ms: median(rounds.map((r) => r.empty.p50_ms)), p90_ms: median(rounds.map((r) => r.empty.p90_ms)) },
      full: { p50_ms: median(rounds.map((r) => r.full.p50_ms)), p90_ms: median(rounds.map((r) => r.full.p90_ms)) },
      ratio: { p50: ratio('p50_ms'), p90: ratio('p90_ms') },
      rounds,
    };
    console.log(`  GET /v1/quota p50 / p90 ms (median of ${roundCount} rounds): empty ${fmt(quota.empty.p50_ms, 2)} / ${fmt(quota.empty.p90_ms, 2)}, full ${fmt(quota.full.p50_ms, 2)} / ${fmt(quota.full.p90_ms, 2)}; ratios ${fmt(quota.ratio.p50, 2)} / ${fmt(quota.ratio.p90, 2)}`);
    return { pending, users, idle_s: idleS, idle_cpu_percent: idle, quota, requests, attempts_during: attemptsDuring(fullDir, measuredFrom) };
  } finally {
    await Promise.all(Object.values(services).map((s) => stopChild(s.child, 10_000)));
  }
}

module.exports = { runOutbox };
