import type { Request, Response } from 'express';
import type { Operation } from 'openapi-backend';
import { AppError } from '../errors';
import { hasScope, type Scope } from '../auth/tokens';
import type { Principal, TokensRepo } from '../store/tokens-repo';

const REALM = 'gsh';

/**
 * Resolves the request's bearer token once, before the rate limiter (which keys by its user) and the security
 * handler (which reuses the answer). `undefined` means no token or a token that is unknown, expired or revoked.
 */
export function resolveCaller(req: Request, res: Response, tokens: TokensRepo): Principal | undefined {
  if ('principal' in res.locals) return res.locals.principal as Principal | undefined;
  const header = req.headers.authorization;
  // RFC 6750 §2.1: credentials = "Bearer" 1*SP b64token; the scheme is case-insensitive (RFC 9110 §11.1).
  const match = header ? /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(header) : null;
  const secret = match && match[1].length <= 200 ? match[1] : undefined;
  const principal = secret === undefined ? undefined : tokens.authenticate(secret);
  res.locals.principal = principal;
  return principal;
}

/** The scopes an operation lists in its `security` requirement (OpenAPI 3.1 §4.8.30). */
function requiredScopes(operation: Operation): Scope[] {
  const requirement = (operation.security ?? []).find((r) => 'bearerAuth' in r);
  return (requirement?.bearerAuth ?? []) as Scope[];
}

/**
 * The `bearerAuth` security scheme of an operation (OpenAPI 3.1 §4.8.30): the principal, or `{ error }` (401, or
 * 403 for a missing scope). The dispatcher (dispatch.ts) runs it before request validation, so an anonymous
 * caller learns nothing about a request's shape.
 */
export function bearerAuth(
  operation: Operation,
  req: Request,
  res: Response,
  tokens: TokensRepo,
): { principal: Principal } | { error: AppError } {
  const principal = resolveCaller(req, res, tokens);
  if (!principal) {
    const detail = req.headers.authorization
      ? 'The token is unknown, expired or revoked.'
      : 'Send a token as "Authorization: Bearer <token>".';
    return { error: unauthorized(detail) };
  }
  const missing = requiredScopes(operation).filter((s) => !hasScope(principal.scopes, s));
  if (missing.length > 0) {
    return {
      error: new AppError('insufficient_scope', `This operation needs the ${missing.join(', ')} scope.`, undefined, {
        'WWW-Authenticate': `Bearer realm="${REALM}", error="insufficient_scope", scope="${missing.join(' ')}"`,
      }),
    };
  }
  return { principal };
}

export function unauthorized(detail: string): AppError {
  // RFC 6750 §3: a request without credentials gets the challenge without an error code; a bad token gets
  // error="invalid_token". We always name invalid_token, which clients treat the same way, except when absent.
  return new AppError('unauthorized', detail, undefined, {
    'WWW-Authenticate': `Bearer realm="${REALM}", error="invalid_token", error_description="${detail.replace(/"/g, "'")}"`,
  });
}
