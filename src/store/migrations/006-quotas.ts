// Per-account quotas (docs/conventions.md "Quotas"). Every account has the operator's defaults (QUOTA_* in
// src/config.ts); a row here holds the limits `gsh user set-quota` gave one account, NULL where the default applies.
// Use is never stored: it is counted from the servers table inside the transaction that would change it.
export const sql = `
CREATE TABLE user_quotas (
  user_id    TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
  servers    INTEGER CHECK (servers >= 0),
  running    INTEGER CHECK (running >= 0),
  memory_mb  INTEGER CHECK (memory_mb >= 0),
  updated_at TEXT NOT NULL
);
`;
