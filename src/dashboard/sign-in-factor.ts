import type { Request, RequestHandler, Response } from 'express';
import { generateAuthenticationOptions } from '@simplewebauthn/server';
import { AppError } from '../errors';
import { requireSameOrigin } from './csrf';
import { rateLimited } from './limits';
import { clearPendingCookie, PENDING_COOKIE, readCookie } from './cookies';
import { readBody, webauthnBody, type SessionRouteDeps } from './sessions';
import { finishSignIn, placeOf } from './sign-in';
import { CEREMONY_MS, proves, relyingParty, type Proof } from './second-factor';

/**
 * The second step of a sign-in (issue 39 §5; docs/architecture.md "Dashboard"), for an account with a second
 * factor whose password was right (the `gsh_sign_in` cookie of `POST /dashboard/sign-in`):
 *
 *   POST /dashboard/sign-in/passkey-options   WebAuthn request options for the account's passkeys
 *   POST /dashboard/sign-in/second-factor     {code} | {recovery_code} | {passkey} → session cookie
 *
 * Both are Origin-checked like sign-in. A wrong code counts as a failed sign-in of that email from that address in
 * the sign-in throttle (src/dashboard/sign-in-throttle.ts), so guessing codes waits as guessing passwords does.
 */
const TOO_MANY = 'Too many wrong codes from your address.';
const EXPIRED = 'This sign-in has expired; give your email and password again.';
const FIELDS = {
  code: { type: 'string', min: 1, max: 20, optional: true },
  recovery_code: { type: 'string', min: 1, max: 40, optional: true },
  passkey: { type: 'object', optional: true },
} as const;

function pendingOf(req: Request, deps: SessionRouteDeps) {
  const secret = readCookie(req, PENDING_COOKIE);
  const pending = secret && secret.length <= 100 ? deps.factors.findPending(secret) : undefined;
  const user = pending && deps.users.findById(pending.userId);
  if (!pending || !user) throw new AppError('unauthorized', EXPIRED);
  return { pending, user };
}

export function passkeyOptionsRoute(deps: SessionRouteDeps): RequestHandler[] {
  return [requireSameOrigin, async (req, res) => {
    const { pending, user } = pendingOf(req, deps);
    const allowCredentials = deps.factors.passkeys(user.id).map((p) => ({ id: p.credentialId, transports: p.transports }));
    if (!allowCredentials.length) throw new AppError('validation_failed', 'This account has no passkey; give a code instead.');
    const options = await generateAuthenticationOptions({ rpID: relyingParty(req).rpID, allowCredentials, userVerification: 'preferred', timeout: CEREMONY_MS });
    deps.factors.putChallenge(`sign-in:${pending.id}`, user.id, options.challenge, CEREMONY_MS);
    res.json(options);
  }];
}

/** Wrong second factors one pending sign-in takes before it ends (migration 038). */
export const MAX_FACTOR_FAILURES = 10;

export function secondFactorRoute(deps: SessionRouteDeps): RequestHandler[] {
  return [requireSameOrigin, webauthnBody, (req, res) => secondFactor(deps, req, res)];
}

async function secondFactor(deps: SessionRouteDeps, req: Request, res: Response): Promise<void> {
  const { pending, user } = pendingOf(req, deps);
  const proof = readBody(req, FIELDS, 'Give a code from your authenticator app, a recovery code or a passkey.') as Proof;
  const given = [proof.code, proof.recovery_code, proof.passkey].filter((v) => v !== undefined).length;
  if (given !== 1) {
    throw new AppError('validation_failed', 'Give exactly one of a code, a recovery code or a passkey.', [{ pointer: '/body', detail: 'must have exactly one of code, recovery_code, passkey' }]);
  }
  const { attempt, trust } = placeOf(deps, req, user.email, user);
  const { check, waitMs } = deps.throttle.begin(attempt, trust);
  if (!check) throw rateLimited(TOO_MANY, waitMs);
  if (!(await proves(deps, req, user.id, `sign-in:${pending.id}`, proof))) {
    if (deps.factors.failPending(pending.id) >= MAX_FACTOR_FAILURES) {
      // Guesses cost a password each time, whatever the address (the throttle counts per address).
      deps.factors.endPending(pending.id);
      clearPendingCookie(req, res);
      throw new AppError('unauthorized', `That was the ${MAX_FACTOR_FAILURES}th wrong second factor for this sign-in; sign in with your password again.`);
    }
    if (waitMs > 0) throw rateLimited(TOO_MANY, deps.throttle.waitMs(attempt));
    const what = proof.passkey ? 'The passkey was not accepted.' : proof.code ? 'The code is not right, or was used already.' : 'The recovery code is not right, or was used already.';
    throw new AppError('unauthorized', `${what} Try again.`);
  }
  deps.throttle.succeeded(attempt, trust);
  deps.factors.endPending(pending.id);
  clearPendingCookie(req, res);
  finishSignIn(deps, req, res, user.id);
}
