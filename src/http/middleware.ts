import path from 'node:path';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Logger } from '../log';
import { AppError } from '../errors';
import { sendProblem } from './problem';

/** What one sent answer looked like, for the test-only contract check (see test/helpers/contract.ts). */
export interface SentResponse {
  method: string;
  path: string;
  status: number;
  contentType: string;
  headers: Record<string, unknown>;
  body: string;
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

type Middleware = (req: Request, res: Response, next: NextFunction) => unknown;

/**
 * Middleware run one after another as one express layer: what `app.use(a, b, c)` does, without express's router
 * matching a path and rewriting the URL around every one of them (BENCHMARKS.md §1). An error, thrown or passed to
 * `next`, or a promise that rejects, goes to express's error path; `next('route')` is not supported.
 */
export function series(...fns: Middleware[]): Middleware {
  return (req, res, done) => {
    let i = 0;
    const step = (err?: unknown): void => {
      if (err) { done(err); return; }
      if (i >= fns.length) { done(); return; }
      const fn = fns[i++];
      try {
        const out = fn(req, res, step);
        if (out instanceof Promise) out.then(undefined, done);
      } catch (e) {
        done(e);
      }
    };
    step();
  };
}

/** One line per answered request: method, path, status, time, and the token's id (never the token). */
export function accessLog(log: Logger) {
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
export function captureResponses(onResponse: (sent: SentResponse) => void) {
  return (req: Request, res: Response, next: NextFunction) => {
    let body = '';
    // A body is what res.send was given (for HEAD, express then ends without it) or what res.end was given
    // (app.ts's send); a streamed one (a file, SSE) ends without a chunk and is left out.
    const send = res.send.bind(res);
    res.send = (chunk?: unknown) => {
      if (typeof chunk === 'string' || Buffer.isBuffer(chunk)) body = chunk.toString();
      return send(chunk);
    };
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    res.end = ((chunk?: unknown, ...rest: unknown[]) => {
      if (typeof chunk === 'string' || Buffer.isBuffer(chunk)) body = chunk.toString();
      return end(chunk, ...rest);
    }) as Response['end'];
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
export function checkPercentEncoding(path: string) {
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
export function jsonBody(limit: number) {
  // application/json only: a `+json` type such as application/merge-patch+json (RFC 7396) means other semantics,
  // which no operation has (openapi/v1.yaml info "Errors"), so requireJson refuses it with 415.
  const parse = express.json({ limit, inflate: false, type: 'application/json' });
  warmBodyDecoder();
  // eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment -- @types/connect's IncomingMessage is a declared-only class (connect is not installed, no code checks instanceof); express's req is Node's IncomingMessage
  return (req: Request, res: Response, next: NextFunction) => (BODY_METHODS.has(req.method) ? parse(req, res, next) : next());
}

/**
 * Loads the UTF-8 decoder body-parser reads bodies with (raw-body's iconv-lite, resolved from raw-body so it is the
 * same copy) while the service starts: on first use it loads its encoding tables, about 18 ms that the first request
 * with a body would otherwise wait (issue 32: no operation's first request over 20 ms; BENCHMARKS.md §8).
 */
function warmBodyDecoder(): void {
  try {
    // Each package resolved from the one that uses it (express → body-parser → raw-body → iconv-lite), as npm lays them out.
    const from = (name: string, user: string) => require.resolve(name, { paths: [path.dirname(user)] });
    const iconv = from('iconv-lite', from('raw-body', from('body-parser', require.resolve('express'))));
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a path resolved at run time cannot be an import
    (require(iconv) as { getDecoder(e: string): unknown }).getDecoder('utf-8');
  } catch {
    // Only a head start: if the layout changed, the first request with a body loads the tables as it always did.
  }
}

/** 415 for a body that is not JSON (docs/conventions.md "Errors"), checked before parsing so nothing else is ever parsed. */
export function requireJson(req: Request, _res: Response, next: NextFunction) {
  const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
  if (BODY_METHODS.has(req.method) && hasBody && !req.is('application/json')) {
    const type = req.headers['content-type'] ?? 'no Content-Type';
    next(new AppError('unsupported_media_type', `Send the body as application/json; got ${type}.`));
    return;
  }
  next();
}

/** Baseline headers for an API that is never framed or sniffed (OWASP REST Security Cheat Sheet). */
export function securityHeaders(_req: Request, res: Response, next: NextFunction) {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
  next();
}

/** The one error path: AppError and body-parser errors become problems; anything else is a logged 500. */
export function errorHandler(log: Logger) {
  // eslint-disable-next-line @typescript-eslint/no-unused-vars -- express tells an error handler by its four parameters (Function.length)
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const instance = req.originalUrl.split('?')[0];
    if (res.headersSent) {
      log.error('error after the answer was sent', { path: instance, error: String(err) });
      return;
    }
    sendProblem(res, toAppError(err, log, instance), instance);
  };
}

function parsesAsJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function toAppError(err: unknown, log: Logger, path: string): AppError {
  if (err instanceof AppError) return err;
  const type = (err as { type?: string } | null)?.type;
  // body-parser's documented error types (https://github.com/expressjs/body-parser#errors).
  if (type === 'entity.parse.failed') {
    // express.json is strict: a body that is JSON but not an object or array (`null`, `"x"`, `5`) is refused as
    // a parse error; say what is wrong with it (issue 42). `body` is the raw text, body-parser's documented member.
    const raw = (err as { body?: unknown }).body;
    if (typeof raw === 'string' && parsesAsJson(raw)) {
      const what = raw.trim() === 'null' ? 'null' : `a JSON ${typeof JSON.parse(raw)}`;
      return new AppError('validation_failed', `The body is ${what}; send a JSON object.`, [{ pointer: '/body', detail: 'must be a JSON object' }]);
    }
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

/**
 * RFC 9110 §7.2 and §15.5.20: a request whose host (Host, or X-Forwarded-Host from a trusted proxy: Express's
 * req.hostname) is not one of `allowed` is answered 421 `misdirected_request`, so a DNS name someone else points
 * at this address (DNS rebinding) reaches nothing. Ports and a final dot are ignored. With no names, every host is
 * served: the operator's choice (README "Configuration", SECURITY.md).
 */
export function checkHost(allowed: readonly string[]) {
  const names = new Set(allowed);
  return (req: Request, _res: Response, next: NextFunction) => {
    // Express 5 answers undefined for a request without a Host (express/lib/request.js), though its types say string.
    const host = (req.hostname as string | undefined)?.toLowerCase().replace(/\.$/, '');
    if (names.size === 0 || (host !== undefined && names.has(host))) { next(); return; }
    next(new AppError('misdirected_request', 'This service does not answer for the host this request names.'));
  };
}
