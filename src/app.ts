import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { Store as RateLimitStore } from 'express-rate-limit';
import type { Db } from './store/db';
import type { Store } from './store';
import type { Clock } from './clock';
import type { Spec } from './spec';
import type { DashboardSettings } from './config';
import type { Logger } from './log';
import type { Plan } from './catalog/plans';
import type { VersionCatalog } from './catalog/versions';
import type { Runtime } from './service';
import type { Telemetry } from './telemetry';
import { AppError } from './errors';
import { createRateLimiter } from './http/rate-limit';
import {
  accessLog, captureResponses, checkHost, errorHandler, jsonBody, requireJson, securityHeaders, series,
  type SentResponse,
} from './http/middleware';
import { serveDocs } from './http/docs';
import { requestIdMiddleware } from './http/request-id';
import { cors } from './http/cors';
import { serveProblemPages } from './http/problem-pages';
import { mountDashboard } from './dashboard';
import { catalogHandlers } from './http/handlers/catalog';
import { serverHandlers } from './http/handlers/servers';
import { tokenHandlers } from './http/handlers/tokens';
import { actionHandlers } from './http/handlers/actions';
import { consoleHandlers } from './http/handlers/console';
import { playerHandlers } from './http/handlers/players';
import { statusHandlers } from './http/handlers/status';
import { settingsHandlers } from './http/handlers/settings';
import { metricsHandlers } from './http/handlers/metrics';
import { accountHandlers } from './http/handlers/account';
import { eventHandlers } from './http/handlers/events';
import { webhookHandlers } from './http/handlers/webhooks';
import type { Lookup } from './webhooks/address';
import type { EventFeed } from './events/feed';
import type { Handlers } from './http/types';
import { createOperationDispatch } from './http/dispatch';
import { createOpenApi, type OpenApi } from './http/openapi';
import { sendFile } from './http/send-file';
import { backupHandlers } from './http/handlers/backups';
import { alertHandlers } from './http/handlers/alerts';
import { memberHandlers } from './http/handlers/members';
import { scheduleHandlers } from './http/handlers/schedules';
import { fileHandlers } from './http/handlers/files';
import { sshKeyHandlers } from './http/handlers/ssh-keys';
import { sftpHandlers } from './http/handlers/sftp';
import { createAccessCheck } from './http/access';
import type { Actors } from './actors';
import type { StreamRegistry } from './http/sse';
import { metricsRoute, type Prometheus } from './prometheus';

export interface AppConfig {
  rateLimitPerMinute: number;
  rateLimitWindowMs: number;
  /** Express `trust proxy` (https://expressjs.com/en/guide/behind-proxies.html); false unless behind a proxy. */
  trustProxy: boolean | number | string;
  /** Largest accepted request body (docs/conventions.md "Errors": 413 beyond it). */
  bodyLimitBytes: number;
  /** The host names the service answers for (ALLOWED_HOSTS); empty: every host. */
  allowedHosts: readonly string[];
  /** Where clients reach the API (PUBLIC_URL): the served spec's servers[0].url and problem type URIs. */
  publicUrl: string;
  /** Origins whose scripts may call /v1 (CORS_ORIGINS); `*` for any. */
  corsOrigins: readonly string[];
  /** Live API tokens one user may hold (TOKENS_PER_USER). */
  tokensPerUser: number;
  /** The dashboard's limits and page token lifetime. */
  dashboard: DashboardSettings;
  /** Webhooks per user, and what a webhook URL may resolve to (SECURITY.md, SSRF). */
  webhooks: { perUser: number; allowPrivate: boolean; lookup: Lookup };
  /** Members one server may have (MEMBERS_PER_SERVER). */
  membersPerServer: number;
  /** SFTP_PORT, which getServerSftp tells clients; null: the operator runs no SFTP server. */
  sftpPort: number | null;
}

export type { SentResponse } from './http/middleware';

