import express, { type Request, type Router } from 'express';
import { generateRegistrationOptions, verifyRegistrationResponse, type RegistrationResponseJSON } from '@simplewebauthn/server';
import { AppError } from '../errors';
import { currentSession, jsonBody, webauthnBody, readBody, requireCsrfSession, type SessionRouteDeps } from './sessions';
import { matchTotp, newTotpSecret, otpauthUri } from './totp';
import { CEREMONY_MS, ISSUER, newRecoveryCodes, relyingParty } from './second-factor';

/**
 * Settings → Two-factor (issue 39 §5; docs/architecture.md "Dashboard"): the signed-in account's second factors.
 * Every write needs the session cookie and its CSRF token (src/dashboard/csrf.ts).
 *
 *   GET    /dashboard/second-factor          what is on: TOTP, recovery codes left, passkeys
 *   POST   /dashboard/totp                   a new secret to enrol (its otpauth:// URI); not enforced yet
 *   POST   /dashboard/totp/confirm {code}    a first right code turns it on; the first factor also gets recovery codes
 *   DELETE /dashboard/totp                   turns TOTP off
 *   POST   /dashboard/recovery-codes         new recovery codes in place of the old ones
 *   POST   /dashboard/passkeys/options       WebAuthn creation options (L3 §5.4)
 *   POST   /dashboard/passkeys {name, response}  registers the passkey the browser made
 *   DELETE /dashboard/passkeys/{id}          removes one
 *
 * Removing the last factor drops the recovery codes too: they stand in for a factor, not for the password.
 */
const NAME = { name: { type: 'string', min: 1, max: 64 }, response: { type: 'object' } } as const;

type Factors = SessionRouteDeps['factors'];

/** What is on for the account, as every answer here shows it. */
function status(factors: Factors, userId: string) {
  const totp = factors.totp(userId);
  return {
    totp: totp ? (totp.confirmed ? 'on' : 'enrolling') : 'off',
    recovery_codes_left: factors.enforced(userId) ? factors.recoveryCodesLeft(userId) : 0,
    passkeys: factors.passkeys(userId).map((p) => ({ id: p.id, name: p.name, created_at: p.createdAt, last_used_at: p.lastUsedAt })),
  };
}

/** Recovery codes for an account that just got its first factor (none unused yet); shown only in this answer. */
function codesIfFirst(factors: Factors, userId: string): string[] | undefined {
  if (factors.recoveryCodesLeft(userId) > 0) return undefined;
  const codes = newRecoveryCodes();
  factors.setRecoveryCodes(userId, codes);
  return codes;
}

function dropCodesIfNone(factors: Factors, userId: string): void {
  if (!factors.enforced(userId)) factors.setRecoveryCodes(userId, []);
}

/** GET /second-factor and POST /recovery-codes. */
function statusAndCodeRoutes(router: Router, deps: SessionRouteDeps): void {
  const { factors } = deps;
  router.get('/second-factor', (req, res) => {
    const found = currentSession(req, deps);
    if (!found) throw new AppError('unauthorized', 'Sign in first; the session is missing or has expired.');
    res.json(status(factors, found.session.userId));
  });

  router.post('/recovery-codes', (req, res) => {
    const { session } = requireCsrfSession(req, deps);
    if (!factors.enforced(session.userId)) throw new AppError('validation_failed', 'Turn on an authenticator app or add a passkey first.');
    const codes = newRecoveryCodes();
    factors.setRecoveryCodes(session.userId, codes);
    res.json({ ...status(factors, session.userId), recovery_codes: codes });
  });
}

