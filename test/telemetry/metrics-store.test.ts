import { createMetricsStore, type MetricsStore } from '../../src/telemetry/metrics-store';
import { planFor, retentionFor } from '../../src/telemetry/levels';
import { EXPIRE_STEP_S } from '../../src/telemetry/rollup';
import type { MetricsPoint, MetricsSummary, NewSample } from '../../src/telemetry/types';
import { freshDb, manualClock } from './helpers';

const H = 3600;
const D = 86_400;
const T0 = Date.UTC(2025, 0, 1, 0, 0, 3) / 1000; // not aligned to a minute, so buckets straddle writes

/** Deterministic fixed-point values, so the oracle below computes in the same integer domain as the store. */
function values(server: number, t: number) {
  return {
    tpsC: t % 97 === 0 ? null : 1500 + ((t * 7 + server) % 501),
    cpuD: (t * 13 + server * 100) % 4000,
    ramKib: 100_000 + ((t + server) % 1000) * 3,
    players: Math.floor(t / 60 + server) % 17,
  };
}

function sample(server: number, t: number): NewSample {
  const v = values(server, t);
  return {
    server_id: `srv_${server}`, at: new Date(t * 1000).toISOString(),
    tps: v.tpsC === null ? null : v.tpsC / 100, cpu_percent: v.cpuD / 10, ram_bytes: v.ramKib * 1024,
    players_online: v.players, players_max: 20,
  };
}

const round = (x: number, d: number) => Math.round(x * 10 ** d) / 10 ** d;

/** Brute force over every sample ever written: what the window should say. */
function oracle(times: number[], server: number, from: number, to: number, res: number) {
  const buckets = new Map<number, number[]>();
  for (const t of times) {
    if (t < from || t > to) continue;
    const b = Math.floor(t / res) * res;
    buckets.set(b, [...(buckets.get(b) ?? []), t]);
  }
  const stat = (xs: number[], scale: number, d: number) => ({
    min: Math.min(...xs) / scale, avg: round(xs.reduce((a, b) => a + b, 0) / xs.length / scale, d), max: Math.max(...xs) / scale,
  });
  const points: MetricsPoint[] = [...buckets.entries()].sort((a, b) => a[0] - b[0]).map(([b, ts]) => {
    const v = ts.map((t) => values(server, t));
    const tps = v.map((x) => x.tpsC).filter((x): x is number => x !== null);
    const ram = v.map((x) => x.ramKib);
    return {
      at: new Date(b * 1000).toISOString(), samples: ts.length,
      tps: tps.length ? stat(tps, 100, 2) : null,
      cpu_percent: stat(v.map((x) => x.cpuD), 10, 1),
      ram_bytes: { min: Math.min(...ram) * 1024, avg: Math.round((ram.reduce((a, c) => a + c, 0) / ram.length) * 1024), max: Math.max(...ram) * 1024 },
      players_online: stat(v.map((x) => x.players), 1, 2),
    };
  });
  const all = points.length ? times.filter((t) => t >= from && t <= to).map((t) => values(server, t)) : [];
  const tps = all.map((x) => x.tpsC).filter((x): x is number => x !== null);
  const summary: MetricsSummary = {
    sample_count: all.length,
    tps_avg: tps.length ? round(tps.reduce((a, b) => a + b, 0) / tps.length / 100, 2) : null,
    tps_min: tps.length ? Math.min(...tps) / 100 : null,
    cpu_percent_avg: all.length ? round(all.reduce((a, x) => a + x.cpuD, 0) / all.length / 10, 1) : null,
    cpu_percent_max: all.length ? Math.max(...all.map((x) => x.cpuD)) / 10 : null,
    ram_bytes_avg: all.length ? Math.round((all.reduce((a, x) => a + x.ramKib, 0) / all.length) * 1024) : null,
    ram_bytes_max: all.length ? Math.max(...all.map((x) => x.ramKib)) * 1024 : null,
    players_online_peak: all.length ? Math.max(...all.map((x) => x.players)) : null,
  };
  return { points, summary };
}

