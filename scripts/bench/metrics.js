'use strict';
/**
 * Part 2, metrics at scale: 1,000 servers with 30 days of history, then range queries, ingest and bytes.
 *
 * History is written only through the store's own code (store.write + store.maintain, the sampler's round) with
 * an injected clock, ending at END. Writing all 30 days at the real 5-second cadence would be 518 million
 * samples (hours of writing), and all but the last 3 h 05 of them would be rolled up and deleted again. So each
 * period is written at the coarsest cadence that still leaves the store holding the same rows it would hold
 * after 30 days of 5-second samples (retention from src/telemetry/levels.ts):
 *   older than 27 h (only hourly rollups kept):    one round per hour    → one metric_hour row per server-hour
 *   27 h to 3 h 05 ago (minute rollups kept):      one round per minute  → one metric_minute row per server-minute
 *   the last 3 h 05 (raw kept):                    one round per 5 s     → exactly the real raw rows
 * maintain() runs after every 5 s round, as in the sampler, and every day / every 15 minutes of the coarser
 * periods (it rolls up whatever closed since its last run), so rollups and retention run through their real code.
 * The row counts, keys and layout are what 30 days of 5 s samples leave; only the sample counts inside the
 * older rollup rows (n, and the sums) are smaller, which makes those rows a few bytes shorter (see BENCHMARKS.md).
 *
 * Numbers:
 *   query p50/p99   ms per store.query() of one server (200 queries over different servers per range), warm cache
 *   rows read       store.debug().lastRowsRead: stored rows the query aggregated (all levels)
 *   ingest          samples/s through store.write() in 1,000-sample rounds (one per 5 s, as the sampler writes)
 *                   at steady state (raw table full), and the same with maintain() after each round
 *   plain insert    rows/s of the same samples into a plain rowid table with the same pragmas (WAL,
 *                   synchronous=FULL), one transaction per 1,000 rows, one prepared INSERT per row
 *   bytes           dbstat page bytes of the metric tables and their indexes after a checkpoint
 */
const fs = require('node:fs');
const path = require('node:path');
const { dist, tempDir, quantile, msSince, fmt } = require('./lib');

const MINUTE = 60;
const HOUR = 3600;
const DAY = 86_400;
const ROUND = 5; // METRICS_INTERVAL_S

const serverId = (i) => `srv_bench${String(i).padStart(22, '0')}`;

/** One server's sample at unix second t: deterministic, in realistic ranges, varying in every field. */
function sample(i, t) {
  const wave = (t / 60 + i * 7) % 240;
  return {
    server_id: serverId(i),
    at: new Date(t * 1000).toISOString(),
    tps: (t + i) % 720 === 0 ? null : 20 - ((t * 31 + i) % 150) / 100,
    cpu_percent: ((t * 13 + i * 101) % 4000) / 100,
    ram_bytes: (140_000 + ((t + i * 977) % 60_000)) * 1024,
    players_online: Math.floor(wave / 24),
    players_max: 10,
  };
}

function roundOf(servers, t) {
  const out = new Array(servers);
  for (let i = 0; i < servers; i++) out[i] = sample(i, t);
  return out;
}

