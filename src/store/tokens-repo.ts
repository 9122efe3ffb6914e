import type { Db } from './db';
import type { Clock } from '../clock';
import { iso } from '../clock';
import { newId } from '../ids';
import { hashToken, newTokenSecret, type Scope } from '../auth/tokens';
import type { components } from '../../generated/v1';

export type Token = components['schemas']['Token'];
export type CreatedToken = components['schemas']['CreatedToken'];

interface TokenRow {
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
}

/** What authentication learns from a token: whose it is and what it may do. */
export interface Principal {
  tokenId: string;
  userId: string;
  scopes: Scope[];
}

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

export function createTokensRepo(db: Db, clock: Clock) {
  const insert = db.prepare(`INSERT INTO tokens (id, user_id, name, prefix, hash, scopes, created_at, expires_at)
    VALUES (@id, @user_id, @name, @prefix, @hash, @scopes, @created_at, @expires_at)`);
  const byHash = db.prepare('SELECT * FROM tokens WHERE hash = ?');
  const touch = db.prepare('UPDATE tokens SET last_used_at = ? WHERE id = ?');
  const page = db.prepare(`SELECT * FROM tokens WHERE user_id = ? AND revoked_at IS NULL AND id > ?
    ORDER BY id LIMIT ?`);
  const one = db.prepare('SELECT * FROM tokens WHERE id = ? AND user_id = ? AND revoked_at IS NULL');
  const revoke = db.prepare('UPDATE tokens SET revoked_at = ? WHERE id = ? AND user_id = ? AND revoked_at IS NULL');
  const revokeLive = db.prepare(`UPDATE tokens SET revoked_at = @now WHERE user_id = @user_id AND revoked_at IS NULL
    AND (expires_at IS NULL OR expires_at > @now)`);
  const active = db
    .prepare(`SELECT id FROM tokens WHERE id IN (SELECT value FROM json_each(?)) AND revoked_at IS NULL
      AND (expires_at IS NULL OR expires_at > ?)`)
    .pluck();

  return {
    create(userId: string, input: { name: string; scopes: Scope[]; expiresInSeconds?: number | null }): CreatedToken {
      const now = clock.now();
      const secret = newTokenSecret();
      const row: Omit<TokenRow, 'last_used_at' | 'revoked_at'> = {
        id: newId('tok', now),
        user_id: userId,
        name: input.name,
        prefix: secret.slice(0, 9),
        hash: hashToken(secret),
        scopes: JSON.stringify(input.scopes),
        created_at: iso(now),
        expires_at: input.expiresInSeconds ? iso(now + input.expiresInSeconds * 1000) : null,
      };
      insert.run(row);
      return { ...toToken({ ...row, last_used_at: null, revoked_at: null }), token: secret };
    },

    /**
     * Resolves a presented secret to its principal, or undefined when it is unknown, expired or revoked.
     * The lookup is by SHA-256 hash through a unique index, so no secret is ever compared character by
     * character (no timing oracle on the secret; docs/conventions.md "Authentication").
     */
    authenticate(secret: string): Principal | undefined {
      const row = byHash.get(hashToken(secret)) as TokenRow | undefined;
      const now = clock.now();
      if (!row || row.revoked_at || (row.expires_at && Date.parse(row.expires_at) <= now)) return undefined;
      if (!row.last_used_at || now - Date.parse(row.last_used_at) >= LAST_USED_RESOLUTION_MS) {
        touch.run(iso(now), row.id);
      }
      return { tokenId: row.id, userId: row.user_id, scopes: JSON.parse(row.scopes) as Scope[] };
    },

    list(userId: string, limit: number, startingAfter = ''): { data: Token[]; has_more: boolean } {
      const rows = page.all(userId, startingAfter, limit + 1) as TokenRow[];
      return { data: rows.slice(0, limit).map(toToken), has_more: rows.length > limit };
    },

    get(userId: string, id: string): Token | undefined {
      const row = one.get(id, userId) as TokenRow | undefined;
      return row && toToken(row);
    },

    /** The ids among these that are neither revoked nor expired (one query, for the stream sweep). */
    activeIds(ids: string[]): Set<string> {
      return new Set(active.all(JSON.stringify(ids), iso(clock.now())) as string[]);
    },

    /** True when a token of this user was revoked now; false when there was none to revoke. */
    revoke(userId: string, id: string): boolean {
      return revoke.run(iso(clock.now()), id, userId).changes === 1;
    },

    /** Revokes every live token of a user (a password change, when asked); returns how many. */
    revokeAllOf(userId: string): number {
      return revokeLive.run({ now: iso(clock.now()), user_id: userId }).changes;
    },
  };
}

export type TokensRepo = ReturnType<typeof createTokensRepo>;
