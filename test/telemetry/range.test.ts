import { AppError } from '../../src/errors';
import { parseRange, rangeOrThrow, windowOrThrow, RANGE_MAX_MS, RANGE_MIN_MS, RANGE_PATTERN } from '../../src/telemetry/range';

const M = 60_000;
const H = 60 * M;
const D = 24 * H;

const good: [string | undefined, { range: string; ms: number }][] = [
  [undefined, { range: '1h', ms: H }],
  ['5m', { range: '5m', ms: 5 * M }],
  ['15m', { range: '15m', ms: 15 * M }],
  ['1h', { range: '1h', ms: H }],
  ['24h', { range: '24h', ms: 24 * H }],
  ['7d', { range: '7d', ms: 7 * D }],
  ['30d', { range: '30d', ms: 30 * D }],
  ['60d', { range: '60d', ms: 60 * D }],
  ['1440h', { range: '1440h', ms: 60 * D }],
  ['86400m', { range: '86400m', ms: 60 * D }],
];

const FORMAT = 'range must be a whole number followed by m, h or d (for example 15m, 24h, 7d); got ';
const BOUNDS = 'range must be between 5m and 60d; got ';
const bad: [string, string][] = [
  ['', `${FORMAT}""`],
  ['0h', `${FORMAT}"0h"`],
  ['01h', `${FORMAT}"01h"`],
  ['1w', `${FORMAT}"1w"`],
  ['1.5h', `${FORMAT}"1.5h"`],
  ['-1h', `${FORMAT}"-1h"`],
  ['+1h', `${FORMAT}"+1h"`],
  [' 1h', `${FORMAT}" 1h"`],
  ['1h ', `${FORMAT}"1h "`],
  ['1H', `${FORMAT}"1H"`],
  ['h', `${FORMAT}"h"`],
  ['1', `${FORMAT}"1"`],
  ['1hh', `${FORMAT}"1hh"`],
  ['1e3m', `${FORMAT}"1e3m"`],
  ['１h', `${FORMAT}"１h"`],
  ['9999999d', `${FORMAT}"9999999d"`],
  ['4m', `${BOUNDS}4m`],
  ['61d', `${BOUNDS}61d`],
  ['1441h', `${BOUNDS}1441h`],
  ['999999d', `${BOUNDS}999999d`],
];

describe('parseRange', () => {
  for (const [given, want] of good) {
    test(`accepts ${JSON.stringify(given)}`, () => {
      expect(parseRange(given)).toEqual({ ok: true, ...want });
    });
  }
  for (const [given, detail] of bad) {
    test(`rejects ${JSON.stringify(given)}`, () => {
      expect(parseRange(given)).toEqual({ ok: false, detail });
    });
  }

  test('the exported pattern agrees with the parser on format (bounds are checked separately)', () => {
    const re = new RegExp(RANGE_PATTERN);
    for (const [given] of good) if (given !== undefined) expect(re.test(given)).toBe(true);
    for (const [given, detail] of bad) expect(re.test(given)).toBe(!detail.startsWith(FORMAT));
  });

  test('bounds are the documented 5m and 60d', () => {
    expect([RANGE_MIN_MS, RANGE_MAX_MS]).toEqual([5 * M, 60 * D]);
  });
});

describe('rangeOrThrow', () => {
  test('throws validation_failed pointing at the query parameter', () => {
    let err: unknown;
    try {
      rangeOrThrow('1w');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: 'validation_failed', status: 400, errors: [{ pointer: '/query/range' }] });
  });
  test('returns the parsed range', () => {
    expect(rangeOrThrow('7d')).toEqual({ range: '7d', ms: 7 * D });
  });
});

describe("the spec's range parameter", () => {
  // The schema has no pattern: a pattern would be checked before the handler and answer with the regular
  // expression itself, where parseRange says in words what is wrong (issue 29). Its length bound stays.
  test('has no pattern, so every value reaches parseRange', async () => {
    const { loadSpec } = await import('../../src/spec');
    const op = (loadSpec().document as any).paths['/v1/servers/{server_id}/metrics'].get; // eslint-disable-line @typescript-eslint/no-explicit-any
    const schema = op.parameters.find((p: { name: string }) => p.name === 'range').schema;
    expect(schema).toMatchObject({ type: 'string', maxLength: 7 });
    expect(schema.pattern).toBeUndefined();
  });
});

