'use strict';
/**
 * Part 1, API overhead (BENCHMARKS.md §1): the whole service against a bare express app sending the same bytes.
 *
 * Each server runs in its own child process (api-server.js) and autocannon drives it from this process, over
 * loopback, with the same connections and duration:
 *   full      `npm start`'s startService on a temp DATA_DIR with the access log off (silentLogger): rate limiter,
 *             bearer token lookup, openapi-backend routing and Ajv validation, the handler, SQLite, the answer;
 *   full-log  the same with the production access log (one JSON line per request to stdout, a pipe this process
 *             drains, as a log collector would);
 *   bare      express with one route per captured request, writing the status, headers and body captured once
 *             from `full` (minus Date/Connection/Keep-Alive), after reading the request's body, so every server
 *             puts the same bytes on the wire.
 * Cases (issue 18): GET one server, GET a page of 20, POST /v1/servers with an Idempotency-Key (every request after
 * the first is the replay of one create), and a POST refused by validation (400). Rounds alternate between the
 * servers so drift hits all alike.
 *
 * Numbers per server: req/s = autocannon's mean; p50/p99 = latency percentiles (ms); cpu_us = CPU time the server
 * process used per request (utime+stime from /proc/<pid>/stat over the round ÷ requests), which does not depend on
 * whether the load generator or the server saturated first. ratio = full req/s ÷ bare req/s (target ≥ 0.5 for the
 * reads, stretch 0.7).
 * Profile (unless --no-profile): one more round of each read against `full`, then against `bare`, with V8's CPU
 * profiler running in that server for exactly that round; profile.js reports where the time went. Run alone with
 * PROFILE=1, this script prints the two side by side per area (`areaTable`).
 */
const path = require('node:path');
const fs = require('node:fs');
const { fork } = require('node:child_process');
const autocannon = require('autocannon');
const { ROOT, RESULTS, nextMessage, exited, median, procUsage, fmt } = require('./lib');
const { summarize } = require('./profile');

const SERVERS = 25; // more than one page of 20
const CONNECTIONS = 10;
const WARMUP_S = 3;

const CASES = [
  { name: 'GET /v1/servers/{id}', read: true, method: 'GET', url: (s) => `/v1/servers/${s.ids[7]}` },
  { name: 'GET /v1/servers?limit=20', read: true, method: 'GET', url: () => '/v1/servers?limit=20' },
  {
    name: 'POST /v1/servers (idempotent replay)', method: 'POST', url: () => '/v1/servers', status: 201,
    headers: { 'idempotency-key': 'bench-create-1' }, body: { name: 'bench-idem', plan: 'micro', version: 'flying-squid-1.20' },
  },
  { name: 'POST /v1/servers 400 (validation)', method: 'POST', url: () => '/v1/servers', status: 400, body: { name: '', plan: 'micro', version: 'flying-squid-1.20' } },
];

function startChild(mode) {
  const child = fork(path.join(__dirname, 'api-server.js'), [mode], { stdio: ['ignore', mode === 'full-log' ? 'pipe' : 'inherit', 'inherit', 'ipc'] });
  child.stdout?.resume(); // the access log goes somewhere, as to a collector; nobody reads it here
  return child;
}

async function stopChild(child) {
  if (!child.connected) return exited(child);
  child.send({ type: 'stop' });
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  await exited(child);
  clearTimeout(timer);
}

async function request(port, token, c, url) {
  const res = await fetch(`http://127.0.0.1:${port}${url}`, {
    method: c.method,
    headers: { Authorization: `Bearer ${token}`, ...(c.headers ?? {}), ...(c.body ? { 'Content-Type': 'application/json' } : {}) },
    body: c.body ? JSON.stringify(c.body) : undefined,
  });
  return { status: res.status, headers: Object.fromEntries(res.headers), bytes: Buffer.from(await res.arrayBuffer()) };
}

async function expect(port, token, c, url, status = 200) {
  const r = await request(port, token, c, url);
  if (r.status !== status) throw new Error(`${c.method} ${url}: ${r.status} ${r.bytes}`);
  return r;
}

