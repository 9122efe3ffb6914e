import { AppError } from '../errors';

/**
 * The window query parameters of getServerMetrics: `range`, how far back from the window's end it reaches
 * (parsed here, not by a schema pattern, so a bad value is answered in words), or `from`, and `to`.
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

/** A history window: `ms` long, ending at `endMs`; `range` is its length as asked, or in the `range` form. */
export interface MetricsWindowSpec {
  range: string;
  ms: number;
  endMs: number;
}

/**
 * The window of `getServerMetrics` from its query (the spec's description): it ends at `to` (default `nowMs`)
 * and starts at `from`, or `range` before `to` (default 1h). `from` and `to` are RFC 3339 times the spec's
 * `date-time` format already checked. Throws validation_failed pointing at the parameter at fault, in words.
 */
export function windowOrThrow(query: { range?: string; from?: string; to?: string }, nowMs: number): MetricsWindowSpec {
  const fail = (name: string, detail: string): never => {
    throw new AppError('validation_failed', detail, [{ pointer: `/query/${name}`, detail }]);
  };
  const endMs = query.to === undefined ? nowMs : instant('to', query.to, fail);
  if (query.from === undefined) {
    const window = { ...rangeOrThrow(query.range), endMs };
    if (endMs - window.ms < 0) fail('to', `the window of ${window.range} before ${query.to} would begin before ${iso(0)}: give a later to`);
    return window;
  }
  if (query.range !== undefined) fail('from', 'give either from or range, not both');
  const ms = endMs - instant('from', query.from, fail);
  if (ms <= 0) fail('from', `from must be before to (${query.to ?? 'now'}); got ${query.from}`);
  if (ms < RANGE_MIN_MS || ms > RANGE_MAX_MS) {
    fail('from', `the window from ${query.from} to ${query.to ?? 'now'} must be ${RANGE_MIN} to ${RANGE_MAX} long`);
  }
  return { range: formatRange(ms), ms, endMs };
}

const LATEST = Date.UTC(9999, 11, 31, 23, 59, 59);
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

/**
 * An RFC 3339 time of the query (the schema's `date-time` checked its form) as ms since the epoch. A leap second
 * (`23:59:60`, RFC 3339 §5.7) is read as the instant after the minute's last second, as POSIX time counts it; a time
 * before 1970 or after 9999 is refused (a window's times must be answered as RFC 3339 times of this service's data).
 */
function instant(name: string, text: string, fail: (name: string, detail: string) => never): number {
  const leap = /^(.*T\d{2}:\d{2}:)60(\.\d+)?(.*)$/i.exec(text);
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- an optional group that did not match is undefined, which RegExpExecArray's `string` elements do not say
  const ms = leap ? Date.parse(`${leap[1]}59${leap[2] ?? ''}${leap[3]}`) + 1000 : Date.parse(text);
  if (Number.isNaN(ms) || ms < 0 || ms > LATEST) fail(name, `${name} must be a time from ${iso(0)} to ${iso(LATEST)}; got ${text}`);
  return ms;
}

/** The shortest `<n><unit>` spelling of a duration, rounded down to whole minutes. */
export function formatRange(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s % 86_400 === 0) return `${s / 86_400}d`;
  if (s % 3_600 === 0) return `${s / 3_600}h`;
  return `${Math.floor(s / 60)}m`;
}
