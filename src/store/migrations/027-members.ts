// Members of shared servers (openapi/v1.yaml Member; docs/architecture.md "Sharing"): an email and permissions per
// server. The membership applies to the account with that email whenever one exists (users.email is COLLATE
// NOCASE too), so inviting never needs to know, nor tells, whether it does; `accepted_at` is the member's first
// use of the server (Member.status `active`).
export const sql = `
CREATE TABLE members (
  id          TEXT PRIMARY KEY,
  server_id   TEXT NOT NULL REFERENCES servers(id) ON DELETE CASCADE,
  email       TEXT NOT NULL COLLATE NOCASE,
  permissions TEXT NOT NULL,
  accepted_at TEXT,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL,
  UNIQUE (server_id, email)
);
CREATE INDEX members_by_email ON members(email);
`;
