'use strict';
/**
 * Start-up (BENCHMARKS.md §8, issue 32 "Start-up compiles what it needs"): how long the service takes to listen, and
 * what the first request to each operation costs, each set against a baseline started or sent the same way in the
 * same run.
 *
 *   listen   `node dist/src/main.js` (what `npm start` runs after its build) on a fresh DATA_DIR, from spawn to its
 *            "gsh is running" line on stderr (written once the HTTP server listens), against bare express listening
 *            in `node -e`, spawned the same way: the ratio is the service's own start-up cost in units of a Node
 *            process that loads express and listens. Runs alternate between the two; medians.
 *   npm      `npm start` as a whole (its build has nothing to do: tsc -b and the docs build check and skip), once.
 *   first    a service, a token made on its database, then every operation of openapi/v1.yaml once (the first
 *            request, which compiles that operation's request validators: src/http/openapi.ts) and again (the
 *            same request, warm). Requests carry a valid token but path values and bodies that fail validation
 *            or name nothing, so no request changes anything or starts a game; what is timed is the client's wait
 *            for the whole answer (for an event stream that opens, its headers), on a kept-alive connection. The
 *            process's first /v1 request (a POST with a body to a path no operation has) goes before them and is
 *            reported apart: what every route shares once is paid there. The
 *            slowest first request is set against the median second request. Each service runs in a fresh process
 *            (as `npm start`'s), as many times as `listen` starts; each figure is the median over them.
 */
const fs = require('node:fs');
const path = require('node:path');
const { spawn, fork } = require('node:child_process');
const YAML = require('yaml');
const { ROOT, dist, tempDir, median, msSince, exited, nextMessage } = require('./lib');

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

/** Spawns `command args` in ROOT and resolves with the ms until a line of its stderr matches `ready`, then stops it. */
async function timeToReady(command, args, env, ready, timeoutMs = 60_000) {
  const started = process.hrtime.bigint();
  // detached: its own process group, so `npm start`'s shell and node go together on the kill below
  const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  try {
    return await new Promise((resolve, reject) => {
      let text = '';
      const timer = setTimeout(() => reject(new Error(`${command} ${args.join(' ')}: not ready within ${timeoutMs} ms: ${text}`)), timeoutMs);
      child.stderr.on('data', (chunk) => {
        text += chunk;
        if (ready.test(text)) {
          clearTimeout(timer);
          resolve(msSince(started));
        }
      });
      child.once('exit', (code) => reject(new Error(`${command} exited (${code}) before it was ready: ${text}`)));
    });
  } finally {
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid, 'SIGTERM');
    await exited(child);
  }
}

const BARE = `const http = require('express')().listen(0, '127.0.0.1', () => process.stderr.write('listening\\n'));`;

