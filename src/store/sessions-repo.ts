import crypto from 'node:crypto';
import type { Db } from './db';
import type { Clock } from '../clock';
import { iso } from '../clock';
import { newId } from '../ids';
import type { CreatedToken, NewToken, TokensRepo } from './tokens-repo';

interface SessionRow {
  id: string;
  user_id: string;
  hash: string;
  created_at: string;
  expires_at: string;
}

/** A signed-in dashboard session, as the HTTP layer sees it (never its secret or hash). */
export interface Session {
  id: string;
  userId: string;
  expiresAt: number;
}

/** Same shape as API tokens: 256 random bits; only the SHA-256 is stored, so no stretching is needed. */
function hashSecret(secret: string): string {
  return crypto.createHash('sha256').update(secret).digest('hex');
}

type Statements = ReturnType<typeof statements>;

/** The repository's statements, prepared once (docs/conventions.md "Code layout"). */
function statements(db: Db) {
  return {
    insert: db.prepare(`INSERT INTO sessions (id, user_id, hash, created_at, expires_at)
      VALUES (@id, @user_id, @hash, @created_at, @expires_at)`),
    byHash: db.prepare<unknown[], SessionRow>('SELECT * FROM sessions WHERE hash = ?'),
    remove: db.prepare('DELETE FROM sessions WHERE id = ?'),
    byId: db.prepare<unknown[], SessionRow>('SELECT * FROM sessions WHERE id = ?'),
    tokensOf: db.prepare<unknown[], { token_id: string }>('SELECT token_id FROM session_tokens WHERE session_id = ? ORDER BY token_id DESC'),
    addToken: db.prepare('INSERT INTO session_tokens (session_id, token_id) VALUES (?, ?)'),
    expired: db.prepare<unknown[], { id: string }>('SELECT id FROM sessions WHERE expires_at <= ?'),
    ownsToken: db.prepare('SELECT 1 FROM session_tokens WHERE session_id = ? AND token_id = ?').pluck(),
    ofUser: db.prepare<unknown[], { id: string }>('SELECT id FROM sessions WHERE user_id = ?'),
  };
}

/** Starting a session, and finding one by its cookie secret. */
function sessionStarts(st: Statements, clock: Clock) {
  function findRecent(secret: string, graceMs: number): Session | undefined {
    const row = st.byHash.get(hashSecret(secret));
    if (!row) return undefined;
    const expiresAt = Date.parse(row.expires_at);
    return expiresAt + graceMs > clock.now() ? { id: row.id, userId: row.user_id, expiresAt } : undefined;
  }

  return {
    /** Starts a session; returns the secret for the cookie (shown only here) and the session. */
    create(userId: string, ttlMs: number): { secret: string; session: Session } {
      const now = clock.now();
      const secret = crypto.randomBytes(32).toString('base64url');
      const row: SessionRow = {
        id: newId('ses', now),
        user_id: userId,
        hash: hashSecret(secret),
        created_at: iso(now),
        expires_at: iso(now + ttlMs),
      };
      st.insert.run(row);
      return { secret, session: { id: row.id, userId, expiresAt: now + ttlMs } };
    },

    /** The live session a cookie secret stands for; undefined when unknown or expired (lookup by hash, no scan). */
    find: (secret: string): Session | undefined => findRecent(secret, 0),

    /**
     * The session a cookie secret stands for, live or expired less than `graceMs` ago (and not ended): how sign-in
     * recognises a browser its user signed in with before (docs/conventions.md "Authentication").
     */
    findRecent,
  };
}

/** The API tokens a session hands out to its pages. */
function pageTokens(db: Db, st: Statements, tokens: TokensRepo) {
  return {
    /**
     * Creates an API token for the page and links it to the session in one transaction (until linked it would
     * count as one of the user's API tokens), then deletes the session's oldest ones beyond `keep` (each page
     * load gets its own token, since the page keeps it only in memory; a few tabs may be open at once).
     */
    issueToken(session: Session, input: NewToken, keep: number): CreatedToken {
      return db.transaction(() => {
        const created = tokens.create(session.userId, input);
        st.addToken.run(session.id, created.id);
        const old = st.tokensOf.all(session.id).slice(keep).map((r) => r.token_id);
        for (const id of old) tokens.remove(session.userId, id); // its link goes with it (ON DELETE CASCADE)
        return created;
      }).immediate();
    },

    /** Deletes a token handed out for this session that the page has replaced; false when it is not the session's. */
    releaseToken(session: Session, tokenId: string): boolean {
      return db.transaction(() => {
        if (st.ownsToken.get(session.id, tokenId) === undefined) return false;
        tokens.remove(session.userId, tokenId); // its link goes with it (ON DELETE CASCADE)
        return true;
      })();
    },
  };
}

/** Ending sessions: one, all of a user's, or the expired ones; each with every token handed out for it. */
function sessionEnds(db: Db, st: Statements, clock: Clock, tokens: TokensRepo) {
  /** Deletes a session and every API token handed out for it, in one transaction. */
  const end = db.transaction((id: string) => {
    const row = st.byId.get(id);
    if (!row) return;
    for (const { token_id } of st.tokensOf.all(id)) tokens.remove(row.user_id, token_id);
    st.remove.run(id);
  });

  return {
    end: (sessionId: string) => end(sessionId),

    /** Ends every session of a user (a password change signs everyone out). */
    endAllOf(userId: string): number {
      const ids = st.ofUser.all(userId).map((r) => r.id);
      for (const id of ids) end(id);
      return ids.length;
    },

    /** Removes sessions expired more than `keepMs` ago (their tokens expired with them). */
    sweep(keepMs = 0): void {
      for (const { id } of st.expired.all(iso(clock.now() - keepMs))) end(id);
    },
  };
}

/**
 * Sessions own the API tokens handed out for them and end them through the tokens repository. A page token
 * that its session ends or replaces is deleted rather than revoked: nothing refers to it afterwards, and its
 * row would otherwise outlive its link here, the only thing that tells it from an API token
 * (docs/conventions.md "Authentication").
 */
export function createSessionsRepo(db: Db, clock: Clock, tokens: TokensRepo) {
  const st = statements(db);
  return { ...sessionStarts(st, clock), ...pageTokens(db, st, tokens), ...sessionEnds(db, st, clock, tokens) };
}

export type SessionsRepo = ReturnType<typeof createSessionsRepo>;
