import express, { type NextFunction, type Request, type Response } from 'express';
import { OpenAPIBackend, OpenAPIValidator, type Context, type Request as ApiRequest } from 'openapi-backend';
import addFormats from 'ajv-formats';
import type { Store as RateLimitStore } from 'express-rate-limit';
import type { Db } from './store/db';
import type { Store } from './store';
import type { Clock } from './clock';
import type { Spec } from './spec';
import type { DashboardSettings } from './config';
import type { Logger } from './log';
import type { VersionCatalog } from './catalog/versions';
import type { Runtime } from './runtime/runtime';
import type { Telemetry } from './telemetry';
import type { Principal } from './store/tokens-repo';
import { AppError } from './errors';
import { bearerAuth, rejectUnauthorized } from './http/auth';
import { createRateLimiter } from './http/rate-limit';
import { fieldErrors } from './http/problem';
import {
  accessLog, captureResponses, checkHost, checkPercentEncoding, errorHandler, jsonBody, requireJson, securityHeaders,
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
import { settingsHandlers } from './http/handlers/settings';
import { metricsHandlers } from './http/handlers/metrics';
import { accountHandlers } from './http/handlers/account';
import { eventHandlers } from './http/handlers/events';
import { webhookHandlers } from './http/handlers/webhooks';
import type { Lookup } from './webhooks/address';
import type { EventFeed } from './events/feed';
import type { FileReply, Handlers, StreamReply } from './http/types';
import { routeOnce } from './http/routing';
import { sendFile } from './http/send-file';
import { backupHandlers } from './http/handlers/backups';
import { alertHandlers } from './http/handlers/alerts';
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
  runtime: Runtime;
  telemetry: Pick<Telemetry, 'store' | 'sampler'>;
  /** Where open SSE streams are tracked, so shutdown can end them. */
  streams: StreamRegistry;
  /** New events as they are committed, for GET /v1/events/stream. */
  feed: EventFeed;
  rateLimitStore?: RateLimitStore;
  /**
   * The operator's metrics when METRICS_PORT or METRICS_TOKEN is set: every answer is timed, and with a token the
   * main port serves /metrics behind it (README "Metrics").
   */
  prometheus?: { measure: Prometheus['measure']; registry: Prometheus['registry']; token: string | null };
  /** Tests pass a checker that validates every answer against the spec; production does not pay for it. */
  onResponse?: (sent: SentResponse) => void;
  /**
   * Compile each operation's request validators on its first request instead of at start. `npm start` compiles
   * them all up front (about 2 s), so a schema Ajv cannot compile stops the boot and no first request pays for
   * it; tests build an app per test and touch a few operations each (docs/conventions.md "Tests").
   */
  lazyValidators?: boolean;
}

/**
 * Builds the service: express → rate limiter → openapi-backend (routing, bearerAuth, Ajv validation) → the
 * handler registered under the operation's operationId → a repository or the runtime.
 */
export async function createApp(deps: AppDeps) {
  const { servers, tokens, idempotency, quotas } = deps.store;
  const handlers: Handlers = {
    ...catalogHandlers(deps),
    ...serverHandlers({ servers, idempotency, versions: deps.versions, runtime: deps.runtime }),
    ...tokenHandlers({ tokens, idempotency, tokensPerUser: deps.config.tokensPerUser }),
    ...actionHandlers({ servers, idempotency, runtime: deps.runtime }),
    ...consoleHandlers({ servers, idempotency, runtime: deps.runtime }),
    ...playerHandlers({ servers, runtime: deps.runtime }),
    ...settingsHandlers({ servers, runtime: deps.runtime }),
    ...backupHandlers({ servers, runtime: deps.runtime }),
    ...alertHandlers({ servers, alerts: deps.store.alerts }),
    ...metricsHandlers({ servers, telemetry: deps.telemetry }),
    ...accountHandlers({ quotas }),
    ...eventHandlers({ events: deps.store.events, feed: deps.feed }),
    ...webhookHandlers({ webhooks: deps.store.webhooks, ...deps.config.webhooks }),
  };
  const api = await createApi(deps, handlers, tokens);

  const app = express();
  app.disable('x-powered-by');
  app.locals.problemBase = `${deps.config.publicUrl}/problems/`; // read by sendProblem (src/http/problem.ts)
  app.set('trust proxy', deps.config.trustProxy);
  app.set('query parser', 'simple');
  // No ETags: a conditional GET would answer 304, which the contract does not list, and the API's answers are
  // live state that clients should not revalidate from a cache.
  app.set('etag', false);
  if (deps.onResponse) app.use(captureResponses(deps.onResponse));
  app.use(requestIdMiddleware);
  if (deps.prometheus) app.use(deps.prometheus.measure);
  app.use(securityHeaders);
  app.use(accessLog(deps.log));
  // Before the Host check: load balancers and orchestrators probe health by address, and it tells nothing.
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  // CORS before the limiter: a preflight is answered here and costs no budget (docs/conventions.md "Browsers").
  app.use('/v1', cors(deps.config.corsOrigins));
  // The limiter before the Host check, so every /v1 answer (a 421 too) carries the RateLimit headers the spec lists.
  app.use(
    '/v1',
    createRateLimiter(tokens, {
      limit: deps.config.rateLimitPerMinute,
      windowMs: deps.config.rateLimitWindowMs,
      store: deps.rateLimitStore,
    }),
  );
  app.use(checkHost(deps.config.allowedHosts));
  // The API right after the Host check: its requests pass no docs, problem page or dashboard route on the way.
  app.use(
    '/v1',
    requireJson,
    jsonBody(deps.config.bodyLimitBytes),
    async (req: Request, res: Response) => {
      checkPercentEncoding(req.path);
      const apiRequest: ApiRequest = {
        method: req.method,
        path: req.baseUrl + req.path,
        query: req.query as ApiRequest['query'],
        headers: req.headers as ApiRequest['headers'],
        body: req.body,
      };
      await api.handleRequest(apiRequest, req, res);
    },
  );
  // Never open to tenants: only with the operator's token, which no API token is (SECURITY.md).
  if (deps.prometheus?.token) app.get('/metrics', metricsRoute(deps.prometheus.registry, deps.prometheus.token));
  serveDocs(app, deps.spec, deps.config.publicUrl);
  serveProblemPages(app);
  mountDashboard(app, { db: deps.db, clock: deps.clock, log: deps.log, settings: deps.config.dashboard });
  app.get('/favicon.ico', (_req, res) => {
    res.status(204).end(); // browsers ask for it on every page; no icon is better than a logged 404
  });

  app.use((req: Request, _res: Response, next: NextFunction) => {
    next(new AppError('not_found', `Nothing is served at ${req.path}.`));
  });
  app.use(errorHandler(deps.log));
  return app;
}