const NOW = Date.parse('2026-11-22T08:00:00.000Z');
const window: [string, { query: { range?: string; from?: string; to?: string }; want: object }][] = [
  ['nothing: the last hour', { query: {}, want: { range: '1h', ms: H, endMs: NOW } }],
  ['range: back from now', { query: { range: '24h' }, want: { range: '24h', ms: 24 * H, endMs: NOW } }],
  ['range and to: back from to', { query: { range: '2h', to: '2026-11-17T22:00:00Z' }, want: { range: '2h', ms: 2 * H, endMs: Date.parse('2026-11-17T22:00:00Z') } }],
  ['from and to', { query: { from: '2026-11-17T18:00:00Z', to: '2026-11-17T22:30:00Z' }, want: { range: '270m', ms: 4.5 * H, endMs: Date.parse('2026-11-17T22:30:00Z') } }],
  ['from alone: until now', { query: { from: '2026-11-21T08:00:00+02:00' }, want: { range: '26h', ms: 26 * H, endMs: NOW } }],
  ['the shortest window', { query: { from: '2026-11-22T07:55:00Z' }, want: { range: '5m', ms: 5 * M, endMs: NOW } }],
  // issue 39 §4: a leap second (RFC 3339 §5.7) answered 500; it is the instant after the minute's last second
  ['to on a leap second', { query: { range: '1h', to: '2016-12-31T23:59:60Z' }, want: { range: '1h', ms: H, endMs: Date.parse('2017-01-01T00:00:00Z') } }],
  ['from on a leap second', { query: { from: '2016-12-31T23:59:60Z', to: '2017-01-01T01:00:00Z' }, want: { range: '1h', ms: H, endMs: Date.parse('2017-01-01T01:00:00Z') } }],
];
const refused: [string, { query: { range?: string; from?: string; to?: string }; pointer: string; detail: string }][] = [
  ['from and range', { query: { from: '2026-11-22T07:00:00Z', range: '1h' }, pointer: '/query/from', detail: 'give either from or range, not both' }],
  ['from after to', { query: { from: '2026-11-22T07:00:00Z', to: '2026-11-22T06:00:00Z' }, pointer: '/query/from', detail: 'from must be before to (2026-11-22T06:00:00Z); got 2026-11-22T07:00:00Z' }],
  ['from at to', { query: { from: '2026-11-22T08:00:00Z' }, pointer: '/query/from', detail: 'from must be before to (now); got 2026-11-22T08:00:00Z' }],
  ['a window under 5m', { query: { from: '2026-11-22T07:56:00Z' }, pointer: '/query/from', detail: 'the window from 2026-11-22T07:56:00Z to now must be 5m to 60d long' }],
  ['a window over 60d', { query: { from: '2026-01-01T00:00:00Z', to: '2026-11-01T00:00:00Z' }, pointer: '/query/from', detail: 'the window from 2026-01-01T00:00:00Z to 2026-11-01T00:00:00Z must be 5m to 60d long' }],
  ['a bad range with to', { query: { range: '1w', to: '2026-11-01T00:00:00Z' }, pointer: '/query/range', detail: `${FORMAT}"1w"` }],
  // issue 39 §4: the window's start came back as a year before 0, not an RFC 3339 time
  ['to in year 0', { query: { to: '0000-01-01T00:04:00Z' }, pointer: '/query/to', detail: 'to must be a time from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z; got 0000-01-01T00:04:00Z' }],
  ['a window reaching before 1970', { query: { range: '1h', to: '1970-01-01T00:30:00Z' }, pointer: '/query/to', detail: 'the window of 1h before 1970-01-01T00:30:00Z would begin before 1970-01-01T00:00:00Z: give a later to' }],
  ['from before 1970', { query: { from: '1969-12-31T23:00:00Z', to: '1970-01-01T01:00:00Z' }, pointer: '/query/from', detail: 'from must be a time from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z; got 1969-12-31T23:00:00Z' }],
];

describe('windowOrThrow', () => {
  test.each(window)('%s', (_name, { query, want }) => {
    expect(windowOrThrow(query, NOW)).toEqual(want);
  });
  test.each(refused)('%s → validation_failed at the parameter, in words', (_name, { query, pointer, detail }) => {
    let err: unknown;
    try {
      windowOrThrow(query, NOW);
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: 'validation_failed', detail, errors: [{ pointer, detail }] });
  });
});
