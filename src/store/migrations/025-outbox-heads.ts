// The outbox's cost follows what is due, not what is pending (docs/architecture.md "Events and webhooks";
// BENCHMARKS.md §10). Before, the due query grouped every pending row by queue, once a second or more.
//
// - `webhook_deliveries.head` is 1 on the oldest pending row of its (webhook, server) queue, the only one the
//   dispatcher may attempt (a server's events arrive in order). The insert sets it (EventsRepo.append: the queue
//   had no pending row); the triggers below move it to the next row when a head stops being pending (delivered,
//   failed, dropped) or is deleted (its event purged, its webhook deleted). On rows no longer pending it means
//   nothing. So the due rows are found in partial indexes that hold queue heads only: `deliveries_next` (the
//   earliest due of all) and `deliveries_due` (per webhook, so a scan takes a few heads of each webhook and one
//   webhook's backlog never hides another's delivery).
// - `webhooks.pending`, `succeeded` and `failed` count the webhook's delivery rows by status, kept by the same
//   triggers, so the per-webhook and per-user bounds (WEBHOOK_PENDING_PER_WEBHOOK, WEBHOOK_PENDING_PER_USER) are
//   checked, and the operator's gauge read (OutboxRepo.countByStatus), without counting rows;
//   `webhooks_with_pending` lists the webhooks a due scan visits.
// - `deliveries_queue` (a queue's pending rows in order: its head, the next head) and `deliveries_oldest` (a
//   webhook's oldest pending row, the one dropped past a bound) replace `deliveries_pending`, which indexed every
//   row of every status.
export const sql = `
ALTER TABLE webhook_deliveries ADD COLUMN head INTEGER NOT NULL DEFAULT 0;
ALTER TABLE webhooks ADD COLUMN pending INTEGER NOT NULL DEFAULT 0;
ALTER TABLE webhooks ADD COLUMN succeeded INTEGER NOT NULL DEFAULT 0;
ALTER TABLE webhooks ADD COLUMN failed INTEGER NOT NULL DEFAULT 0;
DROP INDEX deliveries_pending;
CREATE INDEX deliveries_queue ON webhook_deliveries(webhook_id, server_key, seq) WHERE status = 'pending';
CREATE INDEX deliveries_oldest ON webhook_deliveries(webhook_id, seq) WHERE status = 'pending';
CREATE INDEX deliveries_due ON webhook_deliveries(webhook_id, next_attempt_at) WHERE status = 'pending' AND head = 1;
CREATE INDEX deliveries_next ON webhook_deliveries(next_attempt_at) WHERE status = 'pending' AND head = 1;
CREATE INDEX webhooks_with_pending ON webhooks(id) WHERE pending > 0;

UPDATE webhook_deliveries SET head = 1 WHERE seq IN
  (SELECT MIN(seq) FROM webhook_deliveries WHERE status = 'pending' GROUP BY webhook_id, server_key);
UPDATE webhooks SET
  pending = (SELECT COUNT(*) FROM webhook_deliveries d WHERE d.webhook_id = webhooks.id AND d.status = 'pending'),
  succeeded = (SELECT COUNT(*) FROM webhook_deliveries d WHERE d.webhook_id = webhooks.id AND d.status = 'succeeded'),
  failed = (SELECT COUNT(*) FROM webhook_deliveries d WHERE d.webhook_id = webhooks.id AND d.status = 'failed');

CREATE TRIGGER deliveries_added AFTER INSERT ON webhook_deliveries BEGIN
  UPDATE webhooks SET pending = pending + (NEW.status = 'pending'), succeeded = succeeded + (NEW.status = 'succeeded'),
    failed = failed + (NEW.status = 'failed') WHERE id = NEW.webhook_id;
END;
CREATE TRIGGER deliveries_settled AFTER UPDATE OF status ON webhook_deliveries
  WHEN OLD.status = 'pending' AND NEW.status <> 'pending' BEGIN
  UPDATE webhooks SET pending = pending - 1, succeeded = succeeded + (NEW.status = 'succeeded'),
    failed = failed + (NEW.status = 'failed') WHERE id = OLD.webhook_id;
  UPDATE webhook_deliveries SET head = 1 WHERE OLD.head = 1 AND seq = (SELECT seq FROM webhook_deliveries
    WHERE status = 'pending' AND webhook_id = OLD.webhook_id AND server_key = OLD.server_key ORDER BY seq LIMIT 1);
END;
CREATE TRIGGER deliveries_removed AFTER DELETE ON webhook_deliveries BEGIN
  UPDATE webhooks SET pending = pending - (OLD.status = 'pending'), succeeded = succeeded - (OLD.status = 'succeeded'),
    failed = failed - (OLD.status = 'failed') WHERE id = OLD.webhook_id;
  UPDATE webhook_deliveries SET head = 1 WHERE OLD.head = 1 AND seq = (SELECT seq FROM webhook_deliveries
    WHERE status = 'pending' AND webhook_id = OLD.webhook_id AND server_key = OLD.server_key ORDER BY seq LIMIT 1);
END;
`;