async function createApi(deps: AppDeps, handlers: Handlers, tokens: Store['tokens']) {
  // validate: false here only so that init() builds no validator: the one built after init() is the same
  // openapi-backend OpenAPIValidator, with lazy compilation under our control (AppDeps.lazyValidators).
  const api = new OpenAPIBackend({ definition: structuredClone(deps.spec.document) as never, strict: true, validate: false });
  // openapi-backend checks the document against the OpenAPI 3.0 meta-schema, which rejects valid 3.1
  // (`type: [string, "null"]`, info.summary). `redocly lint` (recommended-strict) is our definition check.
  (api as unknown as { validateDefinition: () => unknown }).validateDefinition = () => undefined;

  api.registerSecurityHandler('bearerAuth', (c: Context, req: Request, res: Response) => {
    res.locals.operationId = c.operation.operationId; // the metrics' label (src/prometheus.ts)
    return bearerAuth(c, req, res, tokens);
  });
  api.register({
    unauthorizedHandler: rejectUnauthorized,
    validationFail: (c: Context) => {
      const errors = fieldErrors(c.validation.errors ?? []);
      const n = errors.length;
      throw new AppError('validation_failed', `The request has ${n} problem${n === 1 ? '' : 's'}; see errors.`, errors);
    },
    notFound: (c: Context) => {
      throw new AppError('not_found', `Nothing is served at ${c.request.path}.`);
    },
    methodNotAllowed: (c: Context) => {
      const allow = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((m) =>
        api.matchOperation({ method: m, path: c.request.path, headers: {} }),
      );
      throw new AppError('method_not_allowed', `${c.request.method.toUpperCase()} is not allowed here.`, undefined, {
        Allow: allow.join(', '),
      });
    },
  });
  for (const [operationId, handler] of Object.entries(handlers)) {
    api.register(operationId, async (c: Context, req: Request, res: Response) => {
      const { principal } = c.security.bearerAuth as { principal: Principal };
      const reply = await (handler as (call: unknown) => unknown)({
        principal,
        path: c.request.params,
        query: c.request.query,
        body: c.request.requestBody,
        headers: c.request.headers,
        context: c,
      });
      if (reply && typeof reply === 'object' && 'file' in reply) await sendFile(res, reply as FileReply);
      else if (reply && typeof reply === 'object' && 'stream' in reply) {
        const stream = reply as StreamReply;
        deps.streams.serve(req, res, stream, { userId: principal.userId, tokenId: principal.tokenId, serverId: stream.serverId });
      } else send(res, reply as { status: number; body?: unknown; headers?: Record<string, string> });
    });
  }
  await api.init();
  api.validator = new OpenAPIValidator({
    definition: api.definition,
    router: api.router,
    ajvOpts: { allErrors: true, strict: false },
    customizeAjv: (ajv) => {
      addFormats(ajv);
      return ajv;
    },
    lazyCompileValidators: deps.lazyValidators === true,
  });
  api.validate = true;
  routeOnce(api.router); // the per-request routing and parsing work done once (src/http/routing.ts)
  return api;
}

function send(res: Response, reply: { status: number; body?: unknown; headers?: Record<string, string> }) {
  for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value);
  if (reply.status === 204 || reply.body === undefined) res.status(reply.status).end();
  else {
    // What res.json() sends, without the work express's send() does for cases an API answer never is (ETags,
    // freshness, a string's charset); a HEAD request still gets no body (Node's http drops it).
    const body = JSON.stringify(reply.body);
    res.statusCode = reply.status;
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Length', Buffer.byteLength(body));
    res.end(body);
  }
}

