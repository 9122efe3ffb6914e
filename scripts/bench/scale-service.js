'use strict';
/**
 * Child process of the scale bench (scale.js): the service exactly as `npm start` runs it (startService: boot, the
 * runtime's loops, the sampler, HTTP on 127.0.0.1) on the DATA_DIR the parent seeded (argv[2]), with the
 * environment settings of argv[3] (JSON). The parent reads this process's CPU and RSS from /proc/<pid>.
 *
 * Sends {type:'listening', port, metricsPort, sinceStartMs} once it listens (sinceStartMs: performance.now(), from
 * this process's own start). {type:'loop', on:true} starts an event-loop delay histogram (perf_hooks
 * monitorEventLoopDelay, 2 ms resolution), {type:'loop', on:false} stops it and answers {type:'loop', maxMs, p99Ms,
 * meanMs}: the longest stall seen. It runs only when asked, so the idle CPU window does not pay for it.
 * On a machine others load, a wall-clock delay also counts the time this process waited for a core; so beside it
 * the answer gives busyMaxMs, the longest delay during which the main thread also ran as long (a 5 ms interval
 * timer reading the thread's run time): a stall of the service's own making, not of the machine's.
 * {type:'stop'} stops gracefully and exits.
 */
const fs = require('node:fs');
const { monitorEventLoopDelay, performance } = require('node:perf_hooks');
const { dist } = require('./lib');

async function main() {
  const config = dist('config').loadConfig({ DATA_DIR: process.argv[2], PORT: '0', HOST: '127.0.0.1', ...JSON.parse(process.argv[3] ?? '{}') });
  const service = await dist('service').startService(config, dist('log').silentLogger);
  let histogram = null;
  let busy = null;
  process.on('message', async (m) => {
    if (m?.type === 'stop') {
      await service.stop();
      process.exit(0);
    }
    if (m?.type === 'loop' && m.on) {
      histogram = monitorEventLoopDelay({ resolution: 2 });
      histogram.enable();
      busy = busyMonitor(5);
    }
    if (m?.type === 'loop' && !m.on && histogram) {
      histogram.disable();
      const ms = (ns) => ns / 1e6;
      process.send({ type: 'loop', maxMs: ms(histogram.max), p99Ms: ms(histogram.percentile(99)), meanMs: ms(histogram.mean), busyMaxMs: busy.stop() });
      histogram = null;
    }
  });
  process.send({
    type: 'listening',
    port: service.http.address().port,
    metricsPort: service.metricsHttp ? service.metricsHttp.address().port : null,
    sinceStartMs: performance.now(),
  });
}

/**
 * The longest timer delay (ms) that the main thread's own running time accounts for, from now until stop(): the
 * first field of /proc/<pid>/task/<pid>/schedstat is the nanoseconds the thread ran (proc(5)), so time spent
 * waiting for a core, and other threads' work (GC helpers, the libuv pool), do not count.
 */
function busyMonitor(everyMs) {
  const file = `/proc/${process.pid}/task/${process.pid}/schedstat`;
  const ran = () => Number(fs.readFileSync(file, 'utf8').split(' ')[0]) / 1e6;
  let max = 0;
  let wall = performance.now();
  let cpu = ran();
  const timer = setInterval(() => {
    const nowWall = performance.now();
    const nowCpu = ran();
    max = Math.max(max, Math.min(nowWall - wall - everyMs, nowCpu - cpu));
    wall = nowWall;
    cpu = nowCpu;
  }, everyMs);
  return { stop: () => (clearInterval(timer), max) };
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
