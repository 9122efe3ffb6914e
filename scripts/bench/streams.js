'use strict';
/**
 * Part 4, stream memory (issue "fair shares" point 1): does a crowd of clients that never read make the service
 * grow? The service runs in a child process (runtime-service.js, STREAMS_PER_USER lifted to 60 so the per-user
 * cap does not hide the backpressure bound this part measures), with one flying-squid server running.
 *
 * Console spam: SPAMMERS loops POST `help` to the server's console as fast as the service answers; each command
 *   is an `input` line plus the game's answer, so every console stream gets a steady flow of lines.
 * baseline: the spam alone for WINDOW_S seconds, RSS sampled every 250 ms (its peak).
 * stalled:  the same spam with STREAMS never-reading clients (half console, half metrics streams), each a raw TCP
 *   socket that sends its request and then pauses, so the kernel buffers fill and the service must queue or drop:
 *   the scenario. Then `reconnecting`: the same, but every dropped client is replaced within 250 ms by a
 *   new one, still never reading (a hostile loop, possible here only because the bench lifts the rate limit and
 *   the stream cap). `dropped`: streams the service closed (in `reconnecting`, the replacements opened).
 * live heap: the service's heap + external memory after a full collection (the child runs with --expose-gc),
 *   at the start and at the end of each phase with every client still connected (so whatever the streams hold
 *   is counted), and 5 s after they left.
 * Targets (issue "fair shares" point 1, < 50 MB): the RSS peak of each phase minus the spam-alone peak, and the
 *   live memory held with the streams open minus at the start. BENCHMARKS.md says why the two differ.
 */
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { fork } = require('node:child_process');
const { tempDir, nextMessage, stopChild, procUsage, sleep, fmt } = require('./lib');
const { client, waitFor } = require('./runtime');

const STREAMS = 60;
const SPAMMERS = 4;

/**
 * A stream client that never reads: request sent, socket paused. Being paused, it cannot see the service close
 * the connection (the close would be read like data), so drops are counted from the service (streamsOpen).
 */
function stalledStream(port, token, url, counts) {
  const socket = net.connect(port, '127.0.0.1', () => {
    socket.write(`GET ${url} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nAccept: text/event-stream\r\n\r\n`);
    socket.pause();
    counts.opened++;
  });
  socket.on('error', () => {});
  return () => socket.destroy();
}

/** How many event streams the service has open (the child asks its stream registry). */
async function streamsOpen(child) {
  child.send({ type: 'streams' });
  return (await nextMessage(child, (x) => x.type === 'streams')).open;
}

/** Live memory (heap + external, bytes) of the service child after a full collection. */
async function liveBytes(child) {
  child.send({ type: 'heap' });
  const m = await nextMessage(child, (x) => x.type === 'heap');
  return m.heapUsed + m.external;
}

/** RSS of `pid` sampled every 250 ms while `work` runs; returns {before, max, end} in bytes. */
async function watchRss(pid, windowS, work) {
  const before = procUsage(pid).rssBytes;
  let max = before;
  const timer = setInterval(() => { max = Math.max(max, procUsage(pid).rssBytes); }, 250);
  const done = work(windowS * 1000);
  await sleep(windowS * 1000);
  await done;
  clearInterval(timer);
  const end = procUsage(pid).rssBytes;
  return { before, max: Math.max(max, end), end };
}

/** SPAMMERS loops sending console commands until `ms` passed; returns how many were sent. */
async function spam(api, id, ms) {
  const until = Date.now() + ms;
  let sent = 0;
  await Promise.all(Array.from({ length: SPAMMERS }, async () => {
    while (Date.now() < until) {
      await api('POST', `/v1/servers/${id}/console`, { command: 'help' }).catch(() => {});
      sent++;
    }
  }));
  return sent;
}

const mb = (b) => b / 2 ** 20;

