import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { rateLimit, ipKeyGenerator, type Store } from 'express-rate-limit';
import { AppError, type FieldError } from '../errors';
import { iso } from '../clock';
import { scopes as allScopes } from '../auth/tokens';
import { sendProblem } from '../http/problem';
import type { Clock } from '../clock';
import type { UsersRepo } from '../store/users-repo';
import type { TokensRepo } from '../store/tokens-repo';
import type { Session, SessionsRepo } from '../store/sessions-repo';
import { verifyPassword } from './passwords';
import { checkCsrf, csrfTokenFor, requireSameOrigin } from './csrf';
import { clearSessionCookie, readCookie, setSessionCookie, SESSION_COOKIE } from './cookies';

export interface SessionRouteDeps {
  users: UsersRepo;
  tokens: TokensRepo;
  sessions: SessionsRepo;
  clock: Clock;
  sessionTtlMs: number;
  /** Failed sign-ins allowed per window, per email and per client address. */
  signInLimit: { perEmail: number; perAddress: number; windowMs: number };
  rateLimitStores?: { perEmail: Store; perAddress: Store };
}

/** Name of the API token the page gets for its session; Settings → API tokens marks the page's own one. */
export const SESSION_TOKEN_NAME = 'dashboard session';
/** Page loads (tabs) per session that hold a live API token at once; older ones are revoked. */
const TOKENS_PER_SESSION = 5;

/**
 * The session endpoints under /dashboard. Everything else the page does goes through /v1 with a bearer token
 * from `POST /dashboard/session-token`, so /v1 stays bearer-only and the page uses the same contract as SDKs.
 *
 *   GET  /dashboard/session        who is signed in, and the CSRF token for the calls below
 *   POST /dashboard/sign-in        {email, password} → session cookie       (Origin check, rate limited)
 *   POST /dashboard/session-token  → a short-lived API token for this page (cookie + CSRF)
 *   POST /dashboard/sign-out       ends the session, revokes its API tokens (cookie + CSRF)
 */
export function sessionRoutes(deps: SessionRouteDeps): Router {
  const router = express.Router();
  router.use(noStore);

  router.get('/session', (req, res) => {
    const found = currentSession(req, deps.sessions);
    if (!found) return void res.json({ signed_in: false });
    res.json(signedIn(deps, found.session, found.secret));
  });

  router.post(
    '/sign-in',
    requireSameOrigin,
    express.json({ limit: '4kb', inflate: false }), // never decompress a request body (see src/app.ts jsonBody)
    validateSignIn,
    signInLimiter(deps, 'perAddress'),
    signInLimiter(deps, 'perEmail'),
    async (req: Request, res: Response) => {
      const { email, password } = req.body as { email: string; password: string };
      const user = deps.users.findByEmail(email);
      // verifyPassword hashes even when there is no user, so both failures look and take the same.
      const ok = await verifyPassword(password, user?.password_hash ?? null);
      if (!user || !ok) throw new AppError('unauthorized', 'The email or password is not right.');
      deps.sessions.sweep();
      // A sign-in replaces the session this browser had, rather than leaving it live beside the new one.
      const previous = currentSession(req, deps.sessions);
      if (previous) deps.sessions.end(previous.session.id);
      const { secret, session } = deps.sessions.create(user.id, deps.sessionTtlMs);
      setSessionCookie(req, res, secret, deps.sessionTtlMs);
      res.json(signedIn(deps, session, secret));
    },
  );

  router.post('/session-token', (req, res) => {
    const { session } = requireCsrfSession(req, deps.sessions);
    // The token ends with the session; the API's tokens last at least 60 s, so a session that nearly ended is over.
    const seconds = Math.floor((session.expiresAt - deps.clock.now()) / 1000);
    if (seconds < 60) throw new AppError('unauthorized', 'The session is about to expire; sign in again.');
    const created = deps.tokens.create(session.userId, {
      name: SESSION_TOKEN_NAME,
      scopes: [...allScopes],
      expiresInSeconds: seconds,
    });
    deps.sessions.addToken(session, created.id, TOKENS_PER_SESSION);
    res.status(201).json({ id: created.id, token: created.token, expires_at: created.expires_at });
  });

  router.post('/sign-out', (req, res) => {
    const { session } = requireCsrfSession(req, deps.sessions);
    deps.sessions.end(session.id);
    clearSessionCookie(req, res);
    res.status(204).end();
  });

  return router;
}

function signedIn(deps: SessionRouteDeps, session: Session, secret: string) {
  return {
    signed_in: true,
    email: deps.users.findById(session.userId)?.email ?? '',
    csrf_token: csrfTokenFor(secret),
    expires_at: iso(session.expiresAt),
  };
}

function currentSession(req: Request, sessions: SessionsRepo): { session: Session; secret: string } | undefined {
  const secret = readCookie(req, SESSION_COOKIE);
  const session = secret && secret.length <= 100 ? sessions.find(secret) : undefined;
  return session && secret ? { session, secret } : undefined;
}

/** A live session and a passing CSRF check, or a problem (401 without a session, 403 without the token). */
function requireCsrfSession(req: Request, sessions: SessionsRepo) {
  const found = currentSession(req, sessions);
  if (!found) throw new AppError('unauthorized', 'Sign in first; the session is missing or has expired.');
  checkCsrf(req, found.secret);
  return found;
}

function noStore(_req: Request, res: Response, next: NextFunction) {
  res.setHeader('Cache-Control', 'no-store');
  next();
}

function validateSignIn(req: Request, _res: Response, next: NextFunction) {
  const body = (req.body ?? {}) as Record<string, unknown>;
  const errors: FieldError[] = [];
  const field = (name: string, max: number) => {
    const v = body[name];
    if (typeof v !== 'string' || v.length === 0 || v.length > max) {
      errors.push({ pointer: `/body/${name}`, detail: `must be a string of 1 to ${max} characters` });
    }
  };
  field('email', 320);
  field('password', 1000);
  if (!req.is('application/json')) return next(new AppError('unsupported_media_type', 'Send the body as application/json.'));
  if (errors.length) return next(new AppError('validation_failed', 'Give an email and a password.', errors));
  next();
}

/**
 * Failed sign-ins are limited per client address and per email (OWASP Authentication Cheat Sheet); successful
 * ones do not count. The email key is lower-cased, as emails are matched case-insensitively.
 */
function signInLimiter(deps: SessionRouteDeps, kind: 'perEmail' | 'perAddress') {
  const { windowMs } = deps.signInLimit;
  return rateLimit({
    windowMs,
    limit: deps.signInLimit[kind],
    skipSuccessfulRequests: true,
    standardHeaders: 'draft-8',
    identifier: kind === 'perEmail' ? 'sign-in-email' : 'sign-in-address',
    legacyHeaders: false,
    store: deps.rateLimitStores?.[kind],
    keyGenerator: (req: Request) =>
      kind === 'perEmail' ? `email:${String(req.body.email).toLowerCase()}` : `addr:${ipKeyGenerator(req.ip ?? '')}`,
    handler: (req: Request, res: Response) => {
      const retryAfter = res.getHeader('Retry-After');
      const detail = `Too many failed sign-ins; try again in ${retryAfter ?? 'a few'} seconds.`;
      sendProblem(res, new AppError('rate_limited', detail), req.originalUrl.split('?')[0]);
    },
  });
}
