// Kept backups (openapi/v1.yaml deleteServer `keep_backups`, KeptBackup): a server being deleted remembers whether
// its owner asked to keep its backups, so a removal a crash interrupted keeps them too when the next boot finishes
// it; and the backups kept after their server is gone, owned by the account (the `backups` rows go with their
// server's row, ON DELETE CASCADE).
export const sql = `
ALTER TABLE servers ADD COLUMN keep_backups INTEGER NOT NULL DEFAULT 0 CHECK (keep_backups IN (0, 1));
CREATE TABLE kept_backups (
  id          TEXT PRIMARY KEY,
  user_id     TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  server_id   TEXT NOT NULL,
  server_name TEXT NOT NULL,
  version     TEXT NOT NULL,
  name        TEXT,
  automatic   INTEGER NOT NULL CHECK (automatic IN (0, 1)),
  size_bytes  INTEGER NOT NULL,
  sha256      TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  finished_at TEXT NOT NULL,
  kept_at     TEXT NOT NULL
);
CREATE INDEX kept_backups_by_user ON kept_backups(user_id, id);
`;
