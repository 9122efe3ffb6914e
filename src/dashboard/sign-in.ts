import type { Request, RequestHandler, Response } from 'express';
import { AppError } from '../errors';
import { verifyPassword } from './passwords';
import { requireSameOrigin } from './csrf';
import { addressOf, rateLimited } from './limits';
import { KNOWN_BROWSER_GRACE_MS, jsonBody, readBody, recentSession, startSession, type SessionRouteDeps } from './sessions';
import type { Attempt, Trust } from './sign-in-throttle';

/**
 * `POST /dashboard/sign-in` {email, password} → session cookie. Origin-checked (login CSRF), and throttled by
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
  const address = addressOf(req);
  const browser = recentSession(req, deps);
  const knownBrowser = user && browser?.userId === user.id ? browser : undefined;
  const trust: Trust = knownBrowser ? 'browser' : user && deps.knownAddresses.has(user.id, address) ? 'address' : 'none';
  const attempt: Attempt = { email, address, sessionId: knownBrowser?.id };

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

  deps.sessions.sweep(KNOWN_BROWSER_GRACE_MS);
  // A sign-in replaces the session this browser had (live or recently ended), rather than leaving it beside the new one.
  if (browser) deps.sessions.end(browser.id);
  res.json(startSession(deps, req, res, user.id));
}
