'use strict';
/**
 * Part 5, containers (issue 11): the same service with RUNTIME=local and RUNTIME=docker, side by side. Each mode
 * runs the service in a child process (runtime-service.js on a temp DATA_DIR, game ports 28850-28899, plan
 * `micro`, flying-squid) driven over its API.
 *
 * start → running: POST a start action and poll it until it has succeeded, as in runtime.js; one warm-up,
 *   median of the rest; ratio = docker ÷ local (target ≤ 1.3). The container's includes creating, attaching
 *   and starting it (the image already exists: the service builds it at boot).
 * control plane per running game: the service process's own CPU (its games are other processes, containers
 *   even more so) over WINDOW_S with 0 and then N games running, per game = (CPU at N − CPU at 0) ÷ N
 *   (target < 1% of a core for a container: one attach and one stats stream each).
 * memory per game: the mean `ram_bytes` of the running games' latest samples (local: RSS of the process tree
 *   from /proc; docker: the engine's usage less inactive page cache), and their ratio.
 * Needs a Docker engine at DOCKER_HOST (default /var/run/docker.sock). The service's shutdown lets running
 * containers go (for the next life to adopt), so the bench removes every container of its instance at the end.
 */
const path = require('node:path');
const fs = require('node:fs');
const { fork } = require('node:child_process');
const { dist, tempDir, nextMessage, stopChild, median, sleep, fmt } = require('./lib');
const { client, action, waitFor, measureService, processesUnder } = require('./runtime');

const PLAN = 'micro';
const VERSION = 'flying-squid-1.20';
const PORTS = '28850-28899';

async function runMode(mode, { runs, running, windowS, log }) {
  const dir = tempDir(`docker-${mode}`);
  const env = { RUNTIME: mode, GAME_PORT_RANGE: PORTS, METRICS_INTERVAL_S: '1' };
  const child = fork(path.join(__dirname, 'runtime-service.js'), [dir, JSON.stringify(env)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  try {
    const { port, token } = await nextMessage(child, (m) => m.type === 'listening', 180_000);
    const api = client(port, token);
    const ids = [];
    for (let i = 0; i < running; i++) ids.push((await api('POST', '/v1/servers', { name: `bench-${i}`, plan: PLAN, version: VERSION })).id);
    await waitFor(async () => (await api('GET', '/v1/servers?limit=100')).data.every((s) => s.state === 'stopped'), 60_000, 'installs');
    const startMs = [];
    for (let k = 0; k <= runs; k++) {
      const ms = await action(api, ids[0], 'start');
      await action(api, ids[0], 'stop');
      if (k > 0) startMs.push(ms);
      log(`  docker: ${mode} start → running ${k === 0 ? '(warm-up) ' : ''}${fmt(ms)} ms`);
    }
    const idle = await measureService(child.pid, windowS);
    await Promise.all(ids.map((id) => action(api, id, 'start')));
    await sleep(3000);
    const busy = await measureService(child.pid, windowS);
    const ram = [];
    for (const id of ids) ram.push((await api('GET', `/v1/servers/${id}/metrics?range=15m`)).now?.ram_bytes ?? NaN);
    log(`  docker: ${mode} with ${running} running: service CPU ${fmt(busy.cpu_percent, 2)} % (idle ${fmt(idle.cpu_percent, 2)} %)`);
    return {
      start_median_ms: median(startMs), start_ms: startMs, running,
      cpu_percent_idle: idle.cpu_percent, cpu_percent_running: busy.cpu_percent,
      cpu_percent_per_game: (busy.cpu_percent - idle.cpu_percent) / running,
      ram_mb_per_game: ram.reduce((a, b) => a + b, 0) / ram.length / 2 ** 20,
    };
  } finally {
    await stopChild(child, 90_000);
    await cleanUp(mode, dir, log);
  }
}

/** Nothing a mode started may outlive it: its containers (by id) or its game processes (by pid). */
async function cleanUp(mode, dir, log) {
  await sleep(500);
  if (mode === 'docker') {
    const { createEngine } = dist('runtime/docker/engine');
    const { LABEL_INSTANCE } = dist('runtime/docker/docker-environment');
    const engine = createEngine(process.env.DOCKER_HOST || 'unix:///var/run/docker.sock');
    const filters = encodeURIComponent(JSON.stringify({ label: [`${LABEL_INSTANCE}=${dist('runtime/cgroups').instanceName(dir)}`] }));
    const left = await engine.json('GET', `/containers/json?all=1&filters=${filters}`);
    for (const c of left) await engine.json('DELETE', `/containers/${c.Id}?force=1`);
    if (left.length) log(`  docker: removed the ${left.length} container(s) the service let go`);
  } else {
    const left = processesUnder(dir);
    for (const pid of left) try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
  }
  fs.rmSync(dir, { recursive: true, force: true });
}

async function runDocker({ runs = 3, running = 5, windowS = 20, log = console.log } = {}) {
  const local = await runMode('local', { runs, running, windowS, log });
  const docker = await runMode('docker', { runs, running, windowS, log });
  return {
    plan: PLAN, version: VERSION, window_s: windowS, local, docker,
    start_ratio: docker.start_median_ms / local.start_median_ms,
    ram_ratio: docker.ram_mb_per_game / local.ram_mb_per_game,
  };
}

module.exports = { runDocker };

if (require.main === module) {
  runDocker({ runs: Number(process.env.RUNS ?? 1), running: Number(process.env.RUNNING ?? 2), windowS: Number(process.env.WINDOW_S ?? 5) })
    .then((r) => console.log(JSON.stringify(r, null, 2)));
}
