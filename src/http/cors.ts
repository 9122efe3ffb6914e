import type { NextFunction, Request, Response } from 'express';

/** Request headers a cross-origin client may send to /v1 (Fetch Standard §3.2.2, CORS protocol). */
const ALLOW_HEADERS = 'Authorization, Content-Type, Idempotency-Key, Last-Event-ID, Request-Id';
const ALLOW_METHODS = 'GET, POST, PATCH, DELETE';
/** Answer headers a browser script may read: the rate limit, retry timing, new resources' URLs and the request id. */
export const EXPOSE_HEADERS = 'RateLimit, RateLimit-Policy, Retry-After, Location, Request-Id, Idempotent-Replayed, WWW-Authenticate';

/**
 * CORS for /v1 (docs/conventions.md "Browsers"): the API takes only bearer tokens, which a browser never sends
 * by itself, so any origin may call it by default (`CORS_ORIGINS=*`), and credentials mode is never allowed
 * (no Access-Control-Allow-Credentials): a cross-origin page gets nothing a cookie could give it. With a list,
 * only those origins are answered with CORS headers. A preflight is answered here, before the rate limiter, so
 * it costs the caller none of its budget; the dashboard's cookie routes are not under /v1 and stay same-origin.
 */
export function cors(origins: readonly string[]) {
  const any = origins.includes('*');
  const allowed = new Set(origins);
  return (req: Request, res: Response, next: NextFunction) => {
    const origin = req.headers.origin;
    const ok = origin !== undefined && (any || allowed.has(origin));
    if (!any) res.vary('Origin');
    if (ok) {
      res.setHeader('Access-Control-Allow-Origin', any ? '*' : origin);
      res.setHeader('Access-Control-Expose-Headers', EXPOSE_HEADERS);
      // A cross-origin script reads these answers by design: CORP must not block them (Fetch §3.6).
      res.setHeader('Cross-Origin-Resource-Policy', 'cross-origin');
    }
    const preflight = req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
    if (!preflight) { next(); return; }
    if (ok) {
      res.setHeader('Access-Control-Allow-Methods', ALLOW_METHODS);
      res.setHeader('Access-Control-Allow-Headers', ALLOW_HEADERS);
      res.setHeader('Access-Control-Max-Age', '600');
    }
    res.status(204).end();
  };
}
