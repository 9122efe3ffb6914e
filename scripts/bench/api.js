'use strict';
/**
 * Part 1, API overhead: the whole service against a bare express handler sending the same bytes.
 *
 * Each server runs in its own child process (api-server.js) and autocannon drives it from this process, over
 * loopback, with the same connections and duration:
 *   full   `npm start`'s startService on a temp DATA_DIR: rate limiter, bearer token lookup (SHA-256 + SQLite),
 *          openapi-backend routing and Ajv validation, the handler, SQLite, res.json;
 *   bare   express with one route per path that writes the status, headers and body captured once from `full`
 *          (minus Date/Connection/Keep-Alive), so both put the same bytes on the wire;
 *   what-if  (unless --no-what-if) `full` with what-if-router.js loaded: openapi-backend's routing done once
 *          instead of per request, to measure the change proposed for src/app.ts.
 * Rounds alternate between the servers so drift hits all alike.
 *
 * Numbers per server: req/s = autocannon's mean requests per second; p50/p99 = latency percentiles (ms);
 * cpu_us = CPU time the server process used per request (utime+stime from /proc/<pid>/stat over the round ÷
 * requests), which does not depend on whether the load generator or the server saturated first.
 * ratio = full req/s ÷ bare req/s (target ≥ 0.70).
 * Profile (unless --no-profile): one more round of GET /v1/servers/{id} against `full` (and `what-if`) with V8's
 * CPU profiler running in it for exactly that round; profile.js reports where the time went.
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

function startChild(mode, env = {}) {
  return fork(path.join(__dirname, 'api-server.js'), [mode], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: { ...process.env, ...env },
  });
}

async function stopChild(child) {
  if (!child.connected) return exited(child);
  child.send({ type: 'stop' });
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  await exited(child);
  clearTimeout(timer);
}

async function request(port, token, method, url, body) {
  const res = await fetch(`http://127.0.0.1:${port}${url}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, headers: Object.fromEntries(res.headers), bytes: Buffer.from(await res.arrayBuffer()) };
}

async function ok(...args) {
  const r = await request(...args);
  if (r.status >= 300) throw new Error(`${args[2]} ${args[3]}: ${r.status} ${r.bytes}`);
  return r;
}

/** Starts a full-stack child, creates SERVERS servers through its API and waits until every install finished. */
async function startFull(env) {
  const child = startChild('full', env);
  const { port, token } = await nextMessage(child, (m) => m.type === 'listening');
  for (let i = 0; i < SERVERS; i++) {
    await ok(port, token, 'POST', '/v1/servers', { name: `bench-${i}`, plan: 'micro', version: 'flying-squid-1.20' });
  }
  for (let tries = 0; tries < 100; tries++) {
    const list = JSON.parse((await ok(port, token, 'GET', '/v1/servers?limit=100')).bytes).data;
    if (list.every((s) => s.state === 'stopped')) return { child, port, token, ids: list.map((s) => s.id) };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('servers did not finish installing');
}

const DROP = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);

async function capture(port, token, url) {
  const r = await ok(port, token, 'GET', url);
  const headers = Object.fromEntries(Object.entries(r.headers).filter(([k]) => !DROP.has(k)));
  return { url, path: url.split('?')[0], status: r.status, headers, body: r.bytes.toString('base64'), length: r.bytes.length };
}

