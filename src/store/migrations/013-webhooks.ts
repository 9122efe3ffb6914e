// Webhooks and their outbox (docs/architecture.md "Events and webhooks"). A delivery row is written in the same
// transaction as its event (src/store/events-repo.ts), so an event is never recorded without the deliveries it
// owes; the dispatcher (src/webhooks/dispatcher.ts) works the pending rows off, at least once, in `seq` order per
// webhook and server (server_key is '' for events without a server).
export const sql = `
CREATE TABLE webhooks (
  id              TEXT PRIMARY KEY,
  user_id         TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  url             TEXT NOT NULL,
  event_types     TEXT NOT NULL,
  secret          TEXT NOT NULL,
  enabled         INTEGER NOT NULL DEFAULT 1,
  failing_since   TEXT,
  disabled_reason TEXT,
  created_at      TEXT NOT NULL,
  updated_at      TEXT NOT NULL
);
CREATE INDEX webhooks_by_user ON webhooks(user_id, id);

CREATE TABLE webhook_deliveries (
  seq             INTEGER PRIMARY KEY AUTOINCREMENT,
  id              TEXT NOT NULL UNIQUE,
  webhook_id      TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
  event_seq       INTEGER NOT NULL REFERENCES events(seq) ON DELETE CASCADE,
  server_key      TEXT NOT NULL,
  status          TEXT NOT NULL DEFAULT 'pending',
  attempts        INTEGER NOT NULL DEFAULT 0,
  response_status INTEGER,
  duration_ms     INTEGER,
  error           TEXT,
  next_attempt_at TEXT,
  last_attempt_at TEXT,
  created_at      TEXT NOT NULL
);
CREATE INDEX deliveries_pending ON webhook_deliveries(status, webhook_id, server_key, seq);
CREATE INDEX deliveries_by_webhook ON webhook_deliveries(webhook_id, seq);
CREATE INDEX deliveries_by_event ON webhook_deliveries(event_seq);
`;
