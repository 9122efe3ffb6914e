import type { Clock } from '../clock';
import type { Logger } from '../log';
import type { Db } from '../store/db';
import type { RuntimeEventBus } from '../runtime/server/runtime-events';
import type { LiveServer } from '../runtime/server/types';
import { createMetricsStore } from './metrics-store';
import { createLinuxProcReader } from './proc-reader';
import { createSampler } from './sampler';

export interface TelemetryDeps {
  db: Db;
  clock: Clock;
  /** METRICS_INTERVAL_S × 1000. */
  intervalMs: number;
  /** Every running game (the doors' live()), and the runtime's events (a removal drops the history). */
  runtime: { live(): LiveServer[]; on: RuntimeEventBus['on'] };
  log: Logger;
}

/**
 * Telemetry of the running servers: the sampler reads the doors' live() and /proc every interval into the metrics
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
