'use strict';
/**
 * `npm run bench -- live-moves` (issue 41 §2; docs/architecture.md "Moving a server"): the service (in this process,
 * RUNTIME=docker) on two engines, as nodes.js sets them up. Two running flying-squid servers on node one (backups
 * `live`, so moves copy while the game runs), one with `mb` MB more in its world (1 MiB region-like files), one with
 * `smallMb`; each with a player online (mineflayer) when it is moved to node two.
 *
 * - unreachable s: from outside, a server-list ping every 100 ms to the address the server has at that moment (the
 *   old one, then the new one from its row after the switch); the longest gap between two answers while the move
 *   runs. Ratio: the big world's (the worst of the rounds) ÷ the small world's, same run (target ≤ 2, and ≤ 10 s).
 * - also the player's side: from its disconnect until the first answer after it. The player and the pings run in a
 *   process of their own (live-moves-player.js), as players do: before, they shared the service's event loop.
 * - throughput: the big volume's bytes ÷ the whole move's time (from the move's start on the server's door, when it
 *   leaves `pending`, until `done` and `running` on the new node), against the same volume copied bare from one engine
 *   to the other (nodes.js bareCopy) in the same direction right before that move, same run, its player already on
 *   and pinged as during the move (they share the machine's cores with the stream); ROUNDS such moves (to node two,
 *   back, to two again), each against its own bare copies, and the median round's ratio. Ratio: move ÷ bare
 *   (target ≥ 0.7). Both worlds are written to the disk (`sync`) once filled, before anything is timed: a real world
 *   was written long before its move, and the fill's write-back (from 30 s on) would otherwise land in whichever of
 *   the copies runs then. Each bare copy twice, in turn, the mean. That bare copy's clock covers the stream alone:
 *   its scratch volume and its two containers are made before it starts and removed after it stops. Beside it, the
 *   same copy timed as a real one needs it (bareCopy `whole`): the volume and the containers made (in parallel), the
 *   stream, the containers removed, all inside the clock; both ratios are printed.
 */
const path = require('node:path');
const fs = require('node:fs');
const { execFileSync, fork } = require('node:child_process');
const { performance } = require('node:perf_hooks');
const { dist, tempDir, sleep, fmt } = require('./lib');
const { fill, bareCopy, removeAll, twoEngines, untilTrue, PORTS } = require('./nodes');

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
/** Moves of the big world per run (to node two, back, to two again); the median round's ratio is the result. */
const ROUNDS = 3;

const ROOT = path.resolve(__dirname, '..', '..');

