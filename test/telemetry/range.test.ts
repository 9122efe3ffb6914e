import { AppError } from '../../src/errors';
import { parseRange, rangeOrThrow, RANGE_MAX_MS, RANGE_MIN_MS, RANGE_PATTERN } from '../../src/telemetry/range';

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

describe("the spec's range pattern", () => {
  // The schema carries the bounds too (5m to 60d), so a generated client or a form can check them before asking;
  // it must accept exactly what the parser accepts.
  test('accepts exactly the values parseRange accepts', async () => {
    const { loadSpec } = await import('../../src/spec');
    const op = (loadSpec().document as any).paths['/v1/servers/{server_id}/metrics'].get; // eslint-disable-line @typescript-eslint/no-explicit-any
    const re = new RegExp(op.parameters.find((p: { name: string }) => p.name === 'range').schema.pattern);
    const differ: string[] = [];
    for (const unit of ['m', 'h', 'd']) {
      for (let n = 0; n <= 100_000; n++) {
        const v = `${n}${unit}`;
        if (re.test(v) !== parseRange(v).ok) differ.push(v);
      }
    }
    for (const v of ['', '01h', '1w', '1.5h', '-1h', '1H', '9999999d']) if (re.test(v) !== parseRange(v).ok) differ.push(v);
    expect(differ).toEqual([]);
  });
});
