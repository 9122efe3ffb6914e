import { cronProblem, nextTime, offsetAt, parseCron } from '../../src/runtime/services/cron';

/**
 * Cron times (src/runtime/services/cron.ts; openapi/v1.yaml, the Schedules tag): what parses and what is refused, the day
 * fields' forms, the two crons that stalled the service (issue 39 §1), and a sweep over every IANA zone's next
 * change of offset, each compared with a minute-by-minute walk over the instants around it.
 */

const times = (cron: string, zone: string, from: string, n: number): string[] => {
  const out: string[] = [];
  let after = Date.parse(from);
  for (let i = 0; i < n; i++) {
    const at = nextTime(parseCron(cron), zone, after);
    if (at === null) break;
    out.push(new Date((after = at)).toISOString());
  }
  return out;
};

test.each([
  ['0 4 * * *', null],
  ['*/15 9-17 * * mon-fri', null],
  ['0 0 L * *', null],
  ['0 4 15W * *', null],
  ['0 4 LW * *', null],
  ['0 4 ? * 5L', null],
  ['0 0 * 2 1#5', null],
  ['0 12 1,15 JAN,jul SUN', null],
  ['0 0 29 2 *', null],
  ['* * * *', 'it has 4 fields, not 5'],
  ['0 0 4 * * *', 'it has 6 fields, not 5'],
  ['61 * * * *', 'the minute field has 61, outside 0–59'],
  ['0 25 * * *', 'the hour field has 25, outside 0–23'],
  ['0 0 0 * *', 'the day of month field has 0, outside 1–31'],
  ['0 0 * 13 *', 'the month field has 13, outside 1–12'],
  ['0 0 * * 8', 'the day of week field has 8, outside 0–7'],
  ['5-1 * * * *', 'the minute field has the range "5-1", whose start is after its end'],
  ['*/0 * * * *', 'the minute field has a step of "0", not a whole number of 1 or more'],
  ['0 0 * * 1#6', 'the day of week field has "1#6": the week after "#" is 1–5'],
  ['0,,5 * * * *', 'the minute field has an empty item'],
  ['? * * * *', '"?" is only for the day fields, not the minute'],
  ['0 0 * * FOO', 'the day of week field has "FOO", which is not a number or a name'],
])('%s parses or is refused with a reason', (cron, reason) => {
  const problem = cronProblem(cron);
  expect(problem).toBe(reason === null ? null : `is not a five-field cron expression: ${reason}`);
});

test.each(['0 0 30 2 *', '0 0 31 4,6,9,11 *', '0 0 31W 2 *'])('%s names no day that exists: refused, and its next time is null (not a loop)', (cron) => {
  expect(cronProblem(cron)).toBe('names no day that exists (such as 30 February), so it would never run');
  expect(nextTime(parseCron(cron), 'America/Santiago', Date.parse('2026-11-27T00:00:00Z'))).toBeNull();
});

test.each([
  // [cron, zone, from, the next times]
  ['0 0 * 2 1#5', 'America/Santiago', '2026-11-27T00:00:00Z', ['2044-02-29T03:00:00.000Z', '2072-02-29T03:00:00.000Z', '2112-02-29T03:00:00.000Z']],
  // Lord Howe's clocks go back 30 minutes at 02:00 on 4 April 2027: 01:00 is before it, 02:00 after it.
  ['0 1-3 * * *', 'Australia/Lord_Howe', '2027-04-03T13:58:50Z', ['2027-04-03T14:00:00.000Z', '2027-04-03T15:30:00.000Z', '2027-04-03T16:30:00.000Z', '2027-04-04T14:30:00.000Z']],
  // Berlin skips 02:00–03:00 on 28 March 2027: 02:30 runs at 03:30 local (01:30Z), once.
  ['30 2 * * *', 'Europe/Berlin', '2027-03-27T12:00:00Z', ['2027-03-28T01:30:00.000Z', '2027-03-29T00:30:00.000Z']],
  ['0,30 2,3 * * *', 'Europe/Berlin', '2027-03-28T00:00:00Z', ['2027-03-28T01:00:00.000Z', '2027-03-28T01:30:00.000Z', '2027-03-29T00:00:00.000Z']],
  // Berlin repeats 02:00–03:00 on 25 October 2026: 02:30 runs once, at its first occurrence (00:30Z).
  ['30 2 * * *', 'Europe/Berlin', '2026-10-24T12:00:00Z', ['2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z']],
  ['0 4 15W * *', 'UTC', '2026-11-27T00:00:00Z', ['2026-12-15T04:00:00.000Z', '2027-01-15T04:00:00.000Z', '2027-02-15T04:00:00.000Z']],
  ['0 4 LW * *', 'UTC', '2027-01-01T00:00:00Z', ['2027-01-29T04:00:00.000Z', '2027-02-26T04:00:00.000Z']], // 31 Jan is a Sunday
  ['0 4 ? * 5L', 'UTC', '2026-11-01T00:00:00Z', ['2026-11-27T04:00:00.000Z', '2026-12-25T04:00:00.000Z']],
  // Both day fields restricted: either matches (Vixie cron); one of them starred: both must.
  ['0 0 13 * 5', 'UTC', '2026-11-01T00:00:00Z', ['2026-11-06T00:00:00.000Z', '2026-11-13T00:00:00.000Z', '2026-11-20T00:00:00.000Z']],
  ['0 0 */10 * 5', 'UTC', '2026-11-01T00:00:00Z', ['2026-12-11T00:00:00.000Z', '2027-01-01T00:00:00.000Z']],
])('%s in %s from %s', (cron, zone, from, want) => {
  expect(times(cron, zone, from, want.length)).toEqual(want);
});

