/**
 * Storage levels and how a range picks one.
 *
 *   level   bucket      serves ranges up to        kept for
 *   raw     1 sample    1,500 samples (2h05 at 5s)  that + 1 h
 *   minute  60 s        25 h  (1,500 rows)          27 h
 *   hour    3,600 s     62.5 d (1,500 rows)         62 d  (RANGE_MAX is 60d)
 *
 * The rule is "the finest level that answers the range in at most ROW_BUDGET rows", so every query reads a
 * bounded number of rows (plus a short tail of not-yet-rolled-up finer rows, ≤ 60 minutes + ≤ 1 minute of raw
 * when maintain() runs every tick). That is what keeps a 30-day query about as cheap as a 1-hour one: 720
 * hourly rows against 720 raw rows. Retention is each level's longest range plus slack for rollup lag.
 */
export const ROW_BUDGET = 1_500;
export const MAX_POINTS = 500;

export const MINUTE_S = 60;
export const HOUR_S = 3_600;

export type Level = 'raw' | 'minute' | 'hour';

export interface Retention {
  rawS: number;
  minuteS: number;
  hourS: number;
}

export function retentionFor(intervalS: number): Retention {
  return {
    rawS: ROW_BUDGET * intervalS + HOUR_S,
    minuteS: ROW_BUDGET * MINUTE_S + 2 * HOUR_S,
    hourS: 62 * 24 * HOUR_S,
  };
}

/** Output bucket widths: each one a multiple of the level it is read from, and they read well on an axis. */
const NICE_S = [5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800];

export interface Plan {
  level: Level;
  resolutionS: number;
}

/**
 * Picks the level and the output resolution for a window `rangeS` long whose start is `ageS` before now (a
 * window that ends now: `ageS` = `rangeS`). The level is the finest that answers the length in ROW_BUDGET rows
 * and still keeps rows that old (retentionFor), so last week's hour is read from hourly rows, not from samples
 * long deleted. The resolution is the smallest nice width w with floor(range / w) + 1 ≤ MAX_POINTS (the +1 is
 * the partial bucket at the window start), never finer than the level, and a whole number of the level's buckets
 * (raw samples can fall in any bucket width).
 */
export function planFor(rangeS: number, intervalS: number, ageS = rangeS): Plan {
  const kept = retentionFor(intervalS);
  const level: Level =
    rangeS <= ROW_BUDGET * intervalS && ageS <= kept.rawS ? 'raw'
      : rangeS <= ROW_BUDGET * MINUTE_S && ageS <= kept.minuteS ? 'minute' : 'hour';
  const floor = level === 'raw' ? intervalS : level === 'minute' ? MINUTE_S : HOUR_S;
  const needed = Math.max(floor, rangeS / (MAX_POINTS - 1));
  const resolutionS = NICE_S.find((w) => w >= needed && (level === 'raw' || w % floor === 0)) ?? Math.ceil(needed / HOUR_S) * HOUR_S;
  return { level, resolutionS };
}
