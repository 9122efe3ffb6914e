// A server's settings (docs/architecture.md "Settings"): what its owner chose (JSON, only the settings changed from
// their defaults) and what its game was last launched with or had applied live (JSON, NULL before a first launch),
// so a restart still pending shows after a service restart too. The row goes with its server.
export const sql = `
CREATE TABLE server_settings (
  server_id  TEXT PRIMARY KEY REFERENCES servers(id) ON DELETE CASCADE,
  chosen     TEXT NOT NULL DEFAULT '{}',
  launched   TEXT,
  updated_at TEXT NOT NULL
);
`;