async function runLiveMoves({ mb = 1024, smallMb = 10 } = {}) {
  const { dockerHost, node2Host, engines, stop } = await twoEngines();
  const dir = tempDir('live-moves');
  try {
    const ctx = await up(dir, dockerHost, node2Host);
    try {
      await fill(ctx, engines.one, ctx.ids.small, smallMb);
      await fill(ctx, engines.one, ctx.ids.big, mb);
      execFileSync('sync');
      for (const id of Object.values(ctx.ids)) {
        ctx.runtime.power.requestAction(id, ctx.userId, 'start');
        await untilTrue('running', () => ctx.runtime.lifecycle.state(id) === 'running');
      }
      const small = await moveWithPlayer(ctx, ctx.ids.small, 'Small', 'two');
      // ROUNDS moves of the big world, to node two and back in turn, each against its own bare copies: twice each, in
      // turn, the mean, in the move's direction, with the big server's player on and its pings going, as during its
      // move (the player's process and the game serving it share this machine's two cores with the stream). One
      // move's ratio swings with the machine (the bare stream alone took 5.0-7.7 s across runs): the median round.
      const rounds = [];
      for (let r = 0; r < ROUNDS; r++) {
        const runs = { bare: [], bare_whole: [] };
        const big = await moveWithPlayer(ctx, ctx.ids.big, `Big${r}`, r % 2 === 0 ? 'two' : 'one', async () => {
          for (let i = 0; i < 2; i++) {
            runs.bare.push(await bareCopy(ctx, engines, ctx.ids.big));
            runs.bare_whole.push(await bareCopy(ctx, engines, ctx.ids.big, { whole: true }));
          }
        });
        const [bare, bareWhole] = [mean(runs.bare), mean(runs.bare_whole)];
        rounds.push({ big, bare_ms: bare, bare_whole_ms: bareWhole, bare_runs_ms: runs, throughput_ratio: bare / big.move_ms, throughput_ratio_whole: bareWhole / big.move_ms });
      }
      const byRatio = [...rounds].sort((a, b) => a.throughput_ratio - b.throughput_ratio);
      const median = byRatio[Math.floor(byRatio.length / 2)];
      const worst = rounds.reduce((a, b) => (b.big.unreachable_ms > a.big.unreachable_ms ? b : a));
      const result = {
        world_mb: mb, small_world_mb: smallMb, small, rounds,
        // The median round's move and bare copies (the throughput rows), the worst round's downtime (the downtime row).
        big: median.big, bare_ms: median.bare_ms, bare_whole_ms: median.bare_whole_ms, bare_runs_ms: median.bare_runs_ms,
        throughput_ratio: median.throughput_ratio,
        throughput_ratio_whole: median.throughput_ratio_whole,
        unreachable_big_ms: worst.big.unreachable_ms,
        unreachable_ratio: worst.big.unreachable_ms / small.unreachable_ms,
      };
      const secs = (xs) => xs.map((x) => fmt(x / 1000, 2)).join(', ');
      console.log(`  the small move: unreachable ${fmt(small.unreachable_ms / 1000, 2)} s (${smallMb} MB), the player's disconnect until an answer ${fmt(small.player_off_ms / 1000, 2)} s; steps, ms from the start: ${JSON.stringify(small.steps_ms)}`);
      rounds.forEach(({ big, bare_ms: bare, bare_runs_ms: runs, throughput_ratio: ratio, bare_whole_ms: whole, throughput_ratio_whole: ratioWhole }, r) => {
        console.log(`  round ${r + 1} (to node ${r % 2 === 0 ? 'two' : 'one'}): unreachable ${fmt(big.unreachable_ms / 1000, 2)} s, the player's disconnect until an answer ${fmt(big.player_off_ms / 1000, 2)} s; steps, ms from the start: ${JSON.stringify(big.steps_ms)}`);
        console.log(`    whole move ${fmt(big.move_ms / 1000, 2)} s for ${fmt(big.volume_mb, 0)} MB vs bare copy ${fmt(bare / 1000, 2)} s (the stream alone; ${secs(runs.bare)}): throughput ratio ${fmt(ratio, 2)}; with its volume and containers inside the clock ${fmt(whole / 1000, 2)} s (${secs(runs.bare_whole)}): ${fmt(ratioWhole, 2)}`);
      });
      console.log(`  median throughput ratio ${fmt(result.throughput_ratio, 2)} (rounds: ${rounds.map((x) => fmt(x.throughput_ratio, 2)).join(', ')}); worst unreachable ${fmt(result.unreachable_big_ms / 1000, 2)} s, ${fmt(result.unreachable_ratio, 2)}× the small move's`);
      return result;
    } finally {
      await ctx.service.stop();
      await removeAll(engines, dir);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    stop();
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

/**
 * A player joins, `before` runs (the bare copies, under the same load as the move), the server moves to node two,
 * and the outside ping loop times its unreachable gap; the player and the pings in a process of their own
 * (live-moves-player.js), as players are, not in the service's.
 */
async function moveWithPlayer(ctx, id, username, to, before = async () => undefined) {
  const { service, runtime } = ctx;
  const now = () => performance.timeOrigin + performance.now();
  const address = () => service.store.servers.find(id).address;
  const first = address();
  const player = fork(path.join(__dirname, 'live-moves-player.js'), [first.host, String(first.port), username], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const answered = [];
  let playerOff = null;
  let failure = null;
  player.on('message', (m) => {
    if (m.answered) answered.push(m.answered);
    if (m.off) playerOff ??= m.off;
    if (m.error) failure ??= m.error;
  });
  try {
    await new Promise((resolve, reject) => {
      player.on('message', (m) => (m.spawned ? resolve() : m.error ? reject(new Error(m.error)) : undefined));
      player.once('exit', (code) => reject(new Error(`the player's process exited (${code})`)));
    });
    await before();
    const asked = service.store.moves.request(id, to);
    if (!asked.move) throw new Error(asked.refused);
    let started = null;
    let told = `${first.host}:${first.port}`;
    const steps = {};
    await untilTrue('the move', () => {
      const m = service.store.moves.get(asked.move.id);
      if (m.status !== 'pending' && started === null) started = now();
      if (started !== null && !(m.status in steps)) steps[m.status] = now() - started;
      if (m.status === 'failed') throw new Error(`the move failed: ${m.error}`);
      const a = address();
      if (`${a.host}:${a.port}` !== told) {
        told = `${a.host}:${a.port}`;
        player.send({ address: a });
      }
      return m.status === 'done' && runtime.lifecycle.state(id) === 'running';
    });
    const moveMs = now() - started;
    const move = service.store.moves.get(asked.move.id);
    player.send({ address: address() });
    await untilTrue('an answer at the new address', () => answered.some((t) => t > started) && now() - answered[answered.length - 1] < 300, 60_000);
    const during = answered.filter((t) => t >= started);
    let gap = 0;
    for (let i = 1; i < during.length; i++) gap = Math.max(gap, during[i] - during[i - 1]);
    const back = playerOff === null ? null : during.find((t) => t > playerOff);
    return {
      volume_mb: move.bytes / 2 ** 20, method: move.method, move_ms: moveMs, unreachable_ms: gap,
      player_off_ms: back ? back - playerOff : null, pings: during.length, player_error: failure,
      // When each status was first seen, ms from the move's start (polled every 50 ms), and the player's disconnect.
      steps_ms: { ...steps, player_off: playerOff === null ? null : playerOff - started },
    };
  } finally {
    const exited = new Promise((r) => player.once('exit', r));
    if (player.exitCode === null) player.send({ stop: true });
    await Promise.race([exited, sleep(3000)]);
    if (player.exitCode === null) player.kill('SIGKILL');
  }
}

module.exports = { runLiveMoves };
