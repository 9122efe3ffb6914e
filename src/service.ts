import path from 'node:path';
import { createServer, type RequestListener, type Server as HttpServer } from 'node:http';
import type { Config } from './config';
import type { Logger } from './log';
import { systemClock, type Clock } from './clock';
import { openDb } from './store/db';
import { createStore, type Store } from './store';
import type { Db } from './store/db';
import { loadSpec, type Spec } from './spec';
import { createApp, type AppDeps } from './app';
import { plans } from './catalog/plans';
import { versionCatalog } from './catalog/versions';
import { createStreamRegistry, type StreamRegistry } from './http/sse';
import { answerClientErrors } from './http/client-errors';
import { loadSoftwareCatalog } from './runtime/software/software-catalog';
import { builtinSoftwareDir, selectEnvironment } from './runtime/host/select-environment';
import { runtimeConfigDefaults, type RuntimeConfig } from './runtime/server/types';
import { composeRuntime, type Runtime, type RuntimeDeps } from './runtime/compose';
import { createTelemetry, type Telemetry } from './telemetry';
import { createPrometheus, metricsApp, type Prometheus } from './prometheus';
import { createEventFeed, type EventFeed } from './events/feed';
import { createDns, type Dns, type DnsDeps } from './dns';
import { guardBodies, type BodyGuardOptions } from './http/body-guard';
import { createDispatcher, dispatcherDefaults, type Dispatcher, type DispatcherConfig } from './webhooks/dispatcher';
import { createRetention } from './retention';
import type { SchedulesConfig } from './runtime/services/schedules';
import { createActors, serviceActor, type Actors } from './actors';
import { buildSftp } from './sftp';

// The runtime is composed in src/runtime/compose.ts; tests and tools import it from here too.
export { composeRuntime, type Runtime, type RuntimeDeps } from './runtime/compose';

export interface BuildOptions {
  clock?: Clock;
  /** Runtime timings (tests shorten backoffs and timeouts). */
  runtime?: Partial<Omit<RuntimeConfig, 'dataDir'>>;
  /** Test-only hooks of createApp (the contract checker). */
  onResponse?: AppDeps['onResponse'];
  /** The parsed spec (loadSpec), and openapi-backend built from it (AppDeps.openapi); tests share one of each. */
  spec?: Spec;
  openapi?: AppDeps['openapi'];
  /** A shared rate-limit store (e.g. Redis) when several instances serve one API; memory by default. */
  rateLimitStore?: AppDeps['rateLimitStore'];
  /** Webhook delivery timings and the resolver (tests shorten retries and map names to addresses). */
  webhooks?: Partial<DispatcherConfig>;
  /** How long a minute of `idle_stop_minutes` is (IdleStopDeps.minuteMs); 60,000 ms unless a test shortens it. */
  idleMinuteMs?: number;
  /** Schedule timings (SchedulesConfig: how often due schedules are looked for, how long a task's second is). */
  schedules?: Partial<Pick<SchedulesConfig, 'checkMs' | 'secondMs'>>;
  /** How often open streams are checked for authority lost outside this service (500 ms; StreamRegistryOptions). */
  streamSweepMs?: number;
  /** DNS publishing: how often failed updates are retried (tests shorten it). */
  dns?: Pick<DnsDeps, 'sweepMs'>;
}

/**
 * Wires the service: config → database → store → runtime → telemetry → HTTP app. Everything is built here and
 * passed down; nothing below reads the environment (docs/conventions.md "Dependencies"). Tests build through
 * here too.
 */
