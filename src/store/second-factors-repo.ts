import crypto from 'node:crypto';
import { required, type Db } from './db';
import type { Clock } from '../clock';
import { iso } from '../clock';

// A dashboard account's second factors (migration 037; docs/architecture.md "Dashboard"): its TOTP secret, its
// recovery codes (hashed), its passkeys, the sign-ins waiting for one of them and the WebAuthn challenges in flight.

export interface TotpSecret {
  secret: string;
  confirmed: boolean;
  lastStep: number;
}

/** A passkey as WebAuthn verification needs it (@simplewebauthn/server WebAuthnCredential) and the page shows it. */
export interface Passkey {
  id: string;
  credentialId: string;
  publicKey: Uint8Array;
  counter: number;
  transports: string[];
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
}

interface PasskeyRow {
  id: string;
  credential_id: string;
  public_key: Buffer;
  counter: number;
  transports: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
}

/** Recovery codes and cookie secrets are 50+ random bits or more: a plain SHA-256 is enough (as for API tokens). */
export function sha256(text: string): string {
  return crypto.createHash('sha256').update(text).digest('hex');
}

function toPasskey(r: PasskeyRow): Passkey {
  return {
    id: r.id, credentialId: r.credential_id, publicKey: new Uint8Array(r.public_key), counter: r.counter,
    transports: JSON.parse(r.transports) as string[], name: r.name, createdAt: r.created_at, lastUsedAt: r.last_used_at,
  };
}

type Statements = ReturnType<typeof statements>;

/** The repository's statements, prepared once (docs/conventions.md "Code layout"). */
function statements(db: Db) {
  return {
    totp: db.prepare<unknown[], { secret: string; confirmed_at: string | null; last_step: number }>('SELECT secret, confirmed_at, last_step FROM totp_secrets WHERE user_id = ?'),
    putTotp: db.prepare(`INSERT INTO totp_secrets (user_id, secret, created_at) VALUES (?, ?, ?)
      ON CONFLICT (user_id) DO UPDATE SET secret = excluded.secret, created_at = excluded.created_at, confirmed_at = NULL, last_step = 0`),
    confirmTotp: db.prepare('UPDATE totp_secrets SET confirmed_at = ?, last_step = ? WHERE user_id = ? AND confirmed_at IS NULL'),
    // Only a later step than the last one taken: the same code, or an older one, never counts twice (RFC 6238 §5.2).
    takeStep: db.prepare('UPDATE totp_secrets SET last_step = ? WHERE user_id = ? AND last_step < ? AND confirmed_at IS NOT NULL'),
    addCode: db.prepare('INSERT INTO recovery_codes (user_id, hash) VALUES (?, ?)'),
    clearCodes: db.prepare('DELETE FROM recovery_codes WHERE user_id = ?'),
    useCode: db.prepare('UPDATE recovery_codes SET used_at = ? WHERE user_id = ? AND hash = ? AND used_at IS NULL'),
    codesLeft: db.prepare<unknown[], number>('SELECT COUNT(*) FROM recovery_codes WHERE user_id = ? AND used_at IS NULL').pluck(),
    passkeys: db.prepare<unknown[], PasskeyRow>('SELECT * FROM passkeys WHERE user_id = ? ORDER BY created_at, id'),
    passkeyByCredential: db.prepare<unknown[], PasskeyRow>('SELECT * FROM passkeys WHERE user_id = ? AND credential_id = ?'),
    addPasskey: db.prepare(`INSERT INTO passkeys (id, user_id, credential_id, public_key, counter, transports, name, created_at)
      VALUES (@id, @user_id, @credential_id, @public_key, @counter, @transports, @name, @created_at)`),
    usePasskey: db.prepare('UPDATE passkeys SET counter = ?, last_used_at = ? WHERE id = ?'),
    removePasskey: db.prepare('DELETE FROM passkeys WHERE user_id = ? AND id = ?'),
    putChallenge: db.prepare(`INSERT INTO webauthn_challenges (key, user_id, challenge, expires_at) VALUES (?, ?, ?, ?)
      ON CONFLICT (key) DO UPDATE SET user_id = excluded.user_id, challenge = excluded.challenge, expires_at = excluded.expires_at`),
    takeChallenge: db.prepare<unknown[], { challenge: string; expires_at: string }>('DELETE FROM webauthn_challenges WHERE key = ? AND user_id = ? RETURNING challenge, expires_at'),
    addPending: db.prepare('INSERT INTO pending_sign_ins (id, hash, user_id, expires_at) VALUES (?, ?, ?, ?)'),
    pending: db.prepare<unknown[], { id: string; user_id: string; expires_at: string }>('SELECT id, user_id, expires_at FROM pending_sign_ins WHERE hash = ?'),
    endPending: db.prepare('DELETE FROM pending_sign_ins WHERE id = ?'),
    failPending: db.prepare<unknown[], number>('UPDATE pending_sign_ins SET failures = failures + 1 WHERE id = ? RETURNING failures').pluck(),
    sweep: db.prepare('DELETE FROM pending_sign_ins WHERE expires_at <= ?'),
    sweepChallenges: db.prepare('DELETE FROM webauthn_challenges WHERE expires_at <= ?'),
    removeAll: [
      db.prepare('DELETE FROM totp_secrets WHERE user_id = ?'),
      db.prepare('DELETE FROM recovery_codes WHERE user_id = ?'),
      db.prepare('DELETE FROM passkeys WHERE user_id = ?'),
      db.prepare('DELETE FROM webauthn_challenges WHERE user_id = ?'),
      db.prepare('DELETE FROM pending_sign_ins WHERE user_id = ?'),
    ],
  };
}