/** Env of a fresh service: its own DATA_DIR, a free port on loopback. */
function serviceEnv(dir) {
  return { DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', GAME_PORT_RANGE: '27500-27599' };
}

async function listenTimes(runs) {
  const bare = [];
  const service = [];
  for (let i = 0; i < runs; i++) {
    bare.push(await timeToReady(process.execPath, ['-e', BARE], {}, /listening/));
    const dir = tempDir('startup');
    try {
      service.push(await timeToReady(process.execPath, ['dist/src/main.js'], serviceEnv(dir), /gsh is running/));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  return { bare_ms: bare, service_ms: service };
}

async function npmStart() {
  const dir = tempDir('startup-npm');
  try {
    return await timeToReady('npm', ['start'], serviceEnv(dir), /gsh is running/, 120_000);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Every operation of the spec, as a request that names nothing: `x` for each path value, `{}` as the body. */
function operations() {
  const spec = YAML.parse(fs.readFileSync(path.join(ROOT, 'openapi', 'v1.yaml'), 'utf8'));
  const out = [];
  for (const [p, item] of Object.entries(spec.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (op) out.push({ operationId: op.operationId, method: method.toUpperCase(), path: p.replace(/\{[^}]+\}/g, 'x'), body: op.requestBody ? '{}' : undefined });
    }
  }
  return out;
}

/** One service: each operation's first request and its second, in ms as the client waited. */
async function firstRequests() {
  const { startService } = dist('service');
  const { loadConfig } = dist('config');
  const { silentLogger } = dist('log');
  const dir = tempDir('startup-first');
  // In this process, as `npm start` would run it: nothing compiled before the first request to an operation.
  const service = await startService(loadConfig(serviceEnv(dir)), silentLogger);
  try {
    const user = service.store.users.ensure('bench@example.com');
    const { token } = service.store.tokens.create(user.id, {
      name: 'bench', scopes: ['servers:read', 'servers:write', 'tokens:manage'],
    });
    const base = `http://127.0.0.1:${service.http.address().port}`;
    await (await fetch(`${base}/healthz`)).arrayBuffer(); // the connection, opened before any timing
    // This client's own first POST with a body (undici compiles that path once), outside /v1, so that first_v1 times
    // the service's first /v1 request and not the bench's first upload.
    await (await fetch(`${base}/healthz`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' })).arrayBuffer();
    const send = async (op) => {
      const started = process.hrtime.bigint();
      const res = await fetch(`${base}${op.path}`, {
        method: op.method,
        headers: { Authorization: `Bearer ${token}`, ...(op.body ? { 'Content-Type': 'application/json' } : {}) },
        body: op.body,
      });
      // An event stream that opened (GET /v1/events/stream names nothing to miss) never ends: its headers are the answer.
      if (/^text\/event-stream/.test(res.headers.get('content-type') ?? '')) await res.body?.cancel();
      else await res.arrayBuffer();
      const ms = msSince(started);
      if (res.status >= 500) throw new Error(`${op.method} ${op.path}: ${res.status}`);
      return { ms, status: res.status };
    };
    // The process's first /v1 request pays what every route shares once (JIT of the middleware, the token
    // statement's first run; iconv-lite's tables for body-parser's decoder are loaded at start, src/http/middleware.ts):
    // timed on its own, a POST with a body to a path no operation has, so each operation's first is its own cost.
    const firstV1 = await send({ method: 'POST', path: '/v1/nothing', body: '{}' });
    const rows = [];
    for (const op of operations()) {
      const first = await send(op);
      const second = await send(op);
      rows.push({ operationId: op.operationId, status: first.status, first_ms: first.ms, second_ms: second.ms });
    }
    return { firstV1Ms: firstV1.ms, rows };
  } finally {
    await service.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * firstRequests in `runs` fresh processes, one after another (a process's first requests happen once: in this one,
 * code the earlier services ran would be warm), and per operation the median of its first and second requests, so
 * one scheduling stall of a busy machine does not stand for an operation's cost.
 */
async function firstRequestsMedian(runs) {
  const results = [];
  for (let i = 0; i < runs; i++) {
    const child = fork(__filename, ['first-child'], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    results.push(await nextMessage(child, (m) => m.type === 'first', 300_000));
    await exited(child);
  }
  const rows = results[0].rows.map((row, k) => ({
    operationId: row.operationId,
    status: row.status,
    first_ms: median(results.map((r) => r.rows[k].first_ms)),
    second_ms: median(results.map((r) => r.rows[k].second_ms)),
  }));
  return { firstV1Ms: median(results.map((r) => r.firstV1Ms)), rows };
}

async function runStartup({ runs = 5, log = console.log } = {}) {
  log(`  startup: ${runs} × (bare express listen, service listen), alternating`);
  const listen = await listenTimes(runs);
  log('  startup: npm start, once');
  const npm = await npmStart();
  log(`  startup: the first request to every operation, in ${runs} fresh processes`);
  const { firstV1Ms, rows: first } = await firstRequestsMedian(runs);
  const slowest = first.reduce((a, b) => (b.first_ms > a.first_ms ? b : a));
  const out = {
    listen: { ...listen, bare_median_ms: median(listen.bare_ms), service_median_ms: median(listen.service_ms) },
    npm_start_ms: npm,
    first_v1_ms: firstV1Ms,
    first_requests: first,
    operations: first.length,
    slowest_first: { operationId: slowest.operationId, ms: slowest.first_ms },
    first_median_ms: median(first.map((r) => r.first_ms)),
    second_median_ms: median(first.map((r) => r.second_ms)),
  };
  out.listen.ratio = out.listen.service_median_ms / out.listen.bare_median_ms;
  out.slowest_first.ratio = slowest.first_ms / out.second_median_ms;
  return out;
}

module.exports = { runStartup };

if (require.main === module && process.argv[2] === 'first-child') {
  firstRequests().then((r) => process.send({ type: 'first', ...r }, () => process.exit(0)));
} else if (require.main === module) {
  runStartup({ runs: Number(process.env.RUNS ?? 3) }).then((r) => {
    const { first_requests: rows, ...rest } = r;
    console.log(JSON.stringify(rest, null, 2));
    for (const row of [...rows].sort((a, b) => b.first_ms - a.first_ms).slice(0, 8)) console.log(row);
  }, (err) => {
    console.error(err);
    process.exitCode = 1;
  });
}
