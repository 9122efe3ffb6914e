import type { Clock } from '../clock';
import type { Logger } from '../log';
import type { Db } from '../store/db';
import type { Runtime } from '../runtime/runtime';
import { createMetricsStore } from './metrics-store';
import { createLinuxProcReader } from './proc-reader';
import { createSampler } from './sampler';

export interface TelemetryDeps {
  db: Db;
  clock: Clock;
  /** METRICS_INTERVAL_S × 1000. */
  intervalMs: number;
  runtime: Pick<Runtime, 'live' | 'on'>;
  log: Logger;
}

/**
 * Telemetry of the running servers: the sampler reads runtime.live() and /proc every interval into the metrics
 * store; a removed server's history goes with it (the runtime's `removed` event).
 */
export function createTelemetry(deps: TelemetryDeps) {
  const store = createMetricsStore(deps.db, deps.clock, { sampleIntervalS: deps.intervalMs / 1000 });
  const sampler = createSampler({
    store,
    clock: deps.clock,
    intervalMs: deps.intervalMs,
    proc: createLinuxProcReader(),
    source: deps.runtime,
    onError: (err) => deps.log.warn('metrics sampler', { error: String(err) }),
  });
  deps.runtime.on('removed', ({ serverId }) => store.deleteServer(serverId));
  return { store, sampler };
}

export type Telemetry = ReturnType<typeof createTelemetry>;
