import path from 'node:path';
import type { Server as HttpServer } from 'node:http';
import type { Config } from './config';
import type { Logger } from './log';
import { systemClock, type Clock } from './clock';
import { openDb } from './store/db';
import { loadSpec } from './spec';
import { createApp, type AppDeps } from './app';
import { plans } from './catalog/plans';
import { versionCatalog } from './catalog/versions';
import { createServersRepo } from './store/servers-repo';
import { completeDeletion } from './http/handlers/servers';
import { createStreamRegistry } from './http/sse';
import { answerClientErrors } from './http/client-errors';
import { loadSoftwareCatalog } from './runtime/software-catalog';
import { createLocalEnvironment } from './runtime/local-environment';
import { createRuntime, runtimeConfigDefaults, type RuntimeConfig } from './runtime/runtime';
import { createMetricsStore } from './telemetry/metrics-store';
import { createSampler } from './telemetry/sampler';
import { createLinuxProcReader } from './telemetry/proc-reader';

/**
 * The plans as the runtime enforces them. cpu_shares is a CFS weight (1024 = one core's fair share at nice 0);
 * plans above one core are capped at 1024 so no game is ever scheduled ahead of the control plane itself.
 */
export function planResources() {
  return Object.fromEntries(
    plans.map((p) => [
      p.id,
      { memory_mb: p.memory_mb, cpu_shares: Math.min(1024, Math.round((p.cpu_percent / 100) * 1024)), max_players: p.player_slots },
    ]),
  );
}

export interface BuildOptions {
  clock?: Clock;
  /** Runtime timings (tests shorten backoffs and timeouts). */
  runtime?: Partial<Omit<RuntimeConfig, 'dataDir'>>;
  /** Test-only hooks of createApp (the contract checker). */
  onResponse?: AppDeps['onResponse'];
  /** A shared rate-limit store (e.g. Redis) when several instances serve one API; memory by default. */
  rateLimitStore?: AppDeps['rateLimitStore'];
}

/**
 * Wires the service: config → database → runtime → telemetry → HTTP app. Everything is built here and passed
 * down; nothing below reads the environment (STYLE.md: dependencies passed in). Tests build through here too.
 */
export async function buildService(config: Config, log: Logger, options: BuildOptions = {}) {
  const clock = options.clock ?? systemClock;
  const db = openDb(config.dbFile);
  const catalog = loadSoftwareCatalog({ operatorDir: path.join(config.dataDir, 'software') });
  const runtime = createRuntime({
    db,
    clock,
    environment: createLocalEnvironment({ baseEnv: process.env }),
    catalog,
    config: { ...runtimeConfigDefaults, ...options.runtime, dataDir: config.dataDir },
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
  const telemetry = { store: metrics, sampler };
  const streams = createStreamRegistry();
  const app = await createApp({
    db,
    clock,
    config: {
      rateLimitPerMinute: config.rateLimitPerMinute,
      rateLimitWindowMs: config.rateLimitWindowMs,
      addressPool: { host: config.gameHost, portRange: config.gamePortRange },
      trustProxy: config.trustProxy,
      bodyLimitBytes: config.bodyLimitBytes,
    },
    spec: loadSpec(),
    log,
    versions: versionCatalog(catalog),
    runtime,
    telemetry,
    streams,
    onResponse: options.onResponse,
    rateLimitStore: options.rateLimitStore,
  });

  /** Boot: adopt or clean up what a previous life left (even after kill -9), then follow desired state. */
  async function boot() {
    await runtime.start();
    const servers = createServersRepo(db, clock, { host: config.gameHost, portRange: config.gamePortRange });
    for (const id of servers.idsInState('deleting')) void completeDeletion({ servers, runtime, telemetry, log }, id);
    sampler.start();
  }

  /** Stops the game servers cleanly (desired state is kept, so the next boot brings them back), then the db. */
  async function shutdown() {
    streams.closeAll();
    sampler.stop();
    await runtime.close();
    db.close();
  }

  return { app, db, runtime, metrics, sampler, streams, boot, shutdown };
}

/** `npm start`: build, boot, listen; `stop()` is the graceful shutdown main.ts runs on SIGTERM and SIGINT. */
export async function startService(config: Config, log: Logger) {
  const service = await buildService(config, log);
  await service.boot();
  const http: HttpServer = service.app.listen(config.port, config.host);
  // Slow-client limits (Node's defaults are generous): the whole request within 30 s, its headers within 10 s.
  // SSE answers are unaffected: these bound receiving the request, not sending the answer.
  http.requestTimeout = 30_000;
  http.headersTimeout = 10_000;
  answerClientErrors(http);
  await new Promise<void>((resolve, reject) => http.once('listening', resolve).once('error', reject));
  log.info('listening', { address: http.address(), data_dir: config.dataDir });

  let stopping: Promise<void> | undefined;
  /** Stop accepting connections, let in-flight requests finish (up to SHUTDOWN_TIMEOUT_S), then shut down. */
  function stop(): Promise<void> {
    stopping ??= (async () => {
      log.info('shutting down');
      const closed = new Promise<void>((resolve) => http.close(() => resolve()));
      service.streams.closeAll();
      http.closeIdleConnections();
      const timer = setTimeout(() => http.closeAllConnections(), config.shutdownTimeoutMs).unref();
      await closed;
      clearTimeout(timer);
      await service.shutdown();
      log.info('stopped');
    })();
    return stopping;
  }
  return { ...service, http, stop };
}
