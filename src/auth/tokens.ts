import crypto from 'node:crypto';

export const scopes = ['servers:read', 'servers:write', 'tokens:manage', 'files'] as const;
export type Scope = (typeof scopes)[number];

/** `gsh_` + 32 random bytes, base64url (43 characters): 256 bits, a readable prefix for secret scanners. */
export function newTokenSecret(): string {
  return `gsh_${crypto.randomBytes(32).toString('base64url')}`;
}

/**
 * Only this hash is stored. SHA-256 suffices: the secret has 256 bits of entropy, so no stretching is needed.
 * `crypto.hash` is the one-shot digest (Node ≥ 20.12): every API request hashes its token, and a Hash object per
 * call cost more than the digest itself (BENCHMARKS.md §1).
 */
export function hashToken(secret: string): string {
  return crypto.hash('sha256', secret, 'hex');
}

/** Whether `held` satisfies `needed`; `servers:write` implies `servers:read` (see the spec's Authentication). */
export function hasScope(held: readonly Scope[], needed: Scope): boolean {
  return held.includes(needed) || (needed === 'servers:read' && held.includes('servers:write'));
}
