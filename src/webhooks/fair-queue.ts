import type { DueHead } from '../store/outbox-repo';

/** How many attempts may be under way at once for one user, and for one webhook (a user's share, and its parts). */
export interface FairLimits {
  perUser: number;
  perWebhook: number;
}

type Groups = Map<string, DueHead>; // queue (group) → its due head, first come first
type Webhooks = Map<string, Groups>;
type Counts = Map<string, number>; // attempts under way by user or by webhook; a key at 0 is gone

const busy = (m: Counts, key: string) => m.get(key) ?? 0;

function count(m: Counts, key: string, by: number): void {
  const n = busy(m, key) + by;
  if (n === 0) m.delete(key);
  else m.set(key, n);
}

/**
 * The first queue of `userId`'s first webhook that may start now, taken out of the queue's `users`; round robin
 * within the user.
 */
function takeOf(users: Map<string, Webhooks>, busyHooks: Counts, perWebhook: number, userId: string, hooks: Webhooks): DueHead | null {
  for (const [webhookId, groups] of hooks) {
    if (busy(busyHooks, webhookId) >= perWebhook) continue;
    const [group, head] = groups.entries().next().value as [string, DueHead];
    groups.delete(group);
    hooks.delete(webhookId);
    if (groups.size > 0) hooks.set(webhookId, groups); // to the back of this user's webhooks
    if (hooks.size === 0) users.delete(userId);
    return head;
  }
  return null;
}

/**
 * The due queue heads the dispatcher has not started yet, handed out fairly (docs/architecture.md "Events and
 * webhooks"): round robin between users, then between one user's webhooks, then first come first served between
 * one webhook's queues; a user never has more than `perUser` attempts under way, nor a webhook more than
 * `perWebhook`. So a user whose receivers hold every connection until it times out spends its own share only, and
 * one dead webhook of a user leaves that user's other webhooks theirs. A queue is known once, waiting or under way,
 * so a server's deliveries still go one at a time, in order.
 */
export function createFairQueue(limits: FairLimits) {
  const users = new Map<string, Webhooks>(); // the turn order: the user served last goes to the back
  const known = new Set<string>(); // groups waiting here or under way
  const holding = new Set<string>(); // groups under way that still hold their share (not yet released)
  const busyUsers: Counts = new Map();
  const busyHooks: Counts = new Map();
  let waiting = 0;

  return {
    /** A due head to start when its turn comes; ignored while its queue is already waiting or under way. */
    add(head: DueHead): void {
      if (known.has(head.group)) return;
      known.add(head.group);
      waiting++;
      const hooks = users.get(head.userId) ?? new Map<string, Groups>();
      users.set(head.userId, hooks);
      const groups = hooks.get(head.webhookId) ?? new Map<string, DueHead>();
      hooks.set(head.webhookId, groups);
      groups.set(head.group, head);
    },

    /** The next head to start, now counted as under way until `done`; null when none may start now. */
    take(): DueHead | null {
      for (const [userId, hooks] of users) {
        if (busy(busyUsers, userId) >= limits.perUser) continue;
        const head = takeOf(users, busyHooks, limits.perWebhook, userId, hooks);
        if (!head) continue;
        if (users.delete(userId) && hooks.size > 0) users.set(userId, hooks); // to the back of the turn order
        waiting--;
        holding.add(head.group);
        count(busyUsers, head.userId, 1);
        count(busyHooks, head.webhookId, 1);
        return head;
      }
      return null;
    },

    /**
     * The attempt of a head `take` gave no longer holds a connection (its answer came, or its time ran out): its
     * share is free for another of its user's queues, while its own queue waits for `done` (its outcome written).
     */
    release(head: DueHead): void {
      if (!holding.delete(head.group)) return;
      count(busyUsers, head.userId, -1);
      count(busyHooks, head.webhookId, -1);
    },

    /** The attempt of a head `take` gave is over and recorded: its queue may come again (its share released too). */
    done(head: DueHead): void {
      this.release(head);
      known.delete(head.group);
    },

    /** Heads waiting for their turn. */
    waiting: () => waiting,

    /** Forgets every waiting head (at close); those under way stay counted until their `done`. */
    clear(): void {
      for (const hooks of users.values()) for (const groups of hooks.values()) for (const g of groups.keys()) known.delete(g);
      users.clear();
      waiting = 0;
    },
  };
}

export type FairQueue = ReturnType<typeof createFairQueue>;
