// Five-field cron expressions and their times in an IANA time zone, at a bounded cost (docs/architecture.md
// "Schedules", "Cron times"). The search walks the calendar a day at a time and converts only the matching minutes
// of matching days to instants, so a cron whose next time is decades away (`0 0 * 2 1#5`, the fifth Monday of a
// February) costs a few thousand day checks, and one that never comes (`0 0 30 2 *`) is known to never come after
// one 400-year Gregorian cycle (the calendar repeats after it) instead of looping.
//
// Local times that a time zone skips or repeats (daylight saving time) are read as RFC 5545 §3.3.5 reads them and as
// ECMAScript Temporal's `disambiguation: 'compatible'` does: a skipped local time runs at the instant it would have
// been had the clocks not moved (02:30 in a gap from 02:00 to 03:00 runs at 03:30), a repeated one runs once, at its
// first occurrence.

/** A cron expression that does not parse: `message` says which field and why, for a problem's detail. */
export class CronError extends Error {}

interface Field {
  /** The values it names (index = value). */
  set: boolean[];
  /** Written as `*` or `?` (with or without a step): with the other day field, days match when both do (Vixie cron). */
  star: boolean;
}

/** A parsed expression. `lastDay` and the `W`/`L`/`#` forms are the day fields' extras. */
export interface Cron {
  minute: Field;
  hour: Field;
  dom: Field & { lastDay: boolean; lastWeekday: boolean; nearestWeekday: number[] };
  month: Field;
  dow: Field & { last: number[]; nth: Array<[weekday: number, n: number]> };
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

interface Spec {
  name: string;
  min: number;
  max: number;
  names?: string[];
  /** The first name's value (months count from 1). */
  nameBase?: number;
}
const SPECS: Record<keyof Cron, Spec> = {
  minute: { name: 'minute', min: 0, max: 59 },
  hour: { name: 'hour', min: 0, max: 23 },
  dom: { name: 'day of month', min: 1, max: 31 },
  month: { name: 'month', min: 1, max: 12, names: MONTHS, nameBase: 1 },
  dow: { name: 'day of week', min: 0, max: 7, names: DAYS, nameBase: 0 },
};

function value(text: string, spec: Spec): number {
  const named = spec.names?.indexOf(text.toLowerCase()) ?? -1;
  if (named >= 0) return named + (spec.nameBase ?? 0);
  if (!/^\d{1,2}$/.test(text)) throw new CronError(`the ${spec.name} field has "${text}", which is not a number${spec.names ? ' or a name' : ''}`);
  const n = Number(text);
  if (n < spec.min || n > spec.max) throw new CronError(`the ${spec.name} field has ${n}, outside ${spec.min}–${spec.max}`);
  return n;
}

/** One comma-separated item of `*`, `v`, `a-b`, each with an optional `/step` (a bare `v/step` runs to the maximum). */
function range(item: string, spec: Spec, set: boolean[]): void {
  const [span, stepText, extra] = item.split('/') as [string, string?, string?];
  if (extra !== undefined) throw new CronError(`the ${spec.name} field has "${item}", with more than one "/"`);
  const step = stepText === undefined ? 1 : Number(stepText);
  if (!Number.isInteger(step) || step < 1 || !/^\d+$/.test(stepText ?? '1')) throw new CronError(`the ${spec.name} field has a step of "${stepText}", not a whole number of 1 or more`);
  let from: number;
  let to: number;
  if (span === '*' || span === '?') [from, to] = [spec.min, spec.max === 7 ? 6 : spec.max];
  else if (span.includes('-')) {
    const [a, b] = span.split('-');
    [from, to] = [value(a, spec), value(b, spec)];
    if (from > to) throw new CronError(`the ${spec.name} field has the range "${span}", whose start is after its end`);
  } else [from, to] = [value(span, spec), stepText === undefined ? value(span, spec) : spec.max];
  for (let v = from; v <= to; v += step) set[spec.max === 7 && v === 7 ? 0 : v] = true;
}

function field(text: string, key: keyof Cron): Cron[keyof Cron] {
  const spec = SPECS[key];
  const set: boolean[] = new Array<boolean>(spec.max + 1).fill(false);
  const out = { set, star: text.startsWith('*') || text.startsWith('?'), lastDay: false, lastWeekday: false, nearestWeekday: [] as number[], last: [] as number[], nth: [] as Array<[number, number]> };
  for (const item of text.split(',')) {
    if (item === '') throw new CronError(`the ${spec.name} field has an empty item`);
    if (item === '?' && key !== 'dom' && key !== 'dow') throw new CronError(`"?" is only for the day fields, not the ${spec.name}`);
    let m: RegExpMatchArray | null;
    if (key === 'dom' && item.toUpperCase() === 'L') out.lastDay = true;
    else if (key === 'dom' && item.toUpperCase() === 'LW') out.lastWeekday = true;
    else if (key === 'dom' && (m = /^(\d{1,2})W$/i.exec(item))) out.nearestWeekday.push(value(m[1], spec));
    else if (key === 'dow' && (m = /^(\w+)L$/i.exec(item))) out.last.push(value(m[1], spec) % 7);
    else if (key === 'dow' && (m = /^(\w+)#(\d+)$/.exec(item))) {
      const n = Number(m[2]);
      if (n < 1 || n > 5) throw new CronError(`the day of week field has "${item}": the week after "#" is 1–5`);
      out.nth.push([value(m[1], spec) % 7, n]);
    } else range(item, spec, set);
  }
  return out;
}

/** Parses a five-field cron expression (minute hour day-of-month month day-of-week); throws CronError. */
export function parseCron(text: string): Cron {
  const parts = text.trim().split(/\s+/);
  if (parts.length !== 5) throw new CronError(`it has ${parts.length} field${parts.length === 1 ? '' : 's'}, not 5`);
  const [minute, hour, dom, month, dow] = parts;
  return {
    minute: field(minute, 'minute'),
    hour: field(hour, 'hour'),
    dom: field(dom, 'dom') as Cron['dom'],
    month: field(month, 'month'),
    dow: field(dow, 'dow') as Cron['dow'],
  };
}

const MINUTE = 60_000;
const DAY = 86_400_000;
/** The Gregorian calendar repeats every 400 years: a cron with no day in them has none ever. */
const HORIZON_DAYS = 146_097;

const daysIn = (y: number, m: number): number => new Date(Date.UTC(y, m, 0)).getUTCDate();
const isWeekday = (y: number, m: number, d: number): boolean => ((w) => w !== 0 && w !== 6)(new Date(Date.UTC(y, m - 1, d)).getUTCDay());

/** The weekday nearest to day `n` of the month, within the month (Quartz's `nW`), or 0 when the month is shorter. */
function nearestWeekday(y: number, m: number, n: number, last: number): number {
  if (n > last) return 0;
  if (isWeekday(y, m, n)) return n;
  const w = new Date(Date.UTC(y, m - 1, n)).getUTCDay();
  if (w === 6) return n > 1 ? n - 1 : n + 2; // Saturday: the Friday before, or the Monday after the 1st
  return n < last ? n + 1 : n - 2; // Sunday: the Monday after, or the Friday before the last
}

/** Whether the cron's day fields name day `d` (weekday `w`) of month `m`, which has `last` days. */
function dayMatches(c: Cron, y: number, m: number, d: number, w: number, last: number): boolean {
  const { dom, dow } = c;
  const domOk = dom.set[d] || (dom.lastDay && d === last) || (dom.lastWeekday && d === lastWeekdayOf(y, m, last)) || dom.nearestWeekday.some((n) => nearestWeekday(y, m, n, last) === d);
  const dowOk = dow.set[w] || dow.last.some((x) => x === w && d + 7 > last) || dow.nth.some(([x, n]) => x === w && Math.ceil(d / 7) === n);
  return dom.star || dow.star ? domOk && dowOk : domOk || dowOk;
}

function lastWeekdayOf(y: number, m: number, last: number): number {
  let d = last;
  while (!isWeekday(y, m, d)) d--;
  return d;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The zone's offset from UTC at `utc` (ms), from the runtime's time zone data (ICU). Throws RangeError for an unknown zone. */
export function offsetAt(timeZone: string, utc: number): number {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    formatters.set(timeZone, f);
  }
  const p: Record<string, number> = {};
  for (const part of f.formatToParts(utc)) if (part.type !== 'literal') p[part.type] = Number(part.value);
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - Math.floor(utc / 1000) * 1000;
}

/**
 * The instant of local wall time `wall` (its fields read as UTC, ms): the earlier one when the zone repeats it, the
 * one with the offset before the change when the zone skips it (RFC 5545 §3.3.5; Temporal's 'compatible').
 */
export function instantOf(timeZone: string, wall: number): number {
  // The offsets 10–38 hours on either side bracket any one change near `wall` (offsets are within ±14 h).
  const before = offsetAt(timeZone, wall - DAY);
  const after = offsetAt(timeZone, wall + DAY);
  const early = wall - before;
  const late = wall - after;
  const earlyOk = offsetAt(timeZone, early) === before;
  const lateOk = offsetAt(timeZone, late) === after;
  if (earlyOk && lateOk) return Math.min(early, late);
  if (lateOk) return late;
  return early; // valid, or skipped: the offset before the change
}

/**
 * The first instant after `after` (ms) that the cron names in `timeZone`, or null when it names none within 400
 * years (then it names none ever). Bounded: at most 146,097 day checks, and minute conversions for the matching
 * days only until one is found. Throws RangeError for an unknown time zone.
 */
export function nextTime(cron: Cron, timeZone: string, after: number): number | null {
  const startWall = after + offsetAt(timeZone, after);
  // From the day before: a time skipped late that day may run after midnight.
  const start = new Date(Math.floor(startWall / DAY) * DAY - DAY);
  let [y, m, d] = [start.getUTCFullYear(), start.getUTCMonth() + 1, start.getUTCDate()];
  let best: number | null = null;
  let bestWall = Infinity;
  for (let i = 0; i < HORIZON_DAYS; i++) {
    const last = daysIn(y, m);
    const dayWall = Date.UTC(y, m - 1, d);
    if (dayWall >= bestWall) break;
    if (!cron.month.set[m]) {
      // the rest of this month at once
      i += last - d;
      [y, m, d] = m === 12 ? [y + 1, 1, 1] : [y, m + 1, 1];
      continue;
    }
    if (dayMatches(cron, y, m, d, new Date(dayWall).getUTCDay(), last)) {
      // One offset for the whole day unless it changes within a day of it (then minute by minute, instantOf).
      const steady = offsetAt(timeZone, dayWall - DAY);
      const uniform = steady === offsetAt(timeZone, dayWall + 2 * DAY) && steady === offsetAt(timeZone, dayWall + DAY / 2 - steady);
      for (let h = 0; h < 24 && dayWall + h * 3_600_000 < bestWall; h++) {
        if (!cron.hour.set[h]) continue;
        for (let mi = 0; mi < 60; mi++) {
          const wall = dayWall + h * 3_600_000 + mi * MINUTE;
          if (wall >= bestWall) break;
          if (!cron.minute.set[mi] || wall < startWall - 3 * 3_600_000) continue;
          const at = uniform ? wall - steady : instantOf(timeZone, wall);
          if (at > after && (best === null || at < best)) {
            best = at;
            bestWall = at + (uniform ? steady : offsetAt(timeZone, at));
          }
        }
      }
    }
    [y, m, d] = d < last ? [y, m, d + 1] : m === 12 ? [y + 1, 1, 1] : [y, m + 1, 1];
  }
  return best;
}

/**
 * Why `text` is not a cron expression the service can run, as the end of a sentence about the field ("is not a
 * five-field cron expression: …"), or null. One that names no day that exists (`0 0 30 2 *`) is refused too.
 */
export function cronProblem(text: string): string | null {
  let cron: Cron;
  try {
    cron = parseCron(text);
  } catch (err) {
    if (err instanceof CronError) return `is not a five-field cron expression: ${err.message}`;
    throw err;
  }
  // Any 400 years hold every day the calendar has: none from 2000 on means none ever.
  if (nextTime(cron, 'UTC', Date.UTC(2000, 0, 1)) === null) return 'names no day that exists (such as 30 February), so it would never run';
  return null;
}
