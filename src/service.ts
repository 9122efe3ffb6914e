import path from 'node:path';
import type { Server as HttpServer } from 'node:http';
import type { Config } from './config';
import type { Logger } from './log';
import { systemClock, type Clock } from './clock';
import { openDb } from './store/db';
import { createStore, type Store } from './store';
import { loadSpec } from './spec';
import { createApp, type AppDeps } from './app';
import { plans, type Plan } from './catalog/plans';
import { versionCatalog } from './catalog/versions';
import { createStreamRegistry } from './http/sse';
import { answerClientErrors } from './http/client-errors';
import { loadSoftwareCatalog, type SoftwareCatalog } from './runtime/software-catalog';
import { builtinSoftwareDir, selectEnvironment, type RuntimeHost } from './runtime/select-environment';
import { runtimeConfigDefaults, type RuntimeConfig } from './runtime/types';
import { createWork } from './runtime/work';
import { createRuntimeEvents } from './runtime/runtime-events';
import { createCrashPolicy } from './runtime/crash-policy';
import { createDoors } from './runtime/doors';
import { createLaunchFiles } from './runtime/launch-files';
import { createServerSettings } from './runtime/server-settings';
import { createPlayerLists } from './runtime/player-lists';
import { createKeptBackups } from './runtime/kept-backups';
import { createBackups } from './runtime/backups';
import { createLifecycle } from './runtime/lifecycle';
import { createPower } from './runtime/power';
import { createConsoles } from './runtime/consoles';
import { createReconciler } from './runtime/reconcile';
import { createMoves } from './runtime/moves';
import { createNodeLoss } from './runtime/node-loss';
import { createDiskWatcher } from './runtime/disk-watcher';
import { createBackupScheduler } from './runtime/backup-schedule';
import { createTelemetry } from './telemetry';
import { createPrometheus, metricsApp, type Prometheus } from './prometheus';
import { createEventFeed } from './events/feed';
import { createDispatcher, dispatcherDefaults, type DispatcherConfig } from './webhooks/dispatcher';
import { createIdleStop } from './runtime/idle-stop';
import { createAlerts } from './runtime/alerts';

export interface BuildOptions {
  clock?: Clock;
  /** Runtime timings (tests shorten backoffs and timeouts). */
  runtime?: Partial<Omit<RuntimeConfig, 'dataDir'>>;
  /** Test-only hooks of createApp (the contract checker). */
  onResponse?: AppDeps['onResponse'];
  /** Compile request validators on first use (AppDeps.lazyValidators); tests do, `npm start` does not. */
  lazyValidators?: boolean;
  /** A shared rate-limit store (e.g. Redis) when several instances serve one API; memory by default. */
  rateLimitStore?: AppDeps['rateLimitStore'];
  /** Webhook delivery timings and the resolver (tests shorten retries and map names to addresses). */
  webhooks?: Partial<DispatcherConfig>;
  /** How long a minute of `idle_stop_minutes` is (IdleStopDeps.minuteMs); 60,000 ms unless a test shortens it. */
  idleMinuteMs?: number;
}

/**
 * Wires the service: config → database → store → runtime → telemetry → HTTP app. Everything is built here and
 * passed down; nothing below reads the environment (docs/conventions.md "Dependencies"). Tests build through
 * here too.
 */
