import type { Clock } from '../clock';
import type { Logger } from '../log';
import type { EventFeed } from '../events/feed';
import type { DueDelivery, Outcome, OutboxRepo } from '../store/outbox-repo';
import { systemLookup, type Lookup } from './address';
import { createAgents, sendOnce } from './send';

export interface DispatcherConfig {
  /** WEBHOOK_ALLOW_PRIVATE: private and loopback addresses, and http:, are allowed (private deployments, tests). */
  allowPrivate: boolean;
  /** One attempt's limit, answer included (WEBHOOK_TIMEOUT_S). */
  timeoutMs: number;
  /** A webhook failing this long without a success is disabled (WEBHOOK_DISABLE_AFTER_S). */
  disableAfterMs: number;
  /** The first retry's delay; each further one doubles, up to retryMaxMs, with jitter. */
  retryBaseMs: number;
  retryMaxMs: number;
  /** Attempts under way at once, across webhooks and servers (one per webhook and server). */
  concurrency: number;
  /** How often due retries are looked for; new events wake the dispatcher at once through the feed. */
  pollMs: number;
  lookup: Lookup;
}

export const dispatcherDefaults: Omit<DispatcherConfig, 'allowPrivate' | 'timeoutMs' | 'disableAfterMs'> = {
  retryBaseMs: 5_000,
  retryMaxMs: 3_600_000,
  concurrency: 32,
  pollMs: 1_000,
  lookup: systemLookup,
};

/**
 * Full jitter between half and all of the doubled delay, so receivers that come back are not hit by every
 * webhook's retries in the same second (Standard Webhooks, "Retry schedule", recommends exponential backoff).
 */
export function retryDelay(attempts: number, base: number, max: number, random = Math.random): number {
  const full = Math.min(max, base * 2 ** Math.min(attempts, 30));
  return Math.round(full / 2 + (random() * full) / 2);
}

/**
 * Works the outbox off (docs/architecture.md "Events and webhooks"): the due head of each webhook's queue per
 * server, at most `concurrency` attempts at once and one per queue, so a server's events arrive in order. A row
 * stays pending until its outcome is written, so delivery is at least once across kill -9.
 *
 * Due heads wait in `ready`, oldest known first. A scan of the outbox finds them when events arrive (the feed),
 * at each poll (retries that came due) and while an earlier scan was cut at its limit; a queue whose head
 * succeeded puts its next row at the back of `ready` itself, with one index lookup. So a backlog is worked off
 * without scanning every pending row per delivery, and queues take turns.
 */
export function createDispatcher(deps: { outbox: OutboxRepo; feed: EventFeed; clock: Clock; log: Logger; config: DispatcherConfig }) {
  const { outbox, config, log } = deps;
  const inFlight = new Map<string, Promise<void>>();
  const ready = new Map<string, number>(); // queue (group) → seq of its due head
  const agents = createAgents({ max: 256, socketsPerAgent: config.concurrency, idleMs: 30_000 });
  let timer: NodeJS.Timeout | null = null;
  let unsubscribe: (() => void) | null = null;
  let queued = false;
  let scanWanted = true;
  let closed = true;
  // Outcomes waiting for the next write: each attempt's queue stays busy until its outcome is committed, so a
  // kill -9 repeats at most the one unrecorded attempt per webhook and server (at least once, in order).
  let outcomes: Array<{ d: DueDelivery; o: Outcome; retryAt: number; written: () => void }> = [];

  function scan(limit: number): void {
    const heads = outbox.due(limit);
    for (const d of heads) if (!inFlight.has(d.group)) ready.set(d.group, d.seq);
    scanWanted = heads.length === limit; // cut at the limit: more heads wait
  }

  function pump(): void {
    queued = false;
    if (closed) return;
    let free = config.concurrency - inFlight.size;
    if (free <= 0) return;
    try {
      if (scanWanted && ready.size < free) scan(config.concurrency + inFlight.size);
    } catch (err) {
      scanWanted = true;
      log.error('reading the webhook outbox failed; retried at the next poll', { error: String(err) });
    }
    for (const [group, seq] of ready) {
      if (free <= 0) break;
      if (inFlight.has(group)) continue;
      ready.delete(group);
      const p = attempt(seq).finally(() => {
        inFlight.delete(group);
        schedule();
      });
      inFlight.set(group, p);
      free--;
    }
  }

  function schedule(): void {
    if (queued || closed) return;
    queued = true;
    setImmediate(pump);
  }

  /** New events or the poll: the outbox may hold heads `ready` does not know. */
  function wake(): void {
    scanWanted = true;
    schedule();
  }

  async function attempt(seq: number): Promise<void> {
    let d: DueDelivery | null;
    try {
      d = outbox.get(seq); // as it is now: a webhook changed since the scan is sent as changed, or not at all
    } catch (err) {
      scanWanted = true;
      return log.error('reading a webhook delivery failed; retried at the next poll', { error: String(err) });
    }
    if (!d) return;
    const o = await sendOnce(d.url, d.secret, { id: d.event.id, body: JSON.stringify(d.event) }, {
      allowPrivate: config.allowPrivate,
      lookup: config.lookup,
      timeoutMs: config.timeoutMs,
      now: () => Date.now(), // the receiver checks webhook-timestamp against its own clock
      agents,
    });
    const retryAt = deps.clock.now() + retryDelay(d.attempts, config.retryBaseMs, config.retryMaxMs);
    await new Promise<void>((written) => {
      if (outcomes.push({ d: d!, o, retryAt, written }) === 1) setImmediate(write);
    });
    if (o.status === null || o.status < 200 || o.status >= 300) return; // a retry is found by the poll when due
    try {
      const next = outbox.dueHead(d.webhookId, d.serverKey);
      if (next !== null && !closed) ready.set(d.group, next);
    } catch {
      scanWanted = true;
    }
  }

  /** Writes every outcome gathered since the last write in one transaction (synchronous=FULL: one fsync). */
  function write(): void {
    const batch = outcomes;
    outcomes = [];
    try {
      for (const id of outbox.recordAll(batch, config.disableAfterMs)) log.warn('webhook disabled after failing', { webhook_id: id });
    } catch (err) {
      log.error('recording webhook attempts failed; they are made again', { error: String(err) });
    }
    for (const b of batch) b.written();
  }

  return {
    start(): void {
      if (!closed) return;
      closed = false;
      unsubscribe = deps.feed.subscribe(wake);
      timer = setInterval(wake, config.pollMs).unref();
      wake();
    },
    /** Stops taking deliveries and waits for the attempts under way (their outcomes are recorded). */
    async close(): Promise<void> {
      closed = true;
      unsubscribe?.();
      if (timer) clearInterval(timer);
      await Promise.allSettled([...inFlight.values()]);
      ready.clear();
      agents.destroy();
    },
    /** Attempts under way (tests, bench). */
    inFlight: () => inFlight.size,
  };
}

export type Dispatcher = ReturnType<typeof createDispatcher>;
