import express, { type NextFunction, type Request, type Response } from 'express';
import { OpenAPIBackend, type Context, type Request as ApiRequest } from 'openapi-backend';
import addFormats from 'ajv-formats';
import type { Store } from 'express-rate-limit';
import type { Db } from './store/db';
import type { Clock } from './clock';
import type { Spec } from './spec';
import type { Logger } from './log';
import type { VersionCatalog } from './catalog/versions';
import type { ServerRuntime, Telemetry } from './http/runtime-port';
import { AppError } from './errors';
import { createTokensRepo } from './store/tokens-repo';
import { createServersRepo, type AddressPool } from './store/servers-repo';
import { createIdempotencyRepo } from './store/idempotency-repo';
import { bearerAuth, rejectUnauthorized } from './http/auth';
import { createRateLimiter } from './http/rate-limit';
import { fieldErrors, sendProblem } from './http/problem';
import { serveDocs } from './http/docs';
import { mountDashboard } from './dashboard';
import { catalogHandlers } from './http/handlers/catalog';
import { serverHandlers } from './http/handlers/servers';
import { tokenHandlers } from './http/handlers/tokens';
import { actionHandlers } from './http/handlers/actions';
import { consoleHandlers } from './http/handlers/console';
import { playerHandlers } from './http/handlers/players';
import { metricsHandlers } from './http/handlers/metrics';
import type { Handlers, StreamReply } from './http/types';
import type { StreamRegistry } from './http/sse';

export interface AppConfig {
  rateLimitPerMinute: number;
  rateLimitWindowMs: number;
  addressPool: AddressPool;
  /** Express `trust proxy` (https://expressjs.com/en/guide/behind-proxies.html); false unless behind a proxy. */
  trustProxy: boolean | number | string;
  /** Largest accepted request body (CONVENTIONS.md: 413 beyond it). */
  bodyLimitBytes: number;
}

/** What one sent answer looked like, for the test-only contract check (see test/helpers/contract.ts). */
export interface SentResponse {
  method: string;
  path: string;
  status: number;
  contentType: string;
  headers: Record<string, unknown>;
  body: string;
}

export interface AppDeps {
  db: Db;
  clock: Clock;
  config: AppConfig;
  spec: Spec;
  log: Logger;
  versions: VersionCatalog;
  runtime: ServerRuntime;
  telemetry: Telemetry;
  /** Where open SSE streams are tracked, so shutdown can end them. */
  streams: StreamRegistry;
  rateLimitStore?: Store;
  /** Tests pass a checker that validates every answer against the spec; production does not pay for it. */
  onResponse?: (sent: SentResponse) => void;
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/**
 * Builds the service: express → rate limiter → openapi-backend (routing, bearerAuth, Ajv validation) → the
 * handler registered under the operation's operationId → a repository or the runtime.
 */
export async function createApp(deps: AppDeps) {
  const tokens = createTokensRepo(deps.db, deps.clock);
  const servers = createServersRepo(deps.db, deps.clock, deps.config.addressPool);
  const idempotency = createIdempotencyRepo(deps.db, deps.clock);
  const handlers: Handlers = {
    ...catalogHandlers(deps),
    ...serverHandlers({ ...deps, servers, idempotency }),
    ...tokenHandlers({ tokens }),
    ...actionHandlers({ servers, runtime: deps.runtime }),
    ...consoleHandlers({ servers, runtime: deps.runtime }),
    ...playerHandlers({ servers, runtime: deps.runtime }),
    ...metricsHandlers({ servers, telemetry: deps.telemetry }),
  };
  const api = await createApi(deps, handlers, tokens);

  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', deps.config.trustProxy);
  app.set('query parser', 'simple');
  // No ETags: a conditional GET would answer 304, which the contract does not list, and the API's answers are
  // live state that clients should not revalidate from a cache.
  app.set('etag', false);
  if (deps.onResponse) app.use(captureResponses(deps.onResponse));
  app.use(securityHeaders);
  app.use(accessLog(deps.log));
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  serveDocs(app, deps.spec);
  mountDashboard(app, { db: deps.db, clock: deps.clock, log: deps.log });
  app.get('/favicon.ico', (_req, res) => {
    res.status(204).end(); // browsers ask for it on every page; no icon is better than a logged 404
  });

  app.use(
    '/v1',
    createRateLimiter(tokens, {
      limit: deps.config.rateLimitPerMinute,
      windowMs: deps.config.rateLimitWindowMs,
      store: deps.rateLimitStore,
    }),
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
  app.use((req: Request, _res: Response, next: NextFunction) => {
    next(new AppError('not_found', `Nothing is served at ${req.path}.`));
  });
  app.use(errorHandler(deps.log));
  return app;
}

async function createApi(deps: AppDeps, handlers: Handlers, tokens: ReturnType<typeof createTokensRepo>) {
  const api = new OpenAPIBackend({
    definition: structuredClone(deps.spec.document) as never,
    strict: true,
    validate: true,
    ajvOpts: { allErrors: true, strict: false },
    customizeAjv: (ajv) => {
      addFormats(ajv);
      return ajv;
    },
  });
  // openapi-backend checks the document against the OpenAPI 3.0 meta-schema, which rejects valid 3.1
  // (`type: [string, "null"]`, info.summary). `redocly lint` (recommended-strict) is our definition check.
  (api as unknown as { validateDefinition: () => unknown }).validateDefinition = () => undefined;

  api.registerSecurityHandler('bearerAuth', (c: Context, req: Request, res: Response) => bearerAuth(c, req, res, tokens));
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
      const reply = await (handler as (call: unknown) => unknown)({
        principal: (c.security.bearerAuth as { principal: unknown }).principal,
        path: c.request.params,
        query: c.request.query,
        body: c.request.requestBody,
        headers: c.request.headers,
        context: c,
      });
      if (reply && typeof reply === 'object' && 'stream' in reply) deps.streams.serve(req, res, reply as StreamReply);
      else send(res, reply as { status: number; body?: unknown; headers?: Record<string, string> });
    });
  }
  await api.init();
  // openapi-backend 5.x rebuilds its operation list (a lodash chain copying every operation) on each call of
  // getOperations(), and matchOperation() calls it twice per request: ~23% of the API's CPU in `npm run bench`.
  // The definition never changes after init(), so the list is computed once.
  const operations = api.router.getOperations();
  api.router.getOperations = () => operations;
  return api;
}

