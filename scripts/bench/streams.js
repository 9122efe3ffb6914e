'use strict';
/**
 * Part 4, stream memory (issue "fair shares" point 1): does a crowd of clients that never read make the service
 * grow? The service runs in a child process (runtime-service.js, STREAMS_PER_USER lifted to 60 so the per-user
 * cap does not hide the backpressure bound this part measures), with one flying-squid server running.
 *
 * Console spam: SPAMMERS loops POST `help` to the server's console as fast as the service answers; each command
 *   is an `input` line plus the game's answer, so every console stream gets a steady flow of lines.
 * baseline: the spam alone for WINDOW_S seconds; growth = the service's max RSS in the window − its RSS before.
 * streams:  the same spam with STREAMS never-reading clients (half console, half metrics streams), each a raw TCP
 *   socket that sends its request and then pauses (so the kernel buffers fill and the service must queue or
 *   drop). A client the service drops reconnects at once, still never reading: the worst steady state.
 * after:    RSS 5 s after every client left. Target: growth with streams < 50 MB (sse.ts MAX_QUEUED_BYTES bounds
 *   each stream's queue; the per-user cap bounds the count).
 */
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { fork } = require('node:child_process');
const { tempDir, nextMessage, exited, procUsage, sleep, fmt } = require('./lib');

const STREAMS = 60;
const SPAMMERS = 4;

function client(port, token) {
  return async function api(method, url, body) {
    const res = await fetch(`http://127.0.0.1:${port}${url}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };
}

async function until(check, timeoutMs, what) {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** A stream client that never reads: request sent, socket paused. Reconnects when the service drops it. */
function stalledStream(port, token, url, counts) {
  let socket = null;
  let stopped = false;
  const open = () => {
    if (stopped) return;
    socket = net.connect(port, '127.0.0.1', () => {
      socket.write(`GET ${url} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nAccept: text/event-stream\r\n\r\n`);
      socket.pause();
      counts.opened++;
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      counts.dropped++;
      setTimeout(open, 50);
    });
  };
  open();
  return () => {
    stopped = true;
    socket?.destroy();
  };
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

async function runStreams({ windowS = 60, log = console.log } = {}) {
  const dir = tempDir('streams');
  const env = JSON.stringify({ STREAMS_PER_USER: String(STREAMS), GAME_PORT_RANGE: '27700-27709' });
  const child = fork(path.join(__dirname, 'runtime-service.js'), [dir, env], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const stops = [];
  try {
    const { port, token } = await nextMessage(child, (m) => m.type === 'listening');
    const api = client(port, token);
    const { id } = await api('POST', '/v1/servers', { name: 'streams', plan: 'micro', version: 'flying-squid-1.20' });
    await until(async () => (await api('GET', `/v1/servers/${id}`)).state === 'stopped', 60_000, 'install');
    await api('POST', `/v1/servers/${id}/actions`, { type: 'start' });
    await until(async () => (await api('GET', `/v1/servers/${id}`)).state === 'running', 180_000, 'running');
    await sleep(2000);

    log(`  streams: console spam alone for ${windowS}s`);
    let sentBase = 0;
    const base = await watchRss(child.pid, windowS, async (ms) => { sentBase = await spam(api, id, ms); });

    const counts = { opened: 0, dropped: 0 };
    for (let i = 0; i < STREAMS; i++) {
      const url = `/v1/servers/${id}/${i % 2 ? 'metrics' : 'console'}/stream`;
      stops.push(stalledStream(port, token, url, counts));
    }
    await until(() => counts.opened >= STREAMS, 30_000, 'streams open');
    log(`  streams: ${STREAMS} never-reading streams plus console spam for ${windowS}s`);
    let sentLoad = 0;
    const load = await watchRss(child.pid, windowS, async (ms) => { sentLoad = await spam(api, id, ms); });
    for (const stop of stops.splice(0)) stop();
    await sleep(5000);
    const after = procUsage(child.pid).rssBytes;
    const mb = (b) => b / 2 ** 20;
    return {
      window_s: windowS, streams: STREAMS,
      baseline: { commands: sentBase, rss_before_mb: mb(base.before), growth_mb: mb(base.max - base.before) },
      load: { commands: sentLoad, rss_before_mb: mb(load.before), growth_mb: mb(load.max - load.before),
        dropped_and_reconnected: counts.dropped },
      after_clients_left_mb: mb(after), growth_vs_start_mb: mb(after - base.before),
    };
  } finally {
    for (const stop of stops) stop();
    if (child.connected) {
      child.send({ type: 'stop' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      await exited(child);
      clearTimeout(timer);
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

module.exports = { runStreams };

if (require.main === module) {
  runStreams({ windowS: Number(process.env.WINDOW_S ?? 10) }).then((r) => console.log(JSON.stringify(r, null, 2), fmt(r.load.growth_mb)));
}
