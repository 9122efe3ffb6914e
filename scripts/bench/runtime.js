'use strict';
/**
 * Part 3, runtime cost: what the control plane adds to starting a game, and what it costs per running game.
 *
 * The service runs in a child process (runtime-service.js: startService on a temp DATA_DIR, game ports
 * 27600-27700, plan `micro`) and this process drives it over its API on 127.0.0.1.
 *
 * start → running: POST /v1/servers/{id}/actions {type:start}, then GET the action every 10 ms until it has
 *   succeeded (its server is then `running`): milliseconds from sending the POST. Against it, the same game
 *   launched directly: the argv the software definition renders for that server (renderCommand of
 *   src/runtime/software/flying-squid.json: node, the heap flag, flying-squid-launcher.cjs and its arguments),
 *   under the same `nice` level, detached, with an IPC channel, in a folder installed the same way; milliseconds
 *   from spawn() until the launcher's IPC `ready` message. Runs alternate (one warm-up each, which also
 *   generates each world once), median of the rest; ratio = API ÷ direct (target ≤ 1.1). service-side = the
 *   action row's completed_at − created_at, i.e. without HTTP and polling.
 * control plane per running server: with 0, 1, 10 and 30 servers running, the service process's own CPU time
 *   (utime+stime of /proc/<pid>/stat; its games are other processes) over WINDOW_S, as % of one core, and its
 *   RSS (VmRSS, sampled every second: mean and max). Per server = (CPU at N − CPU at 0) ÷ N.
 */
const fs = require('node:fs');
const path = require('node:path');
const { fork, spawn } = require('node:child_process');
const { dist, tempDir, nextMessage, exited, stopChild, median, msSince, procUsage, sleep, fmt } = require('./lib');

const PLAN = 'micro';
const VERSION = 'flying-squid-1.20';

