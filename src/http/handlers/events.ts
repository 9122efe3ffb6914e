import type { EventsRepo, StoredEvent } from '../../store/events-repo';
import type { EventFeed } from '../../events/feed';
import type { Handlers } from '../types';
import { page, withCursor } from './paging';

/** Replayed after Last-Event-ID at most (the spec's streamEvents description). */
const REPLAY_LIMIT = 1000;

/** Events tag: listEvents, streamEvents. Every read is by the caller's user id (tenant isolation). */
export function eventHandlers(deps: { events: EventsRepo; feed: EventFeed }): Handlers {
  const { events, feed } = deps;
  return {
    listEvents: ({ principal, query }) => {
      const { limit, startingAfter } = page(query);
      const filter = { type: query.type, serverId: query.server_id };
      const desc = query.order === 'desc';
      return { status: 200, body: withCursor(events.page(principal.userId, { limit, startingAfter, desc, ...filter })) };
    },

    streamEvents: ({ principal, query, headers }) => {
      const userId = principal.userId;
      const filter = { type: query.type, serverId: query.server_id };
      const last = headers['last-event-id'];
      return {
        status: 200,
        stream: (write) => {
          // Subscribe first, then replay: an event committed in between comes through both and is sent once, as
          // `seq` only grows (docs/conventions.md "Real-time").
          let lastSent = Number.MAX_SAFE_INTEGER;
          const send = (e: StoredEvent) => {
            if (e.seq <= lastSent || e.userId !== userId) return;
            if ((filter.type && e.event.type !== filter.type) || (filter.serverId && e.event.server_id !== filter.serverId)) return;
            lastSent = e.seq;
            write({ event: e.event.type, id: e.event.id, data: e.event });
          };
          const unsubscribe = feed.subscribe(send);
          if (typeof last !== 'string') lastSent = feed.position();
          else for (const e of events.after(userId, (lastSent = events.seqOf(userId, last)), REPLAY_LIMIT, filter)) send(e);
          return unsubscribe;
        },
      };
    },
  };
}
