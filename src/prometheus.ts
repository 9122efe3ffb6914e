import fs from 'node:fs';
import crypto from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { AppError } from './errors';
import { sendProblem } from './http/problem';
import { serverStates } from './runtime/server/states';
import type { StoreObserver } from './store/observer';
import type { SamplerStats } from './telemetry/sampler';
import type { ServerState } from './runtime/server/states';

/** What the gauges read at scrape time; nothing is read between scrapes. */
export interface PrometheusSources {
  servers: { countByState(): { state: ServerState; count: number }[] };
  streams: { size(): number };
  sampler: { stats(): SamplerStats };
  /** The webhook outbox (src/store/outbox-repo.ts): deliveries by status, `pending` being the backlog. */
  outbox: { countByStatus(): { status: string; count: number }[] };
  /** The control database's file; its `-wal` file sits next to it. */
  dbFile: string;
}

/**
 * How often the event-loop delay histogram behind `nodejs_eventloop_lag_*` samples (perf_hooks
 * monitorEventLoopDelay's `resolution`). prom-client's default, 10 ms, wakes an idle service 100 times a second,
 * which was most of what metrics cost with nobody scraping (README "Metrics"); at 100 ms every stall longer than
 * that is still seen (a sample falls due during it), and shorter ones in proportion to their length.
 */
export const EVENT_LOOP_RESOLUTION_MS = 100;

/**
 * The operator's metrics (README "Metrics"), on a Registry of their own (never prom-client's global one), so
 * every service built in one process, as tests do, has its own. Labels are bounded sets only: operationIds, HTTP
 * statuses, action types, outcomes, states, crash reasons; never a server, user or token id.
 */
