// The last unrolled minute of raw samples (see src/telemetry/inbox.ts): each sampling round writes into this
// small table instead of touching one page per server of metric_raw, which made ingest 9x faster.
export const sql = `
CREATE TABLE metric_inbox (
  server_key  INTEGER NOT NULL,
  t           INTEGER NOT NULL,
  tps_c       INTEGER,
  cpu_d       INTEGER NOT NULL,
  ram_kib     INTEGER NOT NULL,
  players     INTEGER NOT NULL,
  players_max INTEGER NOT NULL,
  PRIMARY KEY (server_key, t)
) WITHOUT ROWID;
`;