export interface AppDeps {
  /** For the dashboard's own tables (sessions); the API reaches the database only through `store`. */
  db: Db;
  store: Store;
  clock: Clock;
  config: AppConfig;
  spec: Spec;
  log: Logger;
  versions: VersionCatalog;
  /** The plans servers are created on (GET /v1/plans), the same the runtime and quotas are given. */
  plans: readonly Plan[];
  runtime: Runtime;
  telemetry: Pick<Telemetry, 'store' | 'sampler'>;
  /** Where open SSE streams are tracked, so shutdown can end them. */
  streams: StreamRegistry;
  /** New events as they are committed, for GET /v1/events/stream. */
  feed: EventFeed;
  /** Each request runs as its caller, so what it changes names them (src/actors.ts). */
  actors: Actors;
  rateLimitStore?: RateLimitStore;
  /**
   * The operator's metrics when METRICS_PORT or METRICS_TOKEN is set: every answer is timed, and with a token the
   * main port serves /metrics behind it (README "Metrics").
   */
  prometheus?: { measure: Prometheus['measure']; registry: Prometheus['registry']; token: string | null };
  /** Tests pass a checker that validates every answer against the spec; production does not pay for it. */
  onResponse?: (sent: SentResponse) => void;
  /**
   * openapi-backend's router and validators, built from `spec` with every request validator compiled
   * (src/http/openapi.ts) unless given: they never change, so tests build them once per test file, compiled as
   * operations are used, and hand them to every app (test/helpers/app.ts).
   */
  openapi?: OpenApi;
}

/** The handlers by operationId (one module per tag), each given only the services it calls. */
function apiHandlers(deps: AppDeps): Handlers {
  const { servers, tokens, idempotency, quotas } = deps.store;
  const { runtime } = deps;
  return {
    ...catalogHandlers(deps),
    ...serverHandlers({ servers, idempotency, lifecycle: runtime.lifecycle }),
    ...tokenHandlers({ tokens, idempotency, tokensPerUser: deps.config.tokensPerUser }),
    ...actionHandlers({ idempotency, power: runtime.power }),
    ...consoleHandlers({ idempotency, consoles: runtime.consoles }),
    ...playerHandlers({ consoles: runtime.consoles, playerLists: runtime.playerLists, idempotency }),
    ...statusHandlers({ servers, versions: deps.versions }),
    ...settingsHandlers({ settings: runtime.settings }),
    ...backupHandlers({ backups: runtime.backups, keptBackups: runtime.keptBackups }),
    ...alertHandlers({ alerts: deps.store.alerts }),
    ...memberHandlers({ members: runtime.members, idempotency, perServer: deps.config.membersPerServer }),
    ...scheduleHandlers({ schedules: runtime.schedules, idempotency }),
    ...fileHandlers({ files: runtime.files }),
    ...sshKeyHandlers({ sshKeys: deps.store.sshKeys }),
    ...sftpHandlers({ users: deps.store.users, publicUrl: deps.config.publicUrl, sftpPort: deps.config.sftpPort }),
    ...metricsHandlers({ telemetry: deps.telemetry }),
    ...accountHandlers({ quotas }),
    ...eventHandlers({ events: deps.store.events, feed: deps.feed }),
    ...webhookHandlers({ webhooks: deps.store.webhooks, ...deps.config.webhooks }),
  };
}

/**
 * The last step of /v1: openapi-backend's routing and Ajv validation, bearerAuth and the access check, then the
 * handler under the operation's operationId (src/http/dispatch.ts).
 */
async function apiDispatch(deps: AppDeps, handlers: Handlers) {
  const { tokens, members } = deps.store;
  const openapi = deps.openapi ?? (await createOpenApi(deps.spec, { precompile: true }));
  // Who may do what on a server: its owner, or a member with what the operation's x-permission needs.
  const access = createAccessCheck({ members, scheduleTasks: (serverId, id) => deps.store.schedules.taskTypes(serverId, id) });
  return createOperationDispatch(openapi, handlers, { tokens, access, actors: deps.actors }, {
    sendFile,
    stream: (req, res, stream, principal, need) =>
      deps.streams.serve(req, res, stream, { userId: principal.userId, tokenId: principal.tokenId, serverId: stream.serverId, need }),
  });
}