export async function buildService(config: Config, log: Logger, options: BuildOptions = {}) {
  const clock = options.clock ?? systemClock;
  const db = openDb(config.dbFile);
  const { prometheus: promSettings } = config;
  const prometheus = promSettings.port !== null || promSettings.token !== null ? createPrometheus() : undefined;
  const pool = { host: config.gameHost, portRange: config.gamePortRange, nodes: config.runtime === 'docker' };
  const store = createStore(db, clock, pool, { defaults: config.quotas, plans }, prometheus?.observer);
  warnIfOneAccountFillsThePorts(config, log);
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
    config: { ...runtimeConfigDefaults, diskCheckMs: config.diskCheckIntervalMs, keptBackupsPerUser: config.keptBackupsPerUser, ...options.runtime, dataDir: config.dataDir },
    plans,
    log,
  });
  const telemetry = createTelemetry({ db, clock, intervalMs: config.metricsIntervalMs, runtime: { live: runtime.doors.live, on: runtime.events.on }, log });
  const alerts = createAlerts({
    subscribe: (listener) => telemetry.sampler.subscribe(listener),
    repo: store.alerts,
    servers: store.servers,
    plans,
    log,
  });
  const idleStop = createIdleStop({
    subscribe: (listener) => telemetry.sampler.subscribe(listener),
    servers: store.servers,
    requestAction: runtime.power.requestAction,
    log,
    minuteMs: options.idleMinuteMs ?? 60_000,
  });
  const streams = createStreamRegistry({
    perUser: config.streamsPerUser,
    maxLifetimeMs: config.streamMaxLifetimeMs,
    authority: { activeTokens: (ids) => store.tokens.activeIds(ids), liveServers: (ids) => store.servers.liveIds(ids) },
  });
  prometheus?.watch({ servers: store.servers, streams, sampler: telemetry.sampler, outbox: store.outbox, dbFile: config.dbFile });
  // Polled every 250 ms while anyone listens: an event reaches a stream well within the spec's second.
  const feed = createEventFeed({ events: store.events, pollMs: 250, log });
  const dispatcherConfig: DispatcherConfig = { ...dispatcherDefaults, ...config.webhooks, ...options.webhooks };
  const dispatcher = createDispatcher({ outbox: store.outbox, feed, clock, log, config: dispatcherConfig });
  const app = await createApp({
    db,
    store,
    clock,
    config: appConfig(config, dispatcherConfig),
    spec: loadSpec(),
    log,
    versions: versionCatalog(catalog),
    runtime,
    telemetry,
    streams,
    feed,
    onResponse: options.onResponse,
    lazyValidators: options.lazyValidators,
    rateLimitStore: options.rateLimitStore,
    prometheus: prometheus && { ...prometheus, token: promSettings.token },
  });

  /**
   * Deletes old token rows (docs/conventions.md "Authentication") and events past EVENT_RETENTION_DAYS; a failure
   * is logged and retried next time.
   */
  function purgeTokens() {
    try {
      const purged = store.tokens.purge(config.tokenRetentionMs);
      if (purged > 0) log.info('purged token rows', { purged });
      const events = store.events.purge(config.eventRetentionMs);
      if (events > 0) log.info('purged events', { purged: events });
    } catch (e) {
      log.error('token purge failed', { error: String(e) });
    }
  }
  let purgeTimer: NodeJS.Timeout | undefined;

  /**
   * Boot: the runtime adopts or cleans up what a previous life left (even after kill -9), then sampling and the
   * periodic purge of token rows start.
   */
  async function boot() {
    await runtime.start();
    telemetry.sampler.start();
    idleStop.start();
    alerts.start();
    dispatcher.start();
    purgeTokens();
    purgeTimer = setInterval(purgeTokens, config.tokenPurgeIntervalMs).unref();
  }

  /** Stops the game servers cleanly (desired state is kept, so the next boot brings them back), then the db. */
  async function shutdown() {
    clearInterval(purgeTimer);
    streams.closeAll();
    await dispatcher.close();
    feed.close();
    idleStop.stop();
    alerts.stop();
    telemetry.sampler.stop();
    await runtime.close();
    db.close();
  }

  return {
    app, db, store, runtime, metrics: telemetry.store, sampler: telemetry.sampler, streams, prometheus, feed, dispatcher,
    boot, shutdown, purge: purgeTokens,
  };
}

/** What the runtime is built from: where games run and their files are (RuntimeHost), and the service's parts. */
export interface RuntimeDeps extends RuntimeHost {
  store: Store;
  clock: Clock;
  catalog: SoftwareCatalog;
  config: RuntimeConfig;
  plans: readonly Plan[];
  log: Logger;
}

/**
 * The runtime as named services, each built once with what it needs, in an order where nothing is used before it
 * exists (docs/architecture.md "Wiring"): the servers' doors first (every command on a server goes through its
 * door), then the services that submit commands or read through them. Tests build the runtime through here too.
 */
