// The dashboard's cookie session as its routes see it (docs/conventions.md "Authentication"): a session is a row
// in `sessions` (migration 004) found by the SHA-256 of the cookie's secret; it lasts 12 hours, and the page gets
// short-lived API tokens for it. After it expires, its row and cookie are kept for KNOWN_BROWSER_GRACE_MS more,
// only so that sign-in can recognise the browser (see src/dashboard/sign-in.ts); nothing else accepts them.
import express, { type Request, type Response } from 'express';
import { AppError, type FieldError } from '../errors';
import { iso, type Clock } from '../clock';
import type { Session } from '../store/sessions-repo';
import type { AccountStores } from './accounts';
import type { SignInThrottle } from './sign-in-throttle';
import type { ScryptCost } from './passwords';
import { checkCsrf, csrfTokenFor } from './csrf';
import { readCookie, setSessionCookie, SESSION_COOKIE } from './cookies';
import { addressOf } from './limits';
import type { Actors } from '../actors';
import type { SecondFactorsRepo } from '../store/second-factors-repo';

/** How long after its end a session still marks its browser as known to sign-in. */
export const KNOWN_BROWSER_GRACE_MS = 7 * 86_400_000;

/** What the session routes need (built once by mountDashboard). */
export interface SessionRouteDeps extends AccountStores {
  clock: Clock;
  /** How long a sign-in lasts (absolute, not sliding). */
  sessionTtlMs: number;
  /** How long the page's API token lives; the page renews it before then. */
  pageTokenTtlMs: number;
  throttle: SignInThrottle;
  /** What new password hashes cost, and an unknown user's sign-in (DashboardSettings.passwordCost). */
  passwordCost: ScryptCost;
  /** A password change acts as the signed-in user (its token.revoked events name them: src/actors.ts). */
  actors: Pick<Actors, 'run'>;
  /** The accounts' second factors (TOTP, recovery codes, passkeys) and the sign-ins waiting for one. */
  factors: SecondFactorsRepo;
}

export interface FoundSession {
  session: Session;
  secret: string;
}

function cookieSecret(req: Request): string | undefined {
  const secret = readCookie(req, SESSION_COOKIE);
  return secret && secret.length <= 100 ? secret : undefined;
}

/** The live session of this browser's cookie, if any. */
export function currentSession(req: Request, deps: Pick<SessionRouteDeps, 'sessions'>): FoundSession | undefined {
  const secret = cookieSecret(req);
  const session = secret ? deps.sessions.find(secret) : undefined;
  return session && secret ? { session, secret } : undefined;
}

/** The session of this browser's cookie, live or ended less than KNOWN_BROWSER_GRACE_MS ago. */
export function recentSession(req: Request, deps: Pick<SessionRouteDeps, 'sessions'>): Session | undefined {
  const secret = cookieSecret(req);
  return secret ? deps.sessions.findRecent(secret, KNOWN_BROWSER_GRACE_MS) : undefined;
}

/** A live session and a passing CSRF check, or a problem (401 without a session, 403 without the token). */
export function requireCsrfSession(req: Request, deps: Pick<SessionRouteDeps, 'sessions'>): FoundSession {
  const found = currentSession(req, deps);
  if (!found) throw new AppError('unauthorized', 'Sign in first; the session is missing or has expired.');
  checkCsrf(req, found.secret);
  return found;
}

export function signedIn(deps: SessionRouteDeps, session: Session, secret: string) {
  return {
    signed_in: true as const,
    email: deps.users.findById(session.userId)?.email ?? '',
    csrf_token: csrfTokenFor(secret),
    expires_at: iso(session.expiresAt),
  };
}

/**
 * Starts a session for a user who just proved their password from this browser: the cookie (kept past the
 * session's end for the grace period, see above), and this address becomes known for the user.
 */
export function startSession(deps: SessionRouteDeps, req: Request, res: Response, userId: string) {
  const { secret, session } = deps.sessions.create(userId, deps.sessionTtlMs);
  setSessionCookie(req, res, secret, deps.sessionTtlMs + KNOWN_BROWSER_GRACE_MS);
  deps.knownAddresses.remember(userId, addressOf(req));
  return signedIn(deps, session, secret);
}

/** JSON bodies of the session routes: small, never decompressed (see src/app.ts jsonBody). */
export const jsonBody = express.json({ limit: '4kb', inflate: false });
/** A passkey's registration or assertion (WebAuthn L3 §5.1: base64url CBOR and client data; RSA keys are large). */
export const webauthnBody = express.json({ limit: '32kb', inflate: false });

type Field =
  | { type: 'string'; min: number; max: number; optional?: boolean }
  | { type: 'boolean'; optional: true }
  | { type: 'object'; optional?: boolean };

/**
 * The body as `fields` describe it, or a problem that changes nothing: 415 when it is not JSON, 400 with every
 * field found wrong (JSON Pointers, docs/conventions.md "Errors"), unknown properties included.
 */
export function readBody(req: Request, fields: Record<string, Field>, detail: string): Record<string, unknown> {
  if (!req.is('application/json')) throw new AppError('unsupported_media_type', 'Send the body as application/json.');
  const body = (req.body ?? {}) as Record<string, unknown>;
  if (typeof body !== 'object' || Array.isArray(body)) throw new AppError('validation_failed', detail, [{ pointer: '/body', detail: 'must be an object' }]);
  const errors: FieldError[] = [];
  for (const [name, field] of Object.entries(fields)) {
    const v = body[name];
    if (v === undefined && field.optional) continue;
    if (field.type === 'boolean' && typeof v !== 'boolean') errors.push({ pointer: `/body/${name}`, detail: 'must be true or false' });
    if (field.type === 'object' && (typeof v !== 'object' || v === null || Array.isArray(v))) errors.push({ pointer: `/body/${name}`, detail: 'must be an object' });
    if (field.type === 'string' && (typeof v !== 'string' || v.length < field.min || v.length > field.max)) {
      errors.push({ pointer: `/body/${name}`, detail: `must be a string of ${field.min} to ${field.max} characters` });
    }
  }
  for (const name of Object.keys(body)) {
    const pointer = `/body/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`.slice(0, 300);
    if (!Object.hasOwn(fields, name)) errors.push({ pointer, detail: 'is not a known property' });
  }
  if (errors.length) throw new AppError('validation_failed', detail, errors.slice(0, 100));
  return body;
}
