import { AppError } from '../errors';

/**
 * The `range` query parameter of the metrics endpoints: how far back from now a history window reaches.
 *
 * Grammar: `<n><unit>`, n a positive decimal integer without sign, leading zero, spaces or fraction, unit one
 * of `m` (minute), `h` (hour), `d` (day), lower case only. Bounds: 5m..60d. 60 days is where the hourly
 * rollup still answers in ≤ 1,440 rows (see metrics-store.ts); below 5 minutes a window holds fewer than 60
 * raw samples, which is what the live stream is for.
 */
export const RANGE_PATTERN = '^[1-9][0-9]{0,5}[mhd]$';
const RANGE_REGEX = new RegExp(RANGE_PATTERN);

export const RANGE_DEFAULT = '1h';
export const RANGE_MIN = '5m';
export const RANGE_MAX = '60d';

const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
export const RANGE_MIN_MS = 5 * UNIT_MS.m;
export const RANGE_MAX_MS = 60 * UNIT_MS.d;

export type RangeResult = { ok: true; range: string; ms: number } | { ok: false; detail: string };

/**
 * Parses a `range` value; `undefined` (parameter absent) means the default. Never throws: the HTTP layer turns
 * `{ ok: false }` into a 400 problem whose pointer names the query parameter, using `detail` as is.
 */
export function parseRange(value: string | undefined): RangeResult {
  if (value === undefined) return { ok: true, range: RANGE_DEFAULT, ms: UNIT_MS.h };
  if (!RANGE_REGEX.test(value)) {
    return {
      ok: false,
      detail: `range must be a whole number followed by m, h or d (for example 15m, 24h, 7d); got ${JSON.stringify(value)}`,
    };
  }
  const unit = value[value.length - 1] as keyof typeof UNIT_MS;
  const ms = Number(value.slice(0, -1)) * UNIT_MS[unit];
  if (ms < RANGE_MIN_MS || ms > RANGE_MAX_MS) {
    return { ok: false, detail: `range must be between ${RANGE_MIN} and ${RANGE_MAX}; got ${value}` };
  }
  return { ok: true, range: value, ms };
}

/** parseRange for callers that prefer a throw: a validation_failed AppError pointing at the query parameter. */
export function rangeOrThrow(value: string | undefined): { range: string; ms: number } {
  const r = parseRange(value);
  if (!r.ok) throw new AppError('validation_failed', r.detail, [{ pointer: '/query/range', detail: r.detail }]);
  return { range: r.range, ms: r.ms };
}
