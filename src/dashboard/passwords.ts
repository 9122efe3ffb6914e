import crypto from 'node:crypto';
import { promisify } from 'node:util';

/**
 * Password hashes: scrypt (RFC 7914) with OWASP's minimum parameters (N=2^17, r=8, p=1; Password Storage Cheat
 * Sheet), stored as `scrypt$N$r$p$salt$hash` (base64url) so parameters can be raised later without breaking
 * old hashes. 128·N·r = 128 MiB of memory per hash, so maxmem is raised above Node's 32 MiB default.
 */
const PARAMS = { N: 2 ** 17, r: 8, p: 1 };
const KEY_BYTES = 32;
const scryptAsync = promisify(crypto.scrypt) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: crypto.ScryptOptions,
) => Promise<Buffer>;

function options(N: number, r: number, p: number): crypto.ScryptOptions {
  return { N, r, p, maxmem: 256 * N * r };
}

/** The length a new password must have, for the CLI and the dashboard alike. */
export const PASSWORD_LENGTH = { min: 8, max: 1000 } as const;

function encode(cost: typeof PARAMS, salt: Buffer, key: Buffer): string {
  return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/**
 * Synchronous, for the CLI (`gsh user create`), which does nothing else meanwhile. `cost` is for tests that check
 * many passwords of their own users; a hash records its parameters, so verifyPassword follows them.
 */
export function hashPasswordSync(password: string, cost = PARAMS): string {
  const salt = crypto.randomBytes(16);
  return encode(cost, salt, crypto.scryptSync(password, salt, KEY_BYTES, options(cost.N, cost.r, cost.p)));
}

/** For the service (a password change in the dashboard): scrypt runs on the libuv pool, not the event loop. */
export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.randomBytes(16);
  return encode(PARAMS, salt, await scryptAsync(password, salt, KEY_BYTES, options(PARAMS.N, PARAMS.r, PARAMS.p)));
}

/**
 * Whether `password` matches `stored`. Asynchronous (scrypt runs on the libuv pool, not the event loop) and
 * compared with timingSafeEqual. A null or malformed `stored` still costs one full hash, so a sign-in with an
 * unknown email takes as long as one with a known email (no account enumeration by timing).
 */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const parts = stored?.split('$') ?? [];
  const valid = parts.length === 6 && parts[0] === 'scrypt';
  const [N, r, p] = valid ? parts.slice(1, 4).map(Number) : [PARAMS.N, PARAMS.r, PARAMS.p];
  const salt = valid ? Buffer.from(parts[4], 'base64url') : Buffer.alloc(16);
  const expected = valid ? Buffer.from(parts[5], 'base64url') : Buffer.alloc(KEY_BYTES);
  const key = await scryptAsync(password, salt, expected.length || KEY_BYTES, options(N, r, p));
  return valid && key.length === expected.length && crypto.timingSafeEqual(key, expected);
}
