'use strict';
/**
 * Part `scale`: what 10,000 registered servers cost the control plane, beside a service with 25, both in the same
 * run on the same machine (issue 32). None of them runs: idle cost should follow what runs, not what is registered.
 *
 * Seeding (before any service starts): each service gets its own DATA_DIR and database, migrated by the service's
 * own openDb. Accounts: the 25-server service has one account of 25; the 10,000-server one has one account of
 * 5,000, one of 25 and ten of 497 or 498. Their servers are inserted with SQL in one transaction (the API at
 * 120/min would take days), each `stopped`, installed (world/, logs/console.log, settings.json, as an install and
 * one run leave them) and with a port of GAME_PORT_RANGE. A third service, 25 servers again with METRICS_PORT set
 * (nobody scrapes it), measures what Prometheus's collection costs on its own.
 *
 * Measured, each service in a child process (scale-service.js: startService, as `npm start`):
 *   start-up ms      fork() until the service listens (its runtime booted, its loops started). Then the bench
 *                    waits until every folder has been measured once (the disk watcher's first pass, as after an
 *                    upgrade; reported as first_pass_ms), so what follows is the service idling.
 *   idle CPU         the service's own CPU time (/proc/<pid>/stat) over WINDOW_S with nobody calling, % of a core;
 *                    all three services idle in the same window, so other work on the host hits them alike.
 *   RSS              VmRSS sampled every second of that window: mean and max.
 *   longest stall    then, over another WINDOW_S, perf_hooks.monitorEventLoopDelay (2 ms resolution) inside the
 *                    service: the largest delay seen, i.e. the longest the event loop was held (goal < 20 ms);
 *                    and "busy", the longest delay the service's own CPU time accounts for (scale-service.js), which
 *                    leaves out the time a loaded machine kept the process waiting for a core.
 *   GET /v1/quota    p50 over QUOTA_READS reads each, alternating the 5,000-server account and the 25-server account
 *                    of the large service (goal: within 1.5×), and the small service's account.
 *   list by state    GET /v1/servers?state=stopped (every one matches) and ?state=running (none does) against an
 *                    unfiltered page, for the 5,000-server account.
 *   create p50       POST /v1/servers through the API, CREATES times in each service, alternating (goal: within 1.3×),
 *                    by the 5,000-server account in the large one.
 */
const fs = require('node:fs');
const path = require('node:path');
const { fork } = require('node:child_process');
const { ROOT, dist, tempDir, nextMessage, stopChild, median, msSince, procUsage, sleep, fmt } = require('./lib');

const PLAN = 'micro';
const VERSION = { id: 'flying-squid-1.20', software: 'flying-squid', game_version: '1.20' };
const PORTS = [20000, 39999]; // room for 10,000 servers and the creates
/** One account of 5,000, one of 25, ten of about 500: 10,000 servers (issue 32). */
const LARGE = [5000, 25, 497, 497, 497, 497, 497, 498, 498, 498, 498, 498];
const SMALL = [25];

const ENV = {
  GAME_PORT_RANGE: PORTS.join('-'),
  RATE_LIMIT_PER_MINUTE: '1000000',
  QUOTA_SERVERS: '100000',
  QUOTA_RUNNING_SERVERS: '100000',
  QUOTA_MEMORY_MB: '1000000000',
  SFTP_PORT: 'off', // three services at once: the default 2022 would be taken by the first (none of them is measured on it)
};

/** Seeds a DATA_DIR: accounts of the given sizes, their servers stopped and installed. Returns each account's token. */
function seed(dir, sizes) {
  const { openDb } = dist('store/db');
  const { newId } = dist('ids');
  const db = openDb(path.join(dir, 'gsh.sqlite'));
  const clock = { now: () => Date.now() };
  const users = dist('store/users-repo').createUsersRepo(db, clock);
  const tokens = dist('store/tokens-repo').createTokensRepo(db, clock, dist('store').operatorEvents(db, clock));
  const insert = db.prepare(`INSERT INTO servers (id, user_id, name, plan, version, software, game_version, state, desired_state,
    host, port, transport, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'stopped', 'stopped', '127.0.0.1', ?, 'tcp', ?, ?)`);
  const accounts = [];
  let port = PORTS[0];
  const ids = [];
  db.transaction(() => {
    sizes.forEach((n, k) => {
      const user = users.ensure(`owner-${k}-of-${n}@example.com`);
      const { token } = tokens.create(user.id, { name: 'bench', scopes: ['servers:read', 'servers:write'] });
      accounts.push({ servers: n, token });
      for (let i = 0; i < n; i++) {
        const now = new Date().toISOString();
        const id = newId('srv');
        insert.run(id, user.id, `server ${i}`, PLAN, VERSION.id, VERSION.software, VERSION.game_version, port++, now, now);
        ids.push(id);
      }
    });
  })();
  db.close();
  for (const id of ids) {
    const folder = path.join(dir, 'servers', id);
    fs.mkdirSync(path.join(folder, 'world'), { recursive: true });
    fs.mkdirSync(path.join(folder, 'logs'));
    fs.writeFileSync(path.join(folder, 'settings.json'), '{}\n');
    fs.writeFileSync(path.join(folder, 'logs', 'console.log'), 'stopped\n');
  }
  return accounts;
}

