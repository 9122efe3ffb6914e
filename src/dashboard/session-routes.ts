import express, { type NextFunction, type Request, type RequestHandler, type Response, type Router } from 'express';
import { AppError } from '../errors';
import { scopes as allScopes } from '../auth/tokens';
import { clearSessionCookie } from './cookies';
import { signInRoute } from './sign-in';
import { passwordRoute } from './password-route';
import { passkeyOptionsRoute, secondFactorRoute } from './sign-in-factor';
import { secondFactorRoutes } from './second-factor-routes';
import { currentSession, jsonBody, readBody, requireCsrfSession, signedIn, type SessionRouteDeps } from './sessions';

/** Name of the API token the page gets for its session; Settings → API tokens marks the page's own one. */
export const SESSION_TOKEN_NAME = 'dashboard session';
/** Page loads (tabs) per session that hold a live API token at once; older ones are revoked. */
const TOKENS_PER_SESSION = 5;
const REPLACES = { replaces: { type: 'string', min: 1, max: 100, optional: true } } as const;

/**
 * The session endpoints under /dashboard. Everything else the page does goes through /v1 with a bearer token
 * from `POST /dashboard/session-token`, so /v1 stays bearer-only and the page uses the same contract as SDKs.
 *
 *   GET  /dashboard/session        who is signed in, and the CSRF token for the calls below
 *   POST /dashboard/sign-in        {email, password} → session cookie   (Origin check, progressive delay)
 *   POST /dashboard/sign-in/…      the second factor of an account that has one (src/dashboard/sign-in-factor.ts)
 *   POST /dashboard/session-token  {replaces?} → the page's API token, for minutes (cookie + CSRF)
 *   POST /dashboard/password       a new password; ends every session (cookie + CSRF)
 *   POST /dashboard/sign-out       ends the session, revokes its API tokens (cookie + CSRF)
 *   …/second-factor, /totp, /recovery-codes, /passkeys   Settings → Two-factor (src/dashboard/second-factor-routes.ts)
 *
 * `limit` (per session, or per address without one) guards every route here but sign-in, which has its own
 * throttle; it runs before any route, so unknown paths count too (docs/conventions.md "Rate limiting").
 */
export function sessionRoutes(deps: SessionRouteDeps, limit: RequestHandler): Router {
  const router = express.Router();
  router.use(noStore);
  router.post('/sign-in', ...signInRoute(deps));
  // A code's guesses wait in the sign-in throttle, as passwords' do.
  router.post('/sign-in/second-factor', ...secondFactorRoute(deps));
  router.use(limit);
  router.post('/sign-in/passkey-options', ...passkeyOptionsRoute(deps));
  router.use(secondFactorRoutes(deps));

  router.get('/session', (req, res) => {
    const found = currentSession(req, deps);
    if (!found) return void res.json({ signed_in: false });
    res.json(signedIn(deps, found.session, found.secret));
  });

  router.post('/session-token', jsonBody, (req, res) => {
    const { session } = requireCsrfSession(req, deps);
    // The page renews its token before it ends and names the one it replaces, which is revoked at once.
    const replaces = req.body === undefined ? undefined : readBody(req, REPLACES, 'Name the token this one replaces, if any.').replaces;
    // The token lives minutes, and never past the session; a session that nearly ended is over.
    const ttlSeconds = Math.floor(deps.pageTokenTtlMs / 1000);
    const seconds = Math.min(ttlSeconds, Math.floor((session.expiresAt - deps.clock.now()) / 1000));
    if (seconds < Math.min(60, ttlSeconds)) throw new AppError('unauthorized', 'The session is about to expire; sign in again.');
    const input = { name: SESSION_TOKEN_NAME, scopes: [...allScopes], expiresInSeconds: seconds };
    const created = deps.sessions.issueToken(session, input, TOKENS_PER_SESSION);
    if (typeof replaces === 'string') deps.sessions.releaseToken(session, replaces);
    res.status(201).json({ id: created.id, token: created.token, expires_at: created.expires_at, expires_in: seconds });
  });

  router.post('/password', ...passwordRoute(deps));

  router.post('/sign-out', (req, res) => {
    const { session } = requireCsrfSession(req, deps);
    deps.sessions.end(session.id);
    clearSessionCookie(req, res);
    res.status(204).end();
  });

  return router;
}

function noStore(_req: Request, res: Response, next: NextFunction) {
  res.setHeader('Cache-Control', 'no-store');
  next();
}