/** Starts a full-stack child, creates SERVERS servers through its API and waits until every install finished. */
async function startFull(mode) {
  const child = startChild(mode);
  const { port, token } = await nextMessage(child, (m) => m.type === 'listening');
  const create = { method: 'POST', body: null };
  for (let i = 0; i < SERVERS; i++) {
    await expect(port, token, { ...create, body: { name: `bench-${i}`, plan: 'micro', version: 'flying-squid-1.20' } }, '/v1/servers', 201);
  }
  for (let tries = 0; tries < 100; tries++) {
    const list = JSON.parse((await expect(port, token, { method: 'GET' }, '/v1/servers?limit=100')).bytes).data;
    if (list.every((s) => s.state === 'stopped')) return { name: mode, child, port, token, ids: list.map((s) => s.id) };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('servers did not finish installing');
}

const DROP = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);

/** The answer `bare` replays for a case: what `full` sent the second time (a create's replay, not its first 201). */
async function capture(server, c) {
  await expect(server.port, server.token, c, c.url(server), c.status ?? 200);
  const r = await expect(server.port, server.token, c, c.url(server), c.status ?? 200);
  const headers = Object.fromEntries(Object.entries(r.headers).filter(([k]) => !DROP.has(k)));
  return { method: c.method, path: c.url(server).split('?')[0], key: c.headers?.['idempotency-key'] ?? '', status: r.status, headers, body: r.bytes.toString('base64'), length: r.bytes.length };
}

/** One autocannon round against `server`, with the server process's CPU time over it. */
async function round(server, c, durationS) {
  const before = procUsage(server.child.pid);
  const r = await autocannon({
    url: `http://127.0.0.1:${server.port}${c.url(server)}`, connections: CONNECTIONS, duration: durationS, method: c.method,
    headers: { authorization: `Bearer ${server.token}`, ...(c.headers ?? {}), ...(c.body ? { 'content-type': 'application/json' } : {}) },
    body: c.body ? JSON.stringify(c.body) : undefined,
  });
  const after = procUsage(server.child.pid);
  const want = String(c.status ?? 200);
  const good = r.statusCodeStats?.[want]?.count ?? 0;
  if (good !== r.requests.total || r.errors + r.timeouts > 0) {
    throw new Error(`${server.name} ${c.name}: ${r.requests.total - good} of ${r.requests.total} not ${want} (errors ${r.errors}, timeouts ${r.timeouts})`);
  }
  return {
    rps: r.requests.average, p50_ms: r.latency.p50, p99_ms: r.latency.p99, requests: r.requests.total,
    cpu_us: ((after.cpuMs - before.cpuMs) * 1000) / r.requests.total,
  };
}

/** The mean of two rounds, the median of more. */
function middle(runs) {
  const out = {};
  for (const k of Object.keys(runs[0])) {
    const xs = runs.map((r) => r[k]);
    out[k] = xs.length === 2 ? (xs[0] + xs[1]) / 2 : median(xs);
  }
  return out;
}