/** Every minute's instant in [from, to) with its local wall time (fields read as UTC, ms). */
function walls(zone: string, from: number, to: number): Array<[instant: number, wall: number]> {
  const out: Array<[number, number]> = [];
  // The offset is asked once an hour, and each minute only in an hour whose two ends differ.
  for (let hour = from; hour < to; hour += 3_600_000) {
    const [a, b] = [offsetAt(zone, hour), offsetAt(zone, hour + 3_600_000)];
    for (let u = hour; u < Math.min(hour + 3_600_000, to); u += 60_000) out.push([u, u + (a === b ? a : offsetAt(zone, u))]);
  }
  return out;
}

/**
 * The times a cron of minutes × hours (every day) names in [from, to), found the slow way: walk every minute's
 * instant; a wall time seen for the first time that matches runs then; a wall time the zone skipped that matches
 * runs at the instant it would have had with the offset from before the skip. The spec's reading of DST.
 */
function walked(list: Array<[number, number]>, minutes: number[], hours: number[]): number[] {
  const seen = new Set<number>();
  const fires = new Set<number>();
  const matches = (wall: number) => minutes.includes(new Date(wall).getUTCMinutes()) && hours.includes(new Date(wall).getUTCHours());
  for (const [i, [u, wall]] of list.entries()) {
    if (!seen.has(wall) && matches(wall)) fires.add(u);
    seen.add(wall);
    const next = list[i + 1];
    if (next) for (let w = wall + 60_000; w < next[1]; w += 60_000) if (matches(w) && !seen.has(w)) fires.add(w - (wall - u));
  }
  return [...fires].sort((a, b) => a - b);
}

/** The first instant after `from` at which the zone's offset changes (to the minute), or null within a year. */
function nextChange(zone: string, from: number): number | null {
  const o = offsetAt(zone, from);
  let lo = from;
  let hi = from;
  const step = 3 * 86_400_000;
  for (; hi < from + 366 * 86_400_000; hi += step) if (offsetAt(zone, hi) !== o) break;
  if (offsetAt(zone, hi) === o) return null;
  lo = hi - step;
  while (hi - lo > 60_000) {
    const mid = lo + Math.floor((hi - lo) / 120_000) * 60_000;
    if (offsetAt(zone, mid) === o) lo = mid;
    else hi = mid;
  }
  return hi;
}

const SWEEP_CRONS: Array<[string, number[], number[]]> = [
  ['0 * * * *', [0], [...Array(24).keys()]],
  ['*/15 * * * *', [0, 15, 30, 45], [...Array(24).keys()]],
  ['30 1-3 * * *', [30], [1, 2, 3]],
  ['0 0 * * *', [0], [0]],
  ['45 23 * * *', [45], [23]],
];

test("every IANA zone's next change of offset: each cron's times are the minute-by-minute walk's", () => {
  const from = Date.parse('2027-01-01T00:00:00Z');
  let changes = 0;
  for (const zone of Intl.supportedValuesOf('timeZone')) {
    const change = nextChange(zone, from);
    if (change === null) continue;
    changes++;
    const [start, end] = [change - 26 * 3_600_000, change + 26 * 3_600_000];
    const list = walls(zone, start, end);
    for (const [cron, minutes, hours] of SWEEP_CRONS) {
      const want = walked(list, minutes, hours).filter((u) => u < end - 3 * 3_600_000);
      const got: number[] = [];
      for (let after = start - 1, at = nextTime(parseCron(cron), zone, after); at !== null && at < end - 3 * 3_600_000; at = nextTime(parseCron(cron), zone, (after = at))) got.push(at);
      expect({ zone, cron, times: got.map((u) => new Date(u).toISOString()) }).toEqual({ zone, cron, times: want.map((u) => new Date(u).toISOString()) });
    }
  }
  // Most of the world's zones that keep daylight saving time change within the year.
  expect(changes).toBeGreaterThan(50);
});
