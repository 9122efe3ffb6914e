import type { Clock } from '../clock';
import type { Logger } from '../log';
import type { EventFeed } from '../events/feed';
import type { DueDelivery, DueHead, Outcome, OutboxRepo } from '../store/outbox-repo';
import { systemLookup, type Lookup } from './address';
import { createAgents, sendOnce, type Agents } from './send';
import { createFairQueue, type FairQueue } from './fair-queue';

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
export interface DispatcherDeps {
  outbox: OutboxRepo;
  feed: EventFeed;
  clock: Clock;
  log: Logger;
  config: DispatcherConfig;
}

/** The dispatcher's mutable state: one object, owned by createDispatcher and handed to each piece below. */
interface State {
  closed: boolean;
  /** A pump is scheduled (setImmediate). */
  queued: boolean;
  /** The outbox may hold due heads the fair queue does not know: the next pump scans (at most once per scanGapMs). */
  scanWanted: boolean;
  lastScan: number;
  scanTimer: NodeJS.Timeout | null;
  /** Attempts holding a connection (or waiting for one's time limit): what `concurrency` bounds. */
  sending: number;
  /** Attempts until their outcome is written, by queue (group). */
  inFlight: Map<string, Promise<void>>;
  /** Ends the wait of attempts that got no answer (send.ts); a new one at each start. */
  stopping: AbortController;
}

type RecordOutcome = (d: DueDelivery, o: Outcome, retryAt: number) => Promise<void>;

/**
 * Outcomes wait for the next write, which records every outcome gathered since the last one in one transaction
 * (synchronous=FULL: one fsync). Each attempt's queue stays busy until its outcome is committed, so a kill -9
 * repeats at most the one unrecorded attempt per webhook and server (at least once, in order).
 */
function outcomeWriter({ outbox, config, log }: DispatcherDeps): RecordOutcome {
  let outcomes: Array<{ d: DueDelivery; o: Outcome; retryAt: number; written: () => void }> = [];
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
  return (d, o, retryAt) => new Promise<void>((written) => {
    if (outcomes.push({ d, o, retryAt, written }) === 1) setImmediate(write);
  });
}

/** One attempt at a head; after a success, the queue's next head when it is due (else the poll finds it). */
async function attempt(deps: DispatcherDeps, state: State, agents: Agents, record: RecordOutcome, head: DueHead, release: () => void): Promise<DueHead | null> {
  const { outbox, config, log } = deps;
  let d: DueDelivery | null;
  try {
    d = outbox.get(head.seq); // as it is now: a webhook changed since the scan is sent as changed, or not at all
  } catch (err) {
    state.scanWanted = true;
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
      signal: state.stopping.signal,
    });
  } finally {
    release();
  }
  await record(d, o, deps.clock.now() + retryDelay(d.attempts, config.retryBaseMs, config.retryMaxMs));
  if (o.status === null || o.status < 200 || o.status >= 300) return null; // a retry is found by a scan when due
  try {
    const next = outbox.dueHead(d.webhookId, d.serverKey);
    return next === null ? null : { ...head, seq: next };
  } catch {
    state.scanWanted = true;
    return null;
  }
}

/** Fills the fair queue from the outbox: a few due heads of each webhook (`perScan`). */
function scan(outbox: OutboxRepo, fair: FairQueue, perScan: number, state: State): void {
  state.lastScan = Date.now();
  state.scanWanted = false;
  const perWebhook = new Map<string, number>();
  for (const head of outbox.dueHeads(perScan)) {
    fair.add(head);
    perWebhook.set(head.webhookId, (perWebhook.get(head.webhookId) ?? 0) + 1);
  }
  for (const n of perWebhook.values()) if (n === perScan) state.scanWanted = true; // a webhook had more due
}

/**
 * The loop: schedule() runs one pump soon; a pump scans when a scan is wanted and due, then starts attempts
 * while fewer than `concurrency` hold a connection and the fair queue gives a head.
 */
function pumpLoop(deps: DispatcherDeps, state: State, fair: FairQueue, agents: Agents): () => void {
  const { outbox, config, log } = deps;
  const perScan = config.perWebhook * 2; // enough to keep a webhook's share busy until the next scan
  const record = outcomeWriter(deps);

  function pump(): void {
    state.queued = false;
    if (state.closed) return;
    if (state.scanWanted && !state.scanTimer) {
      const wait = state.lastScan + config.scanGapMs - Date.now();
      try {
        if (wait <= 0) scan(outbox, fair, perScan, state);
        else {
          state.scanTimer = setTimeout(() => {
            state.scanTimer = null;
            schedule();
          }, wait);
        }
      } catch (err) {
        log.error('reading the webhook outbox failed; retried at the next poll', { error: String(err) });
      }
    }
    while (state.sending < config.concurrency) {
      const head = fair.take();
      if (!head) break;
      state.sending++;
      let held = true;
      // The connection is done with: the share goes to the next attempt while this outcome waits for its write
      // (one fsync for a batch); the queue itself stays busy until then (in order, at least once).
      const release = () => {
        if (!held) return;
        held = false;
        state.sending--;
        fair.release(head);
        schedule();
      };
      let next: DueHead | null = null;
      const p = attempt(deps, state, agents, record, head, release)
        .then((n) => void (next = n))
        .finally(() => {
          release();
          state.inFlight.delete(head.group);
          fair.done(head);
          if (next && !state.closed) fair.add(next);
          schedule();
        });
      state.inFlight.set(head.group, p);
    }
  }

  function schedule(): void {
    if (state.queued || state.closed) return;
    state.queued = true;
    setImmediate(pump);
  }
  return schedule;
}

export function createDispatcher(deps: DispatcherDeps) {
  const { config } = deps;
  const state: State = {
    closed: true, queued: false, scanWanted: true, lastScan: 0, scanTimer: null,
    sending: 0, inFlight: new Map(), stopping: new AbortController(),
  };
  const fair = createFairQueue(config);
  const agents = createAgents({ max: 1024, socketsPerAgent: config.perWebhook, idleMs: 30_000 });
  const schedule = pumpLoop(deps, state, fair, agents);
  let timer: NodeJS.Timeout | null = null;
  let unsubscribe: (() => void) | null = null;

  /** New events or the poll: the outbox may hold heads the fair queue does not know. */
  function wake(): void {
    state.scanWanted = true;
    schedule();
  }

  return {
    start(): void {
      if (!state.closed) return;
      state.closed = false;
      state.stopping = new AbortController();
      unsubscribe = deps.feed.subscribe(wake);
      timer = setInterval(wake, config.pollMs).unref();
      wake();
    },
    /** Stops taking deliveries and waits for the attempts under way (their outcomes are recorded). */
    async close(): Promise<void> {
      state.closed = true;
      unsubscribe?.();
      if (timer) clearInterval(timer);
      if (state.scanTimer) clearTimeout(state.scanTimer);
      state.scanTimer = null;
      state.stopping.abort();
      await Promise.allSettled([...state.inFlight.values()]);
      fair.clear();
      agents.destroy();
    },
    /** Attempts under way (tests, bench). */
    inFlight: () => state.inFlight.size,
  };
}

export type Dispatcher = ReturnType<typeof createDispatcher>;
