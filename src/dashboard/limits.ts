import type { Request, RequestHandler, Response } from 'express';
import { rateLimit, ipKeyGenerator, type Store } from 'express-rate-limit';
import { AppError } from '../errors';
import { sendProblem } from '../http/problem';

/** The client address as the rate limits key it: IPv4, or IPv6 grouped by /56; `TRUST_PROXY` decides which. */
export function addressOf(req: Request): string {
  return ipKeyGenerator(req.ip ?? '');
}

/** A 429 `rate_limited` problem that tells when to come back (RFC 9110 §10.2.3 Retry-After, in seconds). */
export function rateLimited(detail: string, retryAfterMs: number): AppError {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new AppError('rate_limited', `${detail} Try again in ${seconds} seconds.`, undefined, { 'Retry-After': String(seconds) });
}

/**
 * A fixed one-minute budget for one class of /dashboard routes (docs/conventions.md "Rate limiting"): past it, a
 * `rate_limited` problem with Retry-After and the draft-ietf-httpapi-ratelimit-headers-08 headers, as on /v1.
 * Counts live in memory unless a shared `store` is given.
 */
export function perMinute(options: {
  name: string;
  limit: number;
  what: string;
  key: (req: Request) => string;
  store?: Store;
}): RequestHandler {
  return rateLimit({
    windowMs: 60_000,
    limit: options.limit,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    identifier: options.name,
    store: options.store,
    keyGenerator: options.key,
    handler: (req: Request, res: Response) => {
      const retryAfter = Number(res.getHeader('Retry-After')) || 60;
      const detail = `At most ${options.limit} ${options.what} per minute are allowed.`;
      sendProblem(res, rateLimited(detail, retryAfter * 1000), req.originalUrl.split('?')[0]);
    },
  });
}
