// Dashboard sign-in sessions (src/dashboard/sessions.ts explains the design).
//
// Only the SHA-256 of the session secret is stored (like tokens), so a copy of the database cannot be replayed
// as a cookie. session_tokens records the short-lived API tokens handed to the dashboard page for a session, so
// signing out can revoke them; tokens are never deleted (only revoked), so the references stay valid.
export const sql = `
CREATE TABLE sessions (
  id         TEXT PRIMARY KEY,
  user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  hash       TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL
);
CREATE INDEX sessions_by_user ON sessions(user_id);

CREATE TABLE session_tokens (
  session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  token_id   TEXT NOT NULL REFERENCES tokens(id) ON DELETE CASCADE,
  PRIMARY KEY (session_id, token_id)
);
`;