function totpOf(st: Statements, userId: string): TotpSecret | undefined {
  const row = st.totp.get(userId);
  return row && { secret: row.secret, confirmed: row.confirmed_at !== null, lastStep: row.last_step };
}

const passkeysOf = (st: Statements, userId: string): Passkey[] => st.passkeys.all(userId).map(toPasskey);

/** The account's TOTP secret: enrolled, confirmed, its steps taken at sign-in, turned off. */
function totpEdits(st: Statements, clock: Clock) {
  return {
    totp: (userId: string): TotpSecret | undefined => totpOf(st, userId),

    /** A new, unconfirmed TOTP secret in place of an earlier unconfirmed one (the route refuses while one is confirmed). */
    startTotp(userId: string, secret: string): void {
      st.putTotp.run(userId, secret, iso(clock.now()));
    },

    /** Turns TOTP off (the secret is forgotten). */
    removeTotp: (userId: string) => void st.removeAll[0].run(userId),

    /** Confirms the enrolling secret with the step of its first right code; false when none is enrolling. */
    confirmTotp(userId: string, step: number): boolean {
      return st.confirmTotp.run(iso(clock.now()), step, userId).changes === 1;
    },

    /** Takes a code's time step for sign-in; false when it (or a later one) was taken already. */
    takeStep(userId: string, step: number): boolean {
      return st.takeStep.run(step, userId, step).changes === 1;
    },
  };
}

