import type { Db } from './db';
import type { Clock } from '../clock';
import { iso } from '../clock';
import { AppError } from '../errors';

/** How long a key is remembered (docs/conventions.md "Idempotency": 24 hours, as Stripe). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** A claim with no answer after this long belongs to a process that died mid-request; it may be taken over. */
export const IN_FLIGHT_STALE_MS = 30_000;

/** What `run` answers: the work's own result, or the first answer replayed. */
export type Outcome<T> = { replayed: false; value: T } | { replayed: true; status: number; body: string };

export type Claim =
  | { kind: 'new' }
  | { kind: 'replay'; status: number; body: string }
  | { kind: 'in_flight' }
  | { kind: 'mismatch' };

type Statements = ReturnType<typeof statements>;

/** The repository's statements, prepared once (docs/conventions.md "Code layout"). */
function statements(db: Db) {
  return {
    find: db.prepare('SELECT * FROM idempotency_keys WHERE user_id = ? AND key = ?'),
    insert: db.prepare('INSERT INTO idempotency_keys (user_id, key, request_hash, created_at) VALUES (?, ?, ?, ?)'),
    drop: db.prepare('DELETE FROM idempotency_keys WHERE user_id = ? AND key = ?'),
    complete: db.prepare('UPDATE idempotency_keys SET response_status = ?, response_body = ? WHERE user_id = ? AND key = ?'),
    expire: db.prepare('DELETE FROM idempotency_keys WHERE created_at < ?'),
  };
}

/** The claim step: takes the key, or says why not (a replay, another body, still running). */
function claimer(db: Db, st: Statements, clock: Clock) {
  let lastExpired = -Infinity; // when expired keys were last purged (below)
  return function claim(userId: string, key: string, requestHash: string): Claim {
    return db
      .transaction((): Claim => {
        const now = clock.now();
        const row = st.find.get(userId, key) as
          | { request_hash: string; response_status: number | null; response_body: string | null; created_at: string }
          | undefined;
        const age = row ? now - Date.parse(row.created_at) : 0;
        const abandoned = row !== undefined && row.response_status === null && age >= IN_FLIGHT_STALE_MS;
        if (row && (age >= IDEMPOTENCY_TTL_MS || abandoned)) st.drop.run(userId, key);
        else if (row) {
          if (row.request_hash !== requestHash) return { kind: 'mismatch' };
          if (row.response_status === null) return { kind: 'in_flight' };
          return { kind: 'replay', status: row.response_status, body: row.response_body ?? '' };
        }
        st.insert.run(userId, key, requestHash, iso(now));
        // Keys older than 24 h are dead weight; purge them at most once an hour, only when a key is added
        // (a rejected request — 409, 422 — writes nothing).
        if (now - lastExpired >= 3_600_000) {
          lastExpired = now;
          st.expire.run(iso(now - IDEMPOTENCY_TTL_MS));
        }
        return { kind: 'new' };
      })
      .immediate();
  };
}

/**
 * The record behind `Idempotency-Key` (draft-ietf-httpapi-idempotency-key-header §2; docs/conventions.md
 * "Idempotency"). `run` claims the key, then does the work and stores its answer in one transaction, so a crash
 * can never leave a created server without its replayable answer, nor the reverse.
 */
export function createIdempotencyRepo(db: Db, clock: Clock) {
  const st = statements(db);
  const claim = claimer(db, st, clock);

  return {
    /**
     * Runs `work` once per (user, key). `work` runs inside a transaction together with storing its answer
     * (`answer(value)` → status and JSON body), so it must be synchronous and do its writes through this same
     * database. The same key with the same request hash replays the stored answer; with another hash it is
     * idempotency_key_reused (422); while the first request is still running it is idempotency_in_flight (409).
     * If `work` throws, the claim is released (nothing was acknowledged) and the error propagates.
     */
    run<T>(
      userId: string,
      key: string,
      requestHash: string,
      work: () => T,
      answer: (value: T) => { status: number; body: string },
    ): Outcome<T> {
      const c = claim(userId, key, requestHash);
      if (c.kind === 'mismatch') {
        throw new AppError('idempotency_key_reused', 'This Idempotency-Key was already used with a different request body.', [
          { pointer: '/header/idempotency-key', detail: 'already used with a different body' },
        ]);
      }
      if (c.kind === 'in_flight') {
        throw new AppError('idempotency_in_flight', 'A request with this Idempotency-Key is still being processed; retry shortly.');
      }
      if (c.kind === 'replay') return { replayed: true, status: c.status, body: c.body };
      try {
        const value = db.transaction(() => {
          const v = work();
          const a = answer(v);
          st.complete.run(a.status, a.body, userId, key);
          return v;
        })();
        return { replayed: false, value };
      } catch (err) {
        st.drop.run(userId, key);
        throw err;
      }
    },

    /** The claim step alone (exported for tests of the in-flight and takeover rules). */
    claim,
  };
}

export type IdempotencyRepo = ReturnType<typeof createIdempotencyRepo>;