export async function buildService(config: Config, log: Logger, options: BuildOptions = {}) {
  const clock = options.clock ?? systemClock;
  // Whom the work under way acts for (src/actors.ts); outside any, `unknown`, which no path of ours should meet.
  const actors = createActors(serviceActor('unknown'));
  const db = openDb(config.dbFile);
  const { prometheus: promSettings } = config;
  const prometheus = promSettings.port !== null || promSettings.token !== null ? createPrometheus() : undefined;
  const pool = { host: config.gameHost, portRange: config.gamePortRange, nodes: config.runtime === 'docker' };
  const outboxLimits = { perWebhook: config.webhooks.pendingPerWebhook, perUser: config.webhooks.pendingPerUser };
  const store = createStore(db, clock, pool, { defaults: config.quotas, plans }, actors.current, prometheus?.observer, outboxLimits);
  warnIfOneAccountFillsThePorts(config, log);
  // The sampler is built after the runtime (it reads the doors); the runtime's loops that act on samples (alerts,
  // idle stop) subscribe through this, bound once it exists, when the runtime starts them at boot.
  // eslint-disable-next-line prefer-const -- read by `subscribe` below before it is assigned: a const would be in its temporal dead zone there
  let sampler: Telemetry['sampler'] | undefined;
  const samples: NonNullable<RuntimeDeps['samples']> = {
    subscribe: (listener) => {
      if (!sampler) throw new Error('the sampler is subscribed to before it was built');
      return sampler.subscribe(listener);
    },
  };
  const { runtime, catalog } = runtimeOf(config, options, { store, clock, log, actors, samples });
  const telemetry = createTelemetry({ db, clock, intervalMs: config.metricsIntervalMs, runtime: { live: runtime.doors.live, on: runtime.events.on }, log });
  sampler = telemetry.sampler;
  const streams = createStreamRegistry({
    perUser: config.streamsPerUser,
    maxLifetimeMs: config.streamMaxLifetimeMs,
    sweepMs: options.streamSweepMs,
    authority: { activeTokens: (ids) => store.tokens.activeIds(ids), holding: (pairs) => store.members.holding(pairs) },
  });
  prometheus?.watch({ servers: store.servers, streams, sampler: telemetry.sampler, outbox: store.outbox, dbFile: config.dbFile });
  // Polled every 250 ms while anyone listens: an event reaches a stream well within the spec's second.
  const feed = createEventFeed({ events: store.events, pollMs: 250, log });
  const { allowPrivate, timeoutMs, disableAfterMs } = config.webhooks;
  const dispatcherConfig: DispatcherConfig = { ...dispatcherDefaults, allowPrivate, timeoutMs, disableAfterMs, ...options.webhooks };
  const dispatcher = createDispatcher({ outbox: store.outbox, feed, clock, log, config: dispatcherConfig });
  const dns = createDns(config.dns, { db, feed, clock, log, ...options.dns });
  const app = await createApp({
    db,
    store,
    clock,
    config: appConfig(config, dispatcherConfig),
    spec: options.spec ?? loadSpec(),
    log,
    versions: versionCatalog(catalog),
    plans,
    runtime,
    telemetry,
    streams,
    feed,
    onResponse: options.onResponse,
    openapi: options.openapi,
    rateLimitStore: options.rateLimitStore,
    prometheus: prometheus && { ...prometheus, token: promSettings.token },
    actors,
  });
  const retention = createRetention(store, config, log);
  const { boot, shutdown } = lifeOf({ db, runtime, telemetry, dispatcher, retention, streams, feed, actors, dns });

  return {
    app, db, store, runtime, metrics: telemetry.store, sampler: telemetry.sampler, streams, prometheus, feed, dispatcher, actors, dns,
    boot, shutdown, purge: retention.run,
  };
}

/**
 * The runtime (src/runtime/compose.ts) over the environment RUNTIME selects, with the software catalog it launches
 * from: the built-in definitions and the operator's under DATA_DIR/software. The catalog is returned too, for the API.
 */
function runtimeOf(config: Config, options: BuildOptions, deps: { store: Store; clock: Clock; log: Logger; actors: Actors; samples: RuntimeDeps['samples'] }) {
  const { store, clock, log, actors, samples } = deps;
  const operatorSoftware = path.join(config.dataDir, 'software');
  const catalog = loadSoftwareCatalog({
    operatorDir: operatorSoftware,
    // A bad file is left out, loudly; the other software keeps running (README "Adding software").
    onInvalid: (message) => log.error('a software definition is invalid and was not loaded', { error: message }),
  });
  const runtime = composeRuntime({
    store,
    clock,
    ...selectEnvironment(config, log, [builtinSoftwareDir(), operatorSoftware], store.nodes, catalog),
    catalog,
    config: { ...runtimeConfigDefaults, diskCheckMs: config.diskCheckIntervalMs, keptBackupsPerUser: config.keptBackupsPerUser, filesTransfersPerUser: config.filesTransfersPerUser, ...options.runtime, dataDir: config.dataDir },
    dns: config.dns,
    schedules: { perServer: config.sharing.schedulesPerServer, tasksPerSchedule: config.sharing.tasksPerSchedule, checkMs: 5_000, secondMs: 1_000, ...options.schedules },
    plans,
    log,
    actors,
    samples,
    idleMinuteMs: options.idleMinuteMs,
  });
  return { runtime, catalog };
}

/** The service's boot and shutdown over the parts buildService made, each started and stopped in its order. */
function lifeOf(parts: {
  db: Db; runtime: Runtime; telemetry: Telemetry; dispatcher: Dispatcher;
  retention: ReturnType<typeof createRetention>; streams: StreamRegistry; feed: EventFeed; actors: Actors; dns: Dns;
}) {
  const { db, runtime, telemetry, dispatcher, retention, streams, feed, actors, dns } = parts;
  /**
   * Boot: the runtime adopts or cleans up what a previous life left (even after kill -9), then sampling and the
   * periodic purge of old token rows and events start.
   */
  async function boot() {
    await runtime.start();
    telemetry.sampler.start();
    dispatcher.start();
    retention.start();
    await dns.start();
  }

  /** Stops the game servers cleanly (desired state is kept, so the next boot brings them back), then the db. */
  async function shutdown() {
    retention.stop();
    streams.closeAll();
    await dispatcher.close();
    dns.close();
    await dns.idle();
    feed.close();
    telemetry.sampler.stop();
    await runtime.close();
    db.close();
    actors.close();
  }
  return { boot, shutdown };
}