/**
 * The operations whose body is not JSON (openapi/v1.yaml tag Files: an upload's bytes, an archive to extract) pass
 * the JSON check and the JSON parser untouched, whatever their Content-Type says (a file may well be JSON): the
 * handler reads the body as it streams (src/http/types.ts Call.raw), so nothing else may have read it first.
 */
const RAW_BODY = /^\/servers\/[^/]+\/files\/(content|extract)$/;
function rawBodies(check: RequestHandler): RequestHandler {
  return (req, res, next) => (RAW_BODY.test(req.path) && (req.method === 'PUT' || req.method === 'POST') ? next() : check(req, res, next));
}

/**
 * A write answered with success may have taken authority away (a token revoked, a member removed or a permission
 * taken, a server deleted, a password changed): the streams it covered end at once (StreamRegistry.sweepSoon).
 */
function sweepAfterWrites(streams: StreamRegistry): RequestHandler {
  return (req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') res.once('finish', () => res.statusCode < 400 && streams.sweepSoon());
    next();
  };
}

/**
 * Builds the service: express → rate limiter → the dispatcher (openapi-backend's routing and Ajv validation,
 * bearerAuth) → the handler under the operation's operationId → a repository or the runtime. The handlers and the
 * dispatcher are built first; the middleware below is mounted in the order requests pass it.
 */
export async function createApp(deps: AppDeps) {
  const dispatch = await apiDispatch(deps, apiHandlers(deps));
  const app = express();
  app.disable('x-powered-by');
  app.locals.problemBase = `${deps.config.publicUrl}/problems/`; // read by sendProblem (src/http/problem.ts)
  app.set('trust proxy', deps.config.trustProxy);
  app.set('query parser', 'simple');
  // No ETags: a conditional GET would answer 304, which the contract does not list, and the API's answers are
  // live state that clients should not revalidate from a cache.
  app.set('etag', false);
  // Every answer: its request id, timing, baseline headers and access-log line. One layer, run in this order.
  app.use(
    series(
      ...(deps.onResponse ? [captureResponses(deps.onResponse)] : []),
      requestIdMiddleware,
      ...(deps.prometheus ? [deps.prometheus.measure] : []),
      securityHeaders,
      accessLog(deps.log),
      sweepAfterWrites(deps.streams),
    ),
  );
  // Before the Host check: load balancers and orchestrators probe health by address, and it tells nothing.
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  const hostCheck = checkHost(deps.config.allowedHosts);
  // The API first: its requests pass no docs, problem page or dashboard route on the way. CORS before the limiter:
  // a preflight is answered there and costs no budget (docs/conventions.md "Browsers"); the limiter before the Host
  // check, so every /v1 answer (a 421 too) carries the RateLimit headers the spec lists.
  app.use(
    '/v1',
    series(
      cors(deps.config.corsOrigins),
      createRateLimiter(deps.store.tokens, {
        limit: deps.config.rateLimitPerMinute,
        windowMs: deps.config.rateLimitWindowMs,
        store: deps.rateLimitStore,
      }),
      hostCheck,
      rawBodies(requireJson),
      rawBodies(jsonBody(deps.config.bodyLimitBytes)),
      dispatch,
    ),
  );
  app.use(hostCheck);
  // Never open to tenants: only with the operator's token, which no API token is (SECURITY.md).
  if (deps.prometheus?.token) app.get('/metrics', metricsRoute(deps.prometheus.registry, deps.prometheus.token));
  serveDocs(app, deps.spec, deps.config.publicUrl);
  serveProblemPages(app);
  mountDashboard(app, { db: deps.db, clock: deps.clock, log: deps.log, settings: deps.config.dashboard, store: deps.store, actors: deps.actors });
  app.get('/favicon.ico', (_req, res) => {
    res.status(204).end(); // browsers ask for it on every page; no icon is better than a logged 404
  });

  app.use((req: Request, _res: Response, next: NextFunction) => {
    next(new AppError('not_found', `Nothing is served at ${req.path}.`));
  });
  app.use(errorHandler(deps.log));
  return app;
}

