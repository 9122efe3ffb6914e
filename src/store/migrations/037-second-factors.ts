// A dashboard account's second factor (issue 39 §5; docs/architecture.md "Dashboard"): a TOTP secret (RFC 6238),
// enforced once `confirmed_at` is set by a first right code; `last_step` is the time step of the last code taken,
// so no code is taken twice (RFC 6238 §5.2). Recovery codes are stored as SHA-256 hashes, used once. Passkeys
// (WebAuthn L3 §6.1 credential records) keep the public key and signature counter. A sign-in whose password was
// right waits in `pending_sign_ins` (found by the SHA-256 of its cookie's secret) until its second factor is given;
// `challenge` holds the WebAuthn challenge of a passkey ceremony (a sign-in's, or a registration's keyed by session).
export const sql = `
CREATE TABLE totp_secrets (
  user_id      TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
  secret       TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  confirmed_at TEXT,
  last_step    INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE recovery_codes (
  user_id  TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  hash     TEXT NOT NULL,
  used_at  TEXT,
  PRIMARY KEY (user_id, hash)
);
CREATE TABLE passkeys (
  id            TEXT PRIMARY KEY,
  user_id       TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  credential_id TEXT NOT NULL,
  public_key    BLOB NOT NULL,
  counter       INTEGER NOT NULL,
  transports    TEXT NOT NULL,
  name          TEXT NOT NULL,
  created_at    TEXT NOT NULL,
  last_used_at  TEXT,
  UNIQUE (user_id, credential_id)
);
CREATE TABLE webauthn_challenges (
  key        TEXT PRIMARY KEY,
  user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  challenge  TEXT NOT NULL,
  expires_at TEXT NOT NULL
);
CREATE TABLE pending_sign_ins (
  id         TEXT PRIMARY KEY,
  hash       TEXT NOT NULL UNIQUE,
  user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  expires_at TEXT NOT NULL
);
`;