function client(port, token) {
  return async function api(method, url, body) {
    const res = await fetch(`http://127.0.0.1:${port}${url}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const json = await res.json();
    if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
}

async function waitFor(check, timeoutMs, what, everyMs = 10) {
  const start = Date.now();
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

/**
 * POSTs an action and polls it until it is done; returns ms from the POST to seeing it succeed. Also records the
 * service's own view (completed_at − created_at of the action row) in `serviceSide`, which leaves out HTTP and
 * the polling interval.
 */
const serviceSide = [];
async function action(api, id, type, timeoutMs = 180_000) {
  const t0 = process.hrtime.bigint();
  const a = await api('POST', `/v1/servers/${id}/actions`, { type });
  const done = await waitFor(async () => {
    const cur = await api('GET', `/v1/servers/${id}/actions/${a.id}`);
    return cur.status === 'succeeded' || cur.status === 'failed' ? cur : null;
  }, timeoutMs, `${type} of ${id}`);
  if (done.status !== 'succeeded') throw new Error(`${type} of ${id} failed: ${JSON.stringify(done.error)}`);
  serviceSide.push(Date.parse(done.completed_at) - Date.parse(done.created_at));
  return msSince(t0);
}

/** Launches flying-squid the way the runtime does, without the runtime; resolves with ms to `ready` and a stop(). */
async function launchDirect(dir, port) {
  const { loadSoftwareCatalog } = dist('runtime/software-catalog');
  const { launchSpec } = dist('runtime/game');
  const def = loadSoftwareCatalog().get('flying-squid');
  const plan = dist('catalog/plans').findPlan(PLAN);
  fs.mkdirSync(path.join(dir, 'world'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'logs'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'settings.json'), JSON.stringify(def.settings ?? {}, null, 2) + '\n');
  // The runtime's own launch spec (argv, heap, niceness), so the two sides launch the same command.
  const server = { id: 'srv_direct', game_version: '1.20' };
  const { argv, niceness: nice } = launchSpec({ server, def, plan, address: { host: '127.0.0.1', port } }, dir);
  const [file, ...args] = nice > 0 && fs.existsSync('/usr/bin/nice') ? ['/usr/bin/nice', '-n', String(nice), ...argv] : argv;
  const t0 = process.hrtime.bigint();
  const child = spawn(file, args, {
    cwd: dir, env: { ...process.env, GSH_SERVER_ID: 'srv_direct' }, stdio: ['pipe', 'pipe', 'pipe', 'ipc'], detached: true,
  });
  child.stdout.resume();
  child.stderr.resume();
  await nextMessage(child, (m) => m && m.type === 'ready', 180_000);
  const ms = msSince(t0);
  return {
    ms,
    async stop() {
      child.stdin.write('stop\n');
      const timer = setTimeout(() => { try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ } }, 15_000);
      await exited(child);
      clearTimeout(timer);
    },
  };
}

/** The service process's CPU (% of one core) and RSS over windowS, with its children excluded. */
async function measureService(pid, windowS) {
  const before = procUsage(pid);
  const rss = [];
  const t0 = process.hrtime.bigint();
  for (let k = 0; k < windowS; k++) {
    await sleep(1000);
    rss.push(procUsage(pid).rssBytes);
  }
  const cpuMs = procUsage(pid).cpuMs - before.cpuMs;
  return { cpu_percent: (100 * cpuMs) / msSince(t0), rss_mean_mb: rss.reduce((a, b) => a + b, 0) / rss.length / 2 ** 20, rss_max_mb: Math.max(...rss) / 2 ** 20 };
}

/** Pids of processes whose command line mentions `needle` (our DATA_DIR): what must be gone at the end. */
function processesUnder(needle) {
  const pids = [];
  for (const p of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(needle)) pids.push(Number(p));
    } catch { /* exited meanwhile */ }
  }
  return pids;
}

async function runRuntime({ startRuns = 5, levels = [1, 10, 30], windowS = 30, batch = 5, log = console.log } = {}) {
  const dir = tempDir('runtime');
  const child = fork(path.join(__dirname, 'runtime-service.js'), [dir], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  try {
    const { port, token } = await nextMessage(child, (m) => m.type === 'listening');
    const api = client(port, token);
    const max = Math.max(...levels);
    const ids = [];
    for (let i = 0; i < max; i++) ids.push((await api('POST', '/v1/servers', { name: `bench-${i}`, plan: PLAN, version: VERSION })).id);
    await waitFor(async () => (await api('GET', '/v1/servers?limit=100')).data.every((s) => s.state === 'stopped'), 30_000, 'installs');

    // --- start → running, API against direct ---------------------------------------------------------------------
    const apiMs = [];
    const serviceMs = [];
    const directMs = [];
    for (let k = 0; k <= startRuns; k++) {
      const a = await action(api, ids[0], 'start');
      const aService = serviceSide[serviceSide.length - 1];
      await action(api, ids[0], 'stop');
      const d = await launchDirect(path.join(dir, 'direct'), 27699);
      await d.stop();
      if (k > 0) [apiMs.push(a), serviceMs.push(aService), directMs.push(d.ms)];
      log(`  runtime: start → running ${k === 0 ? '(warm-up) ' : ''}API ${fmt(a)} ms (service-side ${fmt(aService)} ms), direct ${fmt(d.ms)} ms`);
    }
    const start = { runs: startRuns, api_ms: apiMs, api_service_side_ms: serviceMs, direct_ms: directMs,
      api_median_ms: median(apiMs), api_service_side_median_ms: median(serviceMs), direct_median_ms: median(directMs) };
    start.ratio = start.api_median_ms / start.direct_median_ms;

    // --- control plane cost per running server -------------------------------------------------------------------
    const usage = [];
    log(`  runtime: service idle (0 running) for ${windowS}s`);
    usage.push({ running: 0, ...(await measureService(child.pid, windowS)) });
    let running = 0;
    for (const n of levels) {
      while (running < n) {
        const next = ids.slice(running, Math.min(n, running + batch));
        await Promise.all(next.map((id) => action(api, id, 'start')));
        running += next.length;
      }
      await sleep(3000); // let the last starts settle (first samples, first pings)
      log(`  runtime: ${n} running for ${windowS}s`);
      usage.push({ running: n, ...(await measureService(child.pid, windowS)) });
    }
    const idle = usage[0].cpu_percent;
    for (const u of usage) u.cpu_percent_per_server = u.running ? (u.cpu_percent - idle) / u.running : null;
    return { plan: PLAN, version: VERSION, window_s: windowS, start, usage };
  } finally {
    await stopChild(child, 90_000);
    // Nothing we started may outlive the bench: kill (by pid) any game still running from our DATA_DIR.
    await sleep(500);
    const left = processesUnder(dir);
    for (const pid of left) try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
    if (left.length) log(`  runtime: killed ${left.length} leftover process(es): ${left.join(', ')}`);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

module.exports = { runRuntime, client, action, waitFor, measureService, processesUnder };

if (require.main === module) {
  runRuntime({ startRuns: Number(process.env.RUNS ?? 1), levels: (process.env.LEVELS ?? '1,3').split(',').map(Number), windowS: Number(process.env.WINDOW_S ?? 5) })
    .then((r) => console.log(JSON.stringify(r, null, 2)));
}
