import type { Db } from './db';
import type { Clock } from '../clock';
import { iso } from '../clock';

/** How long an address stays known without a sign-in from it, and how many a user keeps. */
const KNOWN_FOR_MS = 30 * 86_400_000;
const PER_USER = 20;

/**
 * The addresses each user signed in from (migration 008). The sign-in throttle lets the right password from one
 * of them through even while others fail for that email (docs/conventions.md "Authentication").
 */
export function createKnownAddressesRepo(db: Db, clock: Clock) {
  const known = db
    .prepare('SELECT 1 FROM known_addresses WHERE user_id = ? AND address = ? AND last_used_at > ?')
    .pluck();
  const upsert = db.prepare(`INSERT INTO known_addresses (user_id, address, last_used_at) VALUES (?, ?, ?)
    ON CONFLICT (user_id, address) DO UPDATE SET last_used_at = excluded.last_used_at`);
  const prune = db.prepare(`DELETE FROM known_addresses WHERE user_id = ? AND (last_used_at <= ? OR address NOT IN
    (SELECT address FROM known_addresses WHERE user_id = ? ORDER BY last_used_at DESC LIMIT ${PER_USER}))`);
  const forget = db.prepare('DELETE FROM known_addresses WHERE user_id = ?');

  return {
    has(userId: string, address: string): boolean {
      return known.get(userId, address, iso(clock.now() - KNOWN_FOR_MS)) !== undefined;
    },

    /** Records a successful sign-in from `address`; keeps the user's 20 most recent addresses of the last 30 days. */
    remember(userId: string, address: string): void {
      const now = clock.now();
      db.transaction(() => {
        upsert.run(userId, address, iso(now));
        prune.run(userId, iso(now - KNOWN_FOR_MS), userId);
      })();
    },

    /** A password change starts afresh: no address is known for the user any more. */
    forgetAll(userId: string): void {
      forget.run(userId);
    },
  };
}

export type KnownAddressesRepo = ReturnType<typeof createKnownAddressesRepo>;
