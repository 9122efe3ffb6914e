'use strict';
/**
 * `npm run bench -- files-node` (issue 40 §5; docs/architecture.md "Server files"): the node half of files.js. The
 * service runs in a child process (files-service.js, RUNTIME=docker on the engine at DOCKER_HOST, default
 * /var/run/docker.sock; it builds its game image at boot as the Docker tests do) with one flying-squid server of plan
 * `small` (5 GB of disk), installed and stopped: its files are in a Docker volume, and every byte crosses the engine's
 * archive endpoints (src/runtime/host/docker/volume-files.ts).
 * - API upload and download of a `mb` MB file (random bytes): PUT and GET …/files/content, the client streaming from
 *   and to a file (files.js transfer), against the bare engine copy, from this process: the same file as a tar of one
 *   entry (tar-stream, the file streamed into it) PUT into a scratch container's volume (PUT /containers/{id}/archive),
 *   and GET /containers/{id}/archive?path=… of it piped into a file (the engine's tar as it comes, nothing parsed).
 *   The scratch volume and its container (never started) are made before the clock starts. Each round runs ours,
 *   the bare copy and the relay below in turn, the first of them rotating; medians of `rounds`; ratio = bare ÷ ours
 *   (target ≥ 0.7).
 * - In the same rounds, the ceiling of any Node.js HTTP relay here: a minimal node:http server in its own child
 *   process (files-node-ceiling.js, nothing of ours) between the same client and the same scratch container, packing
 *   the body into a one-entry tar on the way up and unpacking the first entry on the way down. Printed: the bare
 *   copy's time ÷ its (the best any Node relay reaches) and its time ÷ ours.
 * - Beside each, the service's and the relay's own CPU time during the transfer (/proc/<pid>/stat), to tell their
 *   work from waiting on the engine.
 * Every container and volume made here is removed by id at the end: the scratch ones, and the instance's (nodes.js
 * removeAll: the service's shutdown lets containers be).
 */
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { fork } = require('node:child_process');
const { pipeline } = require('node:stream/promises');
const { dist, tempDir, median, msSince, nextMessage, stopChild, procUsage, fmt } = require('./lib');
const { client, waitFor } = require('./runtime');
const { randomFile, transfer } = require('./files');
const { removeAll } = require('./nodes');

const SFTP_PORT = 28960;
const GAME_PORTS = '28961-28969';
const PLAN = 'small';
/**
 * The relay's stream buffers: Node's defaults. 1 MiB ones (files.js's tuned ceiling) were tried, 4 pairs of rounds
 * alternated: up 926 ms against 880, down 1,194 against 1,165 (medians; noise, no better).
 */
const RELAY_BUFFER = 'default';

