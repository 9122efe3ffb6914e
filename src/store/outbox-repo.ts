import { required, type Db } from './db';
import type { Clock } from '../clock';
import { iso } from '../clock';
import { eventOf, type Event, type EventsRepo } from './events-repo';
import type { DeliveryWrites } from './delivery-writes';
import type { WebhookHealth } from './webhooks-repo';
import { serviceActor } from '../actors';
import type { components } from '../../generated/v1';

/** A queue's head that is due (a due scan's row): which delivery, and whose, for the dispatcher's fair queue. */
export interface DueHead {
  seq: number;
  webhookId: string;
  userId: string;
  /** Deliveries of one webhook and one server go one at a time, in order ('' for events without a server). */
  group: string;
}

/** A delivery the dispatcher may make now: the head of its webhook's queue for its server. */
export interface DueDelivery {
  seq: number;
  webhookId: string;
  userId: string;
  /** Deliveries of one webhook and one server go one at a time, in order ('' for events without a server). */
  group: string;
  serverKey: string;
  attempts: number;
  url: string;
  secret: string;
  event: Event;
}

interface DueRow {
  seq: number;
  webhook_id: string;
  user_id: string;
  server_key: string;
  attempts: number;
  url: string;
  secret: string;
  event_id: string;
  type: components['schemas']['EventType'];
  server_id: string | null;
  data: string;
  created_at: string;
  /** NULL for events recorded before migration 028 (eventOf shows those as the service's `unknown`). */
  actor: string | null;
}

/** How one attempt went: an answer's status (2xx is success), or an error and no status. */
export interface Outcome {
  startedAt: number;
  durationMs: number;
  status: number | null;
  error: string | null;
}

function toDue(r: DueRow): DueDelivery {
  return {
    seq: r.seq,
    webhookId: r.webhook_id,
    userId: r.user_id,
    group: `${r.webhook_id}/${r.server_key}`,
    serverKey: r.server_key,
    attempts: r.attempts,
    url: r.url,
    secret: r.secret,
    // Built as GET /v1/events builds it (events-repo.ts eventOf): the spec's `webhooks` say the body is that event.
    event: eventOf({ ...r, id: r.event_id }),
  };
}

/**
 * The scans the dispatcher makes about once a second, whatever the outbox holds, so each walks only the partial
 * indexes of queue heads (migration 025; test/integration/webhook-outbox.test.ts reads their query plans): `next`,
 * when the earliest head is due (one index entry); `due`, for each webhook with pending deliveries, its due heads
 * in the order they came due, at most `per_webhook` of them, so one webhook's backlog never hides another's
 * delivery and the cost is a lookup per such webhook plus the heads returned, never the pending rows behind them.
 */
export const OUTBOX_SCANS = {
  next: `SELECT MIN(next_attempt_at) FROM webhook_deliveries WHERE status = 'pending' AND head = 1`,
  due: `SELECT d.seq, d.webhook_id, d.server_key, w.user_id FROM webhooks w
    JOIN webhook_deliveries d ON d.seq IN (SELECT seq FROM webhook_deliveries
      WHERE status = 'pending' AND head = 1 AND webhook_id = w.id AND next_attempt_at <= @now
      ORDER BY next_attempt_at LIMIT @per_webhook)
    WHERE w.pending > 0`,
};

type Statements = ReturnType<typeof statements>;

/** The repository's statements, prepared once (docs/conventions.md "Code layout"). */
function statements(db: Db) {
  return {
    next: db.prepare<unknown[], string | null>(OUTBOX_SCANS.next).pluck(),
    due: db.prepare<unknown[], Pick<DueRow, 'seq' | 'webhook_id' | 'server_key' | 'user_id'>>(OUTBOX_SCANS.due),
    // One row, fresh: still pending (a disabled or deleted webhook's rows are not), with the webhook as it is now.
    get: db.prepare<unknown[], DueRow>(`SELECT d.seq, d.webhook_id, w.user_id, d.server_key, d.attempts, w.url, w.secret,
        e.id AS event_id, e.type, e.server_id, e.data, e.created_at, e.actor
      FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id JOIN events e ON e.seq = d.event_seq
      WHERE d.seq = ? AND d.status = 'pending'`),
    // One queue's head, through deliveries_queue.
    head: db.prepare<unknown[], { seq: number; next_attempt_at: string }>(`SELECT seq, next_attempt_at FROM webhook_deliveries
      WHERE status = 'pending' AND webhook_id = ? AND server_key = ? ORDER BY seq LIMIT 1`),
    // The counts the triggers of migration 025 keep: one row per webhook read, never the deliveries.
    byStatus: db.prepare<unknown[], Record<'pending' | 'succeeded' | 'failed', number>>(`SELECT COALESCE(SUM(pending), 0) AS pending, COALESCE(SUM(succeeded), 0) AS succeeded,
      COALESCE(SUM(failed), 0) AS failed FROM webhooks`),
  };
}

