import { createMetricsStore } from '../../src/telemetry/metrics-store';
import type { TreeUsage } from '../../src/telemetry/proc-reader';
import { createSampler } from '../../src/telemetry/sampler';
import type { LiveServer } from '../../src/runtime/server/types';
import type { Sample } from '../../src/telemetry/types';
import { freshDb, manualClock } from './helpers';

const T0 = Date.UTC(2025, 0, 1);

function setup() {
  const env = freshDb();
  const clock = manualClock(T0);
  const store = createMetricsStore(env.db, clock);
  let live: LiveServer[] = [];
  const usage = new Map<number, TreeUsage>();
  const errors: unknown[] = [];
  const sampler = createSampler({
    store, clock, intervalMs: 5000,
    source: { live: () => live },
    proc: { readTrees: (pids) => new Map(pids.filter((p) => usage.has(p)).map((p) => [p, usage.get(p)!])) },
    onError: (err) => errors.push(err),
  });
  return { env, clock, store, sampler, usage, errors, setLive: (l: LiveServer[]) => void (live = l) };
}

const server = (serverId: string, pid: number): LiveServer => ({ serverId, pid, tps: 19.5, players_online: 2, players_max: 20 });

describe('sampler', () => {
  test('the first round only takes a baseline; the next writes CPU as a rate, RAM, TPS and players', () => {
    const t = setup();
    t.setLive([server('srv_a', 100), server('srv_b', 200)]);
    t.usage.set(100, { cpuMs: 1_000, rssBytes: 50 * 1024 * 1024 });
    t.usage.set(200, { cpuMs: 0, rssBytes: 10 * 1024 * 1024 });
    expect(t.sampler.tick()).toEqual([]);

    t.clock.advance(5_000);
    t.usage.set(100, { cpuMs: 1_000 + 7_500, rssBytes: 60 * 1024 * 1024 }); // 1.5 cores for 5 s
    t.usage.set(200, { cpuMs: 250, rssBytes: 10 * 1024 * 1024 });
    const round = t.sampler.tick();
    expect(round).toEqual([
      { id: String((T0 + 5_000) / 1000), server_id: 'srv_a', at: new Date(T0 + 5_000).toISOString(), tps: 19.5, cpu_percent: 150, ram_bytes: 60 * 1024 * 1024, players_online: 2, players_max: 20 },
      { id: String((T0 + 5_000) / 1000), server_id: 'srv_b', at: new Date(T0 + 5_000).toISOString(), tps: 19.5, cpu_percent: 5, ram_bytes: 10 * 1024 * 1024, players_online: 2, players_max: 20 },
    ]);
    expect(t.store.latest('srv_a')).toEqual(round[0]);
    expect(t.sampler.stats().ticks).toBe(2);
    t.env.cleanup();
  });

  test('subscribers get every stored sample, optionally of one server; a throwing one does not stop the rest', () => {
    const t = setup();
    const all: Sample[] = [];
    const onlyB: Sample[] = [];
    t.sampler.subscribe(() => {
      throw new Error('broken subscriber');
    });
    t.sampler.subscribe((s) => all.push(s));
    const unsubscribe = t.sampler.subscribe((s) => onlyB.push(s), 'srv_b');
    t.setLive([server('srv_a', 100), server('srv_b', 200)]);
    t.usage.set(100, { cpuMs: 0, rssBytes: 4096 });
    t.usage.set(200, { cpuMs: 0, rssBytes: 4096 });
    t.sampler.tick();
    t.clock.advance(5_000);
    const round = t.sampler.tick();
    expect(all).toEqual(round);
    expect(onlyB).toEqual([round[1]]);
    expect(t.errors).toHaveLength(2);
    unsubscribe();
    t.clock.advance(5_000);
    t.sampler.tick();
    expect(onlyB).toHaveLength(1);
    expect(all).toHaveLength(4);
    t.env.cleanup();
  });

  test('a new pid (restart) or a vanished process resets the baseline; a negative CPU delta counts as 0', () => {
    const t = setup();
    t.setLive([server('srv_a', 100)]);
    t.usage.set(100, { cpuMs: 9_000, rssBytes: 4096 });
    t.sampler.tick();
    t.clock.advance(5_000);
    t.usage.set(100, { cpuMs: 8_000, rssBytes: 4096 }); // a descendant left the tree with its time
    expect(t.sampler.tick().map((s) => s.cpu_percent)).toEqual([0]);

    t.setLive([server('srv_a', 101)]);
    t.usage.set(101, { cpuMs: 0, rssBytes: 4096 });
    t.clock.advance(5_000);
    expect(t.sampler.tick()).toEqual([]); // baseline for the new process
    t.usage.delete(101);
    t.clock.advance(5_000);
    expect(t.sampler.tick()).toEqual([]);
    t.usage.set(101, { cpuMs: 100, rssBytes: 4096 });
    t.clock.advance(5_000);
    expect(t.sampler.tick()).toEqual([]); // gone in between, so a fresh baseline again
    t.env.cleanup();
  });

  test('ticks run maintain(): closed minutes are rolled up as time passes', () => {
    const t = setup();
    t.setLive([server('srv_a', 100)]);
    for (let i = 0; i <= 24; i++) {
      t.usage.set(100, { cpuMs: i * 500, rssBytes: 8192 });
      t.sampler.tick();
      t.clock.advance(5_000);
    }
    expect(t.store.debug().watermarks.minute).toBe((T0 + 120_000) / 1000);
    const rows = t.env.db.prepare('SELECT n, cpu_sum FROM metric_minute ORDER BY t').all();
    expect(rows).toEqual([{ n: 11, cpu_sum: 11 * 100 }, { n: 12, cpu_sum: 12 * 100 }]);
    t.env.cleanup();
  });

  test('start and stop are idempotent', () => {
    const t = setup();
    t.sampler.start();
    t.sampler.start();
    t.sampler.stop();
    t.sampler.stop();
    expect(t.errors).toEqual([]);
    t.env.cleanup();
  });
});