/** The part of the configuration the HTTP app reads (AppDeps.config). */
function appConfig(config: Config, webhooks: DispatcherConfig): AppDeps['config'] {
  return {
    rateLimitPerMinute: config.rateLimitPerMinute,
    rateLimitWindowMs: config.rateLimitWindowMs,
    trustProxy: config.trustProxy,
    bodyLimitBytes: config.bodyLimitBytes,
    allowedHosts: config.allowedHosts,
    corsOrigins: config.corsOrigins,
    publicUrl: config.publicUrl,
    tokensPerUser: config.tokensPerUser,
    dashboard: config.dashboard,
    webhooks: { perUser: config.webhooks.perUser, allowPrivate: webhooks.allowPrivate, lookup: webhooks.lookup },
    membersPerServer: config.sharing.membersPerServer,
    sftpPort: config.sftpPort,
  };
}

/**
 * The operator's sizing rule (README "Configuration"): an account at its default servers quota must leave ports for
 * others, or one tenant alone could make every other create a 503 capacity_exhausted.
 */
function warnIfOneAccountFillsThePorts(config: Config, log: Logger) {
  const ports = config.gamePortRange[1] - config.gamePortRange[0] + 1;
  if (config.quotas.servers >= ports) {
    log.warn('QUOTA_SERVERS lets one account take every game port; keep it well below the size of GAME_PORT_RANGE', {
      quota_servers: config.quotas.servers,
      ports,
    });
  }
}

/** `npm start`: build, boot, listen; `stop()` is the graceful shutdown main.ts runs on SIGTERM and SIGINT. */
export async function startService(config: Config, log: Logger) {
  const service = await buildService(config, log);
  await service.boot();
  const http = listenHttp(service.app as RequestListener, config.port, config.host);
  answerClientErrors(http);
  await new Promise<void>((resolve, reject) => http.once('listening', resolve).once('error', reject));
  log.info('listening', { address: http.address(), data_dir: config.dataDir });
  const metricsHttp = await listenForMetrics(config, service.prometheus);
  if (metricsHttp) log.info('metrics listening', { address: metricsHttp.address() });
  // SFTP_PORT: the SFTP server on the same host (README "SFTP"); `off` or 0 runs none.
  const sftp = config.sftpPort === null ? undefined : buildSftp(config.dataDir, { store: service.store, files: service.runtime.files, actors: service.actors }, log);
  if (sftp && config.sftpPort !== null) log.info('sftp listening', { address: await sftp.sftp.listen(config.sftpPort, config.host), host_key: sftp.fingerprint });

  let stopping: Promise<void> | undefined;
  /** Stop accepting connections, let in-flight requests finish (up to SHUTDOWN_TIMEOUT_S), then shut down. */
  function stop(): Promise<void> {
    stopping ??= (async () => {
      log.info('shutting down');
      const closed = new Promise<void>((resolve) => http.close(() => resolve()));
      service.streams.closeAll();
      await sftp?.sftp.close();
      http.closeIdleConnections();
      const timer = setTimeout(() => http.closeAllConnections(), config.shutdownTimeoutMs).unref();
      await closed;
      clearTimeout(timer);
      metricsHttp?.closeAllConnections();
      await new Promise<void>((resolve) => (metricsHttp ? metricsHttp.close(() => resolve()) : resolve()));
      await service.shutdown();
      log.info('stopped');
    })();
    return stopping;
  }
  return { ...service, http, metricsHttp, stop };
}

/**
 * An HTTP listener with the slow-client limits (Node's defaults are generous): the headers within 10 s, a JSON body
 * within 30 s, an upload's bytes never 30 s apart (src/http/body-guard.ts: Node's own `requestTimeout` would end
 * every upload at 30 s, so it is off). Node enforces the headers' limit only when it checks its connections, every
 * 30 s by default, so a socket that never finished its headers stayed open 15–35 s (issue 39 §4); checked every
 * second, it is closed 10–11 s after it opened. SSE answers are unaffected: these bound receiving the request, not
 * sending the answer.
 */
export function listenHttp(handler: RequestListener, port: number, host: string, bodies: Partial<BodyGuardOptions> = {}): HttpServer {
  const server = createServer({ requestTimeout: 0, headersTimeout: 10_000, connectionsCheckingInterval: 1_000 }, handler);
  guardBodies(server, { wholeMs: 30_000, idleMs: 30_000, checkMs: 1_000, ...bodies });
  return server.listen(port, host);
}

/** METRICS_PORT: a listener of its own that serves only /metrics (README "Metrics"); none when it is unset. */
async function listenForMetrics(config: Config, prometheus: Prometheus | undefined): Promise<HttpServer | undefined> {
  const { port, host, token } = config.prometheus;
  if (!prometheus || port === null) return undefined;
  const server = listenHttp(metricsApp(prometheus.registry, token) as RequestListener, port, host);
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  return server;
}