export function composeRuntime(deps: RuntimeDeps) {
  const { store, environment, storage, catalog, config, plans, log } = deps;
  const now = () => deps.clock.now();
  const work = createWork();
  const events = createRuntimeEvents();
  const crashPolicy = createCrashPolicy({ crashes: store.crashes, actions: store.actions, servers: store.servers, config, now, log });
  const doors = createDoors({
    servers: store.servers, processes: store.processes, crashPolicy, environment, storage, catalog, plans, log, config, now, track: work.track,
    emitState: (e) => events.emit('state', e),
    playersChanged: (id, joined, left, reason) => store.events.playersChanged(id, joined, left, reason),
    onlinePlayers: (id) => store.events.onlinePlayers(id),
    settings: createLaunchFiles({ settings: store.settings, playerLists: store.playerLists }),
  });
  const settings = createServerSettings({ repo: store.settings, servers: store.servers, catalog, plans, doors });
  const playerLists = createPlayerLists({ repo: store.playerLists, servers: store.servers, catalog, doors });
  const keptBackups = createKeptBackups({ repo: store.keptBackups, dataDir: config.dataDir, perUser: config.keptBackupsPerUser, inUse: doors.usingBackup });
  const backups = createBackups({ repo: store.backups, servers: store.servers, catalog, plans, kept: keptBackups, doors, storage, dataDir: config.dataDir, log, track: work.track });
  const lifecycle = createLifecycle({
    servers: store.servers, settings: store.settings, actions: store.actions, catalog, doors, environment, storage, backups, events, log, track: work.track,
  });
  const power = createPower({ doors, actions: store.actions, crashes: store.crashes, servers: store.servers, plans, environment, backups });
  const consoles = createConsoles({ doors, power, now });
  const moves = deps.transfer && createMoves({ repo: store.moves, nodeOf: store.nodes.nodeOf, doors, transfer: deps.transfer, log, track: work.track });
  const reconciler = createReconciler({ servers: store.servers, actions: store.actions, processes: store.processes, environment, doors, lifecycle, config, log, moves });
  environment.onReachability?.(createNodeLoss({ doors, environment, log }));
  const diskWatcher = createDiskWatcher({ servers: store.servers, crashPolicy, doors, plans, config, log, storage, backupsFolder: backups.folder });
  const backupScheduler = createBackupScheduler({
    scheduled: () => store.backups.scheduled(), backUp: (id) => void backups.create(id, null, true), now, log, everyMs: config.backupScheduleMs,
  });
  return {
    doors, lifecycle, power, consoles, settings, playerLists, backups, keptBackups, diskWatcher, backupScheduler, events,
    /** Boot: cleans up after a previous life, resumes installs, deletions and crash backoffs, starts the loops. */
    async start(): Promise<void> {
      await storage.start(); // a restore a previous life left half done is finished or undone first
      await backups.recover();
      await reconciler.start();
      diskWatcher.start();
      backupScheduler.start();
    },
    /** Graceful shutdown: fails open actions, stops every game (a container: lets it go, to adopt), resolves after. */
    async close(): Promise<void> {
      backupScheduler.stop();
      await diskWatcher.stop();
      await reconciler.close();
    },
    /** Resolves once no install, command or removal that began earlier is still under way. */
    idle: work.idle,
  };
}

export type Runtime = ReturnType<typeof composeRuntime>;

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
  const http: HttpServer = service.app.listen(config.port, config.host);
  // Slow-client limits (Node's defaults are generous): the whole request within 30 s, its headers within 10 s.
  // SSE answers are unaffected: these bound receiving the request, not sending the answer.
  http.requestTimeout = 30_000;
  http.headersTimeout = 10_000;
  answerClientErrors(http);
  await new Promise<void>((resolve, reject) => http.once('listening', resolve).once('error', reject));
  log.info('listening', { address: http.address(), data_dir: config.dataDir });
  const metricsHttp = await listenForMetrics(config, service.prometheus);
  if (metricsHttp) log.info('metrics listening', { address: metricsHttp.address() });

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
      metricsHttp?.closeAllConnections();
      await new Promise<void>((resolve) => (metricsHttp ? metricsHttp.close(() => resolve()) : resolve()));
      await service.shutdown();
      log.info('stopped');
    })();
    return stopping;
  }
  return { ...service, http, metricsHttp, stop };
}

/** METRICS_PORT: a listener of its own that serves only /metrics (README "Metrics"); none when it is unset. */
async function listenForMetrics(config: Config, prometheus: Prometheus | undefined): Promise<HttpServer | undefined> {
  const { port, host, token } = config.prometheus;
  if (!prometheus || port === null) return undefined;
  const server = metricsApp(prometheus.registry, token).listen(port, host);
  server.requestTimeout = 30_000;
  server.headersTimeout = 10_000;
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  return server;
}
