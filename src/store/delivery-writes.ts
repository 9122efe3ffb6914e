import type { Db } from './db';

/**
 * What one webhook and one user may have pending in the outbox (WEBHOOK_PENDING_PER_WEBHOOK,
 * WEBHOOK_PENDING_PER_USER): a receiver that is down or slow fills it, and nothing else bounds player events (the
 * API's rate limit does not see them). Past a bound the oldest pending delivery is dropped, recorded as `failed`
 * with the reason in its `error` (docs/architecture.md "Events and webhooks").
 */
export interface OutboxLimits {
  perWebhook: number;
  perUser: number;
}

export const outboxLimitDefaults: OutboxLimits = { perWebhook: 10_000, perUser: 25_000 };

/** What one copy of an event owes the webhook outbox (EventsRepo's append). */
export interface OwedDeliveries {
  /** The event's time in base 36, the front of each delivery's id (src/ids.ts). */
  time: string;
  seq: number;
  /** The event's server id, or '' for an account's event: the queue a delivery waits in. */
  server_key: string;
  created_at: string;
  user_id: string;
  type: string;
  /** One webhook only (a ping), whatever its event types and even if disabled; null for every subscriber. */
  only: string | null;
}

/**
 * The one writer of the webhook outbox, table `webhook_deliveries` (docs/architecture.md "Who owns what"): the rows an
 * event owes (EventsRepo, in the event's transaction) and their bounds, each attempt's outcome (OutboxRepo), and the
 * failing of a webhook's pending rows when it is disabled or deleted (WebhooksRepo, OutboxRepo). Statements only, as
 * server-writes.ts is for `servers`: each caller holds its own transaction. The triggers of migration 025 keep each
 * webhook's counts and each queue's head.
 */
export function createDeliveryWrites(db: Db, limits: OutboxLimits = outboxLimitDefaults) {
  const q = {
    // One row per enabled webhook of the user that wants this type (src/store/migrations/013-webhooks.ts), the head
    // of its queue when the queue has no pending row (deliveries_queue; migration 025).
    owe: db.prepare(`INSERT INTO webhook_deliveries (id, webhook_id, event_seq, server_key, next_attempt_at, created_at, head)
      SELECT 'dlv_' || @time || substr(lower(hex(randomblob(8))), 1, 13), w.id, @seq, @server_key, @created_at, @created_at,
        NOT EXISTS (SELECT 1 FROM webhook_deliveries p WHERE p.status = 'pending' AND p.webhook_id = w.id AND p.server_key = @server_key)
      FROM webhooks w WHERE w.user_id = @user_id AND ((w.enabled = 1 AND @only IS NULL
        AND EXISTS (SELECT 1 FROM json_each(w.event_types) WHERE value = @type)) OR w.id = @only)`),
    // The user's webhooks with pending deliveries (webhooks_by_user: at most WEBHOOKS_PER_USER rows).
    pendingOf: db.prepare<unknown[], { id: string; pending: number }>('SELECT id, pending FROM webhooks WHERE user_id = ? AND pending > 0'),
    // A webhook's oldest pending deliveries (deliveries_oldest).
    dropOldest: db.prepare(`UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, error = @reason
      WHERE seq IN (SELECT seq FROM webhook_deliveries WHERE status = 'pending' AND webhook_id = @webhook_id ORDER BY seq LIMIT @n)`),
    succeed: db.prepare(`UPDATE webhook_deliveries SET status = 'succeeded', attempts = attempts + 1, response_status = ?,
      duration_ms = ?, error = NULL, next_attempt_at = NULL, last_attempt_at = ? WHERE seq = ? AND status = 'pending'`),
    retry: db.prepare(`UPDATE webhook_deliveries SET attempts = attempts + 1, response_status = ?, duration_ms = ?,
      error = ?, next_attempt_at = ?, last_attempt_at = ? WHERE seq = ? AND status = 'pending'`),
    failPending: db.prepare(`UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL
      WHERE webhook_id = ? AND status = 'pending'`),
  };

  /** Drops the oldest pending deliveries past the user's bounds (OutboxLimits): the oldest first, per webhook then per user. */
  function bound(userId: string): void {
    const hooks = q.pendingOf.all(userId);
    let total = hooks.reduce((sum, h) => sum + h.pending, 0);
    const drop = (h: { id: string; pending: number }, n: number, limit: number, whose: string) => {
      q.dropOldest.run({ webhook_id: h.id, n, reason: `dropped: more than ${limit} deliveries were pending for ${whose}; the oldest went first` });
      h.pending -= n;
      total -= n;
    };
    for (const h of hooks) if (h.pending > limits.perWebhook) drop(h, h.pending - limits.perWebhook, limits.perWebhook, 'this webhook');
    while (total > limits.perUser) {
      const most = hooks.reduce((a, b) => (b.pending > a.pending ? b : a));
      drop(most, Math.min(total - limits.perUser, most.pending), limits.perUser, "this account's webhooks");
    }
  }

  return {
    /** Writes the deliveries one copy of an event owes, then keeps its user within the bounds; returns how many. */
    owe(owed: OwedDeliveries): number {
      const added = q.owe.run(owed).changes;
      if (added > 0) bound(owed.user_id);
      return added;
    },
    /** An attempt answered 2xx: the delivery is done. */
    succeed: (seq: number, status: number | null, durationMs: number, at: string): void => void q.succeed.run(status, durationMs, at, seq),
    /** An attempt failed: tried again at `nextAt`. */
    retry: (seq: number, status: number | null, durationMs: number, error: string | null, nextAt: string, at: string): void =>
      void q.retry.run(status, durationMs, error, nextAt, at, seq),
    /** A webhook was disabled or deleted: nothing it still owed is sent. */
    failPending: (webhookId: string): void => void q.failPending.run(webhookId),
  };
}

export type DeliveryWrites = ReturnType<typeof createDeliveryWrites>;
