import type { EventsRepo, StoredEvent } from '../store/events-repo';
import type { Logger } from '../log';

/** How many events one poll reads at most; a longer backlog is read in further polls of the same round. */
const BATCH = 500;

/**
 * New events as they are committed, for the live stream (GET /v1/events/stream) and the webhook dispatcher.
 * Events are written inside other repositories' transactions, which may roll back, so nothing is announced from
 * inside them; the feed reads the table instead, every `pollMs` (one indexed query for all listeners), which also
 * sees events another process wrote on the same database (the CLI). docs/architecture.md "Events and webhooks".
 */
export function createEventFeed(deps: { events: Pick<EventsRepo, 'since' | 'maxSeq'>; pollMs: number; log: Logger }) {
  const listeners = new Set<(e: StoredEvent) => void>();
  let last = deps.events.maxSeq();
  let timer: NodeJS.Timeout | null = null;

  function poll(): void {
    try {
      for (;;) {
        const batch = deps.events.since(last, BATCH);
        for (const e of batch) {
          last = e.seq;
          for (const fn of [...listeners]) fn(e);
        }
        if (batch.length < BATCH) return;
      }
    } catch (err) {
      deps.log.error('reading new events failed; retried at the next poll', { error: String(err) });
    }
  }

  return {
    /** Calls `fn` with every event committed from now on, in `seq` order; returns the unsubscribe function. */
    subscribe(fn: (e: StoredEvent) => void): () => void {
      if (!timer) {
        last = Math.max(last, deps.events.maxSeq());
        timer = setInterval(poll, deps.pollMs).unref();
      }
      listeners.add(fn);
      return () => {
        listeners.delete(fn);
        if (listeners.size === 0 && timer) {
          clearInterval(timer);
          timer = null;
        }
      };
    },
    /** The last event the feed has announced (a stream without Last-Event-ID starts after it). */
    position: () => last,
    /** Reads now rather than at the next tick (tests, and the dispatcher after it wrote an event itself). */
    poll,
    close(): void {
      listeners.clear();
      if (timer) clearInterval(timer);
      timer = null;
    },
  };
}

export type EventFeed = ReturnType<typeof createEventFeed>;