async function runApi({ durationS = 10, rounds = 2, profile = true, log = console.log } = {}) {
  const started = [];
  try {
    const full = await startFull('full');
    started.push(full.child);
    const fullLog = await startFull('full-log');
    started.push(fullLog.child);
    // url(server): each full-stack server has its own ids; the bare one serves what was captured from `full`.
    for (const c of CASES) c.captured = await capture(full, c);
    for (const c of CASES) await capture(fullLog, c); // its idempotent create made once, like full's

    const bareChild = startChild('bare');
    started.push(bareChild);
    bareChild.send({ type: 'responses', responses: CASES.map((c) => c.captured) });
    const { port: barePort } = await nextMessage(bareChild, (m) => m.type === 'listening');
    const bare = { name: 'bare', child: bareChild, port: barePort, token: full.token, ids: full.ids };
    for (const c of CASES) {
      if ((await expect(bare.port, bare.token, c, c.url(bare), c.status ?? 200)).bytes.toString('base64') !== c.captured.body) {
        throw new Error(`bare ${c.name} does not send the captured body`);
      }
    }
    const servers = [full, fullLog, bare];
    const results = [];
    for (const c of CASES) {
      log(`  api: ${c.name} (${c.captured.length} B body): ${WARMUP_S}s warm-up, then ${rounds} × ${durationS}s per server`);
      const runs = Object.fromEntries(servers.map((s) => [s.name, []]));
      for (const s of servers) await round(s, c, WARMUP_S);
      for (let k = 0; k < rounds; k++) {
        for (const s of servers) runs[s.name].push(await round(s, c, durationS));
      }
      const row = { name: c.name, read: c.read === true, body_bytes: c.captured.length };
      for (const s of servers) row[s.name.replace('-', '_')] = middle(runs[s.name]);
      row.ratio = row.full.rps / row.bare.rps;
      row.ratio_log = row.full_log.rps / row.bare.rps;
      row.rounds = runs;
      log(`    full ${fmt(row.full.rps)} req/s (${fmt(row.full.cpu_us)} µs CPU), with access log ${fmt(row.full_log.rps)} (${fmt(row.full_log.cpu_us)} µs), ` +
        `bare ${fmt(row.bare.rps)} (${fmt(row.bare.cpu_us)} µs): ratio ${fmt(row.ratio, 2)}, with log ${fmt(row.ratio_log, 2)}`);
      results.push(row);
    }

    // One more round of each read with V8's CPU profiler running in `full`, then in `bare`, for exactly that round:
    // side by side, per area, they show where the full stack's extra time goes (BENCHMARKS.md §1).
    const profiles = {};
    const bareProfiles = {};
    for (const c of profile ? CASES.filter((x) => x.read) : []) {
      for (const s of [full, bare]) {
        log(`  api: profiling ${s.name} under ${durationS}s of ${c.name}`);
        fs.mkdirSync(RESULTS, { recursive: true });
        const file = path.join(RESULTS, `api-${s.name}-${c.name.replace(/\W+/g, '_')}.cpuprofile`);
        s.child.send({ type: 'profile-start' });
        await nextMessage(s.child, (m) => m.type === 'profiling');
        const r = await round(s, c, durationS);
        s.child.send({ type: 'profile-stop', file });
        await nextMessage(s.child, (m) => m.type === 'profiled');
        const sum = summarize(file, 15);
        const summary = { rps_under_profiler: r.rps, requests: r.requests, file: path.relative(ROOT, file), busy_us_per_request: (sum.busy_ms * 1000) / r.requests, ...sum };
        (s === full ? profiles : bareProfiles)[c.name] = summary;
      }
    }
    return { connections: CONNECTIONS, duration_s: durationS, rounds, servers_existing: SERVERS, cases: results, profiles, bare_profiles: bareProfiles };
  } finally {
    await Promise.all(started.map(stopChild));
  }
}

/** µs a request per area, full and bare side by side, largest difference first. */
function areaTable(full, bare) {
  const perRequest = (p) => new Map(p.by_area_all.map((a) => [a.name, (a.ms * 1000) / p.requests]));
  const [f, b] = [perRequest(full), perRequest(bare)];
  const rows = [...new Set([...f.keys(), ...b.keys()])].map((name) => [name, f.get(name) ?? 0, b.get(name) ?? 0]);
  rows.sort((x, y) => y[1] - y[2] - (x[1] - x[2]));
  const lines = [`  busy µs a request: full ${Math.round(full.busy_us_per_request)}, bare ${Math.round(bare.busy_us_per_request)}`];
  for (const [name, x, y] of rows) if (Math.abs(x - y) >= 0.5) lines.push(`  ${(x - y).toFixed(1).padStart(7)} ${x.toFixed(1).padStart(7)} ${y.toFixed(1).padStart(7)}  ${name}`);
  return lines.join('\n');
}

module.exports = { runApi, areaTable };

if (require.main === module) {
  runApi({ durationS: Number(process.env.DURATION_S ?? 5), rounds: 1, profile: process.env.PROFILE === '1' }).then((r) => {
    for (const c of r.cases) console.log(c.name, c.ratio.toFixed(2), c.ratio_log.toFixed(2), Math.round(c.full.cpu_us), Math.round(c.full_log.cpu_us), Math.round(c.bare.cpu_us));
    for (const [name, p] of Object.entries(r.profiles)) {
      console.log(`${name}: µs a request per area, full − bare, full, bare`);
      console.log(areaTable(p, r.bare_profiles[name]));
      console.log(name, JSON.stringify(p).slice(0, 3000));
    }
  });
}