describe('metrics store over 3 days of 5 s samples', () => {
  const env = freshDb();
  const clock = manualClock(T0 * 1000);
  let store: MetricsStore = createMetricsStore(env.db, clock);
  const times: number[] = [];

  beforeAll(() => {
    // Hours of samples per write and maintain() once per hour, except the last two hours which run
    // write + maintain every 5 s tick like the sampler does: both paths must give the same rollups.
    const end = T0 + 3 * D;
    for (let t = T0; t < end; ) {
      const perTick = end - t <= 2 * H;
      const batch: NewSample[] = [];
      const stop = perTick ? t + 5 : Math.min(t + H, end);
      for (; t < stop; t += 5) {
        times.push(t);
        batch.push(sample(1, t), sample(2, t));
      }
      clock.set(t * 1000);
      store.write(batch);
      store.maintain();
    }
  });
  afterAll(() => env.cleanup());

  const nowS = () => Math.floor(clock.now() / 1000);
  const ranges: [string, number][] = [['5m', 300], ['15m', 900], ['1h', H], ['2h', 2 * H], ['3h', 3 * H], ['24h', D], ['25h', 25 * H], ['26h', 26 * H], ['3d', 3 * D], ['7d', 7 * D], ['30d', 30 * D], ['60d', 60 * D]];

  for (const [range, seconds] of ranges) {
    test(`${range}: points and summary match a brute-force computation, ≤ 500 points, bounded rows`, () => {
      const w = store.query('srv_1', seconds * 1000, range);
      const res = planFor(seconds, 5).resolutionS;
      const from = Math.floor((nowS() - seconds) / res) * res;
      expect(w).toMatchObject({ server_id: 'srv_1', range, resolution_seconds: res, from: new Date(from * 1000).toISOString() });
      const want = oracle(times, 1, from, nowS(), res);
      expect(w.points.length).toBeLessThanOrEqual(500);
      expect(w.points).toEqual(want.points);
      expect(w.summary).toEqual(want.summary);
      expect(store.debug().lastRowsRead).toBeLessThanOrEqual(1_600);
    });
  }

  // Windows that end in the past (getServerMetrics `from`/`to`): each is read from the finest level that still
  // keeps its start, and must equal the brute force over the samples between its start and end. The ends are one
  // second before an hour, so every rolled-up row the window takes ends inside it.
  const past: [string, { lengthS: number; endsAgoH: number; level: string; res: number }][] = [
    ['1h ending 1h ago, from samples', { lengthS: H, endsAgoH: 1, level: 'raw', res: 10 }],
    ['2h ending 10h ago, from minutes (its samples are gone)', { lengthS: 2 * H, endsAgoH: 10, level: 'minute', res: 60 }],
    ['3h ending 2 days ago, from hours (its minutes are gone)', { lengthS: 3 * H, endsAgoH: 48, level: 'hour', res: H }],
    ['24h ending 1 day ago, from hours', { lengthS: D, endsAgoH: 24, level: 'hour', res: H }],
  ];
  for (const [name, { lengthS, endsAgoH, level, res }] of past) {
    test(`a past window, ${name}: matches the brute force`, () => {
      const toS = Math.floor(nowS() / H) * H - endsAgoH * H - 1;
      expect(planFor(lengthS, 5, nowS() - (toS - lengthS))).toEqual({ level, resolutionS: res });
      const w = store.query('srv_1', lengthS * 1000, undefined, toS * 1000);
      const from = Math.floor((toS - lengthS) / res) * res;
      expect(w).toMatchObject({ resolution_seconds: res, from: new Date(from * 1000).toISOString(), to: new Date(toS * 1000).toISOString() });
      const want = oracle(times, 1, from, toS, res);
      expect(want.points.length).toBeGreaterThan(0);
      expect(w.points).toEqual(want.points);
      expect(w.summary).toEqual(want.summary);
    });
  }

  test('resolution follows the range: raw for 1h, minutes for 24h, hours for 7d and 30d', () => {
    expect(store.query('srv_1', H * 1000).resolution_seconds).toBe(10);
    expect(store.debug().lastRowsRead).toBe(720); // raw rows, one per 5 s
    expect(store.query('srv_1', D * 1000).resolution_seconds).toBe(300);
    expect(store.debug().lastRowsRead).toBeGreaterThanOrEqual(1440); // minute rows + the raw tail
    expect(store.debug().lastRowsRead).toBeLessThanOrEqual(1445);
    expect(store.query('srv_1', 7 * D * 1000).resolution_seconds).toBe(3600);
    expect(store.query('srv_1', 30 * D * 1000).resolution_seconds).toBe(7200);
  });

  test('watermarks close finished minutes and hours only', () => {
    expect(store.debug().watermarks).toEqual({ minute: Math.floor(nowS() / 60) * 60, hour: Math.floor(nowS() / H) * H });
  });

  test('retention deleted old raw and minute rows, but not rows that are not rolled up', () => {
    const ret = retentionFor(5);
    const oldest = (table: string) => (env.db.prepare(`SELECT min(t) AS t FROM ${table}`).get() as { t: number }).t;
    expect(oldest('metric_raw')).toBeGreaterThanOrEqual(nowS() - ret.rawS);
    expect(oldest('metric_raw')).toBeLessThan(nowS() - ret.rawS + EXPIRE_STEP_S.raw + 60); // deletes batch by a step
    expect(oldest('metric_minute')).toBeGreaterThanOrEqual(nowS() - ret.minuteS);
    expect(oldest('metric_hour')).toBe(Math.floor(T0 / H) * H);
  });

  test('now is the latest sample while fresh and null once stale; latest() stays', () => {
    expect(store.query('srv_1', H * 1000).now).toEqual(store.latest('srv_1'));
    expect(store.latest('srv_1')).toMatchObject({ ...sample(1, times[times.length - 1]), id: String(times[times.length - 1]) });
    clock.advance(16_000);
    expect(store.query('srv_1', H * 1000).now).toBeNull();
    expect(store.latest('srv_1')).not.toBeNull();
  });

  test('history survives a restart', () => {
    const before = store.query('srv_2', 7 * D * 1000);
    store = createMetricsStore(env.reopen(), clock);
    expect(store.query('srv_2', 7 * D * 1000)).toEqual(before);
    expect(before.points.length).toBeGreaterThan(70);
  });

  test('after() resumes strictly after an id, in order, bounded by limit', () => {
    const last = times.slice(-10);
    const got = store.after('srv_1', String(last[2]), 4);
    expect(got.map((s) => s.id)).toEqual(last.slice(3, 7).map(String));
    expect(got[0]).toEqual({ ...sample(1, last[3]), id: String(last[3]) });
    expect(store.after('srv_1', String(last[9]), 10)).toEqual([]);
    expect(store.after('srv_1', 'not-an-id', 10)).toEqual([]);
    expect(store.after('srv_nope', String(last[2]), 10)).toEqual([]);
    expect(store.after('srv_1', String(last[2]), 5000)).toHaveLength(7);
  });

  test('deleteServer drops one server history and leaves the other', () => {
    store.deleteServer('srv_2');
    const w = store.query('srv_2', 30 * D * 1000);
    expect(w.points).toEqual([]);
    expect(w.summary).toMatchObject({ sample_count: 0, tps_avg: null, players_online_peak: null });
    expect(store.latest('srv_2')).toBeNull();
    expect(store.query('srv_1', 30 * D * 1000).points.length).toBeGreaterThan(30);
    for (const table of ['metric_raw', 'metric_minute', 'metric_hour']) {
      expect(env.db.prepare(`SELECT count(*) AS n FROM ${table} WHERE server_key NOT IN (SELECT key FROM metric_servers)`).get()).toEqual({ n: 0 });
    }
  });
});

