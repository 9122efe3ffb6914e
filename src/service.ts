import path from 'node:path';
import type { Server as HttpServer } from 'node:http';
import type { Config } from './config';
import type { Logger } from './log';
import { systemClock, type Clock } from './clock';
import { openDb } from './store/db';
import { loadSpec } from './spec';
import { createApp } from './app';
import { plans } from './catalog/plans';
import { versionCatalog } from './catalog/versions';
import { createServersRepo } from './store/servers-repo';
import { completeDeletion } from './http/handlers/servers';
import { loadSoftwareCatalog } from './runtime/software-catalog';
import { createLocalEnvironment } from './runtime/local-environment';
import { createRuntime, runtimeConfigDefaults } from './runtime/runtime';
import { createMetricsStore } from './telemetry/metrics-store';
import { createSampler } from './telemetry/sampler';
import { createLinuxProcReader } from './telemetry/proc-reader';

/** The plans as the runtime enforces them (memory, CPU share, max players). */
export function planResources() {
  return Object.fromEntries(
    plans.map((p) => [p.id, { memory_mb: p.memory_mb, cpu_shares: p.cpu_percent, max_players: p.player_slots }]),
  );
}

/**
 * Wires the service: config → database → runtime → telemetry → HTTP. Everything is built here and passed down;
 * nothing below reads the environment (STYLE.md: dependencies passed in).
 */
export async function startService(config: Config, log: Logger, clock: Clock = systemClock) {
  const db = openDb(config.dbFile);
  const catalog = loadSoftwareCatalog({ operatorDir: path.join(config.dataDir, 'software') });
  const runtime = createRuntime({
    db,
    clock,
    environment: createLocalEnvironment({ baseEnv: process.env }),
    catalog,
    config: { ...runtimeConfigDefaults, dataDir: config.dataDir },
    plans: planResources(),
    log,
  });
  const metrics = createMetricsStore(db, clock, { sampleIntervalS: config.metricsIntervalMs / 1000 });
  const sampler = createSampler({
    store: metrics,
    clock,
    intervalMs: config.metricsIntervalMs,
    proc: createLinuxProcReader(),
    source: {
      live: () =>
        runtime.live().map((s) => ({ ...s, players_online: s.players_online ?? 0, players_max: s.players_max ?? 0 })),
    },
    onError: (err) => log.warn('metrics sampler', { error: String(err) }),
  });
  const app = await createApp({
    db,
    clock,
    config: {
      rateLimitPerMinute: config.rateLimitPerMinute,
      addressPool: { host: config.gameHost, portRange: config.gamePortRange },
      trustProxy: config.trustProxy,
      bodyLimitBytes: config.bodyLimitBytes,
    },
    spec: loadSpec(),
    log,
    versions: versionCatalog(catalog),
    runtime,
  });

  // Boot: adopt or clean up what a previous life left (even after kill -9), then follow desired state.
  await runtime.start();
  const servers = createServersRepo(db, clock, { host: config.gameHost, portRange: config.gamePortRange });
  for (const id of servers.idsInState('deleting')) void completeDeletion({ servers, runtime, log }, id);
  sampler.start();

  const http: HttpServer = app.listen(config.port, config.host);
  await new Promise<void>((resolve, reject) => http.once('listening', resolve).once('error', reject));
  log.info('listening', { address: http.address(), data_dir: config.dataDir });

  let stopping: Promise<void> | undefined;
  /**
   * Graceful shutdown: stop accepting connections and let in-flight requests finish, then stop the game servers
   * cleanly (their desired state is kept, so the next start brings them back), then close the database.
   */
  function stop(): Promise<void> {
    stopping ??= (async () => {
      log.info('shutting down');
      const closed = new Promise<void>((resolve) => http.close(() => resolve()));
      http.closeIdleConnections();
      const timer = setTimeout(() => http.closeAllConnections(), config.shutdownTimeoutMs).unref();
      await closed;
      clearTimeout(timer);
      sampler.stop();
      await runtime.close();
      db.close();
      log.info('stopped');
    })();
    return stopping;
  }

  return { http, db, runtime, metrics, sampler, stop };
}
