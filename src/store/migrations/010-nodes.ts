// Nodes (docs/architecture.md "Nodes and placement"): the Docker engines game servers run on, and which one each
// server was placed on. `node` stays NULL for servers of the local environment (RUNTIME=local).
export const sql = `
CREATE TABLE nodes (
  name         TEXT PRIMARY KEY,
  docker_host  TEXT NOT NULL,
  public_host  TEXT NOT NULL,
  memory_mb    INTEGER NOT NULL CHECK (memory_mb > 0),
  port_low     INTEGER NOT NULL,
  port_high    INTEGER NOT NULL CHECK (port_high >= port_low),
  draining     INTEGER NOT NULL DEFAULT 0,
  -- Since when the node's engine has not answered (src/runtime/host/docker/nodes-environment.ts); NULL while it does.
  unreachable_since TEXT,
  created_at   TEXT NOT NULL
);
ALTER TABLE servers ADD COLUMN node TEXT REFERENCES nodes(name);
CREATE INDEX servers_by_node ON servers(node);
`;