export function createPrometheus() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_RESOLUTION_MS });
  const requests = new Histogram({
    name: 'gsh_http_request_duration_seconds',
    help: 'HTTP requests by operation (the spec operationId, or the area outside /v1) and status, and how long they took.',
    labelNames: ['operation', 'status'] as const,
    registers: [registry],
  });
  const rejections = new Counter({
    name: 'gsh_rate_limit_rejections_total',
    help: 'Requests answered 429 rate_limited, by area (v1 or dashboard).',
    labelNames: ['area'] as const,
    registers: [registry],
  });
  const actions = new Counter({
    name: 'gsh_actions_finished_total',
    help: 'Power actions that completed, by type and outcome.',
    labelNames: ['type', 'outcome'] as const,
    registers: [registry],
  });
  const crashes = new Counter({
    name: 'gsh_crashes_total',
    help: 'Crashes recorded, by reason.',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const observer: StoreObserver = {
    actionFinished: (type, outcome) => actions.inc({ type, outcome }),
    crashRecorded: (reason) => crashes.inc({ reason }),
  };

  /** Times every answer; the operation is the one the /v1 router matched (res.locals.operationId). */
  function measure(req: Request, res: Response, next: NextFunction) {
    const end = requests.startTimer();
    res.on('finish', () => {
      const area = areaOf(req.originalUrl); // req.path is relative to a router that answered
      end({ operation: (res.locals.operationId as string | undefined) ?? area, status: String(res.statusCode) });
      if (res.locals.problemCode === 'rate_limited') rejections.inc({ area: area === 'v1' ? 'v1' : 'dashboard' });
    });
    next();
  }

  return { registry, observer, measure, watch: (sources: PrometheusSources) => watch(registry, sources) };
}

export type Prometheus = ReturnType<typeof createPrometheus>;

/** Where a request went when no operationId names it (refused before routing, or outside /v1): a fixed set. */
function areaOf(url: string): string {
  const first = /^\/([^/?#]*)/.exec(url)?.[1] ?? '';
  if (first === 'v1' || first === 'docs' || first === 'healthz' || first === 'metrics' || first === 'dashboard') return first;
  return first === '' ? 'dashboard' : 'other'; // the dashboard's page is at /
}

/** The gauges read at scrape time from the service's own owners of that state. */
function watch(registry: Registry, sources: PrometheusSources): void {
  const registers = [registry];
  new Gauge({
    name: 'gsh_streams_open',
    help: 'Open event streams (console and metrics), all users together.',
    registers,
    collect() {
      this.set(sources.streams.size());
    },
  });
  new Gauge({
    name: 'gsh_servers',
    help: 'Servers by observed state, all accounts together.',
    labelNames: ['state'] as const,
    registers,
    collect() {
      const counts = new Map(sources.servers.countByState().map((r) => [r.state, r.count]));
      for (const state of serverStates) this.set({ state }, counts.get(state) ?? 0);
    },
  });
  new Gauge({
    name: 'gsh_telemetry_sampler_lag_seconds',
    help: 'How much later than scheduled the last sampling round began.',
    registers,
    collect() {
      this.set(sources.sampler.stats().lastLagMs / 1000);
    },
  });
  new Gauge({
    name: 'gsh_telemetry_sampler_round_seconds',
    help: 'How long the last sampling round took (read, write, rollups).',
    registers,
    collect() {
      this.set(sources.sampler.stats().lastTickMicros / 1e6);
    },
  });
  new Counter({
    name: 'gsh_telemetry_rows_written_total',
    help: 'Telemetry samples written to the database.',
    registers,
    collect() {
      this.reset(); // the sampler owns the count; this mirrors it
      this.inc(sources.sampler.stats().rowsWritten);
    },
  });
  new Gauge({
    name: 'gsh_webhook_deliveries',
    help: 'Webhook deliveries held, by status: pending (the backlog, retries included), succeeded, failed.',
    labelNames: ['status'] as const,
    registers,
    collect() {
      const counts = new Map(sources.outbox.countByStatus().map((r) => [r.status, r.count]));
      for (const status of ['pending', 'succeeded', 'failed']) this.set({ status }, counts.get(status) ?? 0);
    },
  });
  new Gauge({
    name: 'gsh_sqlite_file_bytes',
    help: 'Size of the control database, its main file and its write-ahead log.',
    labelNames: ['file'] as const,
    registers,
    collect() {
      this.set({ file: 'main' }, sizeOf(sources.dbFile));
      this.set({ file: 'wal' }, sizeOf(`${sources.dbFile}-wal`));
    },
  });
}

function sizeOf(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0; // no WAL between checkpoints on some systems, or an in-memory database
  }
}

/**
 * The exposition, for Prometheus (text format 0.0.4, registry.contentType). With a token, only
 * `Authorization: Bearer <METRICS_TOKEN>` gets it; the comparison is of SHA-256 digests with timingSafeEqual, so
 * it takes the same time whatever the guess. Tenants' API tokens open nothing here (SECURITY.md).
 */
export function metricsRoute(registry: Registry, token: string | null) {
  const want = token === null ? null : digest(token);
  return async (req: Request, res: Response) => {
    const presented = /^Bearer +(\S+) *$/i.exec(req.headers.authorization ?? '')?.[1];
    if (want !== null && (presented === undefined || !crypto.timingSafeEqual(digest(presented), want))) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="gsh-metrics"');
      sendProblem(res, new AppError('unauthorized', 'Send the operator\'s METRICS_TOKEN as "Authorization: Bearer <token>".'), req.path);
      return;
    }
    res.setHeader('Cache-Control', 'no-store');
    res.type(registry.contentType).send(await registry.metrics());
  };
}

function digest(text: string): Buffer {
  return crypto.createHash('sha256').update(text).digest();
}

/** The METRICS_PORT listener's app: /metrics and nothing else (a problem document for every other path). */
export function metricsApp(registry: Registry, token: string | null) {
  const app = express();
  app.disable('x-powered-by');
  app.get('/metrics', metricsRoute(registry, token));
  app.use((req: Request, res: Response) => {
    sendProblem(res, new AppError('not_found', `Nothing is served at ${req.path}; metrics are at /metrics.`), req.path);
  });
  return app;
}
