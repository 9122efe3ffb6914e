// A node lost for good and the recovery of its servers (docs/architecture.md "Nodes and placement", "When a node is
// lost"). `nodes.lost_at`: when the operator said the node is gone for good (`gsh node lose`); such a node takes no
// server again. `server_recoveries`: one row per server recovered from it, recording each step before it is taken, so
// a recovery a restart interrupted is carried on at boot: `pending` (asked for), `switched` (the server's row on a
// live node, with a new address), `restored` (its newest ready backup, or a fresh install, in its new volume, and the
// customer told with `server.recovered`), then `done` (started again if its desired state is running), or `failed`
// before the switch, the server left where it was. `leftover` names the lost node while the server's volume and
// containers there may remain (removed if it ever answers again). No foreign key: the row outlives its server.
export const sql = `
ALTER TABLE nodes ADD COLUMN lost_at TEXT;
CREATE TABLE server_recoveries (
  id TEXT PRIMARY KEY,
  server_id TEXT NOT NULL,
  from_node TEXT NOT NULL,
  to_node TEXT,
  status TEXT NOT NULL CHECK (status IN ('pending', 'switched', 'restored', 'done', 'failed')),
  backup_id TEXT,
  backup_created_at TEXT,
  error TEXT,
  leftover TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX server_recoveries_open ON server_recoveries (server_id) WHERE status IN ('pending', 'switched', 'restored');
CREATE INDEX server_recoveries_leftover ON server_recoveries (leftover) WHERE leftover IS NOT NULL;
`;