function client(port) {
  return async function api(token, method, url, body) {
    const t0 = process.hrtime.bigint();
    const res = await fetch(`http://127.0.0.1:${port}${url}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const json = await res.json();
    const ms = msSince(t0);
    if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(json)}`);
    return { json, ms };
  };
}

/** Forks one seeded service and waits until it listens. */
async function startService(dir, env) {
  const t0 = process.hrtime.bigint();
  const child = fork(path.join(__dirname, 'scale-service.js'), [dir, JSON.stringify({ ...ENV, ...env })], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const m = await nextMessage(child, (x) => x.type === 'listening', 600_000);
  return { child, api: client(m.port), startMs: msSince(t0), sinceStartMs: m.sinceStartMs };
}

/** Resolves with the ms until every server of the DATA_DIR has a disk measurement (at most 5 minutes). */
async function firstPass(dir) {
  const Database = require(path.join(ROOT, 'node_modules', 'better-sqlite3'));
  const db = new Database(path.join(dir, 'gsh.sqlite'), { readonly: true });
  const unmeasured = db.prepare('SELECT COUNT(*) FROM servers WHERE disk_measured_at IS NULL').pluck();
  const t0 = process.hrtime.bigint();
  try {
    while (unmeasured.get() > 0 && msSince(t0) < 300_000) await sleep(250);
    return msSince(t0);
  } finally {
    db.close();
  }
}

/** CPU (% of a core) and RSS of several processes over the same window. */
async function idleWindow(pids, windowS) {
  const before = pids.map((pid) => procUsage(pid).cpuMs);
  const rss = pids.map(() => []);
  const t0 = process.hrtime.bigint();
  for (let s = 0; s < windowS; s++) {
    await sleep(1000);
    pids.forEach((pid, k) => rss[k].push(procUsage(pid).rssBytes / 2 ** 20));
  }
  const elapsed = msSince(t0);
  return pids.map((pid, k) => ({
    cpu_percent: (100 * (procUsage(pid).cpuMs - before[k])) / elapsed,
    rss_mean_mb: rss[k].reduce((a, b) => a + b, 0) / rss[k].length,
    rss_max_mb: Math.max(...rss[k]),
  }));
}

/** The longest event-loop stall of each service over the same window (scale-service.js). */
async function stallWindow(children, windowS) {
  for (const c of children) c.send({ type: 'loop', on: true });
  await sleep(windowS * 1000);
  return Promise.all(children.map((c) => {
    const answer = nextMessage(c, (m) => m.type === 'loop');
    c.send({ type: 'loop', on: false });
    return answer;
  }));
}

/** p50 of `rounds` calls of each function, alternating between them so load hits both alike. */
async function alternate(rounds, fns) {
  const ms = fns.map(() => []);
  for (let r = 0; r < rounds; r++) for (const [k, fn] of fns.entries()) ms[k].push(await fn());
  return ms.map((xs) => median(xs));
}

async function runScale({ windowS = 60, creates = 100, quotaReads = 300, log = console.log } = {}) {
  const dirs = { large: tempDir('scale-large'), small: tempDir('scale-small'), metrics: tempDir('scale-metrics') };
  const services = {};
  try {
    log('  scale: seeding 10,000 + 25 + 25 servers');
    const accounts = { large: seed(dirs.large, LARGE), small: seed(dirs.small, SMALL), metrics: seed(dirs.metrics, SMALL) };
    // Started one after the other, so each start-up has the machine to itself.
    services.small = await startService(dirs.small, {});
    services.large = await startService(dirs.large, {});
    services.metrics = await startService(dirs.metrics, { METRICS_PORT: '0' });
    log(`  scale: started in ${fmt(services.small.startMs)} ms (25) and ${fmt(services.large.startMs)} ms (10,000)`);
    // Idle means after the first measurement of every folder (the first disk pass after a start, or an upgrade).
    const names = ['small', 'large', 'metrics'];
    const settled = await Promise.all(names.map((n) => firstPass(dirs[n])));
    log(`  scale: every folder measured once after ${settled.map((ms) => fmt(ms / 1000, 1)).join(' / ')} s (25 / 10,000 / 25 + metrics)`);
    await sleep(5000);

    log(`  scale: idle CPU and RSS, ${windowS} s`);
    const idle = await idleWindow(names.map((n) => services[n].child.pid), windowS);
    log(`  scale: idle CPU ${idle.map((u, k) => `${names[k]} ${fmt(u.cpu_percent, 2)} %`).join(', ')}`);
    log(`  scale: event-loop stalls, ${windowS} s`);
    const stalls = await stallWindow(names.map((n) => services[n].child), windowS);
    log(`  scale: longest stall ${stalls.map((s, k) => `${names[k]} ${fmt(s.maxMs, 1)} ms (busy ${fmt(s.busyMaxMs, 1)} ms)`).join(', ')}`);

    const [big, quarter] = accounts.large;
    const { large, small } = services;
    const [quotaBig, quotaQuarter, quotaSmall] = await alternate(quotaReads, [
      async () => (await large.api(big.token, 'GET', '/v1/quota')).ms,
      async () => (await large.api(quarter.token, 'GET', '/v1/quota')).ms,
      async () => (await small.api(accounts.small[0].token, 'GET', '/v1/quota')).ms,
    ]);
    const [listAll, listStopped, listRunning] = await alternate(quotaReads, [
      async () => (await large.api(big.token, 'GET', '/v1/servers?limit=20')).ms,
      async () => (await large.api(big.token, 'GET', '/v1/servers?limit=20&state=stopped')).ms,
      async () => (await large.api(big.token, 'GET', '/v1/servers?limit=20&state=running')).ms,
    ]);
    log(`  scale: GET /v1/quota p50 ${fmt(quotaBig, 2)} ms (5,000) vs ${fmt(quotaQuarter, 2)} ms (25)`);
    log(`  scale: list p50 ${fmt(listAll, 2)} ms, state=stopped ${fmt(listStopped, 2)} ms, state=running (none) ${fmt(listRunning, 2)} ms`);

    let n = 0;
    const create = (svc, token) => async () => (await svc.api(token, 'POST', '/v1/servers', { name: `created ${n++}`, plan: PLAN, version: VERSION.id })).ms;
    const [createLarge, createSmall] = await alternate(creates, [create(large, big.token), create(small, accounts.small[0].token)]);
    log(`  scale: create p50 ${fmt(createLarge, 2)} ms (10,000) vs ${fmt(createSmall, 2)} ms (25)`);

    const view = (k) => ({ start_ms: services[names[k]].startMs, first_pass_ms: settled[k], listening_after_ms: services[names[k]].sinceStartMs, ...idle[k], stall_max_ms: stalls[k].maxMs, stall_p99_ms: stalls[k].p99Ms, stall_busy_max_ms: stalls[k].busyMaxMs });
    return {
      window_s: windowS,
      servers: { large: LARGE.reduce((a, b) => a + b, 0), small: 25 },
      small: view(0),
      large: view(1),
      small_with_metrics: view(2),
      quota_p50_ms: { large_5000: quotaBig, large_25: quotaQuarter, small_25: quotaSmall },
      list_p50_ms: { unfiltered: listAll, state_stopped: listStopped, state_running_none: listRunning },
      create_p50_ms: { large: createLarge, small: createSmall, runs: creates },
    };
  } finally {
    await Promise.all(Object.values(services).map((s) => stopChild(s.child, 120_000)));
    for (const dir of Object.values(dirs)) fs.rmSync(dir, { recursive: true, force: true });
  }
}

module.exports = { runScale };

if (require.main === module) {
  runScale({ windowS: Number(process.env.WINDOW_S ?? 60), creates: Number(process.env.CREATES ?? 100), quotaReads: Number(process.env.READS ?? 300) })
    .then((r) => console.log(JSON.stringify(r, null, 2)))
    .catch((err) => {
      console.error(err);
      process.exitCode = 1;
    });
}
