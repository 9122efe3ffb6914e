import type { Clock } from '../clock';
import type { Logger } from '../log';
import type { EventFeed } from '../events/feed';
import type { DueDelivery, DueHead, Outcome, OutboxRepo } from '../store/outbox-repo';
import { systemLookup, type Lookup } from './address';
import { createAgents, sendOnce } from './send';
import { createFairQueue } from './fair-queue';

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
  /** Attempts under way at once, all users together (one per webhook and server at most). */
  concurrency: number;
  /** Attempts under way at once for one user: the share its receivers may hold, however slow or dead. */
  perUser: number;
  /** Attempts under way at once for one webhook: its part of its user's share. */
  perWebhook: number;
  /** How often due retries are looked for; new events wake the dispatcher at once through the feed. */
  pollMs: number;
  /** The least time between two scans of the outbox (a backlog is worked off between them without scanning). */
  scanGapMs: number;
  lookup: Lookup;
}

export const dispatcherDefaults: Omit<DispatcherConfig, 'allowPrivate' | 'timeoutMs' | 'disableAfterMs'> = {
  retryBaseMs: 5_000,
  retryMaxMs: 3_600_000,
  concurrency: 512,
  perUser: 32,
  perWebhook: 16,
  pollMs: 1_000,
  scanGapMs: 50,
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
 * server, one attempt per queue at a time, so a server's events arrive in order. A row stays pending until its
 * outcome is written, so delivery is at least once across kill -9.
 *
 * Fair between tenants: due heads wait in a fair queue (fair-queue.ts) that takes turns between users and between
 * a user's webhooks, and lets no user have more than `perUser` attempts under way (no webhook more than
 * `perWebhook`), of `concurrency` in all. A receiver that holds each attempt until it times out (or a closed port,
 * whose attempts take as long: send.ts) so costs its own user's share, never another's.
 *
 * A scan of the outbox (OutboxRepo.dueHeads: a few due heads of each webhook, nothing while nothing is due) fills
 * the fair queue when events arrive (the feed), at each poll (retries that came due) and while a webhook had more
 * due than a scan takes, at most once per `scanGapMs`; a queue whose head succeeded puts its next row in line
 * itself, with one index lookup. So a backlog is worked off without scanning every pending row per delivery.
 */
export function createDispatcher(deps: { outbox: OutboxRepo; feed: EventFeed; clock: Clock; log: Logger; config: DispatcherConfig }) {
  const { outbox, config, log } = deps;
  const inFlight = new Map<string, Promise<void>>(); // attempts until their outcome is written
  let sending = 0; // attempts holding a connection (or waiting for one's time limit): what `concurrency` bounds
  const fair = createFairQueue(config);
  const perScan = config.perWebhook * 2; // enough to keep a webhook's share busy until the next scan
  const agents = createAgents({ max: 1024, socketsPerAgent: config.perWebhook, idleMs: 30_000 });
  let stopping = new AbortController(); // ends the wait of attempts that got no answer (send.ts)
  let timer: NodeJS.Timeout | null = null;
  let scanTimer: NodeJS.Timeout | null = null;
  let unsubscribe: (() => void) | null = null;
  let queued = false;
  let scanWanted = true;
  let lastScan = 0;
  let closed = true;
  // Outcomes waiting for the next write: each attempt's queue stays busy until its outcome is committed, so a
  // kill -9 repeats at most the one unrecorded attempt per webhook and server (at least once, in order).
  let outcomes: Array<{ d: DueDelivery; o: Outcome; retryAt: number; written: () => void }> = [];

  function scan(): void {
    lastScan = Date.now();
    scanWanted = false;
    const perWebhook = new Map<string, number>();
    for (const head of outbox.dueHeads(perScan)) {
      fair.add(head);
      perWebhook.set(head.webhookId, (perWebhook.get(head.webhookId) ?? 0) + 1);
    }
    for (const n of perWebhook.values()) if (n === perScan) scanWanted = true; // a webhook had more due
  }

  function pump(): void {
    queued = false;
    if (closed) return;
    if (scanWanted && !scanTimer) {
      const wait = lastScan + config.scanGapMs - Date.now();
      try {
        if (wait <= 0) scan();
        else scanTimer = setTimeout(() => ((scanTimer = null), schedule()), wait);
      } catch (err) {
        log.error('reading the webhook outbox failed; retried at the next poll', { error: String(err) });
      }
    }
    while (sending < config.concurrency) {
      const head = fair.take();
      if (!head) break;
      sending++;
      let held = true;
      // The connection is done with: the share goes to the next attempt while this outcome waits for its write
      // (one fsync for a batch); the queue itself stays busy until then (in order, at least once).
      const release = () => {
        if (!held) return;
        held = false;
        sending--;
        fair.release(head);
        schedule();
      };
      let next: DueHead | null = null;
      const p = attempt(head, release)
        .then((n) => void (next = n))
        .finally(() => {
          release();
          inFlight.delete(head.group);
          fair.done(head);
          if (next && !closed) fair.add(next);
          schedule();
        });
      inFlight.set(head.group, p);
    }
  }

  function schedule(): void {
    if (queued || closed) return;
    queued = true;
    setImmediate(pump);
  }

  /** New events or the poll: the outbox may hold heads the fair queue does not know. */
  function wake(): void {
    scanWanted = true;
    schedule();
  }

  /** One attempt at a head; after a success, the queue's next head when it is due (else the poll finds it). */
  async function attempt(head: DueHead, release: () => void): Promise<DueHead | null> {
    let d: DueDelivery | null;
    try {
      d = outbox.get(head.seq); // as it is now: a webhook changed since the scan is sent as changed, or not at all
    } catch (err) {
      scanWanted = true;
      log.error('reading a webhook delivery failed; retried at the next poll', { error: String(err) });
      return null;
    }
    if (!d) return null;
    let o: Outcome;
    try {
      o = await sendOnce(d.url, d.secret, { id: d.event.id, body: JSON.stringify(d.event) }, {
        allowPrivate: config.allowPrivate,
        lookup: config.lookup,
        timeoutMs: config.timeoutMs,
        now: () => Date.now(), // the receiver checks webhook-timestamp against its own clock
        agents,
        webhookId: d.webhookId,
        signal: stopping.signal,
      });
    } finally {
      release();
    }
    const retryAt = deps.clock.now() + retryDelay(d.attempts, config.retryBaseMs, config.retryMaxMs);
    await new Promise<void>((written) => {
      if (outcomes.push({ d: d!, o, retryAt, written }) === 1) setImmediate(write);
    });
    if (o.status === null || o.status < 200 || o.status >= 300) return null; // a retry is found by a scan when due
    try {
      const next = outbox.dueHead(d.webhookId, d.serverKey);
      return next === null ? null : { ...head, seq: next };
    } catch {
      scanWanted = true;
      return null;
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
      stopping = new AbortController();
      unsubscribe = deps.feed.subscribe(wake);
      timer = setInterval(wake, config.pollMs).unref();
      wake();
    },
    /** Stops taking deliveries and waits for the attempts under way (their outcomes are recorded). */
    async close(): Promise<void> {
      closed = true;
      unsubscribe?.();
      if (timer) clearInterval(timer);
      if (scanTimer) clearTimeout(scanTimer);
      scanTimer = null;
      stopping.abort();
      await Promise.allSettled([...inFlight.values()]);
      fair.clear();
      agents.destroy();
    },
    /** Attempts under way (tests, bench). */
    inFlight: () => inFlight.size,
  };
}

export type Dispatcher = ReturnType<typeof createDispatcher>;