/** The dispatcher's reads: what is due, one delivery as it is now, and the counts. */
function outboxReads(st: Statements, clock: Clock) {
  return {
    /**
     * The queue heads due now, at most `perWebhook` of each webhook (the ones due longest), with whose they are:
     * nothing but one index lookup while nothing is due (OUTBOX_SCANS).
     */
    dueHeads(perWebhook: number): DueHead[] {
      const now = iso(clock.now());
      const next = st.next.get() ?? null;
      if (next === null || next > now) return [];
      const rows = st.due.all({ now, per_webhook: perWebhook });
      return rows.map((r) => ({ seq: r.seq, webhookId: r.webhook_id, userId: r.user_id, group: `${r.webhook_id}/${r.server_key}` }));
    },

    /** The delivery as it is now, or null when it is no longer pending. */
    get: (seq: number): DueDelivery | null => {
      const row = st.get.get(seq);
      return row ? toDue(row) : null;
    },

    /** The seq of the head of one webhook's queue for one server when it is due now, else null. */
    dueHead(webhookId: string, serverKey: string): number | null {
      const row = st.head.get(webhookId, serverKey);
      return row && row.next_attempt_at <= iso(clock.now()) ? row.seq : null;
    },

    /** How many deliveries are in each status, all webhooks together (the operator's metrics: `pending` is the backlog). */
    countByStatus(): { status: string; count: number }[] {
      const counts = required(st.byStatus.get());
      return (['pending', 'succeeded', 'failed'] as const).map((status) => ({ status, count: counts[status] }));
    },

    /** When the earliest queue head is due (RFC 3339), or null when nothing is pending. */
    nextDue: (): string | null => st.next.get() ?? null,
  };
}

/** Writing attempts' outcomes: the delivery's row, the webhook's health and, when it is disabled, its event. */
function outcomeWrites(db: Db, clock: Clock, events: Pick<EventsRepo, 'raise'>, deliveries: DeliveryWrites, health: WebhookHealth) {
  function succeeded(d: DueDelivery, o: Outcome): void {
    db.transaction(() => {
      deliveries.succeed(d.seq, o.status, o.durationMs, iso(o.startedAt));
      health.healthy(d.webhookId);
    })();
  }

  /**
   * A failed attempt: tried again at `retryAt`; or, when the webhook has failed without a success for
   * `disableAfterMs`, the webhook is disabled, its pending deliveries fail and a webhook.disabled event is recorded,
   * all in one transaction. Returns whether it was disabled.
   */
  function failed(d: DueDelivery, o: Outcome, retryAt: number, disableAfterMs: number): boolean {
    return db.transaction(() => {
      deliveries.retry(d.seq, o.status, o.durationMs, o.error?.slice(0, 500) ?? null, iso(retryAt), iso(o.startedAt));
      const hook = health.failing(d.webhookId, iso(o.startedAt));
      if (!hook || Date.parse(hook.failing_since) > clock.now() - disableAfterMs) return false;
      if (!health.disable(d.webhookId, iso(clock.now()))) return false;
      deliveries.failPending(d.webhookId);
      events.raise('webhook.disabled', { webhook_id: d.webhookId, url: hook.url }, { userId: hook.user_id }, serviceActor('webhooks'));
      return true;
    })();
  }

  return {
    /**
     * Records many outcomes in one transaction (one fsync for all: the dispatcher batches the attempts that ended
     * in one turn of the event loop). `retryAt` says when each failed one is tried again. Returns the webhooks disabled.
     */
    recordAll(list: Array<{ d: DueDelivery; o: Outcome; retryAt: number }>, disableAfterMs: number): string[] {
      return db.transaction(() => {
        const disabled: string[] = [];
        for (const { d, o, retryAt } of list) {
          if (o.status !== null && o.status >= 200 && o.status < 300) succeeded(d, o);
          else if (failed(d, o, retryAt, disableAfterMs)) disabled.push(d.webhookId);
        }
        return disabled;
      })();
    },
    succeeded,
    failed,
  };
}

/**
 * The dispatcher's side of the outbox (src/store/migrations/013-webhooks.ts): its reads, and each attempt's outcome
 * written through the outbox's one writer (delivery-writes.ts) and the webhook's health through its owner
 * (WebhooksRepo's WebhookHealth), in one transaction. A row stays `pending` until an attempt's outcome is written, so after kill -9 the attempt in flight is made again (at least once) and nothing
 * else is repeated. docs/architecture.md "Events and webhooks".
 */
export function createOutboxRepo(db: Db, clock: Clock, events: Pick<EventsRepo, 'raise'>, deliveries: DeliveryWrites, health: WebhookHealth) {
  return { ...outboxReads(statements(db), clock), ...outcomeWrites(db, clock, events, deliveries, health) };
}

export type OutboxRepo = ReturnType<typeof createOutboxRepo>;
