'use strict';
/**
 * Part 5, containers (issue 11): the same service with RUNTIME=local and RUNTIME=docker, side by side. Each mode
 * runs the service in a child process (runtime-service.js on a temp DATA_DIR, plan `micro`, flying-squid; game
 * ports 28850-28874 local, 28875-28899 docker) driven over its API; both services run for the whole part.
 *
 * start → running: POST a start action and poll it until it has succeeded, as in runtime.js; the two modes'
 *   starts interleaved (one of each per round, each round in the other order), one warm-up each, median of the
 *   rest (7 by default); ratio = docker ÷ local (target ≤ 1.3). The container's includes attaching and starting
 *   it, and creating it where the server has no next container yet (its warm-up; docker-environment.ts makes
 *   the next one when a container ends). The image already exists: the service builds it at boot.
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
const PORTS = { local: '28850-28874', docker: '28875-28899' };

/** One mode's service, with `running` servers installed and stopped. */
async function up(mode, running) {
  const dir = tempDir(`docker-${mode}`);
  const env = { RUNTIME: mode, GAME_PORT_RANGE: PORTS[mode], METRICS_INTERVAL_S: '1' };
  const child = fork(path.join(__dirname, 'runtime-service.js'), [dir, JSON.stringify(env)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const service = { mode, dir, child, ids: [], startMs: [] };
  const { port, token } = await nextMessage(child, (m) => m.type === 'listening', 180_000);
  service.api = client(port, token);
  for (let i = 0; i < running; i++) service.ids.push((await service.api('POST', '/v1/servers', { name: `bench-${i}`, plan: PLAN, version: VERSION })).id);
  await waitFor(async () => (await service.api('GET', '/v1/servers?limit=100')).data.every((s) => s.state === 'stopped'), 60_000, 'installs');
  return service;
}

/** The mode's service CPU with 0 and then all its games running, and their memory; stops them again. */
async function measureMode({ mode, child, api, ids, startMs }, windowS, log) {
  const idle = await measureService(child.pid, windowS);
  await Promise.all(ids.map((id) => action(api, id, 'start')));
  await sleep(3000);
  const busy = await measureService(child.pid, windowS);
  const ram = [];
  for (const id of ids) ram.push((await api('GET', `/v1/servers/${id}/metrics?range=15m`)).now?.ram_bytes ?? NaN);
  await Promise.all(ids.map((id) => action(api, id, 'stop'))); // the other mode's measure runs without these games
  log(`  docker: ${mode} with ${ids.length} running: service CPU ${fmt(busy.cpu_percent, 2)} % (idle ${fmt(idle.cpu_percent, 2)} %)`);
  return {
    start_median_ms: median(startMs), start_ms: startMs, running: ids.length,
    cpu_percent_idle: idle.cpu_percent, cpu_percent_running: busy.cpu_percent,
    cpu_percent_per_game: (busy.cpu_percent - idle.cpu_percent) / ids.length,
    ram_mb_per_game: ram.reduce((a, b) => a + b, 0) / ram.length / 2 ** 20,
  };
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

// 60 s windows: the service's periodic work (the disk watcher's pass, for one, every DISK_CHECK_INTERVAL_S = 60 s
// by default) then falls into the idle and the busy window alike; with 20 s windows the local per-game CPU once
// came out below zero.
async function runDocker({ runs = 7, running = 5, windowS = 60, log = console.log } = {}) {
  const services = [];
  try {
    for (const mode of ['local', 'docker']) services.push(await up(mode, running));
    // Interleaved, each round in the other order: the game's own start drifts with the machine's state over
    // minutes, which measuring one mode after the other would count as a difference between the modes.
    for (let k = 0; k <= runs; k++) {
      for (const s of k % 2 ? [...services].reverse() : services) {
        const ms = await action(s.api, s.ids[0], 'start');
        await action(s.api, s.ids[0], 'stop');
        if (k > 0) s.startMs.push(ms);
        log(`  docker: ${s.mode} start → running ${k === 0 ? '(warm-up) ' : ''}${fmt(ms)} ms`);
      }
    }
    const [local, docker] = [await measureMode(services[0], windowS, log), await measureMode(services[1], windowS, log)];
    return {
      plan: PLAN, version: VERSION, window_s: windowS, local, docker,
      start_ratio: docker.start_median_ms / local.start_median_ms,
      ram_ratio: docker.ram_mb_per_game / local.ram_mb_per_game,
    };
  } finally {
    for (const s of services) {
      await stopChild(s.child, 90_000);
      await cleanUp(s.mode, s.dir, log);
    }
  }
}

module.exports = { runDocker };

if (require.main === module) {
  runDocker({ runs: Number(process.env.RUNS ?? 3), running: Number(process.env.RUNNING ?? 2), windowS: Number(process.env.WINDOW_S ?? 5) })
    .then((r) => console.log(JSON.stringify(r, null, 2)));
}
