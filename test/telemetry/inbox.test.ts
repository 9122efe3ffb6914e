import { createMetricsStore } from '../../src/telemetry/metrics-store';
import type { NewSample } from '../../src/telemetry/types';
import { freshDb, manualClock } from './helpers';

// The raw inbox (src/telemetry/inbox.ts): rounds land in a small table and move to metric_raw once their minute
// is rolled up. These pin its invariant and what readers see across the move.
const T0 = Date.UTC(2025, 0, 1, 0, 0, 3) / 1000;

function sample(server: number, t: number): NewSample {
  return {
    server_id: `srv_${server}`, at: new Date(t * 1000).toISOString(), tps: 19 + (t % 100) / 100,
    cpu_percent: (t % 400) / 10, ram_bytes: (100_000 + (t % 1000)) * 1024, players_online: t % 7, players_max: 10,
  };
}

function setup() {
  const env = freshDb();
  const clock = manualClock(T0 * 1000);
  let store = createMetricsStore(env.db, clock);
  const count = (table: string, where = '1') => (env.db.prepare(`SELECT count(*) AS n FROM ${table} WHERE ${where}`).get() as { n: number }).n;
  /** Writes one round per 5 s for `seconds`, with maintain() after each, like the sampler. */
  const run = (seconds: number, servers = [1, 2]) => {
    const start = Math.floor(clock.now() / 1000);
    for (let t = start; t < start + seconds; t += 5) {
      clock.set(t * 1000);
      store.write(servers.map((i) => sample(i, t)));
      store.maintain();
    }
    clock.set((start + seconds) * 1000);
  };
  return { env, clock, count, run, get store() { return store; }, reopen: () => (store = createMetricsStore(env.reopen(), clock)) };
}

describe('raw inbox', () => {
  test('after maintain(), metric_raw holds only samples before the minute watermark and the inbox only after', () => {
    const s = setup();
    s.run(600);
    const mark = s.store.debug().watermarks.minute!;
    expect(s.count('metric_raw', `t >= ${mark}`)).toBe(0);
    expect(s.count('metric_inbox', `t < ${mark}`)).toBe(0);
    expect(s.count('metric_inbox')).toBeGreaterThan(0);
    expect(s.count('metric_raw') + s.count('metric_inbox')).toBe(2 * 120);
    s.env.cleanup();
  });

  test('readers see every sample whichever table it is in', () => {
    const s = setup();
    s.run(300);
    const w = s.store.query('srv_1', 3_600_000);
    expect(w.summary.sample_count).toBe(60);
    expect(s.store.debug().lastRowsRead).toBe(60);
    expect(s.store.latest('srv_1')?.id).toBe(String(T0 + 295));
    expect(s.store.after('srv_1', String(T0), 1000).map((x) => Number(x.id))).toEqual(
      Array.from({ length: 59 }, (_, k) => T0 + 5 * (k + 1)),
    );
    s.env.cleanup();
  });

  test('a sample older than the minute watermark goes to metric_raw and stays unrolled', () => {
    const s = setup();
    s.run(300);
    const mark = s.store.debug().watermarks.minute!;
    const minuteRow = () => s.env.db.prepare('SELECT * FROM metric_minute WHERE t = ?').all(mark - 60);
    const rolled = minuteRow();
    s.store.write([{ ...sample(1, mark - 32), cpu_percent: 99 }]); // replaces the sample of that second
    s.store.maintain();
    expect(s.count('metric_inbox', `t = ${mark - 32}`)).toBe(0);
    expect(s.count('metric_raw', `t = ${mark - 32}`)).toBe(2);
    expect(minuteRow()).toEqual(rolled);
    expect(s.store.after('srv_1', String(mark - 37), 1)[0].cpu_percent).toBe(99);
    s.env.cleanup();
  });

  test('rows an older version left unrolled in metric_raw are adopted into the inbox at start', () => {
    const s = setup();
    s.run(300);
    const before = s.store.query('srv_2', 3_600_000);
    // What the previous layout left: every sample in metric_raw, those after the watermark not rolled up.
    s.env.db.exec('INSERT INTO metric_raw SELECT * FROM metric_inbox; DELETE FROM metric_inbox');
    s.reopen();
    const mark = s.store.debug().watermarks.minute!;
    expect(s.count('metric_raw', `t >= ${mark}`)).toBe(0);
    expect(s.store.query('srv_2', 3_600_000)).toEqual(before);
    s.run(120);
    expect(s.store.query('srv_2', 3_600_000).summary.sample_count).toBe(60 + 24);
    s.env.cleanup();
  });

  test('deleteServer removes the inbox rows too', () => {
    const s = setup();
    s.run(30);
    s.store.deleteServer('srv_1');
    expect(s.count('metric_inbox')).toBe(6);
    expect(s.store.latest('srv_1')).toBeNull();
    s.env.cleanup();
  });
});
