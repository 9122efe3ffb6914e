import crypto from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { AppError } from '../errors';

/**
 * CSRF defence for the dashboard's state-changing requests (OWASP CSRF Prevention Cheat Sheet), in two layers:
 * 1. The `Origin` header must name this host ("Verifying Origin With Standard Headers"). Browsers send it on
 *    every POST, so a request without one did not come from our page.
 * 2. A synchronizer token in the `X-CSRF-Token` header. It is derived from the session secret (an HMAC-like
 *    hash with a fixed label), so nothing extra is stored and it is useless without the httpOnly cookie.
 * SameSite=Strict on the cookie is a third layer, not relied on alone.
 */
export const CSRF_HEADER = 'x-csrf-token';

export function csrfTokenFor(sessionSecret: string): string {
  return crypto.createHash('sha256').update(`gsh-dashboard-csrf\0${sessionSecret}`).digest('base64url');
}

export function sameOrigin(req: Request): boolean {
  const origin = req.headers.origin;
  // req.host includes the port in Express 5 and honours X-Forwarded-Host only when `trust proxy` is set.
  return typeof origin === 'string' && origin === `${req.protocol}://${req.host}`;
}

/** Layer 1 alone: for sign-in, which has no session yet (stops login CSRF). */
export function requireSameOrigin(req: Request, _res: Response, next: NextFunction): void {
  if (!sameOrigin(req)) { next(new AppError('csrf_failed', 'The request did not come from this site (Origin header).')); return; }
  next();
}

/** Both layers; `secret` is the session secret from the cookie, already checked to be a live session. */
export function checkCsrf(req: Request, secret: string): void {
  if (!sameOrigin(req)) throw new AppError('csrf_failed', 'The request did not come from this site (Origin header).');
  const sent = req.headers[CSRF_HEADER];
  const want = Buffer.from(csrfTokenFor(secret));
  const got = Buffer.from(typeof sent === 'string' ? sent : '');
  if (got.length !== want.length || !crypto.timingSafeEqual(got, want)) {
    throw new AppError('csrf_failed', 'Send the CSRF token of this session in the X-CSRF-Token header.');
  }
}
