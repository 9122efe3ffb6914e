import crypto from 'node:crypto';

// TOTP (RFC 6238) over HOTP (RFC 4226), as authenticator apps compute it: HMAC-SHA-1, 6 digits, 30-second steps
// from the Unix epoch. Written here (20 lines with node:crypto) rather than taken from a library, so nothing
// outside the repository handles the secret. Secrets travel in base32 (RFC 4648 §6), as the otpauth:// URI of
// Google Authenticator's Key Uri Format carries them.

export const STEP_SECONDS = 30;
export const DIGITS = 6;
/** Steps either side of now that a code may be from (RFC 6238 §5.2: allow for clock drift and slow typing). */
export const WINDOW = 1;

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

export function base32Encode(bytes: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

export function base32Decode(text: string): Buffer {
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const ch of text.replace(/=+$/, '').toUpperCase()) {
    const i = BASE32.indexOf(ch);
    if (i < 0) throw new Error('not base32');
    value = (value << 5) | i;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** A new secret: 160 bits, the length RFC 4226 §4 recommends (R6), in base32. */
export function newTotpSecret(): string {
  return base32Encode(crypto.randomBytes(20));
}

/** HOTP(K, C) (RFC 4226 §5.3): HMAC-SHA-1 of the 8-byte counter, dynamic truncation, the low 6 digits. */
export function hotp(key: Buffer, counter: number): string {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const mac = crypto.createHmac('sha1', key).update(message).digest();
  const offset = mac[mac.length - 1] & 0x0f;
  const binary = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** DIGITS).padStart(DIGITS, '0');
}

/** The time step T of RFC 6238 §4.2 at `nowMs`. */
export function stepAt(nowMs: number): number {
  return Math.floor(nowMs / 1000 / STEP_SECONDS);
}

export function totpAt(secret: string, nowMs: number): string {
  return hotp(base32Decode(secret), stepAt(nowMs));
}

/**
 * The step of `code` if it is the right code for a step within WINDOW of now and later than `afterStep` (a step
 * taken before is never taken again, RFC 6238 §5.2); undefined otherwise. Compared in constant time.
 */
export function matchTotp(secret: string, code: string, nowMs: number, afterStep = 0): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const key = base32Decode(secret);
  const now = stepAt(nowMs);
  let found: number | undefined;
  for (let step = now - WINDOW; step <= now + WINDOW; step++) {
    const right = crypto.timingSafeEqual(Buffer.from(hotp(key, step)), Buffer.from(code));
    if (right && step > afterStep && found === undefined) found = step;
  }
  return found;
}

/** The otpauth:// URI an authenticator app takes (Key Uri Format: label `issuer:account`, then the parameters). */
export function otpauthUri(secret: string, account: string, issuer: string): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`;
  const query = new URLSearchParams({ secret, issuer, algorithm: 'SHA1', digits: String(DIGITS), period: String(STEP_SECONDS) });
  return `otpauth://totp/${label}?${query.toString().replace(/\+/g, '%20')}`;
}
