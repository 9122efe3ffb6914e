import { required, type Db } from '../store/db';
import { HOUR_S, MINUTE_S, type Retention } from './levels';
import { RAW_COLUMNS } from './inbox';

/**
 * Incremental rollups and retention.
 *
 * Each level keeps a watermark `closed_until`: every bucket that starts before it is rolled up, and no bucket
 * after it is. A run rolls raw rows of the minutes that have ended since the last run into metric_minute (they
 * are in metric_inbox, see inbox.ts, and move to metric_raw right after), then
 * minute rows of the hours that have fully closed into metric_hour, then deletes rows past their retention
 * but never rows not yet rolled up. So work per run is proportional to what is new, and a run after a long
 * pause (or a synthetic backfill) simply does more at once. A sample written for a minute that is already
 * closed stays in raw but is not rolled up (the sampler writes in time order, so this only happens with a
 * clock step backwards).
 *
 * Scans that span all servers say `server_key IN (SELECT key FROM metric_servers)` so SQLite seeks each
 * server's (server_key, t) range instead of scanning the whole table (a plain JOIN was planned as a full scan;
 * checked by hand with EXPLAIN QUERY PLAN, not pinned by a test).
 */
export interface Watermarks {
  minute: number | null;
  hour: number | null;
}

const AGG_FROM_RAW = `count(*), count(r.tps_c), min(r.tps_c), sum(r.tps_c), max(r.tps_c),
  min(r.cpu_d), sum(r.cpu_d), max(r.cpu_d), min(r.ram_kib), sum(r.ram_kib), max(r.ram_kib),
  min(r.players), sum(r.players), max(r.players)`;
const AGG_FROM_ROLLUP = `sum(r.n), sum(r.tps_n), min(r.tps_min), sum(r.tps_sum), max(r.tps_max),
  min(r.cpu_min), sum(r.cpu_sum), max(r.cpu_max), min(r.ram_min), sum(r.ram_sum), max(r.ram_max),
  min(r.pl_min), sum(r.pl_sum), max(r.pl_max)`;

/** How far each level's retention cutoff moves before its old rows are deleted (see expireDue). */
export const EXPIRE_STEP_S = { raw: 10 * MINUTE_S, minute: HOUR_S, hour: HOUR_S } as const;

export function createRollup(db: Db, retention: Retention) {
  const rollMinutes = db.prepare(`INSERT OR REPLACE INTO metric_minute
    SELECT r.server_key, (r.t / ${MINUTE_S}) * ${MINUTE_S}, ${AGG_FROM_RAW}
    FROM metric_inbox r WHERE r.server_key IN (SELECT key FROM metric_servers) AND r.t >= ? AND r.t < ?
    GROUP BY r.server_key, r.t / ${MINUTE_S}`);
  // The inbox is read in its (server_key, t) order, which is metric_raw's, so the move appends to each server's
  // range in key order: one dirtied leaf page per server per run instead of one per server per round.
  const moveClosed = db.prepare(`INSERT OR REPLACE INTO metric_raw (${RAW_COLUMNS})
    SELECT ${RAW_COLUMNS} FROM metric_inbox WHERE t < ? ORDER BY server_key, t`);
  const dropMoved = db.prepare('DELETE FROM metric_inbox WHERE t < ?');
  const rollHours = db.prepare(`INSERT OR REPLACE INTO metric_hour
    SELECT r.server_key, (r.t / ${HOUR_S}) * ${HOUR_S}, ${AGG_FROM_ROLLUP}
    FROM metric_minute r WHERE r.server_key IN (SELECT key FROM metric_servers) AND r.t >= ? AND r.t < ?
    GROUP BY r.server_key, r.t / ${HOUR_S}`);
  const expire = {
    raw: db.prepare('DELETE FROM metric_raw WHERE server_key IN (SELECT key FROM metric_servers) AND t < ?'),
    minute: db.prepare('DELETE FROM metric_minute WHERE server_key IN (SELECT key FROM metric_servers) AND t < ?'),
    hour: db.prepare('DELETE FROM metric_hour WHERE server_key IN (SELECT key FROM metric_servers) AND t < ?'),
  };
  // Only read when a level has no watermark yet (first run ever): one full scan, once.
  const oldestRaw = db.prepare<unknown[], { t: number | null }>('SELECT min(t) AS t FROM (SELECT min(t) AS t FROM metric_raw UNION ALL SELECT min(t) FROM metric_inbox)');
  const oldestMinute = db.prepare<unknown[], { t: number | null }>('SELECT min(t) AS t FROM metric_minute');
  const readMarks = db.prepare<unknown[], { level: 'minute' | 'hour'; closed_until: number }>('SELECT level, closed_until FROM metric_watermarks');
  const saveMark = db.prepare('INSERT OR REPLACE INTO metric_watermarks (level, closed_until) VALUES (?, ?)');

  const marks: Watermarks = { minute: null, hour: null };
  for (const row of readMarks.all()) {
    marks[row.level] = row.closed_until;
  }

  function startOf(stmt: typeof oldestRaw, bucketS: number): number | null {
    const t = required(stmt.get()).t;
    return t === null ? null : Math.floor(t / bucketS) * bucketS;
  }

  /** Rolls what has closed by `nowS` and applies retention; returns true if anything was rolled. */
  function run(nowS: number): boolean {
    const from = marks.minute ?? startOf(oldestRaw, MINUTE_S);
    const minuteEnd = Math.floor(nowS / MINUTE_S) * MINUTE_S;
    if (from === null || minuteEnd <= from) return false;
    rollMinutes.run(from, minuteEnd);
    moveClosed.run(minuteEnd);
    dropMoved.run(minuteEnd);
    marks.minute = minuteEnd;
    saveMark.run('minute', minuteEnd);

    const hourFrom = marks.hour ?? startOf(oldestMinute, HOUR_S);
    const hourEnd = Math.floor(minuteEnd / HOUR_S) * HOUR_S;
    if (hourFrom !== null && hourEnd > hourFrom) {
      rollHours.run(hourFrom, hourEnd);
      marks.hour = hourEnd;
      saveMark.run('hour', hourEnd);
    }

    // Retention never outruns the rollup above it, so a stalled rollup cannot lose data.
    expireDue('raw', Math.min(minuteEnd, nowS - retention.rawS));
    expireDue('minute', Math.min(marks.hour ?? 0, nowS - retention.minuteS));
    expireDue('hour', nowS - retention.hourS);
    return true;
  }

  // Retention is a minimum: rows may stay up to one EXPIRE_STEP_S longer. Deleting a level's oldest rows costs one
  // dirtied leaf page per server whether it removes one minute of rows or many, so each level deletes only once
  // its cutoff has moved a step (the first run always deletes).
  const expiredUntil: Record<keyof typeof expire, number> = { raw: -Infinity, minute: -Infinity, hour: -Infinity };
  function expireDue(level: keyof typeof expire, cutoff: number): void {
    if (cutoff - expiredUntil[level] < EXPIRE_STEP_S[level]) return;
    expire[level].run(cutoff);
    expiredUntil[level] = cutoff;
  }

  return { run, marks: (): Watermarks => ({ ...marks }) };
}
