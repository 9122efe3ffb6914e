// Alert rules (openapi/v1.yaml AlertRule; docs/architecture.md "Alerts"): a server's rules with their state, which
// changes only with its alert.* event, in one transaction.
export const sql = `
CREATE TABLE alert_rules (
  id               TEXT PRIMARY KEY,
  server_id        TEXT NOT NULL REFERENCES servers(id) ON DELETE CASCADE,
  name             TEXT,
  kind             TEXT NOT NULL CHECK (kind IN ('metric', 'crash')),
  metric           TEXT CHECK (metric IN ('tps', 'cpu_percent', 'ram_percent', 'players_online')),
  comparison       TEXT CHECK (comparison IN ('below', 'above')),
  threshold        REAL,
  duration_seconds INTEGER NOT NULL,
  state            TEXT NOT NULL DEFAULT 'ok' CHECK (state IN ('ok', 'firing')),
  state_since      TEXT,
  created_at       TEXT NOT NULL,
  CHECK ((kind = 'metric') = (metric IS NOT NULL AND comparison IS NOT NULL AND threshold IS NOT NULL))
);
CREATE INDEX alert_rules_by_server ON alert_rules(server_id, id);
`;
