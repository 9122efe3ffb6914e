// A control plane for 10,000 servers (docs/architecture.md "At scale"): what used to scan every server, or every
// server of an account, becomes an index lookup or a counter.
//
// - `server_counts`: each account's servers and running servers per plan (the quota's use, QuotasRepo), and
//   `node_counts`: each node's servers per plan (placement, NodesRepo). Kept by the triggers below, so every write
//   to `servers` updates them in its own transaction: they cannot drift, whoever writes, and a kill -9 loses
//   neither the row nor its count. "Running" is quotas-repo.ts RUNNING: meant to run, or its game still runs.
// - `servers_by_state`: the reconcile loop's gap (desired ≠ observed), boot's unsettled servers, the disk
//   watcher's live servers, and the state gauge. `servers_by_user_state`: a list filtered by state (keyset on id).
// - `servers_scheduled`: the backup scheduler's servers, the few with a schedule.
// - `disk_changes`: changes to a server's files that no measurement has seen yet (its state changed, a backup was
//   made or deleted, a restore swapped its world); the disk watcher walks those and the live ones only. Every
//   existing server starts with one, so each is measured once after the upgrade.
export const sql = `
CREATE INDEX servers_by_state ON servers(state, desired_state);
CREATE INDEX servers_by_user_state ON servers(user_id, state, id);
CREATE INDEX servers_scheduled ON servers(id) WHERE backup_schedule IS NOT NULL;

ALTER TABLE servers ADD COLUMN disk_changes INTEGER NOT NULL DEFAULT 1;
CREATE INDEX servers_disk_changed ON servers(id) WHERE disk_changes > 0;

CREATE TABLE server_counts (
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  plan    TEXT NOT NULL,
  servers INTEGER NOT NULL,
  running INTEGER NOT NULL,
  PRIMARY KEY (user_id, plan)
) WITHOUT ROWID;
INSERT INTO server_counts (user_id, plan, servers, running)
  SELECT user_id, plan, COUNT(*), SUM(desired_state = 'running' OR state IN ('starting', 'running', 'stopping'))
  FROM servers GROUP BY user_id, plan;

CREATE TABLE node_counts (
  node    TEXT NOT NULL,
  plan    TEXT NOT NULL,
  servers INTEGER NOT NULL,
  PRIMARY KEY (node, plan)
) WITHOUT ROWID;
INSERT INTO node_counts (node, plan, servers)
  SELECT node, plan, COUNT(*) FROM servers WHERE node IS NOT NULL GROUP BY node, plan;

CREATE TRIGGER server_counts_insert AFTER INSERT ON servers BEGIN
  INSERT INTO server_counts (user_id, plan, servers, running)
    VALUES (NEW.user_id, NEW.plan, 1, NEW.desired_state = 'running' OR NEW.state IN ('starting', 'running', 'stopping'))
    ON CONFLICT (user_id, plan) DO UPDATE SET servers = servers + 1, running = running + excluded.running;
  INSERT INTO node_counts (node, plan, servers) SELECT NEW.node, NEW.plan, 1 WHERE NEW.node IS NOT NULL
    ON CONFLICT (node, plan) DO UPDATE SET servers = servers + 1;
END;

CREATE TRIGGER server_counts_delete AFTER DELETE ON servers BEGIN
  UPDATE server_counts SET servers = servers - 1,
      running = running - (OLD.desired_state = 'running' OR OLD.state IN ('starting', 'running', 'stopping'))
    WHERE user_id = OLD.user_id AND plan = OLD.plan;
  DELETE FROM server_counts WHERE user_id = OLD.user_id AND plan = OLD.plan AND servers = 0;
  UPDATE node_counts SET servers = servers - 1 WHERE node = OLD.node AND plan = OLD.plan;
  DELETE FROM node_counts WHERE node = OLD.node AND plan = OLD.plan AND servers = 0;
END;

CREATE TRIGGER server_counts_update AFTER UPDATE OF user_id, plan, state, desired_state, node ON servers
WHEN OLD.user_id != NEW.user_id OR OLD.plan != NEW.plan OR OLD.node IS NOT NEW.node
  OR (OLD.desired_state = 'running' OR OLD.state IN ('starting', 'running', 'stopping'))
    != (NEW.desired_state = 'running' OR NEW.state IN ('starting', 'running', 'stopping'))
BEGIN
  UPDATE server_counts SET servers = servers - 1,
      running = running - (OLD.desired_state = 'running' OR OLD.state IN ('starting', 'running', 'stopping'))
    WHERE user_id = OLD.user_id AND plan = OLD.plan;
  DELETE FROM server_counts WHERE user_id = OLD.user_id AND plan = OLD.plan AND servers = 0;
  INSERT INTO server_counts (user_id, plan, servers, running)
    VALUES (NEW.user_id, NEW.plan, 1, NEW.desired_state = 'running' OR NEW.state IN ('starting', 'running', 'stopping'))
    ON CONFLICT (user_id, plan) DO UPDATE SET servers = servers + 1, running = running + excluded.running;
  UPDATE node_counts SET servers = servers - 1 WHERE node = OLD.node AND plan = OLD.plan;
  DELETE FROM node_counts WHERE node = OLD.node AND plan = OLD.plan AND servers = 0;
  INSERT INTO node_counts (node, plan, servers) SELECT NEW.node, NEW.plan, 1 WHERE NEW.node IS NOT NULL
    ON CONFLICT (node, plan) DO UPDATE SET servers = servers + 1;
END;
`;
