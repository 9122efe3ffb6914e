// Moving a server from one node to another (docs/architecture.md "Moving a server"): the operator's request, and
// how far the move got, so a move a restart interrupted is finished or undone at boot. `leftover` names the node
// where a volume of the server is still to be removed: its old node once it moved, its would-be node after a move
// failed. No foreign key: a move's row outlives its server (history, and a leftover volume to remove).
export const sql = `
CREATE TABLE server_moves (
  id TEXT PRIMARY KEY,
  server_id TEXT NOT NULL,
  from_node TEXT NOT NULL,
  to_node TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'copying', 'switched', 'done', 'failed')),
  was_running INTEGER CHECK (was_running IN (0, 1)),
  bytes INTEGER,
  error TEXT,
  leftover TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX server_moves_open ON server_moves (server_id) WHERE status IN ('pending', 'copying', 'switched');
CREATE INDEX server_moves_leftover ON server_moves (leftover) WHERE leftover IS NOT NULL;
`;