function send(res: Response, reply: { status: number; body?: unknown; headers?: Record<string, string> }) {
  for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value);
  if (reply.status === 204 || reply.body === undefined) res.status(reply.status).end();
  else res.status(reply.status).json(reply.body);
}

/** One line per answered request: method, path, status, time, and the token's id (never the token). */
function accessLog(log: Logger) {
  return (req: Request, res: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const principal = res.locals.principal as { tokenId: string } | undefined;
      log.info('request', {
        method: req.method,
        path: req.originalUrl.split('?')[0],
        status: res.statusCode,
        ms: Number(process.hrtime.bigint() - started) / 1e6,
        token_id: principal?.tokenId,
      });
    });
    next();
  };
}

/** Test hook: hands every finished answer (status, type, body) to `onResponse`; see AppDeps.onResponse. */
function captureResponses(onResponse: (sent: SentResponse) => void) {
  return (req: Request, res: Response, next: NextFunction) => {
    let body = '';
    const send = res.send.bind(res);
    res.send = (chunk?: unknown) => {
      if (typeof chunk === 'string' || Buffer.isBuffer(chunk)) body = chunk.toString();
      return send(chunk);
    };
    res.on('finish', () =>
      onResponse({
        method: req.method,
        path: req.originalUrl.split('?')[0],
        status: res.statusCode,
        contentType: String(res.getHeader('content-type') ?? ''),
        headers: res.getHeaders(),
        body,
      }),
    );
    next();
  };
}

/** RFC 3986 §2.1: a `%` must start a valid escape; otherwise the path names nothing and is refused as such. */
function checkPercentEncoding(path: string) {
  try {
    decodeURIComponent(path);
  } catch {
    throw new AppError('validation_failed', 'The path has a malformed percent-encoding.', [
      { pointer: '/path', detail: 'is not valid percent-encoding (RFC 3986 §2.1)' },
    ]);
  }
}

/**
 * Parses JSON bodies of the methods that take one; a body sent with GET or DELETE is ignored, as no operation
 * reads it. `inflate: false`: a Content-Encoding is refused (415) rather than decompressed, so a mislabelled
 * body cannot reach zlib and a small compressed body cannot expand past the size limit.
 */
function jsonBody(limit: number) {
  const parse = express.json({ limit, inflate: false, type: ['application/json', 'application/*+json'] });
  return (req: Request, res: Response, next: NextFunction) => (BODY_METHODS.has(req.method) ? parse(req, res, next) : next());
}

/** 415 for a body that is not JSON (CONVENTIONS.md), checked before parsing so nothing else is ever parsed. */
function requireJson(req: Request, _res: Response, next: NextFunction) {
  const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
  if (BODY_METHODS.has(req.method) && hasBody && !req.is(['application/json', 'application/*+json'])) {
    const type = req.headers['content-type'] ?? 'no Content-Type';
    return next(new AppError('unsupported_media_type', `Send the body as application/json; got ${type}.`));
  }
  next();
}

/** Baseline headers for an API that is never framed or sniffed (OWASP REST Security Cheat Sheet). */
function securityHeaders(_req: Request, res: Response, next: NextFunction) {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
  next();
}

/** The one error path: AppError and body-parser errors become problems; anything else is a logged 500. */
function errorHandler(log: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const instance = req.originalUrl.split('?')[0];
    if (res.headersSent) {
      log.error('error after the answer was sent', { path: instance, error: String(err) });
      return;
    }
    sendProblem(res, toAppError(err, log, instance), instance);
  };
}

function toAppError(err: unknown, log: Logger, path: string): AppError {
  if (err instanceof AppError) return err;
  const type = (err as { type?: string } | null)?.type;
  // body-parser's documented error types (https://github.com/expressjs/body-parser#errors).
  if (type === 'entity.parse.failed') {
    return new AppError('malformed_body', 'The body is not valid JSON.', [{ pointer: '/body', detail: 'is not valid JSON' }]);
  }
  if (type === 'entity.too.large') return new AppError('payload_too_large', 'The body is larger than the service accepts.');
  if (type === 'charset.unsupported' || type === 'encoding.unsupported') {
    return new AppError('unsupported_media_type', 'The body must be UTF-8 JSON without a content encoding.');
  }
  if (type === 'request.aborted' || type === 'request.size.invalid') {
    return new AppError('validation_failed', 'The body ended before its declared length.');
  }
  log.error('unhandled error', { path, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
  return new AppError('internal_error', 'The service failed to handle this request. It has been logged.');
}
