'use strict';
/**
 * `npm run bench` (builds first): node scripts/bench/run.js [api] [startup] [metrics] [runtime] [streams] [scale] [docker] [--quick]
 * [--no-profile]. No part named = the first six (docker needs an engine: name it). Prints one table and writes bench-results/latest.json (the parts of
 * this run, the machine, the load average before and after each part: other work on the host shows up there).
 * BENCHMARKS.md says what each number means and records a full run.
 *
 *   api      ~6 min   full stack (access log off and on) vs bare express (autocannon), CPU profiles (api.js)
 *   startup  ~1 min   time to listen vs bare express in `node -e`; `npm start`; first request per operation (startup.js)
 *   metrics  ~2 min   1,000 servers × 30 days: range queries, ingest vs plain insert, bytes (metrics.js)
 *   runtime  ~5 min   start → running via API vs direct; service CPU/RSS at 0/1/10/30 games (runtime.js)
 *   streams  ~4 min   service memory: console spam alone vs spam + 60 never-reading streams (streams.js)
 *   scale    ~5 min   10,000 registered servers vs 25: idle CPU, stalls, create, quota, start-up, RSS (scale.js)
 *   docker   ~5 min   RUNTIME=docker vs local: start → running, service CPU and game memory per game (docker.js)
 *   webhooks ~4 min   event write overhead on create, delivery throughput, outbox backlog drain (webhooks.js)
 *   backups  ~1 min   archive MB/s vs tar czf; service RSS while a 200 MB archive downloads (backups.js)
 *   fairness ~2 min   one user's delivery latency, another's 10 webhooks to a dead receiver vs idle (fairness.js)
 *   outbox   ~6 min   idle CPU and another tenant's GET /v1/quota, 2M pending deliveries vs none (outbox.js)
 *   nodes    ~4 min   two engines: a live backup vs a stop backup; a move's seconds per 100 MB vs a bare copy (nodes.js)
 *   live-moves ~4 min two engines, a player online: unreachable s moving 1 GB vs 10 MB; move vs bare copy, 3 rounds (live-moves.js)
 *   files    ~3 min   200 MB through the Files API vs cp, SFTP vs OpenSSH's sftp-server, 10,000-file listing, 100 MB world import (files.js)
 *   files-node ~3 min 200 MB through the Files API on a Docker node vs the engine's archive endpoint, bare, and a bare Node relay (files-node.js)
 *   dns      ~3 min   two engines, Knot DNS: a move's end → the new SRV record answering (dns.js)
 * --quick shortens every part (for checking the scripts, not for numbers).
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { RESULTS, machine, fmt } = require('./lib');
const { runApi } = require('./api');
const { runStartup } = require('./startup');
const { runMetrics } = require('./metrics');
const { runRuntime } = require('./runtime');
const { runStreams } = require('./streams');
const { runScale } = require('./scale');
const { runDocker } = require('./docker');
const { runWebhooks } = require('./webhooks');
const { runBackups } = require('./backups');
const { runFairness } = require('./fairness');
const { runOutbox } = require('./outbox');
const { runNodes } = require('./nodes');
const { runLiveMoves } = require('./live-moves');
const { runFiles } = require('./files');
const { runFilesNode } = require('./files-node');
const { runDns } = require('./dns');

// apiRatio: the reads' target (issue 18: ≥ 0.5, stretch 0.7).
const TARGET = { listenMs: 3000, firstRequestMs: 20, fairnessP99Ms: 2000, fairnessRatio: 2, outboxRatio: 1.1, scaleCpuRatio: 2, stallMs: 20, createRatio: 1.3, quotaRatio: 1.5, apiRatio: 0.5, queryP50Ms: 5, rangeRatio: 2, startRatio: 1.1, cpuPerServer: 1, streamGrowthMb: 50, containerStartRatio: 1.3, eventOverhead: 0.1, deliveriesPerS: 1000, archiveRatio: 0.7, downloadGrowthMb: 30, filesRatio: 0.7, sftpRatio: 0.5, listP50Ms: 100, moveDowntimeRatio: 2, moveThroughputRatio: 0.7 };
const PARTS = ['api', 'startup', 'metrics', 'runtime', 'streams', 'scale'];
const OPTIONAL = ['docker', 'webhooks', 'backups', 'fairness', 'outbox', 'nodes', 'live-moves', 'files', 'files-node', 'dns'];

async function main() {
  const args = process.argv.slice(2);
  const quick = args.includes('--quick');
  const named = [...PARTS, ...OPTIONAL].filter((p) => args.includes(p));
  const parts = named.length ? named : PARTS;
  const out = { started_at: new Date().toISOString(), machine: machine(), quick, parts: {} };
  console.log(`bench: ${parts.join(', ')} on ${out.machine.nproc} × ${out.machine.cpu_model}, ${out.machine.memory_gib} GiB, node ${out.machine.node}`);

  const run = {
    api: () => runApi({ durationS: quick ? 3 : 10, rounds: quick ? 1 : 2, profile: !args.includes('--no-profile') }),
    startup: () => runStartup({ runs: quick ? 1 : 5 }),
    metrics: () => runMetrics(quick ? { servers: 200, days: 3, queries: 50, steadyRounds: 60 } : {}),
    runtime: () => runRuntime(quick ? { startRuns: 1, levels: [1, 3], windowS: 5 } : {}),
    streams: () => runStreams({ windowS: quick ? 10 : 60 }),
    scale: () => runScale(quick ? { windowS: 5, creates: 5, quotaReads: 10 } : {}),
    docker: () => runDocker(quick ? { runs: 1, running: 2, windowS: 5 } : {}),
    webhooks: () => runWebhooks(quick ? { creates: 200, deliveries: 500 } : {}),
    backups: () => runBackups(quick ? { worldMb: 20, downloadMb: 20, rounds: 1 } : {}),
    fairness: () => runFairness(quick ? { windowS: 8 } : {}),
    outbox: () => runOutbox(quick ? { rows: 100_000, users: 20, idleS: 5, requests: 300, rounds: 3 } : {}),
    nodes: () => runNodes(quick ? { mb: 20, rounds: 1 } : {}),
    'live-moves': () => runLiveMoves(quick ? { mb: 100 } : {}),
    files: () => runFiles(quick ? { mb: 20, rounds: 1, files: 1000, listRounds: 5, zipMb: 10, importRounds: 1 } : {}),
    'files-node': () => runFilesNode(quick ? { mb: 20, rounds: 1 } : {}),
    dns: () => runDns(quick ? { rounds: 2 } : {}),
  };
  for (const part of parts) {
    console.log(`\n[${part}]`);
    const load = os.loadavg()[0];
    const t0 = Date.now();
    out.parts[part] = { ...(await run[part]()), seconds: (Date.now() - t0) / 1000, loadavg_1m: { before: load, after: os.loadavg()[0] } };
  }
  out.finished_at = new Date().toISOString();
  fs.mkdirSync(RESULTS, { recursive: true });
  fs.writeFileSync(path.join(RESULTS, 'latest.json'), JSON.stringify(out, null, 2) + '\n');
  console.log('\n' + table(out).join('\n'));
  console.log(`\nwritten: ${path.relative(process.cwd(), path.join(RESULTS, 'latest.json'))}`);
}

/** The summary table: one line per number, with its target and whether it is met. */
function table(out) {
  const rows = [['part', 'measure', 'value', 'baseline', 'ratio', 'target', 'met']];
  const mark = (ok) => (ok ? 'yes' : 'NO');
  const api = out.parts.api;
  if (api) {
    for (const c of api.cases) {
      const f = c.full;
      const b = c.bare;
      const target = c.read ? `≥ ${TARGET.apiRatio}` : '';
      const met = (r) => (c.read ? mark(r >= TARGET.apiRatio) : '');
      rows.push(['api', `${c.name} req/s (full vs bare)`, fmt(f.rps), fmt(b.rps), fmt(c.ratio, 2), target, met(c.ratio)]);
      rows.push(['api', `${c.name} req/s, access log on`, fmt(c.full_log.rps), fmt(b.rps), fmt(c.ratio_log, 2), target, met(c.ratio_log)]);
      rows.push(['api', `${c.name} p50 / p99 ms`, `${fmt(f.p50_ms)} / ${fmt(f.p99_ms)}`, `${fmt(b.p50_ms)} / ${fmt(b.p99_ms)}`, '', '', '']);
      rows.push(['api', `${c.name} server CPU µs/request (log off / on)`, `${fmt(f.cpu_us)} / ${fmt(c.full_log.cpu_us)}`, fmt(b.cpu_us), fmt(f.cpu_us / b.cpu_us, 1), '', '']);
    }
  }
  const su = out.parts.startup;
  if (su) {
    const l = su.listen;
    rows.push(['startup', 'listening ms, service vs bare express in node -e (median)', fmt(l.service_median_ms), fmt(l.bare_median_ms), fmt(l.ratio, 1), `< ${TARGET.listenMs}`, mark(l.service_median_ms < TARGET.listenMs)]);
    rows.push(['startup', 'listening ms, npm start (build up to date)', fmt(su.npm_start_ms), '', '', `< ${TARGET.listenMs}`, mark(su.npm_start_ms < TARGET.listenMs)]);
    rows.push(['startup', `slowest first request ms (${su.slowest_first.operationId}) vs median second`, fmt(su.slowest_first.ms, 1), fmt(su.second_median_ms, 1), fmt(su.slowest_first.ratio, 1), `≤ ${TARGET.firstRequestMs}`, mark(su.slowest_first.ms <= TARGET.firstRequestMs)]);
    rows.push(['startup', 'the process\'s first /v1 request ms (before the operations)', fmt(su.first_v1_ms, 1), '', '', '', '']);
    rows.push(['startup', `first request ms, median of ${su.operations} operations`, fmt(su.first_median_ms, 1), fmt(su.second_median_ms, 1), fmt(su.first_median_ms / su.second_median_ms, 1), '', '']);
  }
  const m = out.parts.metrics;
  if (m) {
    for (const [name, q] of Object.entries(m.query)) {
      rows.push(['metrics', `query ${name} p50 / p99 ms (rows read)`, `${fmt(q.p50_ms, 2)} / ${fmt(q.p99_ms, 2)} (${q.rows_read})`, '', '', `p50 < ${TARGET.queryP50Ms}`, mark(q.p50_ms < TARGET.queryP50Ms)]);
    }
    const r = m.query['30d'].p50_ms / m.query['1h'].p50_ms;
    rows.push(['metrics', 'query 30d p50 ÷ 1h p50', fmt(r, 2), '', '', `≤ ${TARGET.rangeRatio}`, mark(r <= TARGET.rangeRatio)]);
    rows.push(['metrics', 'ingest samples/s, store.write (vs plain insert)', fmt(m.ingest.store_write_per_s), fmt(m.ingest.plain_insert_per_s), fmt(m.ingest.ratio, 2), '', '']);
    rows.push(['metrics', 'ingest samples/s, write + maintain', fmt(m.ingest.store_write_maintain_per_s), fmt(m.ingest.plain_insert_per_s), fmt(m.ingest.store_write_maintain_per_s / m.ingest.plain_insert_per_s, 2), '', '']);
    rows.push(['metrics', 'bytes per server-day (all levels ÷ 30 days)', fmt(m.storage.bytes_per_server_day), '', '', '', '']);
  }
  const rt = out.parts.runtime;
  if (rt) {
    rows.push(['runtime', 'start → running ms, API vs direct (median)', fmt(rt.start.api_median_ms), fmt(rt.start.direct_median_ms), fmt(rt.start.ratio, 2), `≤ ${TARGET.startRatio}`, mark(rt.start.ratio <= TARGET.startRatio)]);
    rows.push(['runtime', 'start → running ms, service-side (action row)', fmt(rt.start.api_service_side_median_ms), fmt(rt.start.direct_median_ms), fmt(rt.start.api_service_side_median_ms / rt.start.direct_median_ms, 2), '', '']);
    for (const u of rt.usage) {
      const per = u.cpu_percent_per_server;
      rows.push(['runtime', `service with ${u.running} running: CPU % of a core, RSS MB (per server)`,
        `${fmt(u.cpu_percent, 2)} %, ${fmt(u.rss_mean_mb)} MB`, '', per === null ? '' : `${fmt(per, 3)} %/server`,
        u.running ? `< ${TARGET.cpuPerServer} %/server` : '', u.running ? mark(per < TARGET.cpuPerServer) : '']);
    }
  }
  const st = out.parts.streams;
  if (st) {
    const T = TARGET.streamGrowthMb;
    for (const name of ['stalled', 'reconnecting']) {
      const p = st[name];
      rows.push(['streams', `${name}: RSS peak MB, spam + ${st.streams} streams vs spam alone (${st.window_s} s each)`, fmt(p.rss_peak_mb, 1),
        fmt(st.baseline.rss_peak_mb, 1), fmt(p.rss_peak_mb / st.baseline.rss_peak_mb, 2), `+${T} MB`, mark(p.rss_cost_mb < T)]);
      rows.push(['streams', `${name}: live heap MB after GC, streams open vs start`, fmt(p.live_open_mb, 1),
        fmt(st.baseline.live_start_mb, 1), fmt(p.live_open_mb / st.baseline.live_start_mb, 2), `+${T} MB`, mark(p.live_cost_mb < T)]);
      rows.push(['streams', `${name}: RSS, live heap MB 5 s after the clients left`, `${fmt(p.after.rss_mb, 1)}, ${fmt(p.after.live_mb, 1)}`,
        `${fmt(st.baseline.rss_before_mb, 1)}, ${fmt(st.baseline.live_start_mb, 1)}`, '', '', '']);
    }
  }
  if (out.parts.scale) rows.push(...scaleRows(out.parts.scale, mark));
  const dk = out.parts.docker;
  if (dk) {
    const { local: l, docker: d } = dk;
    rows.push(['docker', 'start → running ms, container vs local process (median)', fmt(d.start_median_ms), fmt(l.start_median_ms), fmt(dk.start_ratio, 2), `≤ ${TARGET.containerStartRatio}`, mark(dk.start_ratio <= TARGET.containerStartRatio)]);
    rows.push(['docker', `service CPU % of a core per running game (${d.running} running)`, fmt(d.cpu_percent_per_game, 3), fmt(l.cpu_percent_per_game, 3), '', `< ${TARGET.cpuPerServer} %/container`, mark(d.cpu_percent_per_game < TARGET.cpuPerServer)]);
    rows.push(['docker', 'game memory MB per running game (container vs process)', fmt(d.ram_mb_per_game), fmt(l.ram_mb_per_game), fmt(dk.ram_ratio, 2), '', '']);
  }
  const wh = out.parts.webhooks;
  if (wh) {
    rows.push(['webhooks', 'creates/s with events vs without (overhead)', fmt(wh.write.with_events_per_s), fmt(wh.write.without_events_per_s), `${fmt(wh.write.overhead * 100, 1)} %`, `≤ ${TARGET.eventOverhead * 100} %`, mark(wh.write.overhead <= TARGET.eventOverhead)]);
    rows.push(['webhooks', `deliveries/s to a local receiver (${wh.throughput.servers} servers)`, fmt(wh.throughput.per_s), '', '', `≥ ${TARGET.deliveriesPerS}`, mark(wh.throughput.per_s >= TARGET.deliveriesPerS)]);
    rows.push(['webhooks', `backlog drain s (${wh.backlog.deliveries} events: 10 min at 10/s)`, fmt(wh.backlog.seconds, 1), '', '', '', '']);
  }
  const bk = out.parts.backups;
  if (bk) {
    const { throughput: t, download: d } = bk;
    rows.push(['backups', `archive MB/s, ours vs tar czf (${t.mb} MB world)`, fmt(t.ours_mb_s, 1), fmt(t.tar_mb_s, 1), fmt(t.ratio, 2), `≥ ${TARGET.archiveRatio}`, mark(t.ratio >= TARGET.archiveRatio)]);
    rows.push(['backups', `RSS growth MB while a ${d.mb} MB archive downloads`, fmt(d.rss_growth_mb, 1), fmt(d.rss_before_mb, 0), '', `< ${TARGET.downloadGrowthMb} MB`, mark(d.rss_growth_mb < TARGET.downloadGrowthMb)]);
  }
  const fa = out.parts.fairness;
  if (fa) {
    const all = fa.attacked.delivered === fa.attacked.events;
    const met = all && fa.attacked.p99_ms < TARGET.fairnessP99Ms && fa.ratio_p99 < TARGET.fairnessRatio;
    rows.push(['fairness', `B's events delivered within the window (+2 s), A attacking vs A idle`, `${fa.attacked.delivered}/${fa.attacked.events}`, `${fa.idle.delivered}/${fa.idle.events}`, '', 'all', mark(all)]);
    rows.push(['fairness', `B's delivery p50 / p99 ms, A's ${fa.dead_webhooks} webhooks to a dead receiver vs A idle`,
      `${fmt(fa.attacked.p50_ms)} / ${fmt(fa.attacked.p99_ms)}`, `${fmt(fa.idle.p50_ms)} / ${fmt(fa.idle.p99_ms)}`, fmt(fa.ratio_p99, 2),
      `p99 < ${TARGET.fairnessP99Ms}, < ${TARGET.fairnessRatio}×`, mark(met)]);
    rows.push(['fairness', 'attempts under way: A (its share), all', `${fa.a_in_flight_max}, ${fa.in_flight_max}`, '', '', '', '']);
  }
  const ob = out.parts.outbox;
  if (ob) {
    const cpu = ob.idle_cpu_percent.full / ob.idle_cpu_percent.empty;
    rows.push(['outbox', `idle CPU % of a core, ${ob.pending} pending vs none`, fmt(ob.idle_cpu_percent.full, 2), fmt(ob.idle_cpu_percent.empty, 2), fmt(cpu, 2), `≤ ${TARGET.outboxRatio}×`, mark(cpu <= TARGET.outboxRatio)]);
    for (const q of ['p50_ms', 'p90_ms']) {
      const r = ob.quota.ratio[q.slice(0, 3)];
      rows.push(['outbox', `another tenant's GET /v1/quota ${q.slice(0, 3)} ms (median of ${ob.quota.rounds.length} rounds)`, fmt(ob.quota.full[q], 2), fmt(ob.quota.empty[q], 2), fmt(r, 2), `≤ ${TARGET.outboxRatio}×`, mark(r <= TARGET.outboxRatio)]);
    }
  }
  const nd = out.parts.nodes;
  if (nd) {
    const { backup: b, move: m } = nd;
    rows.push(['nodes', `backup of a running server s, live vs stop (${nd.world_mb} MB more world)`, fmt(b.live_ms / 1000, 2), fmt(b.stop_ms / 1000, 2), fmt(b.ratio, 2), '', '']);
    rows.push(['nodes', 'players off during a backup s, live vs stop (until running again)', '0', fmt(b.stop_offline_ms / 1000, 2), '', '', '']);
    rows.push(['nodes', `move s per 100 MB of volume vs a bare engine-to-engine copy (${fmt(m.volume_mb, 0)} MB)`, fmt(m.move_ms_per_100mb / 1000, 2), fmt(m.bare_ms_per_100mb / 1000, 2), fmt(m.ratio, 2), '', '']);
    rows.push(['nodes', 'of which copy and check s per 100 MB', fmt(m.copy_ms_per_100mb / 1000, 2), fmt(m.bare_ms_per_100mb / 1000, 2), fmt(m.copy_ms_per_100mb / m.bare_ms_per_100mb, 2), '', '']);
  }
  const lm = out.parts['live-moves'];
  if (lm) {
    const [big, small] = [lm.unreachable_big_ms / 1000, lm.small.unreachable_ms / 1000];
    rows.push(['live-moves', `unreachable s moving with a player on, ${lm.world_mb} MB (worst of ${lm.rounds.length} moves) vs ${lm.small_world_mb} MB more world`, fmt(big, 2), fmt(small, 2), fmt(lm.unreachable_ratio, 2), `≤ 10 s, ≤ ${TARGET.moveDowntimeRatio}×`, mark(big <= 10 && lm.unreachable_ratio <= TARGET.moveDowntimeRatio)]);
    rows.push(['live-moves', `whole move s vs a bare engine-to-engine copy, the stream alone (${fmt(lm.big.volume_mb, 0)} MB; the median of ${lm.rounds.length} rounds), as throughput`, fmt(lm.big.move_ms / 1000, 2), fmt(lm.bare_ms / 1000, 2), fmt(lm.throughput_ratio, 2), `≥ ${TARGET.moveThroughputRatio}`, mark(lm.throughput_ratio >= TARGET.moveThroughputRatio)]);
    if (lm.bare_whole_ms) rows.push(['live-moves', 'the same, the bare copy making and removing its volume and containers inside its clock', fmt(lm.big.move_ms / 1000, 2), fmt(lm.bare_whole_ms / 1000, 2), fmt(lm.throughput_ratio_whole, 2), `≥ ${TARGET.moveThroughputRatio}`, mark(lm.throughput_ratio_whole >= TARGET.moveThroughputRatio)]);
  }
  if (out.parts.files) rows.push(...filesRows(out.parts.files, mark));
  const fn = out.parts['files-node'];
  if (fn) {
    for (const k of ['upload', 'download']) {
      const x = fn[k];
      rows.push(['files-node', `API ${k} of ${fn.mb} MB on a Docker node, ms vs the engine's archive endpoint`, fmt(x.api_ms), fmt(x.bare_ms), fmt(x.ratio, 2), `≥ ${TARGET.filesRatio}`, mark(x.ratio >= TARGET.filesRatio)]);
      // The ceiling of any Node.js relay to the engine here (files-node-ceiling.js): its ratio to bare, and ours to it.
      const c = x.relay;
      if (c) rows.push(['files-node', `  bare Node relay ${k}, ms vs the engine's archive endpoint (ours ÷ it: ${fmt(c.ours_of_it, 2)})`, fmt(c.ms), fmt(x.bare_ms), fmt(c.of_bare, 2), '', '']);
    }
  }
  const dn = out.parts.dns;
  if (dn) {
    rows.push(['dns', `a move's end → the new SRV record answering ms, median of ${dn.moves} moves (most)`, `${fmt(dn.done_to_srv_ms, 0)} (${fmt(Math.max(...dn.runs.done_to_srv), 0)})`, '', '', '', '']);
    rows.push(['dns', 'new address (the move\'s switch) → the new SRV record answering ms; switch → end', fmt(dn.address_to_srv_ms, 0), fmt(dn.address_to_done_ms, 0), '', '', '']);
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  return rows.map((r, k) => {
    const line = r.map((c, i) => String(c).padEnd(widths[i])).join('  ').trimEnd();
    return k === 0 ? `${line}\n${widths.map((w) => '-'.repeat(w)).join('  ')}` : line;
  });
}

/** The files part's lines (files.js): each transfer against its bare baseline of the same run. */
function filesRows(fl, mark) {
  const { api, sftp, list, import: im } = fl;
  const rows = [];
  for (const k of ['upload', 'download']) {
    const x = api[k];
    rows.push(['files', `API ${k} of ${api.mb} MB, ms vs cp`, fmt(x.api_ms), fmt(x.cp_ms), fmt(x.ratio, 2), `≥ ${TARGET.filesRatio}`, mark(x.ratio >= TARGET.filesRatio)]);
    // The ceiling of any Node.js HTTP server here (files-ceiling.js): its own ratio to cp, and ours to it.
    for (const [name, c] of Object.entries(x.ceilings ?? {})) {
      rows.push(['files', `  bare ${name} HTTP ${k}, ms vs cp (ours ÷ it: ${fmt(c.ours_of_it, 2)})`, fmt(c.ms), fmt(x.cp_ms), fmt(c.of_cp, 2), '', '']);
    }
  }
  if (sftp) {
    for (const k of ['put', 'get']) {
      const x = sftp[k];
      rows.push(['files', `SFTP ${k} of ${sftp.mb} MB, ms vs OpenSSH sftp-server`, fmt(x.ours_ms), fmt(x.openssh_ms), fmt(x.ratio, 2), `≥ ${TARGET.sftpRatio}`, mark(x.ratio >= TARGET.sftpRatio)]);
    }
  }
  for (const limit of [100, 1000]) {
    const l = list[`limit_${limit}`];
    rows.push(['files', `list a folder of ${list.files} files (limit ${limit}) p50 / p99 ms`, `${fmt(l.p50_ms, 1)} / ${fmt(l.p99_ms, 1)}`, '', '', `p50 < ${TARGET.listP50Ms}`, mark(l.p50_ms < TARGET.listP50Ms)]);
  }
  rows.push(['files', `import a ${fmt(im.zip_mb)} MB zipped world, ms vs unzip -q`, fmt(im.ms), fmt(im.unzip_ms), fmt(im.ratio, 2), '', '']);
  rows.push(['files', 'service RSS MB during the import: peak (before)', fmt(im.rss_peak_mb), fmt(im.rss_before_mb), `+${fmt(im.rss_growth_mb)} MB`, '', '']);
  return rows;
}

/** The scale part's lines: the 10,000-server service against the 25-server one of the same run. */
function scaleRows(sc, mark) {
  const { large: l, small: s, small_with_metrics: m } = sc;
  const q = sc.quota_p50_ms;
  const c = sc.create_p50_ms;
  const cpu = l.cpu_percent / s.cpu_percent;
  return [
    ['scale', `idle CPU % of a core over ${sc.window_s} s, 10,000 servers vs 25`, fmt(l.cpu_percent, 2), fmt(s.cpu_percent, 2), fmt(cpu, 2), `≤ ${TARGET.scaleCpuRatio}`, mark(cpu <= TARGET.scaleCpuRatio)],
    ['scale', 'longest event-loop stall ms, own (main thread busy) / wall', `${fmt(l.stall_busy_max_ms, 1)} / ${fmt(l.stall_max_ms, 1)}`,
      `${fmt(s.stall_busy_max_ms, 1)} / ${fmt(s.stall_max_ms, 1)}`, '', `own < ${TARGET.stallMs}`, mark(l.stall_busy_max_ms < TARGET.stallMs)],
    ['scale', 'POST /v1/servers p50 ms (by the 5,000-server account)', fmt(c.large, 2), fmt(c.small, 2), fmt(c.large / c.small, 2), `≤ ${TARGET.createRatio}`, mark(c.large / c.small <= TARGET.createRatio)],
    ['scale', 'GET /v1/quota p50 ms, 5,000-server account vs 25', fmt(q.large_5000, 2), fmt(q.large_25, 2), fmt(q.large_5000 / q.large_25, 2), `≤ ${TARGET.quotaRatio}`, mark(q.large_5000 / q.large_25 <= TARGET.quotaRatio)],
    ['scale', 'GET /v1/servers?state=running p50 ms (no match) vs unfiltered', fmt(sc.list_p50_ms.state_running_none, 2), fmt(sc.list_p50_ms.unfiltered, 2), fmt(sc.list_p50_ms.state_running_none / sc.list_p50_ms.unfiltered, 2), '', ''],
    ['scale', 'start-up ms (fork → listening)', fmt(l.start_ms), fmt(s.start_ms), fmt(l.start_ms / s.start_ms, 2), '', ''],
    ['scale', 'RSS MB, mean over the idle window', fmt(l.rss_mean_mb), fmt(s.rss_mean_mb), fmt(l.rss_mean_mb / s.rss_mean_mb, 2), '', ''],
    ['scale', 'idle CPU % with METRICS_PORT set, nobody scraping (25 servers)', fmt(m.cpu_percent, 2), fmt(s.cpu_percent, 2), fmt(m.cpu_percent / s.cpu_percent, 2), '', ''],
  ];
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
