// Moves whose downtime does not grow with the world (issue 41 §2; docs/architecture.md "Moving a server"): two more
// steps a move records before taking them, `syncing` (the first pass, copied while the game runs) and `delta` (the
// game stopped, what changed since copied), and `method`, how the move copied: `live` (those two steps) or `stopped`
// (the whole copy with the game stopped, for software that cannot back up live). SQLite cannot change a CHECK, so
// the table is made again with its rows and indexes.
export const sql = `
CREATE TABLE server_moves_042 (
  id TEXT PRIMARY KEY,
  server_id TEXT NOT NULL,
  from_node TEXT NOT NULL,
  to_node TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'syncing', 'copying', 'delta', 'switched', 'done', 'failed')),
  was_running INTEGER CHECK (was_running IN (0, 1)),
  bytes INTEGER,
  error TEXT,
  leftover TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  method TEXT CHECK (method IN ('live', 'stopped'))
);
INSERT INTO server_moves_042 (id, server_id, from_node, to_node, status, was_running, bytes, error, leftover, created_at, updated_at, method)
  SELECT id, server_id, from_node, to_node, status, was_running, bytes, error, leftover, created_at, updated_at,
    CASE WHEN status IN ('switched', 'done') THEN 'stopped' END FROM server_moves;
DROP TABLE server_moves;
ALTER TABLE server_moves_042 RENAME TO server_moves;
CREATE UNIQUE INDEX server_moves_open ON server_moves (server_id) WHERE status IN ('pending', 'syncing', 'copying', 'delta', 'switched');
CREATE INDEX server_moves_leftover ON server_moves (leftover) WHERE leftover IS NOT NULL;
`;
