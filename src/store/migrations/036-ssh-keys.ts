// SSH public keys that log in to SFTP as their account (openapi/v1.yaml tag "SSH keys"; docs/architecture.md
// "SFTP"). `blob` is the key's SSH wire encoding in base64 (RFC 4253 §6.6), what a client offers at login, so a
// login finds its key by (user, blob) through the unique index.
export const sql = `
CREATE TABLE ssh_keys (
  id           TEXT PRIMARY KEY,
  user_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  name         TEXT NOT NULL,
  type         TEXT NOT NULL,
  blob         TEXT NOT NULL,
  fingerprint  TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  last_used_at TEXT,
  UNIQUE (user_id, blob)
);
`;
