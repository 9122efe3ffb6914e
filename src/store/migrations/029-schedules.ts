// Schedules (openapi/v1.yaml Schedule, ScheduleRun; docs/architecture.md "Schedules"): a server's tasks on a cron,
// with the next time each runs (NULL while disabled), and the record of each run with every task's outcome (JSON).
// A run's row is written when it begins, with the schedule's next time, in one transaction, so a time is never run
// twice; a run a restart interrupted is still `running` at boot, which ends it as `failed`.
export const sql = `
CREATE TABLE schedules (
  id          TEXT PRIMARY KEY,
  server_id   TEXT NOT NULL REFERENCES servers(id) ON DELETE CASCADE,
  name        TEXT NOT NULL,
  cron        TEXT NOT NULL,
  time_zone   TEXT NOT NULL,
  enabled     INTEGER NOT NULL CHECK (enabled IN (0, 1)),
  only_when   TEXT CHECK (only_when IN ('running', 'players_online')),
  tasks       TEXT NOT NULL,
  next_run_at TEXT,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
);
CREATE INDEX schedules_by_server ON schedules(server_id, id);
CREATE INDEX schedules_due ON schedules(next_run_at) WHERE next_run_at IS NOT NULL;
CREATE TABLE schedule_runs (
  id          TEXT PRIMARY KEY,
  schedule_id TEXT NOT NULL REFERENCES schedules(id) ON DELETE CASCADE,
  server_id   TEXT NOT NULL,
  trigger     TEXT NOT NULL CHECK (trigger IN ('scheduled', 'missed', 'manual')),
  status      TEXT NOT NULL CHECK (status IN ('running', 'succeeded', 'failed', 'skipped')),
  due_at      TEXT,
  started_at  TEXT NOT NULL,
  finished_at TEXT,
  detail      TEXT,
  tasks       TEXT NOT NULL
);
CREATE INDEX schedule_runs_by_schedule ON schedule_runs(schedule_id, id);
CREATE INDEX schedule_runs_running ON schedule_runs(status) WHERE status = 'running';
`;
