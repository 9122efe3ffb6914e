import type { Clock } from '../clock';
import type { LiveServer } from '../runtime/server/types';
import type { MetricsStore } from './metrics-store';
import type { ProcReader } from './proc-reader';
import type { NewSample, Sample } from './types';

export interface SamplerDeps {
  store: MetricsStore;
  source: { live(): LiveServer[] };
  clock: Clock;
  /** METRICS_INTERVAL_S × 1000. */
  intervalMs: number;
  proc: ProcReader;
  /** Where failures of a background round or of a subscriber go; the sampler keeps running either way. */
  onError?: (err: unknown) => void;
}

export type SampleListener = (sample: Sample) => void;

export interface SamplerStats {
  ticks: number;
  /** Wall time the last tick took (process table scan + write + maintain), microseconds. */
  lastTickMicros: number;
  maxTickMicros: number;
  /** Samples written to the store since the sampler was made. */
  rowsWritten: number;
  /** How much later than its schedule the last timed round began (event loop or a slow round before it), ms. */
  lastLagMs: number;
}

export interface Sampler {
  start(): void;
  /** Stops the timer; a tick already running finishes. Stop on a stopped sampler is a no-op. */
  stop(): void;
  /** One round: read every live server, write the round as one batch, run maintain(), emit what was stored. */
  tick(): Sample[];
  /** Calls `listener` with every stored sample (of one server if serverId is given); returns the unsubscribe. */
  subscribe(listener: SampleListener, serverId?: string): () => void;
  stats(): SamplerStats;
}

interface Baseline {
  pid: number;
  cpuMs: number;
  atMs: number;
}

/**
 * One round's readings → samples. Owns the CPU baselines: CPU is a rate, so it needs two readings, and the first
 * round that sees a server (or a new pid after a restart) only records a baseline and writes nothing for it.
 */
function roundCollector({ source, clock, proc }: SamplerDeps): () => NewSample[] {
  const baselines = new Map<string, Baseline>();
  return () => {
    const live = source.live();
    const usage = proc.readTrees(live.filter((s) => s.usage === undefined).map((s) => s.pid));
    const nowMs = clock.now();
    const at = new Date(nowMs).toISOString();
    const round: NewSample[] = [];
    for (const s of live) {
      const u = s.usage === undefined ? usage.get(s.pid) : s.usage; // a container's engine stats, else /proc
      const before = baselines.get(s.serverId);
      if (!u) {
        baselines.delete(s.serverId); // process gone between the runtime's view and ours
        continue;
      }
      baselines.set(s.serverId, { pid: s.pid, cpuMs: u.cpuMs, atMs: nowMs });
      if (!before || before.pid !== s.pid || nowMs <= before.atMs) continue;
      const cpu = (Math.max(0, u.cpuMs - before.cpuMs) / (nowMs - before.atMs)) * 100;
      round.push({
        server_id: s.serverId, at, tps: s.tps, cpu_percent: cpu, ram_bytes: u.rssBytes,
        players_online: s.players_online, players_max: s.players_max,
      });
    }
    // Forget servers that are no longer live so a later start begins with a fresh baseline.
    const liveIds = new Set(live.map((s) => s.serverId));
    for (const id of baselines.keys()) if (!liveIds.has(id)) baselines.delete(id);
    return round;
  };
}

/** The subscribers: subscribe() adds one, emit() hands each stored sample to those it concerns. */
function subscribers(onError: (err: unknown) => void) {
  const listeners = new Set<{ listener: SampleListener; serverId?: string }>();
  return {
    subscribe: (listener: SampleListener, serverId?: string): (() => void) => {
      const entry = { listener, serverId };
      listeners.add(entry);
      return () => void listeners.delete(entry);
    },
    emit: (samples: Sample[]): void => {
      for (const sample of samples) {
        for (const l of listeners) {
          if (l.serverId !== undefined && l.serverId !== sample.server_id) continue;
          try {
            l.listener(sample);
          } catch (err) {
            onError(err); // one broken subscriber must not starve the others or stop sampling
          }
        }
      }
    },
  };
}

/** start()/stop(): runs `tick` every intervalMs and records how late each timed round began in `stats`. */
function timer(intervalMs: number, tick: () => void, stats: SamplerStats, onError: (err: unknown) => void) {
  let handle: NodeJS.Timeout | null = null;
  return {
    start: (): void => {
      if (handle) return;
      // Lag is measured on the monotonic clock, not the injected one: it is about this process's timers.
      let due = performance.now() + intervalMs;
      handle = setInterval(() => {
        const began = performance.now();
        stats.lastLagMs = Math.max(0, began - due);
        due = began + intervalMs;
        try {
          tick();
        } catch (err) {
          onError(err);
        }
      }, intervalMs);
      handle.unref(); // sampling alone must not keep the process alive on shutdown
    },
    stop: (): void => {
      if (handle) clearInterval(handle);
      handle = null;
    },
  };
}

/**
 * Samples live servers every intervalMs (Wings polls stats and publishes them as events the same way).
 *
 * The first round that sees a server only records its CPU baseline (roundCollector); samples start one interval
 * later. That is better than writing a made-up 0% for the first interval.
 */
export function createSampler(deps: SamplerDeps): Sampler {
  const { store } = deps;
  const onError = deps.onError ?? ((err: unknown) => process.emitWarning(`metrics sampler: ${String(err)}`));
  const collect = roundCollector(deps);
  const { subscribe, emit } = subscribers(onError);
  const stats: SamplerStats = { ticks: 0, lastTickMicros: 0, maxTickMicros: 0, rowsWritten: 0, lastLagMs: 0 };

  function tick(): Sample[] {
    const started = process.hrtime.bigint();
    const stored = store.write(collect());
    store.maintain();
    const micros = Number((process.hrtime.bigint() - started) / 1000n);
    stats.ticks += 1;
    stats.lastTickMicros = micros;
    stats.maxTickMicros = Math.max(stats.maxTickMicros, micros);
    stats.rowsWritten += stored.length;
    emit(stored);
    return stored;
  }

  const { start, stop } = timer(deps.intervalMs, tick, stats, onError);
  return { tick, start, stop, subscribe, stats: () => ({ ...stats }) };
}
