'use strict';
/**
 * `npm run bench -- live-moves` (issue 41 §2; docs/architecture.md "Moving a server"): the service (in this process,
 * RUNTIME=docker) on two engines, as nodes.js sets them up. Two running flying-squid servers on node one (backups
 * `live`, so moves copy while the game runs), one with `mb` MB more in its world (1 MiB region-like files), one with
 * `smallMb`; each with a player online (mineflayer) when it is moved to node two.
 *
 * - unreachable s: from outside, a server-list ping every 100 ms to the address the server has at that moment (the
 *   old one, then the new one from its row after the switch); the longest gap between two answers while the move
 *   runs. Ratio: the big world's ÷ the small world's, same run (target ≤ 2, and ≤ 10 s).
 * - also the player's side: from its disconnect until the first answer after it.
 * - throughput: the big volume's bytes ÷ the whole move's time (from the move's start on the server's door, when it
 *   leaves `pending`, until `done` and `running` on node two), against the same volume copied bare from one engine to
 *   the other (nodes.js bareCopy) right after, same run. Ratio: move ÷ bare (target ≥ 0.7).
 */
const path = require('node:path');
const fs = require('node:fs');
const { execFileSync } = require('node:child_process');
const { dist, tempDir, msSince, sleep, fmt } = require('./lib');
const { fill, bareCopy, removeAll, untilTrue, PORTS } = require('./nodes');

const ROOT = path.resolve(__dirname, '..', '..');

