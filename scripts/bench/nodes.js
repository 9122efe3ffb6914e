'use strict';
/**
 * `npm run bench -- nodes` (issue 26; docs/architecture.md "Backups", "Moving a server"): the service (startService,
 * in this process, RUNTIME=docker) on two engines: node one at DOCKER_HOST, node two a second engine
 * (scripts/docker-node.sh at GSH_NODE2_DIR, started here if it does not answer, and stopped again then). Two
 * running flying-squid servers on node one, each with `mb` MB more in its world (1 MiB region-like files, half
 * random, half text, put in through the engine): one of flying-squid itself (backups `live`), one of an operator's
 * copy of its definition that backs up with a stop (as every backup did before).
 *
 * - backup: POST …/backups until `ready`, live and stop alternated for `rounds` rounds, medians; ratio = live ÷
 *   stop. Beside it, how long the stop backup's players are off: from the backup's request until the server is
 *   `running` again (a live backup's players are never off).
 * - move: `MovesRepo.request` (what `gsh server move` writes), timed from the move's start on the server's door
 *   (`copying`; the service takes requests at its reconcile pass, up to 10 s later, not counted) until it is `done`
 *   and the server `running` on the other node, back and forth for `rounds` rounds, medians, per 100 MB of the
 *   server's volume (its world and the rest); and the copy step alone (`copying` → `switched`), polled every 50 ms. Baseline: the same volume copied
 *   bare from one engine to the other (GET archive of a helper there piped into PUT of one here), same run.
 */
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { Readable } = require('node:stream');
const { dist, tempDir, median, msSince, sleep, fmt } = require('./lib');

const ROOT = path.resolve(__dirname, '..', '..');
const PORTS = { one: '28700-28719', two: '28720-28739' };

