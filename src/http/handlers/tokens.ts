import { AppError } from '../../errors';
import { hasScope } from '../../auth/tokens';
import type { TokensRepo } from '../../store/tokens-repo';
import type { IdempotencyRepo } from '../../store/idempotency-repo';
import type { Handlers } from '../types';
import { idempotent } from './idempotent';
import { page, withCursor } from './paging';

/**
 * Tokens tag: listTokens, createToken, getToken, revokeToken. A user only ever sees their own tokens, and a token
 * only those in its reach (src/store/token-tree.ts): another one answers 404 like a missing one.
 */
export function tokenHandlers(deps: { tokens: TokensRepo; tokensPerUser: number; idempotency: IdempotencyRepo }): Handlers {
  const { tokens } = deps;
  return {
    listTokens: ({ principal, query }) => {
      const { limit, startingAfter } = page(query);
      return { status: 200, body: withCursor(tokens.list(principal.userId, limit, startingAfter, principal)) };
    },

    createToken: (call) => {
      const { principal, body } = call;
      // A token may not mint a token stronger than itself (no privilege escalation through tokens:manage).
      const beyond = body.scopes.filter((s) => !hasScope(principal.scopes, s));
      if (beyond.length > 0) {
        throw new AppError('insufficient_scope', `This token cannot grant ${beyond.join(', ')}: it does not hold it.`);
      }
      // Nor one that outlives it, nor one past the user's cap (docs/conventions.md "Authentication").
      // A replay answers the same secret, so the stored answer is sealed with the caller's own token
      // (docs/conventions.md "Idempotency"): the database never holds a readable secret.
      const sealWith = String(call.headers.authorization);
      return idempotent(deps.idempotency, call, { operation: 'createToken', path: '', body, sealWith }, () => {
        const created = tokens.create(
          principal.userId,
          // `null` means what leaving it out means (openapi/v1.yaml CreateTokenRequest.expires_in_seconds): generated
          // clients send one for the other (issue 42 §4).
          { name: body.name, scopes: body.scopes, expiresInSeconds: body.expires_in_seconds ?? undefined },
          { perUser: deps.tokensPerUser, parent: principal },
        );
        return { status: 201 as const, body: created, headers: { Location: `/v1/tokens/${created.id}` } };
      });
    },

    getToken: ({ principal, path }) => {
      const token = tokens.get(principal.userId, path.token_id, principal);
      if (!token) throw new AppError('token_not_found', `There is no token ${path.token_id}.`);
      return { status: 200, body: token };
    },

    revokeToken: ({ principal, path }) => {
      if (!tokens.revoke(principal.userId, path.token_id, principal)) {
        throw new AppError('token_not_found', `There is no token ${path.token_id}.`);
      }
      return { status: 204, body: undefined };
    },
  };
}