async function runStreams({ windowS = 60, log = console.log } = {}) {
  const dir = tempDir('streams');
  const env = JSON.stringify({ STREAMS_PER_USER: String(STREAMS), GAME_PORT_RANGE: '27700-27709' });
  const child = fork(path.join(__dirname, 'runtime-service.js'), [dir, env], {
    execArgv: ['--expose-gc'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const stops = [];
  try {
    const { port, token } = await nextMessage(child, (m) => m.type === 'listening');
    const api = client(port, token);
    const { id } = await api('POST', '/v1/servers', { name: 'streams', plan: 'micro', version: 'flying-squid-1.20' });
    await waitFor(async () => (await api('GET', `/v1/servers/${id}`)).state === 'stopped', 60_000, 'install', 100);
    await api('POST', `/v1/servers/${id}/actions`, { type: 'start' });
    await waitFor(async () => (await api('GET', `/v1/servers/${id}`)).state === 'running', 180_000, 'running', 100);
    await sleep(2000);
    const live0 = await liveBytes(child);

    log(`  streams: console spam alone for ${windowS}s`);
    let sentBase = 0;
    const base = await watchRss(child.pid, windowS, async (ms) => { sentBase = await spam(api, id, ms); });

    const phases = {};
    for (const reconnect of [false, true]) {
      const name = reconnect ? 'reconnecting' : 'stalled';
      const counts = { opened: 0 };
      const openOne = (kind) => {
        stops.push(stalledStream(port, token, `/v1/servers/${id}/${kind}/stream`, counts));
      };
      for (let i = 0; i < STREAMS; i++) openOne(i % 2 ? 'metrics' : 'console');
      await waitFor(async () => counts.opened >= STREAMS && (await streamsOpen(child)) === STREAMS, 30_000, 'streams open', 100);
      log(`  streams: ${STREAMS} never-reading streams${reconnect ? ' that reconnect when dropped' : ''} plus console spam for ${windowS}s`);
      // Reconnecting: every 250 ms, as many new never-reading console clients as the service dropped (console
      // streams are the ones that fill), as a hostile loop would. A replacement not yet served when the next
      // count is taken is replaced again; the stream cap answers the extra one 429.
      let reconnects = 0;
      let replacing = reconnect;
      const replacer = (async () => {
        while (replacing) {
          await sleep(250);
          const missing = STREAMS - (await streamsOpen(child));
          for (let i = 0; i < missing && replacing; i++) openOne('console');
          reconnects += Math.max(0, missing);
        }
      })();
      let commands = 0;
      const rss = await watchRss(child.pid, windowS, async (ms) => { commands = await spam(api, id, ms); });
      replacing = false;
      await replacer;
      const dropped = reconnect ? reconnects : STREAMS - (await streamsOpen(child));
      const liveOpen = await liveBytes(child);
      for (const stop of stops.splice(0)) stop();
      await sleep(5000);
      phases[name] = {
        commands, dropped, rss_peak_mb: mb(rss.max), growth_mb: mb(rss.max - base.before),
        rss_cost_mb: mb(rss.max - base.max), live_open_mb: mb(liveOpen), live_cost_mb: mb(liveOpen - live0),
        after: { rss_mb: mb(procUsage(child.pid).rssBytes), live_mb: mb(await liveBytes(child)) },
      };
    }
    return {
      window_s: windowS, streams: STREAMS,
      baseline: { commands: sentBase, rss_before_mb: mb(base.before), rss_peak_mb: mb(base.max), growth_mb: mb(base.max - base.before),
        live_start_mb: mb(live0) },
      ...phases,
    };
  } finally {
    for (const stop of stops) stop();
    await stopChild(child, 60_000);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

module.exports = { runStreams };

if (require.main === module) {
  runStreams({ windowS: Number(process.env.WINDOW_S ?? 10) }).then((r) => console.log(JSON.stringify(r, null, 2), fmt(r.stalled.rss_cost_mb)));
}
