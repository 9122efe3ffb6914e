import type { Request, Response } from 'express';

/** The session cookie. Path=/dashboard: only the session endpoints ever see it, never /v1 or the static files. */
export const SESSION_COOKIE = 'gsh_session';
const COOKIE_PATH = '/dashboard';

/** One cookie's value from the Cookie header (RFC 6265 §5.4), or undefined. */
export function readCookie(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** httpOnly (no script reads it), SameSite=Strict, Secure when the request came over https (RFC 6265bis). */
export function setSessionCookie(req: Request, res: Response, secret: string, maxAgeMs: number): void {
  const attributes = [`Path=${COOKIE_PATH}`, 'HttpOnly', 'SameSite=Strict', `Max-Age=${Math.floor(maxAgeMs / 1000)}`];
  if (req.secure) attributes.push('Secure');
  res.append('Set-Cookie', `${SESSION_COOKIE}=${secret}; ${attributes.join('; ')}`);
}

export function clearSessionCookie(req: Request, res: Response): void {
  const secure = req.secure ? '; Secure' : '';
  res.append('Set-Cookie', `${SESSION_COOKIE}=; Path=${COOKIE_PATH}; HttpOnly; SameSite=Strict; Max-Age=0${secure}`);
}

/**
 * A sign-in whose password was right and that waits for its second factor (src/dashboard/sign-in-factor.ts): its
 * own cookie, like the session's but living minutes, so the page never holds the secret.
 */
export const PENDING_COOKIE = 'gsh_sign_in';

export function setPendingCookie(req: Request, res: Response, secret: string, maxAgeMs: number): void {
  const attributes = [`Path=${COOKIE_PATH}`, 'HttpOnly', 'SameSite=Strict', `Max-Age=${Math.floor(maxAgeMs / 1000)}`];
  if (req.secure) attributes.push('Secure');
  res.append('Set-Cookie', `${PENDING_COOKIE}=${secret}; ${attributes.join('; ')}`);
}

export function clearPendingCookie(req: Request, res: Response): void {
  const secure = req.secure ? '; Secure' : '';
  res.append('Set-Cookie', `${PENDING_COOKIE}=; Path=${COOKIE_PATH}; HttpOnly; SameSite=Strict; Max-Age=0${secure}`);
}
