import { required, type Db } from './db';
import type { Clock } from '../clock';
import { iso } from '../clock';
import { newId } from '../ids';
import { hashToken, newTokenSecret, type Scope } from '../auth/tokens';
import { AppError, quotaExceeded } from '../errors';
import type { components } from '../../generated/v1';
import type { EventsRepo } from './events-repo';
import { createTokenTree } from './token-tree';

export type Token = components['schemas']['Token'];
export type CreatedToken = components['schemas']['CreatedToken'];

export interface TokenRow {
  id: string;
  user_id: string;
  name: string;
  prefix: string;
  hash: string;
  scopes: string;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
  parent_id: string | null;
}

/** id, user_id, scopes, expires_at, last_used_at, revoked_at, session_bound: what authentication reads. */
type PrincipalRow = [string, string, string, string | null, string | null, string | null, 0 | 1];

/** What authentication learns from a token: whose it is, what it may do and for how long. */
export interface Principal {
  tokenId: string;
  userId: string;
  scopes: Scope[];
  /** When the token stops working (RFC 3339), or null for never. */
  expiresAt: string | null;
  /**
   * The dashboard handed this token to its page for a signed-in session (it is in the sessions' link table,
   * src/store/sessions-repo.ts), so the signed-in user is behind it (docs/conventions.md "Authentication").
   */
  sessionBound: boolean;
}

export interface NewToken {
  name: string;
  scopes: Scope[];
  /** Seconds until it expires; null for never; absent: as `parent` does, or never without a parent. */
  expiresInSeconds?: number | null;
}

/** What bounds a new token. Each is checked in the insert's transaction, so a burst cannot pass it. */
export interface CreateLimits {
  /** Live API tokens the user may hold (TOKENS_PER_USER); absent for the dashboard page's own session tokens. */
  perUser?: number;
  /**
   * The token making this one: the new token expires no later than it and is its child (revoked with it), unless
   * it is session-bound: then the signed-in user stands behind it and the new token is a root.
   */
  parent?: Principal;
}

/**
 * Who asks to see or revoke tokens: a token through the API. Without one (the CLI, the operator) every token of the
 * user is in reach. docs/conventions.md "Authentication", "Token trees".
 */
export type Viewer = Pick<Principal, 'tokenId' | 'scopes' | 'sessionBound'>;

function toToken(row: TokenRow): Token {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: JSON.parse(row.scopes) as Scope[],
    created_at: row.created_at,
    expires_at: row.expires_at,
    last_used_at: row.last_used_at,
  };
}

// last_used_at is written at most once a minute per token, so authentication is not a write per request.
const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * The new token's expiry: a child never outlives its parent (docs/conventions.md "Authentication"). Left out, it
 * is the parent's; later than the parent's, or never while the parent expires, is refused and writes nothing.
 */
function childExpiry(requested: number | null | undefined, parent: Principal | undefined, now: number): string | null {
  const asked = requested ? iso(now + requested * 1000) : null;
  if (!parent || parent.sessionBound || parent.expiresAt === null) return asked;
  if (requested === undefined) return parent.expiresAt;
  if (asked !== null && asked <= parent.expiresAt) return asked;
  const most = Math.floor((Date.parse(parent.expiresAt) - now) / 1000);
  const detail = `must be at most ${most}: the token making this request expires at ${parent.expiresAt}`;
  throw new AppError('validation_failed', `A token cannot outlive the token that creates it; expires_in_seconds ${detail}.`, [
    { pointer: '/body/expires_in_seconds', detail },
  ]);
}

// session_tokens is the dashboard sessions' link table (src/store/sessions-repo.ts); read here, never written.
const bySession = 'EXISTS (SELECT 1 FROM session_tokens s WHERE s.token_id = tokens.id)';

/**
 * A write of bookkeeping about the caller (last_used_at), not of anything a request asked for, so it is committed
 * without an fsync: WAL with synchronous=NORMAL survives a crash of the process, and only a power loss can drop it
 * (https://www.sqlite.org/pragma.html#pragma_synchronous; SECURITY.md "Durability"). Authentication runs on the event
 * loop for every request, and an fsync there held every other request for as long as the disk took: under a disk
 * busy with image builds, a burst of first uses queued each request behind dozens of them (docs/conventions.md
 * "Tests", issue 44). Inside a transaction it is that transaction's, committed and fsynced with it (SQLite refuses
 * to change the level there).
 */
function bookkeepingWrite(db: Db, sql: string): (...params: unknown[]) => void {
  const write = db.prepare(sql);
  const level = db.pragma('synchronous', { simple: true }) as number;
  const relaxed = db.prepare('PRAGMA synchronous = NORMAL');
  const restored = db.prepare(`PRAGMA synchronous = ${level}`);
  return (...params) => {
    if (db.inTransaction) return void write.run(...params);
    relaxed.run();
    try {
      write.run(...params);
    } finally {
      restored.run();
    }
  };
}