/** The account's passkeys, and the challenges of the WebAuthn ceremonies in flight. */
function passkeyEdits(st: Statements, clock: Clock) {
  return {
    passkeys: (userId: string): Passkey[] => passkeysOf(st, userId),

    passkeyByCredential(userId: string, credentialId: string): Passkey | undefined {
      const row = st.passkeyByCredential.get(userId, credentialId);
      return row && toPasskey(row);
    },

    addPasskey(userId: string, p: { credentialId: string; publicKey: Uint8Array; counter: number; transports: string[]; name: string }): Passkey {
      const id = `psk_${crypto.randomBytes(12).toString('hex')}`;
      st.addPasskey.run({
        id, user_id: userId, credential_id: p.credentialId, public_key: Buffer.from(p.publicKey), counter: p.counter,
        transports: JSON.stringify(p.transports), name: p.name, created_at: iso(clock.now()),
      });
      return required(passkeysOf(st, userId).find((k) => k.id === id));
    },

    usePasskey(id: string, counter: number): void {
      st.usePasskey.run(counter, iso(clock.now()), id);
    },

    removePasskey: (userId: string, id: string): boolean => st.removePasskey.run(userId, id).changes === 1,

    /** Remembers the challenge of a WebAuthn ceremony under `key` (one at a time per key), for `ttlMs`. */
    putChallenge(key: string, userId: string, challenge: string, ttlMs: number): void {
      st.sweepChallenges.run(iso(clock.now()));
      st.putChallenge.run(key, userId, challenge, iso(clock.now() + ttlMs));
    },

    /** The challenge under `key`, taken (a challenge is used once, WebAuthn L3 §13.4.3), if still live. */
    takeChallenge(key: string, userId: string): string | undefined {
      const row = st.takeChallenge.get(key, userId);
      return row && Date.parse(row.expires_at) > clock.now() ? row.challenge : undefined;
    },
  };
}

/** The account's recovery codes, kept as hashes, each used once. */
function recoveryCodes(db: Db, st: Statements, clock: Clock) {
  return {
    recoveryCodesLeft: (userId: string): number => required(st.codesLeft.get(userId)),

    /** Replaces the account's recovery codes with these (their hashes are kept, never the codes). */
    setRecoveryCodes(userId: string, codes: string[]): void {
      db.transaction(() => {
        st.clearCodes.run(userId);
        for (const code of codes) st.addCode.run(userId, sha256(code));
      })();
    },

    /** Uses a recovery code once; false when it is not one of the account's unused codes. */
    useRecoveryCode(userId: string, code: string): boolean {
      return st.useCode.run(iso(clock.now()), userId, sha256(code)).changes === 1;
    },
  };
}

/** Sign-ins whose password was right, waiting for their second factor. */
function pendingSignIns(st: Statements, clock: Clock) {
  return {
    /** A sign-in whose password was right, waiting for its second factor; returns the cookie's secret. */
    startPending(userId: string, ttlMs: number): { id: string; secret: string } {
      st.sweep.run(iso(clock.now()));
      const id = `psi_${crypto.randomBytes(12).toString('hex')}`;
      const secret = crypto.randomBytes(32).toString('base64url');
      st.addPending.run(id, sha256(secret), userId, iso(clock.now() + ttlMs));
      return { id, secret };
    },

    findPending(secret: string): { id: string; userId: string } | undefined {
      const row = st.pending.get(sha256(secret));
      return row && Date.parse(row.expires_at) > clock.now() ? { id: row.id, userId: row.user_id } : undefined;
    },

    endPending: (id: string) => void st.endPending.run(id),

    /** Counts a wrong second factor given to the pending sign-in; returns how many it has had (0: it is gone). */
    failPending: (id: string): number => st.failPending.get(id) ?? 0,
  };
}

export function createSecondFactorsRepo(db: Db, clock: Clock) {
  const st = statements(db);
  return {
    ...totpEdits(st, clock),
    ...passkeyEdits(st, clock),
    ...recoveryCodes(db, st, clock),
    ...pendingSignIns(st, clock),

    /** Whether sign-in asks this account for a second factor: a confirmed TOTP secret or a passkey. */
    enforced(userId: string): boolean {
      return totpOf(st, userId)?.confirmed === true || passkeysOf(st, userId).length > 0;
    },

    /** Removes every second factor of the account (the operator's `gsh user reset-2fa`); says what was there. */
    removeAll(userId: string): { totp: boolean; passkeys: number; recoveryCodes: number } {
      return db.transaction(() => {
        const had = { totp: totpOf(st, userId)?.confirmed === true, passkeys: passkeysOf(st, userId).length, recoveryCodes: required(st.codesLeft.get(userId)) };
        for (const s of st.removeAll) s.run(userId);
        return had;
      }).immediate();
    },
  };
}

export type SecondFactorsRepo = ReturnType<typeof createSecondFactorsRepo>;
