import crypto from 'node:crypto';
import { promisify } from 'node:util';

/**
 * Password hashes: scrypt (RFC 7914) with OWASP's minimum parameters (N=2^17, r=8, p=1; Password Storage Cheat
 * Sheet), stored as `scrypt$N$r$p$salt$hash` (base64url) so parameters can be raised later without breaking
 * old hashes. 128·N·r = 128 MiB of memory per hash, so maxmem is raised above Node's 32 MiB default.
 */
export interface ScryptCost {
  N: number;
  r: number;
  p: number;
}

/** What new hashes cost: OWASP's minimum, the one setting a service may use outside tests. */
export const PASSWORD_COST: ScryptCost = { N: 2 ** 17, r: 8, p: 1 };

/**
 * The cost a service hashes new passwords with (PASSWORD_SCRYPT_N, src/config.ts): OWASP's N unless `testMode`,
 * where a lower power of two from 2^10 is taken too, so tests that sign in and change passwords do not spend
 * 128 MiB and a good part of a second on each hash. Anything else is refused (a ConfigError-worthy message).
 */
export function scryptCost(N: number, testMode: boolean): ScryptCost | string {
  const power = Number.isInteger(N) && N > 1 && (N & (N - 1)) === 0;
  if (!power || N < 2 ** 10 || N > 2 ** 20) return 'must be a power of two from 1024 to 1048576';
  if (N < PASSWORD_COST.N && !testMode) return `below ${PASSWORD_COST.N} (OWASP's minimum) is taken only in tests (NODE_ENV=test)`;
  return { ...PASSWORD_COST, N };
}

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

function encode(cost: ScryptCost, salt: Buffer, key: Buffer): string {
  return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/**
 * Synchronous, for the CLI (`gsh user create`), which does nothing else meanwhile. `cost` is the service's setting
 * (scryptCost); a hash records its parameters, so verifyPassword follows them.
 */
export function hashPasswordSync(password: string, cost: ScryptCost = PASSWORD_COST): string {
  const salt = crypto.randomBytes(16);
  return encode(cost, salt, crypto.scryptSync(password, salt, KEY_BYTES, options(cost.N, cost.r, cost.p)));
}

/** For the service (a password change in the dashboard): scrypt runs on the libuv pool, not the event loop. */
export async function hashPassword(password: string, cost: ScryptCost = PASSWORD_COST): Promise<string> {
  const salt = crypto.randomBytes(16);
  return encode(cost, salt, await scryptAsync(password, salt, KEY_BYTES, options(cost.N, cost.r, cost.p)));
}

/**
 * Whether `password` matches `stored`. Asynchronous (scrypt runs on the libuv pool, not the event loop) and
 * compared with timingSafeEqual. A null or malformed `stored` still costs one full hash at `cost`, the cost new
 * hashes get, so a sign-in with an unknown email takes as long as one with a known email (no account enumeration
 * by timing).
 */
export async function verifyPassword(password: string, stored: string | null, cost: ScryptCost = PASSWORD_COST): Promise<boolean> {
  const parts = stored?.split('$') ?? [];
  const valid = parts.length === 6 && parts[0] === 'scrypt';
  const [N, r, p] = valid ? parts.slice(1, 4).map(Number) : [cost.N, cost.r, cost.p];
  const salt = valid ? Buffer.from(parts[4], 'base64url') : Buffer.alloc(16);
  const expected = valid ? Buffer.from(parts[5], 'base64url') : Buffer.alloc(KEY_BYTES);
  const key = await scryptAsync(password, salt, expected.length || KEY_BYTES, options(N, r, p));
  return valid && key.length === expected.length && crypto.timingSafeEqual(key, expected);
}