describe('metrics store over 70 days of hourly samples', () => {
  const env = freshDb();
  const clock = manualClock(T0 * 1000);
  const store = createMetricsStore(env.db, clock);
  const times: number[] = [];
  afterAll(() => env.cleanup());

  test('hour retention keeps 62 days; 60d reads ≤ 500 points that match the brute force', () => {
    for (let t = T0; t < T0 + 70 * D; t += H) {
      times.push(t);
      clock.set((t + 1) * 1000);
      store.write([sample(1, t)]);
      store.maintain();
    }
    const now = Math.floor(clock.now() / 1000);
    const oldest = (env.db.prepare('SELECT min(t) AS t FROM metric_hour').get() as { t: number }).t;
    expect(oldest).toBeGreaterThanOrEqual(now - 62 * D);
    expect(oldest).toBeLessThan(now - 62 * D + H);
    const w = store.query('srv_1', 60 * D * 1000, '60d');
    const from = Math.floor((now - 60 * D) / w.resolution_seconds) * w.resolution_seconds;
    expect(w.points.length).toBeLessThanOrEqual(500);
    expect(w.points).toEqual(oracle(times, 1, from, now, w.resolution_seconds).points);
  });
});

describe('metrics store edge cases', () => {
  const env = freshDb();
  const clock = manualClock(T0 * 1000);
  const store = createMetricsStore(env.db, clock);
  afterAll(() => env.cleanup());

  test('an unknown server has an empty window', () => {
    const w = store.query('srv_x', 3_600_000);
    expect(w).toMatchObject({ server_id: 'srv_x', range: '1h', now: null, points: [] });
    expect(w.summary.sample_count).toBe(0);
  });

  test('write() returns the samples as stored: whole seconds, fixed point, ids', () => {
    const [s] = store.write([{ server_id: 'srv_y', at: '2025-01-01T00:00:09.900Z', tps: 19.996, cpu_percent: 12.34, ram_bytes: 1_000_000, players_online: 3, players_max: 10 }]);
    expect(s).toEqual({ id: String(T0 + 6), server_id: 'srv_y', at: '2025-01-01T00:00:09.000Z', tps: 20, cpu_percent: 12.3, ram_bytes: 1_000_448, players_online: 3, players_max: 10 });
    expect(store.latest('srv_y')).toEqual(s);
  });

  test('write() rejects a sample with an invalid time and stores nothing of the batch', () => {
    const ok = sample(9, T0);
    expect(() => store.write([ok, { ...ok, at: 'yesterday' }])).toThrow('invalid at');
    expect(store.latest('srv_9')).toBeNull();
  });
});