/** The relay (files-node-ceiling.js) in its own process, to the engine's unix socket and the scratch container. */
async function startRelay(dockerHost, scratch) {
  const socket = /^unix:\/\/(.+)$/.exec(dockerHost)?.[1];
  if (!socket) throw new Error(`files-node's relay needs the engine on a unix socket, not ${dockerHost}`);
  const { GAME_DIR } = dist('runtime/host/docker/image');
  const child = fork(path.join(__dirname, 'files-node-ceiling.js'), [socket, scratch.container, GAME_DIR, RELAY_BUFFER], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const { port } = await nextMessage(child, (m) => m.type === 'listening', 30_000).catch((err) => {
    child.kill('SIGKILL');
    throw err;
  });
  return { child, port };
}

/** The bare engine copy's scratch: a volume and a container of the game image mounting it, never started. */
async function scratchOf(engine) {
  const { GAME_DIR, IMAGE_NODE } = dist('runtime/host/docker/image');
  const image = (await engine.json('GET', '/images/json')).flatMap((i) => i.RepoTags ?? []).find((n) => n.startsWith('gsh-game:'));
  const volume = (await engine.json('POST', '/volumes/create', { Name: `gsh-bench-scratch-${crypto.randomBytes(4).toString('hex')}` })).Name;
  const scratch = { volume, container: null };
  scratch.container = (await engine.json('POST', '/containers/create', {
    Image: image, Cmd: [IMAGE_NODE, '-e', ''], HostConfig: { Mounts: [{ Type: 'volume', Source: volume, Target: GAME_DIR }] },
  }).catch(async (err) => {
    await engine.json('DELETE', `/volumes/${volume}`);
    throw err;
  })).Id;
  return scratch;
}

async function removeScratch(engine, { container, volume }) {
  await engine.json('DELETE', `/containers/${container}?force=1`);
  await engine.json('DELETE', `/volumes/${volume}`);
}

/** The bare upload: `src` as a one-entry tar streamed into the scratch volume through the engine; ms. */
async function bareUp(engine, container, src, name) {
  const tar = require('tar-stream');
  const { GAME_DIR } = dist('runtime/host/docker/image');
  const t0 = process.hrtime.bigint();
  const pack = tar.pack();
  const entry = pack.entry({ name, size: fs.statSync(src).size, mode: 0o644, uid: 1000, gid: 1000 }, (err) => (err ? pack.destroy(err) : pack.finalize()));
  fs.createReadStream(src).pipe(entry);
  await engine.upload(`/containers/${container}/archive?path=${encodeURIComponent(GAME_DIR)}`, pack, 'application/x-tar', 'PUT');
  return msSince(t0);
}

/** The bare download: the engine's archive of the file piped into `to`; ms. */
async function bareDown(engine, container, name, to) {
  const { GAME_DIR } = dist('runtime/host/docker/image');
  const t0 = process.hrtime.bigint();
  await pipeline(await engine.download(`/containers/${container}/archive?path=${encodeURIComponent(`${GAME_DIR}/${name}`)}`), fs.createWriteStream(to));
  return msSince(t0);
}

/** `fn`'s ms, and the service process's CPU ms while it ran. */
async function withCpu(pid, fn) {
  const before = procUsage(pid).cpuMs;
  const ms = await fn();
  return { ms, cpu: procUsage(pid).cpuMs - before };
}

async function rounds(s, engine, scratch, relay, id, mb, n) {
  const src = path.join(s.work, 'big.bin');
  const got = path.join(s.work, 'down.bin');
  const size = fs.statSync(src).size;
  const x = { up: [], down: [], upCpu: [], downCpu: [], bareUp: [], bareDown: [], relayUp: [], relayDown: [], relayUpCpu: [], relayDownCpu: [] };
  const url = (r) => `/v1/servers/${id}/files/content?path=big-${r}.bin`;
  for (let r = 0; r < n; r++) {
    const ours = async () => {
      const up = await withCpu(s.pid, () => transfer(s.port, s.token, 'PUT', url(r), { from: src }));
      const down = await withCpu(s.pid, () => transfer(s.port, s.token, 'GET', url(r), { to: got }));
      if (!fs.readFileSync(got).equals(fs.readFileSync(src))) throw new Error('the download differs from the upload');
      await transfer(s.port, s.token, 'DELETE', `/v1/servers/${id}/files?path=big-${r}.bin`, {});
      x.up.push(up.ms);
      x.upCpu.push(up.cpu);
      x.down.push(down.ms);
      x.downCpu.push(down.cpu);
    };
    const bare = async () => {
      x.bareUp.push(await bareUp(engine, scratch.container, src, `bare-${r}.bin`));
      x.bareDown.push(await bareDown(engine, scratch.container, `bare-${r}.bin`, path.join(s.work, 'bare-down.tar')));
      if (fs.statSync(path.join(s.work, 'bare-down.tar')).size < size) throw new Error('the bare download is short');
    };
    const viaRelay = async () => {
      const up = await withCpu(relay.child.pid, () => transfer(relay.port, '', 'PUT', `/relay-${r}.bin`, { from: src }));
      const down = await withCpu(relay.child.pid, () => transfer(relay.port, '', 'GET', `/relay-${r}.bin`, { to: got }));
      if (!fs.readFileSync(got).equals(fs.readFileSync(src))) throw new Error('the relay\'s download differs from the upload');
      x.relayUp.push(up.ms);
      x.relayUpCpu.push(up.cpu);
      x.relayDown.push(down.ms);
      x.relayDownCpu.push(down.cpu);
    };
    const steps = [ours, bare, viaRelay];
    for (let k = 0; k < steps.length; k++) await steps[(r + k) % steps.length]();
    console.log(`  round ${r + 1}: up ours ${fmt(x.up[r])} ms, bare ${fmt(x.bareUp[r])} ms, relay ${fmt(x.relayUp[r])} ms; `
      + `down ours ${fmt(x.down[r])} ms, bare ${fmt(x.bareDown[r])} ms, relay ${fmt(x.relayDown[r])} ms`);
  }
  const side = (ms, bareMs, cpu, relayMs, relayCpu) => ({
    api_ms: ms, bare_ms: bareMs, api_mb_s: mb / (ms / 1000), bare_mb_s: mb / (bareMs / 1000), ratio: bareMs / ms, service_cpu_ms: cpu,
    relay: { ms: relayMs, mb_s: mb / (relayMs / 1000), of_bare: bareMs / relayMs, ours_of_it: relayMs / ms, cpu_ms: relayCpu },
  });
  return {
    mb, rounds: n,
    upload: side(median(x.up), median(x.bareUp), median(x.upCpu), median(x.relayUp), median(x.relayUpCpu)),
    download: side(median(x.down), median(x.bareDown), median(x.downCpu), median(x.relayDown), median(x.relayDownCpu)),
    runs: x,
  };
}

async function runFilesNode({ mb = 200, rounds: n = 3 } = {}) {
  const dockerHost = process.env.DOCKER_HOST || 'unix:///var/run/docker.sock';
  const engine = dist('runtime/host/docker/engine').createEngine(dockerHost);
  await engine.json('GET', '/version', undefined, 5000).catch((err) => {
    throw new Error(`files-node needs a Docker engine at ${dockerHost}: ${err.message}`);
  });
  const dir = tempDir('files-node');
  const work = tempDir('files-node-client');
  const env = { RUNTIME: 'docker', DOCKER_HOST: dockerHost, GAME_PORT_RANGE: GAME_PORTS };
  const child = fork(path.join(__dirname, 'files-service.js'), [dir, String(SFTP_PORT), JSON.stringify(env)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let scratch = null;
  let relay = null;
  try {
    // The boot builds the game image if the engine has not got it (minutes on a cold engine).
    const { port, token } = await nextMessage(child, (m) => m.type === 'listening', 900_000);
    const s = { dir, work, port, token, pid: child.pid, api: client(port, token) };
    const id = (await s.api('POST', '/v1/servers', { name: 'bench-files-node', plan: PLAN, version: 'flying-squid-1.20' })).id;
    await waitFor(async () => (await s.api('GET', `/v1/servers/${id}`)).state === 'stopped', 600_000, 'the install', 200);
    randomFile(path.join(work, 'big.bin'), mb);
    scratch = await scratchOf(engine);
    relay = await startRelay(dockerHost, scratch);
    const result = await rounds(s, engine, scratch, relay, id, mb, n);
    for (const way of ['upload', 'download']) {
      const x = result[way];
      console.log(`  API ${mb} MB ${way} on a Docker node: ours ${fmt(x.api_ms)} ms (${fmt(x.api_mb_s)} MB/s, service CPU ${fmt(x.service_cpu_ms)} ms); `
        + `bare engine archive ${fmt(x.bare_ms)} ms (${fmt(x.bare_mb_s)} MB/s); bare ÷ ours ${fmt(x.ratio, 2)} (target ≥ 0.7); `
        + `bare Node relay ${fmt(x.relay.ms)} ms (${fmt(x.relay.mb_s)} MB/s, its CPU ${fmt(x.relay.cpu_ms)} ms): bare ÷ relay ${fmt(x.relay.of_bare, 2)}, ours ${fmt(x.relay.ours_of_it, 2)} of it`);
    }
    return result;
  } finally {
    if (relay) await stopChild(relay.child, 5_000);
    if (scratch) await removeScratch(engine, scratch).catch((err) => console.error(`  scratch ${scratch.container}: ${err.message}`));
    await stopChild(child, 30_000);
    await removeAll({ one: engine }, dir);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(work, { recursive: true, force: true });
  }
}

module.exports = { runFilesNode };
