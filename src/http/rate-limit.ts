import type { Request, Response, RequestHandler } from 'express';
import { rateLimit, ipKeyGenerator, type Store } from 'express-rate-limit';
import { AppError } from '../errors';
import { sendProblem } from './problem';
import { resolveCaller } from './auth';
import type { TokensRepo } from '../store/tokens-repo';

export interface RateLimitOptions {
  /** Requests per token per window (RATE_LIMIT_PER_MINUTE, default 120). */
  limit: number;
  /** The window (RATE_LIMIT_WINDOW_S, default 60 s). */
  windowMs: number;
  /** Where counts live; memory by default, a shared store (e.g. rate-limit-redis) for several instances. */
  store?: Store;
}

/**
 * 120 requests per minute per token (docs/conventions.md "Rate limiting"). The key is the token's id, never the
 * secret; requests without a valid token share a budget per client address (IPv6 grouped by /56), so token
 * guessing is limited too. Headers follow draft-ietf-httpapi-ratelimit-headers-08.
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
      return principal ? `token:${principal.tokenId}` : `addr:${ipKeyGenerator(req.ip ?? '')}`;
    },
    handler: (req: Request, res: Response) => {
      const retryAfter = res.getHeader('Retry-After');
      const window = options.windowMs === 60_000 ? 'minute' : `${options.windowMs / 1000} seconds`;
      const detail = `At most ${options.limit} requests per ${window} are allowed; try again in ${retryAfter ?? 'a few'} seconds.`;
      sendProblem(res, new AppError('rate_limited', detail), req.originalUrl.split('?')[0]);
    },
  });
}