/** POST /totp, POST /totp/confirm and DELETE /totp (RFC 6238). */
function totpRoutes(router: Router, deps: SessionRouteDeps): void {
  const { factors } = deps;
  router.post('/totp', (req, res) => {
    const { session } = requireCsrfSession(req, deps);
    const user = deps.users.findById(session.userId);
    if (!user) throw new AppError('unauthorized', 'Sign in first; the session is missing or has expired.');
    if (factors.totp(user.id)?.confirmed) throw new AppError('validation_failed', 'Codes from an authenticator app are on already; turn them off first to use another app.');
    const secret = newTotpSecret();
    factors.startTotp(user.id, secret);
    res.status(201).json({ secret, uri: otpauthUri(secret, user.email, ISSUER) });
  });

  router.post('/totp/confirm', jsonBody, (req, res) => {
    const { session } = requireCsrfSession(req, deps);
    const body = readBody(req, { code: { type: 'string', min: 1, max: 20 } }, 'Give the code your authenticator app shows.');
    const totp = factors.totp(session.userId);
    if (!totp || totp.confirmed) throw new AppError('validation_failed', 'Start the set-up of an authenticator app first.');
    const step = matchTotp(totp.secret, (body.code as string).replace(/\s/g, ''), deps.clock.now());
    if (step === undefined) {
      throw new AppError('validation_failed', 'The code is not right; check the time on your phone and try the next one.', [{ pointer: '/body/code', detail: 'is not the code the app shows now' }]);
    }
    factors.confirmTotp(session.userId, step);
    res.json({ ...status(factors, session.userId), recovery_codes: codesIfFirst(factors, session.userId) });
  });

  router.delete('/totp', (req, res) => {
    const { session } = requireCsrfSession(req, deps);
    factors.removeTotp(session.userId);
    dropCodesIfNone(factors, session.userId);
    res.json(status(factors, session.userId));
  });
}

/** The browser's registration answer checked against the challenge given (WebAuthn L3 §7.1); validation_failed if not. */
async function verifiedCredential(req: Request, response: unknown, challenge: string) {
  const { rpID, origin } = relyingParty(req);
  let verified;
  try {
    verified = await verifyRegistrationResponse({
      response: response as RegistrationResponseJSON,
      expectedChallenge: challenge,
      expectedOrigin: origin,
      expectedRPID: rpID,
      requireUserVerification: false,
    });
  } catch (e) {
    throw new AppError('validation_failed', `The browser's answer was not accepted: ${(e as Error).message}`, [{ pointer: '/body/response', detail: 'is not a valid registration' }]);
  }
  if (!verified.verified) throw new AppError('validation_failed', 'The browser\'s answer was not accepted.');
  return verified.registrationInfo.credential;
}

/** POST /passkeys/options, POST /passkeys and DELETE /passkeys/{id} (WebAuthn L3 §5.4, §7.1). */
function passkeyRoutes(router: Router, deps: SessionRouteDeps): void {
  const { factors } = deps;
  router.post('/passkeys/options', async (req, res) => {
    const { session } = requireCsrfSession(req, deps);
    const user = deps.users.findById(session.userId);
    if (!user) throw new AppError('unauthorized', 'Sign in first; the session is missing or has expired.');
    const options = await generateRegistrationOptions({
      rpName: ISSUER,
      rpID: relyingParty(req).rpID,
      userName: user.email,
      userID: new TextEncoder().encode(user.id),
      attestationType: 'none',
      // The browser refuses to make a second passkey on an authenticator that holds one already (L3 §5.4.3).
      excludeCredentials: factors.passkeys(user.id).map((p) => ({ id: p.credentialId, transports: p.transports })),
      authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
      timeout: CEREMONY_MS,
    });
    factors.putChallenge(`register:${session.id}`, user.id, options.challenge, CEREMONY_MS);
    res.json(options);
  });

  router.post('/passkeys', webauthnBody, async (req, res) => {
    const { session } = requireCsrfSession(req, deps);
    const body = readBody(req, NAME, 'Give the passkey a name, with the browser\'s answer.');
    const challenge = factors.takeChallenge(`register:${session.id}`, session.userId);
    if (!challenge) throw new AppError('validation_failed', 'The passkey set-up expired; start it again.');
    const credential = await verifiedCredential(req, body.response, challenge);
    if (factors.passkeyByCredential(session.userId, credential.id)) throw new AppError('validation_failed', 'This passkey is registered already.');
    const passkey = factors.addPasskey(session.userId, {
      credentialId: credential.id, publicKey: credential.publicKey, counter: credential.counter,
      transports: credential.transports ?? [], name: body.name as string,
    });
    res.status(201).json({ ...status(factors, session.userId), id: passkey.id, recovery_codes: codesIfFirst(factors, session.userId) });
  });

  router.delete('/passkeys/:id', (req, res) => {
    const { session } = requireCsrfSession(req, deps);
    if (!factors.removePasskey(session.userId, req.params.id)) throw new AppError('not_found', 'You have no such passkey.');
    dropCodesIfNone(factors, session.userId);
    res.json(status(factors, session.userId));
  });
}

export function secondFactorRoutes(deps: SessionRouteDeps): Router {
  const router = express.Router();
  statusAndCodeRoutes(router, deps);
  totpRoutes(router, deps);
  passkeyRoutes(router, deps);
  return router;
}