type Statements = ReturnType<typeof statements>;
type RevokedRow = TokenRow & { session_bound: 0 | 1 };

/** The repository's statements, prepared once (docs/conventions.md "Code layout"), and the token tree's reads. */
function statements(db: Db) {
  // Authentication reads only what a Principal needs, as an array (no row object with the secret's hash in it).
  const principalColumns = `id, user_id, scopes, expires_at, last_used_at, revoked_at, ${bySession} AS session_bound`;
  return {
    insert: db.prepare(`INSERT INTO tokens (id, user_id, name, prefix, hash, scopes, created_at, expires_at, parent_id)
    VALUES (@id, @user_id, @name, @prefix, @hash, @scopes, @created_at, @expires_at, @parent_id)`),
    byHash: db.prepare<unknown[], PrincipalRow>(`SELECT ${principalColumns} FROM tokens WHERE hash = ?`).raw(),
    liveOfUser: db
      .prepare<unknown[], number>(`SELECT COUNT(*) FROM tokens WHERE user_id = ? AND revoked_at IS NULL
      AND (expires_at IS NULL OR expires_at > ?) AND NOT ${bySession}`)
      .pluck(),
    remove: db.prepare('DELETE FROM tokens WHERE id = ? AND user_id = ?'),
    // Rows that stopped working before the cutoff, and session-bound rows as soon as they stop working.
    purge: db.prepare(`DELETE FROM tokens WHERE revoked_at <= @cutoff OR expires_at <= @cutoff
    OR ((revoked_at IS NOT NULL OR expires_at <= @now) AND ${bySession})`),
    touch: bookkeepingWrite(db, 'UPDATE tokens SET last_used_at = ? WHERE id = ?'),
    // listTokens: the dashboard pages' own tokens are not the customer's to manage (the spec's listTokens).
    page: db.prepare<unknown[], TokenRow>(`SELECT * FROM tokens WHERE user_id = ? AND revoked_at IS NULL AND id > ?
    AND NOT ${bySession} ORDER BY id LIMIT ?`),
    one: db.prepare<unknown[], TokenRow>('SELECT * FROM tokens WHERE id = ? AND user_id = ? AND revoked_at IS NULL'),
    // A token and its descendants (tokens_by_parent; parents are older than their children, so no cycle).
    revokeTree: db.prepare<unknown[], RevokedRow>(`WITH RECURSIVE tree(id) AS (SELECT @id
      UNION SELECT tokens.id FROM tokens JOIN tree ON tokens.parent_id = tree.id)
    UPDATE tokens SET revoked_at = @now WHERE id IN tree AND user_id = @user_id AND revoked_at IS NULL
    RETURNING *, ${bySession} AS session_bound`),
    tree: createTokenTree(db),
    revokeLive: db.prepare<unknown[], RevokedRow>(`UPDATE tokens SET revoked_at = @now WHERE user_id = @user_id AND revoked_at IS NULL
    AND (expires_at IS NULL OR expires_at > @now) RETURNING *, ${bySession} AS session_bound`),
    active: db
      .prepare<unknown[], string>(`SELECT id FROM tokens WHERE id IN (SELECT value FROM json_each(?)) AND revoked_at IS NULL
      AND (expires_at IS NULL OR expires_at > ?)`)
      .pluck(),
  };
}

/** Creating a token, and resolving a presented secret to its principal (which records the use). */
function tokenIssuing(db: Db, st: Statements, clock: Clock, events: Pick<EventsRepo, 'raise'>) {
  /** The principal of a `principalColumns` row, or undefined when revoked or expired; records the use (touch). */
  const principalOf = (row: PrincipalRow | undefined): Principal | undefined => {
    const now = clock.now();
    if (!row) return undefined;
    const [id, userId, scopes, expiresAt, lastUsedAt, revokedAt, sessionBound] = row;
    if (revokedAt || (expiresAt && Date.parse(expiresAt) <= now)) return undefined;
    if (!lastUsedAt || now - Date.parse(lastUsedAt) >= LAST_USED_RESOLUTION_MS) st.touch(iso(now), id);
    return { tokenId: id, userId, scopes: JSON.parse(scopes) as Scope[], expiresAt, sessionBound: sessionBound === 1 };
  };

  return {
    /**
     * Creates a token within `limits`: past `perUser` live tokens it is a 403 quota_exceeded, an expiry beyond
     * the parent's a 400; either way nothing is written. The dashboard page's session tokens do not count.
     */
    create(userId: string, input: NewToken, limits: CreateLimits = {}): CreatedToken {
      return db.transaction(() => {
        const now = clock.now();
        if (limits.perUser !== undefined) {
          const used = required(st.liveOfUser.get(userId, iso(now)));
          if (used >= limits.perUser) {
            const detail = `This account already holds ${used} live API tokens, the most allowed; revoke one first.`;
            throw quotaExceeded('tokens', limits.perUser, used, detail);
          }
        }
        const secret = newTokenSecret();
        const parent = limits.parent && !limits.parent.sessionBound ? limits.parent.tokenId : null;
        const row: Omit<TokenRow, 'last_used_at' | 'revoked_at'> = {
          id: newId('tok', now),
          user_id: userId,
          name: input.name,
          prefix: secret.slice(0, 9),
          hash: hashToken(secret),
          scopes: JSON.stringify(input.scopes),
          created_at: iso(now),
          expires_at: childExpiry(input.expiresInSeconds, limits.parent, now),
          parent_id: parent,
        };
        st.insert.run(row);
        const token = toToken({ ...row, last_used_at: null, revoked_at: null });
        // perUser is absent only for the dashboard page's own tokens, which make no events (see revokedEvents).
        if (limits.perUser !== undefined) events.raise('token.created', { token }, { userId });
        return { ...token, token: secret };
      }).immediate();
    },

    /**
     * Resolves a presented secret to its principal, or undefined when it is unknown, expired or revoked.
     * The lookup is by SHA-256 hash through a unique index, so no secret is ever compared character by
     * character (no timing oracle on the secret; docs/conventions.md "Authentication").
     */
    authenticate(secret: string): Principal | undefined {
      return principalOf(st.byHash.get(hashToken(secret)));
    },
  };
}

