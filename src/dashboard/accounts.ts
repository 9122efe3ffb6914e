import type { Db } from '../store/db';
import type { UsersRepo } from '../store/users-repo';
import type { TokensRepo } from '../store/tokens-repo';
import type { SessionsRepo } from '../store/sessions-repo';
import type { KnownAddressesRepo } from '../store/known-addresses-repo';

export interface AccountStores {
  db: Db;
  users: UsersRepo;
  tokens: TokensRepo;
  sessions: SessionsRepo;
  knownAddresses: KnownAddressesRepo;
}

/**
 * Sets a user's password hash, the one way both the CLI and the dashboard change a password
 * (docs/conventions.md "Authentication"). In one transaction: every dashboard session of the user ends (their
 * page tokens are revoked with them), no address stays known for sign-in, and, when asked, every live API token
 * of the user is revoked too, so whoever knew the old password or held its tokens is out.
 */
export function setPassword(
  stores: AccountStores,
  userId: string,
  hash: string,
  options: { revokeTokens: boolean },
): { sessionsEnded: number; tokensRevoked: number } {
  return stores.db
    .transaction(() => {
      stores.users.setPasswordHash(userId, hash);
      const sessionsEnded = stores.sessions.endAllOf(userId);
      stores.knownAddresses.forgetAll(userId);
      const tokensRevoked = options.revokeTokens ? stores.tokens.revokeAllOf(userId) : 0;
      return { sessionsEnded, tokensRevoked };
    })
    .immediate();
}
