import crypto from 'node:crypto';
import type { Request } from 'express';
import { verifyAuthenticationResponse, type AuthenticationResponseJSON } from '@simplewebauthn/server';
import { matchTotp } from './totp';
import type { SessionRouteDeps } from './sessions';

// What proves a second factor (issue 39 §5; docs/architecture.md "Dashboard"): a TOTP code (RFC 6238), a recovery
// code, or a passkey's assertion (WebAuthn L3 §7.2, verified by @simplewebauthn/server). Used by sign-in's second
// step (src/dashboard/sign-in-factor.ts); the settings routes enrol them (src/dashboard/second-factor-routes.ts).

/** The name authenticator apps and passkey prompts show for this service. */
export const ISSUER = 'Game Server Hosting';
/** Recovery codes made at once; each works once. */
export const RECOVERY_CODES = 10;
/** How long a WebAuthn ceremony may take (its `timeout`, and how long its challenge is kept). */
export const CEREMONY_MS = 5 * 60_000;

/**
 * The relying party as this request reaches the service: the RP ID is the host name (WebAuthn L3 §5.1.2: a
 * registrable domain, so an IP address is refused by browsers; `localhost` works), the origin as the CSRF check
 * reads it (req.host honours X-Forwarded-Host only with TRUST_PROXY). A passkey works only at the host it was made for.
 */
export function relyingParty(req: Request): { rpID: string; origin: string } {
  return { rpID: req.hostname, origin: `${req.protocol}://${req.host}` };
}

const CODE_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789'; // no 0/o, 1/l/i: read off paper and typed again

/** RECOVERY_CODES codes of 10 characters (about 49 bits each) from crypto.randomInt, shown as `xxxxx-xxxxx`. */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODES }, () => {
    const chars = Array.from({ length: 10 }, () => CODE_ALPHABET[crypto.randomInt(CODE_ALPHABET.length)]).join('');
    return `${chars.slice(0, 5)}-${chars.slice(5)}`;
  });
}

/** A recovery code as typed (any case, spaces or no hyphen) in the form it was made in. */
export function normalRecoveryCode(text: string): string {
  const chars = text.toLowerCase().replace(/[\s-]/g, '');
  return chars.length === 10 ? `${chars.slice(0, 5)}-${chars.slice(5)}` : chars;
}

/** What a sign-in's second step may give: exactly one of these. */
export interface Proof {
  code?: string;
  recovery_code?: string;
  passkey?: Record<string, unknown>;
}

/**
 * Whether `proof` is a right second factor of the user, taking what it uses: the TOTP code's time step (a code
 * never counts twice, RFC 6238 §5.2), the recovery code, the passkey ceremony's challenge (kept under
 * `challengeKey`). Never throws for a malformed passkey answer: that is a wrong one.
 */
export async function proves(deps: Pick<SessionRouteDeps, 'factors' | 'clock'>, req: Request, userId: string, challengeKey: string, proof: Proof): Promise<boolean> {
  const { factors } = deps;
  if (typeof proof.code === 'string') {
    const totp = factors.totp(userId);
    if (!totp?.confirmed) return false;
    const step = matchTotp(totp.secret, proof.code.replace(/\s/g, ''), deps.clock.now(), totp.lastStep);
    return step !== undefined && factors.takeStep(userId, step);
  }
  if (typeof proof.recovery_code === 'string') {
    // Only while a factor is on: codes left after the last factor was removed prove nothing.
    return factors.enforced(userId) && factors.useRecoveryCode(userId, normalRecoveryCode(proof.recovery_code));
  }
  if (proof.passkey) {
    const challenge = factors.takeChallenge(challengeKey, userId);
    const credentialId = proof.passkey.id;
    const passkey = challenge && typeof credentialId === 'string' ? factors.passkeyByCredential(userId, credentialId) : undefined;
    if (!challenge || !passkey) return false;
    const { rpID, origin } = relyingParty(req);
    try {
      const { verified, authenticationInfo } = await verifyAuthenticationResponse({
        response: proof.passkey as unknown as AuthenticationResponseJSON,
        expectedChallenge: challenge,
        expectedOrigin: origin,
        expectedRPID: rpID,
        credential: { id: passkey.credentialId, publicKey: passkey.publicKey as Uint8Array<ArrayBuffer>, counter: passkey.counter, transports: passkey.transports },
        requireUserVerification: false,
      });
      if (verified) factors.usePasskey(passkey.id, authenticationInfo.newCounter);
      return verified;
    } catch {
      return false; // a malformed or forged answer, or a counter gone backwards (a cloned authenticator)
    }
  }
  return false;
}
