// Backups (docs/architecture.md "Backups"): one row per archive of a server's world, `pending` while it is made,
// then `ready` with its size and SHA-256, or `failed` with the reason (also for one a service restart interrupted).
// Player lists (docs/architecture.md "Player lists"): whitelist, operators and bans per server, by player name (a
// name matches whatever its case, as the game compares them), and the whitelist's on/off switch. Rows go with their server.
export const sql = `
CREATE TABLE player_list_entries (
  server_id TEXT NOT NULL REFERENCES servers(id) ON DELETE CASCADE,
  list      TEXT NOT NULL CHECK (list IN ('whitelist', 'operators', 'bans')),
  name      TEXT NOT NULL COLLATE NOCASE,
  added_at  TEXT NOT NULL,
  PRIMARY KEY (server_id, list, name)
);
CREATE TABLE player_list_switches (
  server_id TEXT NOT NULL REFERENCES servers(id) ON DELETE CASCADE,
  list      TEXT NOT NULL CHECK (list = 'whitelist'),
  enabled   INTEGER NOT NULL,
  PRIMARY KEY (server_id, list)
);
CREATE TABLE backups (
  id          TEXT PRIMARY KEY,
  server_id   TEXT NOT NULL REFERENCES servers(id) ON DELETE CASCADE,
  name        TEXT,
  status      TEXT NOT NULL CHECK (status IN ('pending', 'ready', 'failed')),
  size_bytes  INTEGER,
  sha256      TEXT,
  error       TEXT,
  created_at  TEXT NOT NULL,
  finished_at TEXT
);
CREATE INDEX backups_by_server ON backups(server_id, id);
`;