async function runMetrics({ servers = 1000, days = 30, queries = 200, steadyRounds = 360, log = console.log } = {}) {
  const { openDb } = dist('store/db');
  const { createMetricsStore } = dist('telemetry/metrics-store');
  const { retentionFor } = dist('telemetry/levels');
  const retention = retentionFor(ROUND);
  const dir = tempDir('metrics');
  try {
    const db = openDb(path.join(dir, 'gsh.sqlite'));
    const END = Math.floor(Date.UTC(2026, 10, 22, 12, 0, 2) / 1000); // mid-minute, so windows straddle buckets
    let nowMs = (END - days * DAY) * 1000;
    const store = createMetricsStore(db, { now: () => nowMs }, { sampleIntervalS: ROUND });

    /**
     * Writes one round per `step` seconds over [from, to) and runs maintain() after every `maintainEvery` rounds
     * (and at the end); returns timings. maintain() rolls up whatever closed since its last run, so running it
     * less often in the coarse periods leaves the same rows and only saves time.
     */
    function period(from, to, step, maintainEvery = 1) {
      let samples = 0;
      let writeMs = 0;
      let maintainMs = 0;
      for (let t = from, k = 1; t < to; t += step, k++) {
        const batch = roundOf(servers, t);
        nowMs = t * 1000 + 500;
        const a = process.hrtime.bigint();
        store.write(batch);
        const b = process.hrtime.bigint();
        if (k % maintainEvery === 0 || t + step >= to) store.maintain();
        writeMs += Number(b - a) / 1e6;
        maintainMs += msSince(b);
        samples += batch.length;
      }
      return { samples, write_ms: writeMs, maintain_ms: maintainMs,
        write_per_s: samples / (writeMs / 1000), write_maintain_per_s: samples / ((writeMs + maintainMs) / 1000) };
    }

    const minuteFrom = Math.floor((END - retention.minuteS) / MINUTE) * MINUTE;
    const rawFrom = Math.floor((END - retention.rawS) / MINUTE) * MINUTE;
    const t0 = process.hrtime.bigint();
    log(`  metrics: ${servers} servers, ${days} days: hourly rounds until ${((END - minuteFrom) / HOUR).toFixed(1)} h ago`);
    const hourly = period(END - days * DAY, minuteFrom, HOUR, 24);
    log(`  metrics: minute rounds until ${((END - rawFrom) / HOUR).toFixed(2)} h ago`);
    const minutely = period(minuteFrom, rawFrom, MINUTE, 15);
    log('  metrics: 5 s rounds until now');
    const raw = period(rawFrom, END, ROUND);
    const buildS = msSince(t0) / 1000;
    log(`  metrics: history written in ${fmt(buildS)} s; 5 s rounds went at ${fmt(raw.write_per_s)} samples/s (write)`);

    // --- range queries -------------------------------------------------------------------------------------------
    nowMs = END * 1000;
    const ranges = [['1h', HOUR], ['24h', DAY], ['7d', 7 * DAY], ['30d', 30 * DAY]];
    const query = {};
    for (const [name, s] of ranges) {
      for (let k = 0; k < 20; k++) store.query(serverId((k * 37) % servers), s * 1000, name); // warm-up
      const times = [];
      const rows = [];
      for (let k = 0; k < queries; k++) {
        const id = serverId((k * 7919) % servers);
        const a = process.hrtime.bigint();
        const w = store.query(id, s * 1000, name);
        times.push(msSince(a));
        rows.push(store.debug().lastRowsRead);
        if (w.points.length === 0) throw new Error(`${name} query of ${id} returned no points`);
      }
      query[name] = { p50_ms: quantile(times, 0.5), p99_ms: quantile(times, 0.99), rows_read: quantile(rows, 0.5) };
      log(`  metrics: ${name}: p50 ${fmt(query[name].p50_ms, 2)} ms, p99 ${fmt(query[name].p99_ms, 2)} ms, ${query[name].rows_read} rows`);
    }

    // --- ingest at steady state ----------------------------------------------------------------------------------
    const steady = period(END, END + steadyRounds * ROUND, ROUND);
    log(`  metrics: steady-state ingest ${fmt(steady.write_per_s)} samples/s (write), ${fmt(steady.write_maintain_per_s)} with maintain`);
    const plain = plainInsert(openDb, path.join(dir, 'plain.sqlite'), servers, END, steadyRounds);
    log(`  metrics: plain batched insert ${fmt(plain.rows_per_s)} rows/s`);

    // --- bytes -----------------------------------------------------------------------------------------------------
    db.pragma('wal_checkpoint(TRUNCATE)');
    const bytes = {};
    for (const r of db.prepare(`SELECT name, sum(pgsize) AS b FROM dbstat
      WHERE name LIKE 'metric%' OR name LIKE 'sqlite_autoindex_metric%' GROUP BY name`).all()) bytes[r.name] = r.b;
    const rows = {};
    for (const t of Object.keys(bytes).filter((n) => !n.startsWith('sqlite_'))) {
      rows[t] = db.prepare(`SELECT count(*) AS n FROM ${t}`).get().n;
    }
    const total = Object.values(bytes).reduce((a, b) => a + b, 0);
    db.close();
    return {
      servers, days, build_s: buildS,
      history: { hourly, minutely, raw },
      query,
      ingest: { steady_rounds: steadyRounds, store_write_per_s: steady.write_per_s, store_write_maintain_per_s: steady.write_maintain_per_s,
        plain_insert_per_s: plain.rows_per_s, ratio: steady.write_per_s / plain.rows_per_s,
        ms_per_round: steady.write_ms / steadyRounds, maintain_ms_per_round: steady.maintain_ms / steadyRounds },
      storage: { bytes, rows, total_bytes: total, bytes_per_server: total / servers, bytes_per_server_day: total / servers / days,
        hour_bytes_per_server_day: (bytes.metric_hour ?? 0) / servers / days },
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The baseline: the same rounds into a plain rowid table, same pragmas (openDb), one transaction per round. */
function plainInsert(openDb, file, servers, from, rounds) {
  const db = openDb(file);
  db.exec(`CREATE TABLE plain (server_id TEXT NOT NULL, t INTEGER NOT NULL, tps REAL, cpu_percent REAL,
    ram_bytes INTEGER NOT NULL, players_online INTEGER NOT NULL, players_max INTEGER NOT NULL)`);
  const insert = db.prepare('INSERT INTO plain VALUES (?, ?, ?, ?, ?, ?, ?)');
  const write = db.transaction((batch) => {
    for (const s of batch) {
      insert.run(s.server_id, Date.parse(s.at) / 1000, s.tps, s.cpu_percent, s.ram_bytes, s.players_online, s.players_max);
    }
  });
  let ms = 0;
  for (let k = 0; k < rounds; k++) {
    const batch = roundOf(servers, from + k * ROUND);
    const a = process.hrtime.bigint();
    write.immediate(batch);
    ms += msSince(a);
  }
  db.close();
  return { rows_per_s: (servers * rounds) / (ms / 1000) };
}

module.exports = { runMetrics, sample, roundOf, serverId };

if (require.main === module) {
  runMetrics({ servers: Number(process.env.SERVERS ?? 1000), days: Number(process.env.DAYS ?? 30) })
    .then((r) => console.log(JSON.stringify(r, null, 2)));
}
