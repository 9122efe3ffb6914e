import type { Request, RequestHandler, Response } from 'express';
import { AppError } from '../errors';
import { verifyPassword } from './passwords';
import { requireSameOrigin } from './csrf';
import { addressOf, rateLimited } from './limits';
import { KNOWN_BROWSER_GRACE_MS, jsonBody, readBody, recentSession, startSession, type SessionRouteDeps } from './sessions';
import type { Attempt, Trust } from './sign-in-throttle';
import type { User } from '../store/users-repo';
import { setPendingCookie } from './cookies';

/**
 * `POST /dashboard/sign-in` {email, password} → session cookie, or, for an account with a second factor,
 * `{signed_in: false, second_factor}` and a cookie for the sign-in's second step. Origin-checked (login CSRF), and throttled by
 * progressive delay rather than a lock (src/dashboard/sign-in-throttle.ts; docs/conventions.md "Authentication"):
 * the right password from a browser or address that user signed in from before still works while someone else
 * fails for that email, and one email's failures never hold up the other users behind the same address.
 */
const TOO_MANY = 'Too many failed sign-ins from your address.';
const FIELDS = { email: { type: 'string', min: 1, max: 320 }, password: { type: 'string', min: 1, max: 1000 } } as const;

export function signInRoute(deps: SessionRouteDeps): RequestHandler[] {
  return [requireSameOrigin, jsonBody, (req, res) => signIn(deps, req, res)];
}

async function signIn(deps: SessionRouteDeps, req: Request, res: Response): Promise<void> {
  const body = readBody(req, FIELDS, 'Give an email and a password.');
  const email = body.email as string;
  const user = deps.users.findByEmail(email);
  const { attempt, trust } = placeOf(deps, req, email, user);

  const { check, waitMs } = deps.throttle.begin(attempt, trust);
  // The same answer whether the email exists or not, and whichever count asked for the wait.
  if (!check) throw rateLimited(TOO_MANY, waitMs);
  // verifyPassword hashes even when there is no user, so both failures look and take the same.
  const ok = await verifyPassword(body.password as string, user?.password_hash ?? null, deps.passwordCost);
  if (!user || !ok) {
    // Inside a wait only the right password from a known place gets in; anything else is told to wait.
    if (waitMs > 0) throw rateLimited(TOO_MANY, deps.throttle.waitMs(attempt));
    throw new AppError('unauthorized', 'The email or password is not right.');
  }
  deps.throttle.succeeded(attempt, trust);

  // An account with a second factor gets no session yet: the sign-in waits for it (src/dashboard/sign-in-factor.ts).
  if (deps.factors.enforced(user.id)) {
    const pending = deps.factors.startPending(user.id, PENDING_MS);
    setPendingCookie(req, res, pending.secret, PENDING_MS);
    const passkeys = deps.factors.passkeys(user.id).length > 0;
    res.json({ signed_in: false, second_factor: { totp: deps.factors.totp(user.id)?.confirmed === true, passkey: passkeys } });
    return;
  }
  finishSignIn(deps, req, res, user.id);
}

/** How long a sign-in whose password was right waits for its second factor. */
export const PENDING_MS = 5 * 60_000;

/**
 * Where an attempt for `email` comes from, and how far that place is trusted for its user (sign-in-throttle.ts
 * Trust): this browser's recent session of that user, an address that user signed in from, or neither.
 */
export function placeOf(deps: SessionRouteDeps, req: Request, email: string, user: User | undefined): { attempt: Attempt; trust: Trust } {
  const address = addressOf(req);
  const browser = recentSession(req, deps);
  const knownBrowser = user && browser?.userId === user.id ? browser : undefined;
  const trust: Trust = knownBrowser ? 'browser' : user && deps.knownAddresses.has(user.id, address) ? 'address' : 'none';
  return { attempt: { email, address, sessionId: knownBrowser?.id }, trust };
}

/** The session, once everything asked of the sign-in was given. */
export function finishSignIn(deps: SessionRouteDeps, req: Request, res: Response, userId: string): void {
  deps.sessions.sweep(KNOWN_BROWSER_GRACE_MS);
  // A sign-in replaces the session this browser had (live or recently ended), rather than leaving it beside the new one.
  const browser = recentSession(req, deps);
  if (browser) deps.sessions.end(browser.id);
  res.json(startSession(deps, req, res, userId));
}