/** One autocannon round against `server`, with the server process's CPU time over it. */
async function round(server, url, token, durationS) {
  const before = procUsage(server.child.pid);
  const r = await autocannon({
    url: `http://127.0.0.1:${server.port}${url}`, connections: CONNECTIONS, duration: durationS,
    headers: { authorization: `Bearer ${token}` },
  });
  const after = procUsage(server.child.pid);
  const bad = r.non2xx + r.errors + r.timeouts;
  if (bad > 0) throw new Error(`${server.name} ${url}: ${bad} failed requests (non2xx ${r.non2xx}, errors ${r.errors}, timeouts ${r.timeouts})`);
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

/** The what-if server must answer like the real one: same bodies, same 404 and 405. */
async function sameAnswers(a, b, cases) {
  const probes = [...cases.map((c) => ['GET', c.url]), ['DELETE', () => '/v1/servers'], ['GET', () => '/v1/nothing'],
    ['PUT', (s) => `/v1/servers/${s.ids[0]}`]];
  for (const [method, url] of probes) {
    const [x, y] = [await request(a.port, a.token, method, url(a)), await request(b.port, b.token, method, url(b))];
    const norm = (r) => `${r.status} ${r.bytes.toString().replace(/srv_\w+|tok_\w+|usr_\w+|"\d{4}-\d\d-\d\dT[^"]+"|bench-\d+/g, '…')}`;
    if (norm(x) !== norm(y)) throw new Error(`what-if answers ${method} ${url} differently:\n${norm(x)}\n${norm(y)}`);
  }
}

async function runApi({ durationS = 10, rounds = 2, profile = true, whatIf = true, log = console.log } = {}) {
  const started = [];
  try {
    const full = { name: 'full', ...(await startFull()) };
    started.push(full.child);
    // url(server): each full-stack server has its own ids; the bare one serves what was captured from `full`.
    const cases = [
      { name: 'GET /v1/servers/{id}', url: (s) => `/v1/servers/${s.ids[7]}` },
      { name: 'GET /v1/servers?limit=20', url: () => '/v1/servers?limit=20' },
    ];
    for (const c of cases) c.captured = await capture(full.port, full.token, c.url(full));

    const bareChild = startChild('bare');
    started.push(bareChild);
    bareChild.send({ type: 'responses', responses: cases.map((c) => c.captured) });
    const { port: barePort } = await nextMessage(bareChild, (m) => m.type === 'listening');
    const bare = { name: 'bare', child: bareChild, port: barePort, token: full.token, ids: full.ids };
    for (const c of cases) {
      if ((await ok(bare.port, bare.token, 'GET', c.url(bare))).bytes.toString('base64') !== c.captured.body) {
        throw new Error(`bare ${c.url} does not send the captured body`);
      }
    }
    const servers = [full, bare];
    if (whatIf) {
      const w = { name: 'what_if', ...(await startFull({ GSH_BENCH_WHAT_IF: 'cached-routing' })) };
      started.push(w.child);
      await sameAnswers(full, w, cases);
      servers.push(w);
    }
    const results = [];
    for (const c of cases) {
      log(`  api: ${c.name} (${c.captured.length} B body): ${WARMUP_S}s warm-up, then ${rounds} × ${durationS}s per server`);
      const runs = Object.fromEntries(servers.map((s) => [s.name, []]));
      for (const s of servers) await round(s, c.url(s), s.token, WARMUP_S);
      for (let k = 0; k < rounds; k++) {
        for (const s of servers) runs[s.name].push(await round(s, c.url(s), s.token, durationS));
      }
      const row = { name: c.name, body_bytes: c.captured.length };
      for (const s of servers) row[s.name] = middle(runs[s.name]);
      row.ratio = row.full.rps / row.bare.rps;
      if (row.what_if) row.what_if_ratio = row.what_if.rps / row.bare.rps;
      row.rounds = runs;
      log(`    full ${fmt(row.full.rps)} req/s, bare ${fmt(row.bare.rps)} req/s, ratio ${fmt(row.ratio, 2)}` +
        (row.what_if ? `; what-if ${fmt(row.what_if.rps)} req/s, ratio ${fmt(row.what_if_ratio, 2)}` : ''));
      results.push(row);
    }

    // One more round per full-stack server with V8's CPU profiler running in it for exactly that round.
    const profiles = {};
    for (const server of profile ? servers.filter((x) => x.name !== 'bare') : []) {
      log(`  api: profiling ${server.name} under ${durationS}s of ${cases[0].name}`);
      fs.mkdirSync(RESULTS, { recursive: true });
      const file = path.join(RESULTS, `api-${server.name}.cpuprofile`);
      server.child.send({ type: 'profile-start' });
      await nextMessage(server.child, (m) => m.type === 'profiling');
      const r = await round(server, cases[0].url(server), server.token, durationS);
      server.child.send({ type: 'profile-stop', file });
      await nextMessage(server.child, (m) => m.type === 'profiled');
      const sum = summarize(file, 15);
      profiles[server.name] = { endpoint: cases[0].name, rps_under_profiler: r.rps, requests: r.requests,
        file: path.relative(ROOT, file), busy_us_per_request: (sum.busy_ms * 1000) / r.requests, ...sum };
    }
    return { connections: CONNECTIONS, duration_s: durationS, rounds, servers_existing: SERVERS, cases: results, profiles };
  } finally {
    await Promise.all(started.map(stopChild));
  }
}

module.exports = { runApi };

if (require.main === module) {
  runApi({ durationS: Number(process.env.DURATION_S ?? 5), rounds: 1 }).then((r) => console.log(JSON.stringify(r, null, 2)));
}
