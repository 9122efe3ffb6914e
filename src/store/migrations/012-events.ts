// Events (docs/architecture.md "Events and webhooks"): what happened on an account, written in the same
// transaction as the change it reports. `seq` orders them (cursors, streams, webhook order); `id` is the public,
// unguessable id (docs/conventions.md "IDs and timestamps"). server_id has no foreign key: a server's events
// outlive it (server.deleted is the last). Rows older than EVENT_RETENTION_DAYS are purged.
export const sql = `
CREATE TABLE events (
  seq        INTEGER PRIMARY KEY AUTOINCREMENT,
  id         TEXT NOT NULL UNIQUE,
  user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  server_id  TEXT,
  type       TEXT NOT NULL,
  data       TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX events_by_user ON events(user_id, seq);
CREATE INDEX events_by_server ON events(server_id, seq);
CREATE INDEX events_by_time ON events(created_at);
`;
