import crypto from 'node:crypto';
import { required, type Db } from './db';
import type { Clock } from '../clock';
import { iso } from '../clock';
import { newId } from '../ids';
import { AppError, quotaExceeded } from '../errors';
import type { components } from '../../generated/v1';
import type { EventsRepo } from './events-repo';
import type { DeliveryWrites } from './delivery-writes';

export type Webhook = components['schemas']['Webhook'];
export type CreatedWebhook = components['schemas']['CreatedWebhook'];
export type WebhookDelivery = components['schemas']['WebhookDelivery'];
type EventType = components['schemas']['EventType'];

interface WebhookRow {
  id: string;
  user_id: string;
  url: string;
  event_types: string;
  secret: string;
  enabled: 0 | 1;
  failing_since: string | null;
  disabled_reason: 'failing' | null;
  created_at: string;
  updated_at: string;
}

export interface DeliveryRow {
  seq: number;
  id: string;
  webhook_id: string;
  event_seq: number;
  status: components['schemas']['DeliveryStatus'];
  attempts: number;
  response_status: number | null;
  duration_ms: number | null;
  error: string | null;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  created_at: string;
  event_id: string;
  event_type: EventType;
}

function toWebhook(row: WebhookRow): Webhook {
  return {
    id: row.id,
    url: row.url,
    event_types: JSON.parse(row.event_types) as EventType[],
    enabled: row.enabled === 1,
    failing_since: row.failing_since,
    disabled_reason: row.disabled_reason,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function toDelivery(row: DeliveryRow): WebhookDelivery {
  return {
    id: row.id, event_id: row.event_id, event_type: row.event_type, status: row.status, attempts: row.attempts,
    response_status: row.response_status, duration_ms: row.duration_ms, error: row.error, next_attempt_at: row.next_attempt_at,
    last_attempt_at: row.last_attempt_at, created_at: row.created_at,
  };
}

/** Standard Webhooks §"Signature scheme": `whsec_` and the base64 of the key, here 32 random bytes. */
const newSecret = () => `whsec_${crypto.randomBytes(32).toString('base64')}`;

export interface WebhookInput {
  url: string;
  event_types: EventType[];
  enabled?: boolean;
}

const NOT_FOUND = (id: string) => new AppError('webhook_not_found', `There is no webhook ${id}.`);

type Statements = ReturnType<typeof statements>;

/** The repository's statements, prepared once (docs/conventions.md "Code layout"). */
function statements(db: Db) {
  const delivery = `SELECT d.*, e.id AS event_id, e.type AS event_type FROM webhook_deliveries d JOIN events e ON e.seq = d.event_seq`;
  return {
    insert: db.prepare(`INSERT INTO webhooks (id, user_id, url, event_types, secret, enabled, created_at, updated_at)
      VALUES (@id, @user_id, @url, @event_types, @secret, @enabled, @created_at, @updated_at)`),
    count: db.prepare<unknown[], number>('SELECT COUNT(*) FROM webhooks WHERE user_id = ?').pluck(),
    one: db.prepare<unknown[], WebhookRow>('SELECT * FROM webhooks WHERE id = ? AND user_id = ?'),
    page: db.prepare<unknown[], WebhookRow>('SELECT * FROM webhooks WHERE user_id = ? AND id > ? ORDER BY id LIMIT ?'),
    update: db.prepare(`UPDATE webhooks SET url = @url, event_types = @event_types, enabled = @enabled,
      failing_since = @failing_since, disabled_reason = @disabled_reason, updated_at = @updated_at WHERE id = @id`),
    setSecret: db.prepare('UPDATE webhooks SET secret = ?, updated_at = ? WHERE id = ?'),
    remove: db.prepare('DELETE FROM webhooks WHERE id = ? AND user_id = ?'),
    healthy: db.prepare('UPDATE webhooks SET failing_since = NULL WHERE id = ?'),
    failing: db.prepare<unknown[], { user_id: string; url: string; failing_since: string }>('UPDATE webhooks SET failing_since = COALESCE(failing_since, ?) WHERE id = ? RETURNING user_id, url, failing_since'),
    disable: db.prepare(`UPDATE webhooks SET enabled = 0, disabled_reason = 'failing', updated_at = ? WHERE id = ? AND enabled = 1`),
    // An unknown cursor stands by the time in its id, as for events (events-repo.ts).
    deliverySeq: db.prepare<unknown[], number>(`SELECT COALESCE((SELECT seq FROM webhook_deliveries WHERE id = @id AND webhook_id = @webhook_id),
      (SELECT MIN(seq) FROM webhook_deliveries WHERE webhook_id = @webhook_id AND id >= @id), 9007199254740991)`).pluck(),
    deliveries: db.prepare<unknown[], DeliveryRow>(`${delivery} WHERE d.webhook_id = ? AND d.seq < ? ORDER BY d.seq DESC LIMIT ?`),
    deliveryOf: db.prepare<unknown[], DeliveryRow>(`${delivery} WHERE e.id = ? AND d.webhook_id = ?`),
  };
}

/** The user's webhook by id; webhook_not_found when it is not theirs (or gone). */
function owned(st: Statements, userId: string, id: string): WebhookRow {
  const row = st.one.get(id, userId);
  if (!row) throw NOT_FOUND(id);
  return row;
}

/** The dispatcher's record of a webhook's deliveries (OutboxRepo, in its transactions): by webhook id, no user. */
function deliveryHealth(st: Statements) {
  return {
    /** A delivery succeeded: the webhook is not failing. */
    healthy: (id: string): void => void st.healthy.run(id),
    /** A delivery failed: failing since `at` unless it already was; the webhook's owner, url and since when, if it exists. */
    failing: (id: string, at: string) => st.failing.get(at, id),
    /** Disables a webhook that failed too long; false if it was disabled already (or is gone). */
    disable: (id: string, at: string): boolean => st.disable.run(at, id).changes > 0,
  };
}

/** Creating, changing, re-keying and deleting a user's webhook. */
function webhookEdits(db: Db, st: Statements, clock: Clock, deliveries: Pick<DeliveryWrites, 'failPending'>) {
  return {
    /** A new webhook with its secret (shown once); past `perUser` webhooks, 403 quota_exceeded, nothing written. */
    create(userId: string, input: WebhookInput, perUser: number): CreatedWebhook {
      return db
        .transaction(() => {
          const used = required(st.count.get(userId));
          if (used >= perUser) throw quotaExceeded('webhooks', perUser, used, `This account already has ${used} webhooks, the most allowed.`);
          const now = iso(clock.now());
          const row: WebhookRow = {
            id: newId('whk', clock.now()), user_id: userId, url: input.url, event_types: JSON.stringify(input.event_types),
            secret: newSecret(), enabled: input.enabled === false ? 0 : 1, failing_since: null, disabled_reason: null,
            created_at: now, updated_at: now,
          };
          st.insert.run(row);
          return { ...toWebhook(row), secret: row.secret };
        })
        .immediate();
    },

    /**
     * Changes url, event types and enabled. Disabling fails its pending deliveries (nothing is sent while disabled);
     * enabling clears the failure record, so a webhook the service disabled starts afresh.
     */
    update(userId: string, id: string, patch: Partial<WebhookInput>): Webhook {
      return db
        .transaction(() => {
          const row = owned(st, userId, id);
          const enabled = patch.enabled === undefined ? row.enabled : patch.enabled ? 1 : 0;
          const fresh = enabled === 1 && row.enabled === 0;
          const next: WebhookRow = {
            ...row,
            url: patch.url ?? row.url,
            event_types: patch.event_types ? JSON.stringify(patch.event_types) : row.event_types,
            enabled,
            failing_since: fresh ? null : row.failing_since,
            disabled_reason: enabled === 1 ? null : row.disabled_reason,
            updated_at: iso(clock.now()),
          };
          st.update.run(next);
          if (enabled === 0) deliveries.failPending(id);
          return toWebhook(next);
        })
        .immediate();
    },

    /** A new secret, shown once; retries of earlier events are signed with it too. */
    rotate(userId: string, id: string): CreatedWebhook {
      const row = owned(st, userId, id);
      const secret = newSecret();
      const now = iso(clock.now());
      st.setSecret.run(secret, now, id);
      return { ...toWebhook({ ...row, updated_at: now }), secret };
    },

    /** Deletes it with its deliveries (ON DELETE CASCADE). */
    remove(userId: string, id: string): void {
      if (st.remove.run(id, userId).changes !== 1) throw NOT_FOUND(id);
    },
  };
}

/** Reading a user's webhooks and their deliveries, and the test delivery (an event owed to one webhook). */
function webhookReads(db: Db, st: Statements, events: Pick<EventsRepo, 'raise'>) {
  return {
    list(userId: string, limit: number, startingAfter = '') {
      const rows = st.page.all(userId, startingAfter, limit + 1);
      return { data: rows.slice(0, limit).map(toWebhook), has_more: rows.length > limit };
    },

    get: (userId: string, id: string): Webhook => toWebhook(owned(st, userId, id)),

    /** Its deliveries, newest first (docs/conventions.md "Collections"). */
    deliveries(userId: string, id: string, opts: { limit: number; startingAfter?: string }) {
      owned(st, userId, id);
      const cursor = opts.startingAfter;
      const before = cursor === undefined ? Number.MAX_SAFE_INTEGER : required(st.deliverySeq.get({ id: cursor, webhook_id: id }));
      const rows = st.deliveries.all(id, before, opts.limit + 1);
      return { data: rows.slice(0, opts.limit).map(toDelivery), has_more: rows.length > opts.limit };
    },

    /** Records a webhook.test event owed to this webhook only (also while disabled) and answers its delivery. */
    test(userId: string, id: string): WebhookDelivery {
      const row = owned(st, userId, id);
      return db.transaction(() => {
        const event = required(events.raise('webhook.test', { webhook_id: id, url: row.url }, { userId, onlyWebhook: id }));
        return toDelivery(required(st.deliveryOf.get(event.id, id)));
      })();
    },
  };
}

/**
 * The `webhooks` table, its one writer (the delivery health the dispatcher records goes through `health`), and the
 * read side of its outbox (docs/architecture.md "Events and webhooks"); the outbox's rows are written by
 * delivery-writes.ts, the dispatcher's reads are in outbox-repo.ts. Every call but `health`'s takes the caller's user
 * id (tenant isolation).
 */
export function createWebhooksRepo(db: Db, clock: Clock, events: Pick<EventsRepo, 'raise'>, deliveries: Pick<DeliveryWrites, 'failPending'>) {
  const st = statements(db);
  return { health: deliveryHealth(st), ...webhookEdits(db, st, clock, deliveries), ...webhookReads(db, st, events) };
}

export type WebhooksRepo = ReturnType<typeof createWebhooksRepo>;
export type WebhookHealth = WebhooksRepo['health'];