/** Reading tokens: a page of a user's, one, and which of some ids still work. */
function tokenReads(st: Statements, clock: Clock) {
  return {
    /** The user's live tokens, oldest first; through a `viewer`, only those it may see (tree.sees). */
    list(userId: string, limit: number, startingAfter = '', viewer?: Viewer): { data: Token[]; has_more: boolean } {
      const rows = viewer === undefined || st.tree.seesAll(viewer) ? st.page.all(userId, startingAfter, limit + 1) : st.tree.page(userId, viewer.tokenId, startingAfter, limit + 1);
      return { data: rows.slice(0, limit).map(toToken), has_more: rows.length > limit };
    },

    get(userId: string, id: string, viewer?: Viewer): Token | undefined {
      const row = st.one.get(id, userId);
      return row && st.tree.sees(viewer, id) ? toToken(row) : undefined;
    },

    /** The ids among these that are neither revoked nor expired (one query, for the stream sweep). */
    activeIds(ids: string[]): Set<string> {
      return new Set(st.active.all(JSON.stringify(ids), iso(clock.now())));
    },
  };
}

/** Ending tokens: revoking (with their token.revoked events), deleting, and purging the rows that stopped working. */
function tokenEnds(db: Db, st: Statements, clock: Clock, events: Pick<EventsRepo, 'raise'>) {
  // token.revoked for API tokens; the dashboard page's own tokens come and go every few minutes and make no events.
  const revokedEvents = (rows: RevokedRow[]) => {
    for (const r of rows) if (r.session_bound === 0) events.raise('token.revoked', { token: toToken(r) }, { userId: r.user_id });
    return rows.length;
  };

  return {
    /**
     * Revokes a live token of this user and every token minted from it, transitively (their streams end at the
     * next sweep, src/http/sse.ts), each with its token.revoked event, in one transaction. False, and nothing
     * changed, when there is no such token or the `viewer` may not see it.
     */
    revoke(userId: string, id: string, viewer?: Viewer): boolean {
      return db.transaction(() => {
        if (!st.one.get(id, userId) || !st.tree.sees(viewer, id)) return false;
        revokedEvents(st.revokeTree.all({ now: iso(clock.now()), id, user_id: userId }));
        return true;
      })();
    },

    /** Deletes a token's row outright: for the dashboard page's tokens, whose session ended or replaced them. */
    remove(userId: string, id: string): void {
      st.remove.run(id, userId);
    },

    /**
     * Deletes the rows of tokens revoked or expired more than `retentionMs` ago, and of session-bound tokens
     * as soon as they are revoked or expired (docs/conventions.md "Authentication"); returns how many.
     */
    purge(retentionMs: number): number {
      const now = clock.now();
      return st.purge.run({ cutoff: iso(now - retentionMs), now: iso(now) }).changes;
    },

    /** Revokes every live token of a user (a password change, when asked); returns how many. */
    revokeAllOf(userId: string): number {
      const revoked = () => st.revokeLive.all({ now: iso(clock.now()), user_id: userId });
      return db.transaction(() => revokedEvents(revoked()))();
    },
  };
}

export function createTokensRepo(db: Db, clock: Clock, events: Pick<EventsRepo, 'raise'>) {
  const st = statements(db);
  return {
    ...tokenIssuing(db, st, clock, events),
    ...tokenReads(st, clock),
    ...tokenEnds(db, st, clock, events),
  };
}

export type TokensRepo = ReturnType<typeof createTokensRepo>;