async function runNodes({ mb = 100, rounds = 3 } = {}) {
  const { dockerHost, node2Host, engines, stop } = await twoEngines();
  const dir = tempDir('nodes');
  try {
    const ctx = await up(dir, dockerHost, node2Host);
    try {
      const backup = await backups(ctx, engines.one, mb, rounds);
      const move = await moves(ctx, engines, rounds);
      return { world_mb: mb, backup, move };
    } finally {
      await ctx.service.stop();
      await removeAll(engines, dir);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    stop();
  }
}

/** The service on both nodes, with a live-backup and a stop-backup server running on node one. */
async function up(dir, dockerHost, node2Host) {
  const { runCli } = dist('cli');
  const { loadConfig } = dist('config');
  const { startService } = dist('service');
  const { silentLogger } = dist('log');
  for (const [name, host, ports] of [['one', dockerHost, PORTS.one], ['two', node2Host, PORTS.two]]) {
    const code = await runCli(['node', 'add', '--name', name, '--docker-host', host, '--public-host', '127.0.0.1', '--memory-mb', '4000', '--ports', ports], { DATA_DIR: dir }, () => undefined, console.error);
    if (code !== 0) throw new Error(`gsh node add ${name} failed`);
  }
  const software = path.join(dir, 'software');
  fs.mkdirSync(software);
  const builtin = path.join(ROOT, 'src', 'runtime', 'software');
  const def = JSON.parse(fs.readFileSync(path.join(builtin, 'flying-squid.json'), 'utf8'));
  fs.writeFileSync(path.join(software, 'squid-stop.json'), JSON.stringify({ ...def, id: 'squid-stop', launcher: path.join(builtin, def.launcher), backup: { paths: ['world'], consistency: 'stop' } }));
  const service = await startService(loadConfig({ DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', RUNTIME: 'docker', DOCKER_HOST: dockerHost, NODE_CHECK_INTERVAL_S: '1' }), silentLogger);
  const user = service.store.users.ensure('bench@example.com');
  service.store.nodes.setDraining('two', true); // both are made on node one
  const make = (version, software) => service.store.servers.create(user.id, { name: version, plan: 'micro', version: `${version}-1.20`, software, game_version: '1.20' }).id;
  const ids = { live: make('flying-squid', 'flying-squid'), stop: make('squid-stop', 'squid-stop') };
  service.store.nodes.setDraining('two', false);
  const runtime = service.runtime;
  for (const id of Object.values(ids)) await runtime.lifecycle.install(id);
  return { service, runtime, ids, dir, userId: user.id };
}

/** `mb` MB of 1 MiB files into the server's volume, through a container of the game image with it. */
async function fill(ctx, engine, serverId, mb) {
  const { volumeName } = dist('runtime/host/docker/docker-environment');
  const { instanceName } = dist('runtime/host/cgroups');
  const { GAME_DIR, IMAGE_NODE } = dist('runtime/host/docker/image');
  const tar = require(path.join(ROOT, 'node_modules', 'tar-stream'));
  const image = (await engine.json('GET', '/images/json')).flatMap((i) => i.RepoTags ?? []).find((n) => n.startsWith('gsh-game:'));
  const c = await engine.json('POST', '/containers/create', { Image: image, Cmd: [IMAGE_NODE, '-e', ''], HostConfig: { Mounts: [{ Type: 'volume', Source: volumeName(instanceName(ctx.dir), serverId), Target: GAME_DIR }] } });
  try {
    const pack = tar.pack();
    const text = Buffer.from('minecraft:stone minecraft:dirt minecraft:grass_block '.repeat(20_000)).subarray(0, 1 << 20);
    for (let i = 0; i < mb; i++) pack.entry({ name: `world/bench/r.${i}.mca`, uid: 1000, gid: 1000 }, i % 2 ? text : crypto.randomBytes(1 << 20));
    pack.finalize();
    await engine.upload(`/containers/${c.Id}/archive?path=${GAME_DIR}`, Readable.from(pack), 'application/x-tar', 'PUT');
  } finally {
    await engine.json('DELETE', `/containers/${c.Id}?force=1`);
  }
}

async function untilTrue(what, probe, timeoutMs = 300_000, everyMs = 50) {
  const end = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

async function backups(ctx, engine, mb, rounds) {
  const { runtime, ids } = ctx;
  for (const id of Object.values(ids)) await fill(ctx, engine, id, mb);
  for (const id of Object.values(ids)) {
    runtime.power.requestAction(id, ctx.userId, 'start');
    await untilTrue('running', () => runtime.lifecycle.state(id) === 'running');
  }
  const times = { live: [], stop: [], offline: [] };
  for (let r = 0; r < rounds; r++) {
    for (const kind of r % 2 ? ['stop', 'live'] : ['live', 'stop']) {
      const id = ids[kind];
      const t0 = process.hrtime.bigint();
      const backup = runtime.backups.create(id, null);
      await untilTrue('the backup', () => runtime.backups.get(id, backup.id).status !== 'pending');
      if (runtime.backups.get(id, backup.id).status !== 'ready') throw new Error(`a ${kind} backup failed: ${runtime.backups.get(id, backup.id).error}`);
      times[kind].push(msSince(t0));
      if (kind === 'stop') {
        await untilTrue('running again', () => runtime.lifecycle.state(id) === 'running');
        times.offline.push(msSince(t0));
      }
      await runtime.backups.remove(id, backup.id);
    }
  }
  const live = median(times.live);
  const stop = median(times.stop);
  console.log(`  backup of ${mb} MB more: live ${fmt(live / 1000, 2)} s, stop ${fmt(stop / 1000, 2)} s (players off ${fmt(median(times.offline) / 1000, 2)} s), live ÷ stop ${fmt(live / stop, 2)}`);
  return { live_ms: live, stop_ms: stop, stop_offline_ms: median(times.offline), ratio: live / stop, runs: times };
}

async function moves(ctx, engines, rounds) {
  const { service, runtime, ids } = ctx;
  const id = ids.live;
  const total = [];
  const copy = [];
  let bytes = 0;
  for (let r = 0; r < rounds * 2; r++) {
    const to = r % 2 ? 'one' : 'two';
    const asked = service.store.moves.request(id, to);
    if (!asked.move) throw new Error(asked.refused);
    let copyStart = null;
    let copyMs = null;
    await untilTrue('the move', () => {
      const m = service.store.moves.get(asked.move.id);
      if (m.status === 'copying' && copyStart === null) copyStart = process.hrtime.bigint();
      if (m.status !== 'copying' && copyStart !== null && copyMs === null) copyMs = msSince(copyStart);
      if (m.status === 'failed') throw new Error(`the move failed: ${m.error}`);
      return m.status === 'done' && runtime.lifecycle.state(id) === 'running';
    });
    total.push(msSince(copyStart));
    copy.push(copyMs);
    bytes = service.store.moves.get(asked.move.id).bytes;
  }
  const bare = [];
  for (let r = 0; r < rounds; r++) bare.push(await bareCopy(ctx, engines, id));
  const per100 = (ms) => (ms * 100 * 2 ** 20) / bytes;
  const result = {
    volume_mb: bytes / 2 ** 20, move_ms_per_100mb: per100(median(total)), copy_ms_per_100mb: per100(median(copy)), bare_ms_per_100mb: per100(median(bare)),
    runs: { total, copy, bare },
  };
  result.ratio = result.move_ms_per_100mb / result.bare_ms_per_100mb;
  console.log(`  move of ${fmt(result.volume_mb, 0)} MB: ${fmt(result.move_ms_per_100mb / 1000, 2)} s per 100 MB (copy and check ${fmt(result.copy_ms_per_100mb / 1000, 2)} s), bare engine-to-engine copy ${fmt(result.bare_ms_per_100mb / 1000, 2)} s`);
  return result;
}

/**
 * The server's volume (wherever it is now, node one after an even number of moves) streamed bare into a scratch one on
 * the other; ms. The stream alone is timed; with `whole`, as a real copy needs it, the clock also holds making the
 * scratch volume and a container on each side (in parallel) and removing the two containers (live-moves.js). The
 * scratch volume goes after the clock either way.
 */
async function bareCopy(ctx, engines, serverId, { whole = false } = {}) {
  const { volumeName } = dist('runtime/host/docker/docker-environment');
  const { instanceName } = dist('runtime/host/cgroups');
  const { GAME_DIR, IMAGE_NODE } = dist('runtime/host/docker/image');
  const here = ctx.service.store.nodes.nodeOf(serverId);
  const [from, to] = here === 'one' ? [engines.one, engines.two] : [engines.two, engines.one];
  const image = async (e) => (await e.json('GET', '/images/json')).flatMap((i) => i.RepoTags ?? []).find((n) => n.startsWith('gsh-game:'));
  const [fromImage, toImage] = [await image(from), await image(to)];
  const scratch = `gsh-bench-scratch-${crypto.randomBytes(4).toString('hex')}`;
  const container = (engine, Image, Source) => engine.json('POST', '/containers/create', { Image, Cmd: [IMAGE_NODE], HostConfig: { Mounts: [{ Type: 'volume', Source, Target: GAME_DIR }] } });
  let t0 = process.hrtime.bigint();
  const [src, dst] = await Promise.all([
    container(from, fromImage, volumeName(instanceName(ctx.dir), serverId)),
    to.json('POST', '/volumes/create', { Name: scratch }).then(() => container(to, toImage, scratch)),
  ]);
  let ms;
  // In the service's process, with the garbage collector as the service tunes it for its own streams (gc-tuning.ts):
  // the baseline differs from a move in what the move does, not in how this process collects.
  const streamed = dist('gc-tuning').whileStreaming();
  try {
    if (!whole) t0 = process.hrtime.bigint();
    const content = await from.download(`/containers/${src.Id}/archive?path=${encodeURIComponent(`${GAME_DIR}/.`)}`);
    await to.upload(`/containers/${dst.Id}/archive?path=${GAME_DIR}`, content, 'application/x-tar', 'PUT');
    if (!whole) ms = msSince(t0);
  } finally {
    streamed();
    await Promise.all([from.json('DELETE', `/containers/${src.Id}?force=1`), to.json('DELETE', `/containers/${dst.Id}?force=1`)]);
  }
  ms ??= msSince(t0);
  await to.json('DELETE', `/volumes/${scratch}`);
  return ms;
}

/**
 * The two engines the node benches run on: node one at DOCKER_HOST, node two a second engine in GSH_NODE2_DIR
 * (default /tmp/gsh-node2), started with scripts/docker-node.sh unless it answers already; `stop` stops it again
 * only if this started it.
 */
async function twoEngines() {
  const { createEngine } = dist('runtime/host/docker/engine');
  const dockerHost = process.env.DOCKER_HOST || 'unix:///var/run/docker.sock';
  const node2 = process.env.GSH_NODE2_DIR || '/tmp/gsh-node2';
  const node2Host = `unix://${node2}/docker.sock`;
  const two = createEngine(node2Host);
  const wasUp = await two.json('GET', '/version', undefined, 2000).then(() => true, () => false);
  const script = path.join(ROOT, 'scripts', 'docker-node.sh');
  if (!wasUp) execFileSync('bash', [script, 'start', node2], { stdio: 'inherit' });
  return {
    dockerHost, node2Host, engines: { one: createEngine(dockerHost), two },
    stop: () => wasUp || execFileSync('bash', [script, 'stop', node2], { stdio: 'inherit' }),
  };
}

/** Every container and volume of the bench's instance, by id, on both engines (shutdown lets containers run on). */
async function removeAll(engines, dir) {
  const { instanceName } = dist('runtime/host/cgroups');
  const filters = encodeURIComponent(JSON.stringify({ label: [`io.gsh.instance=${instanceName(dir)}`] }));
  for (const e of Object.values(engines)) {
    for (const c of await e.json('GET', `/containers/json?all=1&filters=${filters}`).catch(() => [])) await e.json('DELETE', `/containers/${c.Id}?force=1`).catch(() => undefined);
    for (const v of (await e.json('GET', `/volumes?filters=${filters}`).catch(() => ({}))).Volumes ?? []) await e.json('DELETE', `/volumes/${v.Name}`).catch(() => undefined);
  }
}

module.exports = { runNodes, fill, bareCopy, removeAll, untilTrue, twoEngines, PORTS };
