import type { Db } from '../store/db';
import { HOUR_S, MINUTE_S, planFor } from './levels';
import type { Watermarks } from './rollup';
import type { MetricsPoint, MetricsSummary, MetricsWindow, Sample, Stat } from './types';

/**
 * Reads one server's window in one statement. The window is split at the rollup watermarks: hourly rows up
 * to the hour watermark, minute rows up to the minute watermark, raw rows after it (the part not rolled up
 * yet). A level that the plan does not use gets an empty slice, so one prepared statement serves every
 * range. SQLite groups the rows into output buckets, so only ≤ 500 rows cross into JS. Every slice is a seek
 * plus a scan on the (server_key, t) primary key. The raw level is metric_raw plus metric_inbox (the minute not
 * rolled up yet; inbox.ts), which never hold the same sample.
 */
const RAW_AS_ROLLUP = `t, 1 AS n, tps_c IS NOT NULL AS tps_n, tps_c AS tps_min, tps_c AS tps_sum, tps_c AS tps_max,
  cpu_d AS cpu_min, cpu_d AS cpu_sum, cpu_d AS cpu_max, ram_kib AS ram_min, ram_kib AS ram_sum, ram_kib AS ram_max,
  players AS pl_min, players AS pl_sum, players AS pl_max`;
const ROLLUP_COLS = `t, n, tps_n, tps_min, tps_sum, tps_max, cpu_min, cpu_sum, cpu_max,
  ram_min, ram_sum, ram_max, pl_min, pl_sum, pl_max`;

// :res is bound as an integer-valued REAL (better-sqlite3 binds JS numbers as doubles), so it is cast:
// integer division is what puts rows into buckets.
const WINDOW_SQL = `
SELECT (t / CAST(:res AS INTEGER)) * CAST(:res AS INTEGER), count(*), sum(n), sum(tps_n), min(tps_min), sum(tps_sum), max(tps_max),
  min(cpu_min), sum(cpu_sum), max(cpu_max), min(ram_min), sum(ram_sum), max(ram_max),
  min(pl_min), sum(pl_sum), max(pl_max)
FROM (
  SELECT ${ROLLUP_COLS} FROM metric_hour WHERE server_key = :key AND t >= :from AND t < :hourEnd
  UNION ALL
  SELECT ${ROLLUP_COLS} FROM metric_minute WHERE server_key = :key AND t >= :minuteFrom AND t < :minuteEnd
  UNION ALL
  SELECT ${RAW_AS_ROLLUP} FROM metric_raw WHERE server_key = :key AND t >= :rawFrom AND t <= :to
  UNION ALL
  SELECT ${RAW_AS_ROLLUP} FROM metric_inbox WHERE server_key = :key AND t >= :rawFrom AND t <= :to
)
GROUP BY 1 ORDER BY 1`;

type Bucket = [
  t: number, rows: number, n: number, tpsN: number, tpsMin: number | null, tpsSum: number | null, tpsMax: number | null,
  cpuMin: number, cpuSum: number, cpuMax: number, ramMin: number, ramSum: number, ramMax: number,
  plMin: number, plSum: number, plMax: number,
];

export interface WindowRequest {
  serverId: string;
  key: number | null;
  range: string;
  rangeS: number;
  /** The window's end (unix seconds); `nowS` is now, which says which levels still hold its start. */
  toS: number;
  nowS: number;
  marks: Watermarks;
  now: Sample | null;
}

const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;
const stat = (min: number, sum: number, max: number, n: number, scale: number, digits: number): Stat => ({
  min: min / scale,
  avg: round(sum / n / scale, digits),
  max: max / scale,
});

export function createWindowReader(db: Db, intervalS: number) {
  const select = db.prepare<unknown[], Bucket>(WINDOW_SQL).raw();
  let lastRowsRead = 0;

  function read(req: WindowRequest): MetricsWindow {
    const plan = planFor(req.rangeS, intervalS, req.nowS - (req.toS - req.rangeS));
    const res = plan.resolutionS;
    const from = Math.floor((req.toS - req.rangeS) / res) * res;
    // Where each level's slice ends; a level the plan skips (or that has never rolled up) gets none. A window that
    // ends in the past takes a rolled-up row only if the row ends by `toS`; the next finer level fills the rest, as
    // far as it still holds it (for a window ending now the caps are past the watermarks and change nothing).
    const capAt = (bucketS: number) => Math.floor((req.toS + 1) / bucketS) * bucketS;
    const minuteEnd = plan.level === 'raw' ? from : Math.max(from, Math.min(req.marks.minute ?? from, capAt(MINUTE_S)));
    const hourEnd = plan.level === 'hour' ? Math.min(minuteEnd, Math.max(from, Math.min(req.marks.hour ?? from, capAt(HOUR_S)))) : from;
    const buckets =
      req.key === null
        ? []
        : select.all({
            key: req.key, res, from, to: req.toS, hourEnd,
            minuteFrom: hourEnd, minuteEnd, rawFrom: minuteEnd,
          });
    lastRowsRead = buckets.reduce((sum, b) => sum + b[1], 0);
    return {
      server_id: req.serverId,
      range: req.range,
      from: new Date(from * 1000).toISOString(),
      to: new Date(req.toS * 1000).toISOString(),
      resolution_seconds: res,
      now: req.now,
      summary: summarize(buckets),
      points: buckets.map(toPoint),
    };
  }

  return { read, lastRowsRead: () => lastRowsRead };
}

function toPoint(b: Bucket): MetricsPoint {
  const [t, , n, tpsN, tpsMin, tpsSum, tpsMax, cpuMin, cpuSum, cpuMax, ramMin, ramSum, ramMax, plMin, plSum, plMax] = b;
  return {
    at: new Date(t * 1000).toISOString(),
    samples: n,
    tps: tpsN === 0 ? null : stat(tpsMin as number, tpsSum as number, tpsMax as number, tpsN, 100, 2),
    cpu_percent: stat(cpuMin, cpuSum, cpuMax, n, 10, 1),
    ram_bytes: { min: ramMin * 1024, avg: Math.round((ramSum / n) * 1024), max: ramMax * 1024 },
    players_online: stat(plMin, plSum, plMax, n, 1, 2),
  };
}

function summarize(buckets: Bucket[]): MetricsSummary {
  let n = 0, tpsN = 0, tpsSum = 0, cpuSum = 0, ramSum = 0;
  let tpsMin = Infinity, cpuMax = -Infinity, ramMax = -Infinity, plMax = -Infinity;
  for (const b of buckets) {
    n += b[2];
    tpsN += b[3];
    if (b[3] > 0) {
      tpsMin = Math.min(tpsMin, b[4] as number);
      tpsSum += b[5] as number;
    }
    cpuSum += b[8];
    cpuMax = Math.max(cpuMax, b[9]);
    ramSum += b[11];
    ramMax = Math.max(ramMax, b[12]);
    plMax = Math.max(plMax, b[15]);
  }
  return {
    sample_count: n,
    tps_avg: tpsN === 0 ? null : round(tpsSum / tpsN / 100, 2),
    tps_min: tpsN === 0 ? null : tpsMin / 100,
    cpu_percent_avg: n === 0 ? null : round(cpuSum / n / 10, 1),
    cpu_percent_max: n === 0 ? null : cpuMax / 10,
    ram_bytes_avg: n === 0 ? null : Math.round((ramSum / n) * 1024),
    ram_bytes_max: n === 0 ? null : ramMax * 1024,
    players_online_peak: n === 0 ? null : plMax,
  };
}
