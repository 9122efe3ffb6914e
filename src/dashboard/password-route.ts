import type { Request, RequestHandler, Response } from 'express';
import { AppError } from '../errors';
import { userActor } from '../actors';
import { hashPassword, verifyPassword, PASSWORD_LENGTH } from './passwords';
import { setPassword } from './accounts';
import { addressOf, rateLimited } from './limits';
import { jsonBody, readBody, requireCsrfSession, startSession, type SessionRouteDeps } from './sessions';

/**
 * `POST /dashboard/password` {current_password, new_password, revoke_tokens?} (cookie + CSRF + Origin).
 * The current password is checked like a sign-in from this browser (the same throttle, so a stolen cookie is no
 * password oracle). Then every session of the user ends, in every browser, and with `revoke_tokens` every API
 * token too (src/dashboard/accounts.ts); this browser continues in a new session, since it just proved the password.
 */
const TOO_MANY = 'Too many wrong passwords.';

export function passwordRoute(deps: SessionRouteDeps): RequestHandler[] {
  return [jsonBody, (req, res) => changePassword(deps, req, res)];
}

async function changePassword(deps: SessionRouteDeps, req: Request, res: Response): Promise<void> {
  const { session } = requireCsrfSession(req, deps);
  const body = readBody(
    req,
    {
      current_password: { type: 'string', min: 1, max: PASSWORD_LENGTH.max },
      new_password: { type: 'string', ...PASSWORD_LENGTH },
      revoke_tokens: { type: 'boolean', optional: true },
    },
    'Give the current password and a new one of 8 to 1000 characters.',
  );
  const user = deps.users.findById(session.userId);
  if (!user) throw new AppError('unauthorized', 'Sign in first; the session is missing or has expired.');
  const attempt = { email: user.email, address: addressOf(req), sessionId: session.id };
  const { check, waitMs } = deps.throttle.begin(attempt, 'browser');
  if (!check) throw rateLimited(TOO_MANY, waitMs);
  if (!(await verifyPassword(body.current_password as string, user.password_hash))) {
    if (waitMs > 0) throw rateLimited(TOO_MANY, deps.throttle.waitMs(attempt));
    throw new AppError('validation_failed', 'The current password is not right; nothing was changed.', [
      { pointer: '/body/current_password', detail: 'is not the current password' },
    ]);
  }
  deps.throttle.succeeded(attempt, 'browser');

  const hash = await hashPassword(body.new_password as string, deps.passwordCost);
  const outcome = deps.actors.run(userActor(user.id, null), () => setPassword(deps, user.id, hash, { revokeTokens: body.revoke_tokens === true }));
  res.json({
    ...startSession(deps, req, res, user.id),
    sessions_ended: outcome.sessionsEnded,
    tokens_revoked: outcome.tokensRevoked,
  });
}
