// Users, their API tokens, their servers and the idempotency record of POST /v1/servers.
// Timestamps are RFC 3339 UTC strings (they sort as text); ids are opaque prefixed strings (docs/conventions.md "IDs and timestamps").
export const sql = `
CREATE TABLE users (
  id            TEXT PRIMARY KEY,
  email         TEXT NOT NULL UNIQUE COLLATE NOCASE,
  password_hash TEXT,
  created_at    TEXT NOT NULL
);

CREATE TABLE tokens (
  id           TEXT PRIMARY KEY,
  user_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  name         TEXT NOT NULL,
  prefix       TEXT NOT NULL,
  hash         TEXT NOT NULL UNIQUE,
  scopes       TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  expires_at   TEXT,
  last_used_at TEXT,
  revoked_at   TEXT
);
CREATE INDEX tokens_by_user ON tokens(user_id, id);

-- state is what the runtime observes; desired_state is what the user last asked for (stopped|running), which
-- the reconcile loop makes state follow. port is UNIQUE so two servers can never be given the same one.
CREATE TABLE servers (
  id            TEXT PRIMARY KEY,
  user_id       TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  name          TEXT NOT NULL,
  plan          TEXT NOT NULL,
  version       TEXT NOT NULL,
  software      TEXT NOT NULL,
  game_version  TEXT NOT NULL,
  state         TEXT NOT NULL,
  desired_state TEXT NOT NULL DEFAULT 'stopped',
  host          TEXT,
  port          INTEGER UNIQUE,
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL
);
CREATE INDEX servers_by_user ON servers(user_id, id);

CREATE TABLE idempotency_keys (
  user_id         TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  key             TEXT NOT NULL,
  request_hash    TEXT NOT NULL,
  response_status INTEGER,
  response_body   TEXT,
  created_at      TEXT NOT NULL,
  PRIMARY KEY (user_id, key)
);
`;
