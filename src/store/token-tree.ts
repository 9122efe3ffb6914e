import type { Db } from './db';
import type { TokenRow } from './tokens-repo';
import { hasScope, type Scope } from '../auth/tokens';

/** A root token holding these sees all (openapi/v1.yaml Tokens tag); `files` is only SFTP's password, not needed. */
const ROOT_SCOPES: Scope[] = ['servers:write', 'tokens:manage'];

/** The token asking (TokensRepo's `Viewer`): its id, its scopes, and whether it is the dashboard page's own. */
interface Asker {
  tokenId: string;
  scopes: Scope[];
  sessionBound: boolean;
}

/**
 * What a token may see and revoke among its user's tokens (docs/conventions.md "Authentication", "Token trees";
 * the spec's Tokens tag). A token minted through the API by a token is that token's child (`tokens.parent_id`,
 * migration 024). A token sees only itself and its descendants, so a token it minted can neither list nor revoke
 * it or anything stronger; all of the user's tokens are seen by the user's own: a root token (one the user made,
 * not a token: the CLI, the dashboard's Settings) holding every scope, the dashboard page's token (the signed-in
 * user), and the CLI (no asker at all). Like GitHub's fine-grained tokens, which cannot manage other tokens, but
 * a token here may still manage what it made.
 */
export function createTokenTree(db: Db) {
  const parentOf = db.prepare('SELECT parent_id FROM tokens WHERE id = ?').pluck();
  // `id` and its ancestors, up to its root (a tree is a few levels deep; each step one primary-key lookup).
  const ancestry = db.prepare(`WITH RECURSIVE up(id) AS (SELECT @id
      UNION SELECT tokens.parent_id FROM tokens JOIN up ON tokens.id = up.id WHERE tokens.parent_id IS NOT NULL)
    SELECT 1 FROM up WHERE id = @asker`).pluck();
  // A page of `asker` and its live descendants (tokens_by_parent), oldest first.
  const page = db.prepare<unknown[], TokenRow>(`WITH RECURSIVE tree(id) AS (SELECT @asker
      UNION SELECT tokens.id FROM tokens JOIN tree ON tokens.parent_id = tree.id)
    SELECT * FROM tokens WHERE id IN tree AND user_id = @user_id AND revoked_at IS NULL AND id > @after
    ORDER BY id LIMIT @limit`);

  const seesAll = (asker: Asker | undefined): boolean =>
    asker === undefined || asker.sessionBound || (ROOT_SCOPES.every((s) => hasScope(asker.scopes, s)) && parentOf.get(asker.tokenId) === null);

  return {
    /** Whether `asker` sees every token of its user (else only its own tree). */
    seesAll,
    /** Whether `asker` may see and revoke token `id` (of the same user: the caller checks the owner). */
    sees: (asker: Asker | undefined, id: string): boolean => asker === undefined || seesAll(asker) || ancestry.get({ id, asker: asker.tokenId }) !== undefined,
    /** A page of the user's live tokens in `asker`'s tree, `limit` rows after `after`. */
    page: (userId: string, asker: string, after: string, limit: number): TokenRow[] => page.all({ asker, user_id: userId, after, limit }),
  };
}
