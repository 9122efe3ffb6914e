import type { Request, Response, RequestHandler } from 'express';
import { rateLimit, ipKeyGenerator, type Store } from 'express-rate-limit';
import { AppError } from '../errors';
import { sendProblem } from './problem';
import type { TokensRepo } from '../store/tokens-repo';
import { resolveCaller } from './auth';

export interface RateLimitOptions {
  /** Requests per user (all their tokens together) per window (RATE_LIMIT_PER_MINUTE, default 120). */
  limit: number;
  /** The window (RATE_LIMIT_WINDOW_S, default 60 s). */
  windowMs: number;
  /** Where counts live; memory by default, a shared store (e.g. rate-limit-redis) for several instances. */
  store?: Store;
}

/**
 * 120 requests per minute per user, all their tokens together (docs/conventions.md "Rate limiting"): the key is
 * the token's user id, never a token or its secret, so minting tokens adds no budget, and the headers
 * (draft-ietf-httpapi-ratelimit-headers-08) report the user's budget. Requests without a valid token share a
 * budget per client address (IPv6 grouped by /56), so token guessing is limited too.
 */
export function createRateLimiter(tokens: TokensRepo, options: RateLimitOptions): RequestHandler {
  return rateLimit({
    windowMs: options.windowMs,
    limit: options.limit,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    store: options.store,
    keyGenerator: (req: Request, res: Response) => {
      const principal = resolveCaller(req, res, tokens);
      return principal ? `user:${principal.userId}` : `addr:${ipKeyGenerator(req.ip ?? '')}`;
    },
    handler: (req: Request, res: Response) => {
      const retryAfter = res.getHeader('Retry-After');
      const window = options.windowMs === 60_000 ? 'minute' : `${options.windowMs / 1000} seconds`;
      const who = res.locals.principal ? 'Your tokens together' : 'Requests without a valid token from this address';
      const detail = `${who} may make ${options.limit} requests per ${window}; try again in ${String(retryAfter ?? 'a few')} seconds.`;
      sendProblem(res, new AppError('rate_limited', detail), req.originalUrl.split('?')[0]);
    },
  });
}
