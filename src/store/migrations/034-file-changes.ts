// The changes made to a server's own files through the Files API (openapi/v1.yaml listServerFileActivity;
// docs/architecture.md "Server files"): one row per change with its actor, the newest 1000 per server kept.
// No event is raised for them, so a folder of uploads never makes a webhook per file.
export const sql = `
CREATE TABLE file_changes (
  id TEXT PRIMARY KEY,
  server_id TEXT NOT NULL REFERENCES servers(id) ON DELETE CASCADE,
  at TEXT NOT NULL,
  actor TEXT NOT NULL,
  operation TEXT NOT NULL,
  path TEXT NOT NULL,
  to_path TEXT,
  bytes INTEGER NOT NULL
);
CREATE INDEX file_changes_by_server ON file_changes (server_id, id);
`;
