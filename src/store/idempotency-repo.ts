import type { Db } from './db';
import type { Clock } from '../clock';
import { iso } from '../clock';

/** How long a key is remembered (CONVENTIONS.md, Stripe semantics: 24 hours). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** A claim with no answer after this long belongs to a process that died mid-request; it may be taken over. */
export const IN_FLIGHT_STALE_MS = 30_000;

export type Claim =
  | { kind: 'new' }
  | { kind: 'replay'; status: number; body: string }
  | { kind: 'in_flight' }
  | { kind: 'mismatch' };

/**
 * The record behind `Idempotency-Key` (draft-ietf-httpapi-idempotency-key-header §2). A key is claimed before
 * the work runs and completed in the same transaction as the work's own writes (see handlers/servers.ts), so a
 * crash can never leave a created server without its replayable answer, nor the reverse.
 */
export function createIdempotencyRepo(db: Db, clock: Clock) {
  const find = db.prepare('SELECT * FROM idempotency_keys WHERE user_id = ? AND key = ?');
  const insert = db.prepare(
    'INSERT INTO idempotency_keys (user_id, key, request_hash, created_at) VALUES (?, ?, ?, ?)',
  );
  const drop = db.prepare('DELETE FROM idempotency_keys WHERE user_id = ? AND key = ?');
  const complete = db.prepare(
    'UPDATE idempotency_keys SET response_status = ?, response_body = ? WHERE user_id = ? AND key = ?',
  );
  const expire = db.prepare('DELETE FROM idempotency_keys WHERE created_at < ?');
  let lastExpired = -Infinity;

  return {
    claim(userId: string, key: string, requestHash: string): Claim {
      return db
        .transaction((): Claim => {
          const now = clock.now();
          const row = find.get(userId, key) as
            | { request_hash: string; response_status: number | null; response_body: string | null; created_at: string }
            | undefined;
          const age = row ? now - Date.parse(row.created_at) : 0;
          const abandoned = row !== undefined && row.response_status === null && age >= IN_FLIGHT_STALE_MS;
          if (row && (age >= IDEMPOTENCY_TTL_MS || abandoned)) drop.run(userId, key);
          else if (row) {
            if (row.request_hash !== requestHash) return { kind: 'mismatch' };
            if (row.response_status === null) return { kind: 'in_flight' };
            return { kind: 'replay', status: row.response_status, body: row.response_body ?? '' };
          }
          insert.run(userId, key, requestHash, iso(now));
          // Keys older than 24 h are dead weight; purge them at most once an hour, only when a key is added
          // (a rejected request — 409, 422 — writes nothing).
          if (now - lastExpired >= 3_600_000) {
            lastExpired = now;
            expire.run(iso(now - IDEMPOTENCY_TTL_MS));
          }
          return { kind: 'new' };
        })
        .immediate();
    },
    complete(userId: string, key: string, status: number, body: string): void {
      complete.run(status, body, userId, key);
    },
    /** Forgets a claim whose request failed, so the client can retry it (no answer was acknowledged). */
    release(userId: string, key: string): void {
      drop.run(userId, key);
    },
  };
}

export type IdempotencyRepo = ReturnType<typeof createIdempotencyRepo>;
