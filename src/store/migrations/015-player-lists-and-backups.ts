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
` + restoreActions();

// A restore is an action (docs/architecture.md "Backups"): the actions table is rebuilt with 'restore' among its
// types (SQLite cannot change a CHECK constraint in place; no table refers to actions).
function restoreActions(): string {
  return `
CREATE TABLE actions_015 (
  id            TEXT PRIMARY KEY,
  server_id     TEXT NOT NULL REFERENCES servers(id) ON DELETE CASCADE,
  user_id       TEXT NOT NULL,
  type          TEXT NOT NULL CHECK (type IN ('start', 'stop', 'restart', 'kill', 'restore')),
  status        TEXT NOT NULL CHECK (status IN ('pending', 'running', 'succeeded', 'failed')),
  error_code    TEXT,
  error_detail  TEXT,
  created_at    TEXT NOT NULL,
  started_at    TEXT,
  completed_at  TEXT
);
INSERT INTO actions_015 SELECT id, server_id, user_id, type, status, error_code, error_detail, created_at, started_at, completed_at FROM actions;
DROP TABLE actions;
ALTER TABLE actions_015 RENAME TO actions;
CREATE INDEX actions_by_server ON actions(server_id, id);
`;
}
