// The runtime's tables: power actions and what became of them, crashes, and the game processes alive now.
// Timestamps are RFC 3339 UTC strings; ids are prefixed (act_, crs_). Rows go with their server (ON DELETE CASCADE).
export const sql = `
-- One row per power action. A client polls it to learn whether the action worked and, if not, why
-- (error_code from the error registry, error_detail in words): failures are recorded here, never only logged.
CREATE TABLE actions (
  id            TEXT PRIMARY KEY,
  server_id     TEXT NOT NULL REFERENCES servers(id) ON DELETE CASCADE,
  user_id       TEXT NOT NULL,
  type          TEXT NOT NULL CHECK (type IN ('start', 'stop', 'restart', 'kill')),
  status        TEXT NOT NULL CHECK (status IN ('pending', 'running', 'succeeded', 'failed')),
  error_code    TEXT,
  error_detail  TEXT,
  created_at    TEXT NOT NULL,
  started_at    TEXT,
  completed_at  TEXT
);
CREATE INDEX actions_by_server ON actions(server_id, id);

-- An exit nobody asked for (or a start that never became ready, or a memory-limit kill). last_lines is a JSON
-- array of the last console lines, so the reason is visible without the log file.
CREATE TABLE crashes (
  id          TEXT PRIMARY KEY,
  server_id   TEXT NOT NULL REFERENCES servers(id) ON DELETE CASCADE,
  at          TEXT NOT NULL,
  exit_code   INTEGER,
  signal      TEXT,
  reason      TEXT NOT NULL,
  last_lines  TEXT NOT NULL
);
CREATE INDEX crashes_by_server ON crashes(server_id, at);

-- The game process of each server while it lives, so a restarted service can find and kill what a previous
-- life left behind. cmdline is the NUL-joined argv, compared with /proc/<pid>/cmdline before any kill so a
-- reused pid is never killed.
CREATE TABLE runtime_processes (
  server_id   TEXT PRIMARY KEY REFERENCES servers(id) ON DELETE CASCADE,
  pid         INTEGER NOT NULL,
  cmdline     TEXT NOT NULL,
  started_at  TEXT NOT NULL
);
`;
