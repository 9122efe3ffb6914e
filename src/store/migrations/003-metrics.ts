// Telemetry time series (src/telemetry/metrics-store.ts explains the levels, retention and encoding).
//
// Rows are clustered by (server_key, t) WITHOUT ROWID so one server's window is one contiguous B-tree range:
// a range query is a single seek plus a short scan. server_key is a small integer standing for the text
// server id (it would otherwise repeat ~30 bytes on every row). No foreign key to servers: history outlives
// the server row until deleteServer() drops it. t is unix seconds. Values are fixed-point integers so they
// take 1-4 bytes on disk and rollup sums stay exact: tps in hundredths, cpu in tenths of a percent (100% =
// one core), ram in KiB (RSS is page-granular, so nothing is lost), players as is.
export const sql = `
CREATE TABLE metric_servers (
  key       INTEGER PRIMARY KEY,
  server_id TEXT NOT NULL UNIQUE
);

CREATE TABLE metric_raw (
  server_key  INTEGER NOT NULL,
  t           INTEGER NOT NULL,
  tps_c       INTEGER,
  cpu_d       INTEGER NOT NULL,
  ram_kib     INTEGER NOT NULL,
  players     INTEGER NOT NULL,
  players_max INTEGER NOT NULL,
  PRIMARY KEY (server_key, t)
) WITHOUT ROWID;

-- One row per server per closed bucket; n counts samples, tps_n those with a tps (tps may be unknown).
CREATE TABLE metric_minute (
  server_key INTEGER NOT NULL, t INTEGER NOT NULL, n INTEGER NOT NULL,
  tps_n INTEGER NOT NULL, tps_min INTEGER, tps_sum INTEGER, tps_max INTEGER,
  cpu_min INTEGER NOT NULL, cpu_sum INTEGER NOT NULL, cpu_max INTEGER NOT NULL,
  ram_min INTEGER NOT NULL, ram_sum INTEGER NOT NULL, ram_max INTEGER NOT NULL,
  pl_min INTEGER NOT NULL, pl_sum INTEGER NOT NULL, pl_max INTEGER NOT NULL,
  PRIMARY KEY (server_key, t)
) WITHOUT ROWID;

CREATE TABLE metric_hour (
  server_key INTEGER NOT NULL, t INTEGER NOT NULL, n INTEGER NOT NULL,
  tps_n INTEGER NOT NULL, tps_min INTEGER, tps_sum INTEGER, tps_max INTEGER,
  cpu_min INTEGER NOT NULL, cpu_sum INTEGER NOT NULL, cpu_max INTEGER NOT NULL,
  ram_min INTEGER NOT NULL, ram_sum INTEGER NOT NULL, ram_max INTEGER NOT NULL,
  pl_min INTEGER NOT NULL, pl_sum INTEGER NOT NULL, pl_max INTEGER NOT NULL,
  PRIMARY KEY (server_key, t)
) WITHOUT ROWID;

-- closed_until: every bucket of this level that starts before it has been rolled up (unix seconds).
CREATE TABLE metric_watermarks (
  level        TEXT PRIMARY KEY,
  closed_until INTEGER NOT NULL
) WITHOUT ROWID;
`;