async function runLiveMoves({ mb = 1024, smallMb = 10 } = {}) {
  const { createEngine } = dist('runtime/host/docker/engine');
  const dockerHost = process.env.DOCKER_HOST || 'unix:///var/run/docker.sock';
  const node2 = process.env.GSH_NODE2_DIR || '/tmp/gsh-node2';
  const two = createEngine(`unix://${node2}/docker.sock`);
  const wasUp = await two.json('GET', '/version', undefined, 2000).then(() => true, () => false);
  if (!wasUp) execFileSync('bash', [path.join(ROOT, 'scripts', 'docker-node.sh'), 'start', node2], { stdio: 'inherit' });
  const dir = tempDir('live-moves');
  const engines = { one: createEngine(dockerHost), two };
  try {
    const ctx = await up(dir, dockerHost, `unix://${node2}/docker.sock`);
    try {
      await fill(ctx, engines.one, ctx.ids.small, smallMb);
      await fill(ctx, engines.one, ctx.ids.big, mb);
      for (const id of Object.values(ctx.ids)) {
        ctx.runtime.power.requestAction(id, ctx.userId, 'start');
        await untilTrue('running', () => ctx.runtime.lifecycle.state(id) === 'running');
      }
      const small = await moveWithPlayer(ctx, ctx.ids.small, 'Small');
      const big = await moveWithPlayer(ctx, ctx.ids.big, 'Big');
      const bare = await bareCopy(ctx, engines, ctx.ids.big);
      const result = {
        world_mb: mb, small_world_mb: smallMb, small, big, bare_ms: bare,
        unreachable_ratio: big.unreachable_ms / small.unreachable_ms,
        throughput_ratio: bare / big.move_ms,
      };
      console.log(`  unreachable during a move: ${fmt(big.unreachable_ms / 1000, 2)} s (${mb} MB more world) vs ${fmt(small.unreachable_ms / 1000, 2)} s (${smallMb} MB), ratio ${fmt(result.unreachable_ratio, 2)}`);
      console.log(`  the player's disconnect until an answer: ${fmt(big.player_off_ms / 1000, 2)} s vs ${fmt(small.player_off_ms / 1000, 2)} s`);
      console.log(`  steps, ms from the start: ${JSON.stringify(big.steps_ms)} (1 GB), ${JSON.stringify(small.steps_ms)} (small)`);
      console.log(`  whole move ${fmt(big.move_ms / 1000, 2)} s for ${fmt(big.volume_mb, 0)} MB vs bare copy ${fmt(bare / 1000, 2)} s: throughput ratio ${fmt(result.throughput_ratio, 2)}`);
      return result;
    } finally {
      await ctx.service.stop();
      await removeAll(engines, dir);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    if (!wasUp) execFileSync('bash', [path.join(ROOT, 'scripts', 'docker-node.sh'), 'stop', node2], { stdio: 'inherit' });
  }
}

/** The service on both nodes, with two flying-squid servers installed on node one. */
async function up(dir, dockerHost, node2Host) {
  const { runCli } = dist('cli');
  const { loadConfig } = dist('config');
  const { startService } = dist('service');
  const { silentLogger } = dist('log');
  for (const [name, host, ports] of [['one', dockerHost, PORTS.one], ['two', node2Host, PORTS.two]]) {
    const code = await runCli(['node', 'add', '--name', name, '--docker-host', host, '--public-host', '127.0.0.1', '--memory-mb', '4000', '--ports', ports], { DATA_DIR: dir }, () => undefined, console.error);
    if (code !== 0) throw new Error(`gsh node add ${name} failed`);
  }
  const service = await startService(loadConfig({ DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', RUNTIME: 'docker', DOCKER_HOST: dockerHost, NODE_CHECK_INTERVAL_S: '1' }), silentLogger);
  const user = service.store.users.ensure('bench@example.com');
  service.store.nodes.setDraining('two', true);
  const make = (name) => service.store.servers.create(user.id, { name, plan: 'micro', version: 'flying-squid-1.20', software: 'flying-squid', game_version: '1.20' }).id;
  const ids = { small: make('small'), big: make('big') };
  service.store.nodes.setDraining('two', false);
  for (const id of Object.values(ids)) await service.runtime.lifecycle.install(id);
  return { service, runtime: service.runtime, ids, dir, userId: user.id };
}

/** A server-list ping of host:port: whether the game answered within a second. */
async function answers(host, port) {
  const mc = require(path.join(ROOT, 'node_modules', 'minecraft-protocol'));
  return Promise.race([mc.ping({ host, port, version: '1.20' }).then(() => true, () => false), sleep(1000).then(() => false)]);
}

/** A player joins, the server moves to node two, and the outside ping loop times its unreachable gap. */
async function moveWithPlayer(ctx, id, username) {
  const mineflayer = require(path.join(ROOT, 'node_modules', 'mineflayer'));
  const { service, runtime } = ctx;
  const address = () => service.store.servers.find(id).address;
  const first = address();
  const bot = mineflayer.createBot({ host: first.host, port: first.port, username, auth: 'offline', version: '1.20', hideErrors: true });
  await new Promise((resolve, reject) => {
    bot.once('spawn', resolve);
    bot.once('kicked', (reason) => reject(new Error(`kicked: ${reason}`)));
    bot.once('error', reject);
  });
  let playerOff = null;
  bot.once('end', () => (playerOff ??= process.hrtime.bigint()));
  let probing = true;
  const answered = [];
  const probe = (async () => {
    while (probing) {
      const { host, port } = address();
      const t = process.hrtime.bigint();
      if (await answers(host, port)) answered.push(t);
      await sleep(Math.max(0, 100 - msSince(t)));
    }
  })();
  const asked = service.store.moves.request(id, 'two');
  if (!asked.move) throw new Error(asked.refused);
  let started = null;
  const steps = {};
  await untilTrue('the move', () => {
    const m = service.store.moves.get(asked.move.id);
    if (m.status !== 'pending' && started === null) started = process.hrtime.bigint();
    if (started !== null && !(m.status in steps)) steps[m.status] = msSince(started);
    if (m.status === 'failed') throw new Error(`the move failed: ${m.error}`);
    return m.status === 'done' && runtime.lifecycle.state(id) === 'running';
  });
  const moveMs = msSince(started);
  const move = service.store.moves.get(asked.move.id);
  await untilTrue('an answer at the new address', () => answered.some((t) => t > started) && msSince(answered[answered.length - 1]) < 300, 60_000);
  probing = false;
  await probe;
  bot.end();
  const during = answered.filter((t) => t >= started);
  let gap = 0;
  for (let i = 1; i < during.length; i++) gap = Math.max(gap, Number(during[i] - during[i - 1]) / 1e6);
  const back = playerOff === null ? null : during.find((t) => t > playerOff);
  return {
    volume_mb: move.bytes / 2 ** 20, method: move.method, move_ms: moveMs, unreachable_ms: gap,
    player_off_ms: back ? Number(back - playerOff) / 1e6 : null, pings: during.length,
    // When each status was first seen, ms from the move's start (polled every 50 ms), and the player's disconnect.
    steps_ms: { ...steps, player_off: playerOff === null ? null : Number(playerOff - started) / 1e6 },
  };
}

module.exports = { runLiveMoves };
