import { utils, type AuthContext } from 'ssh2';
import { hasScope } from '../auth/tokens';
import type { MembersRepo } from '../store/members-repo';
import type { SshKeysRepo } from '../store/ssh-keys-repo';
import type { TokensRepo } from '../store/tokens-repo';
import type { UsersRepo } from '../store/users-repo';

/** Who an SFTP session is, once logged in: the account, the server whose files it sees, and what it used. */
export interface SftpLogin {
  userId: string;
  serverId: string;
  /** The token given as password, or null for a key. */
  tokenId: string | null;
  /** The SSH key it logged in with, or null for a token. */
  keyId: string | null;
}

export interface SftpAuthDeps {
  users: Pick<UsersRepo, 'findByEmail'>;
  tokens: Pick<TokensRepo, 'authenticate'>;
  sshKeys: Pick<SshKeysRepo, 'find'>;
  members: Pick<MembersRepo, 'standing' | 'accept'>;
}

/** `<server_id>.<email>` (openapi/v1.yaml tag "SSH keys"): the server's id has no dot, so the first one splits. */
export function parseUsername(username: string): { serverId: string; email: string } | undefined {
  const dot = username.indexOf('.');
  const serverId = username.slice(0, dot);
  const email = username.slice(dot + 1);
  if (dot < 0 || !/^srv_[0-9A-Za-z]{1,40}$/.test(serverId) || !email.includes('@') || email.length > 254) return undefined;
  return { serverId, email };
}

/**
 * One login attempt (RFC 4252): `password` with an API token holding the `files` scope, or `publickey` with a key
 * registered through /v1/ssh-keys (a query without a signature is answered yes or no; with one, it must verify
 * over the session's data, RFC 4252 §7). Either way the account needs the `files` permission on the server (its
 * owner has it): the access check of the Files API (src/http/access.ts), which every failure answers alike,
 * so a login never tells whether an account, a server or a membership exists. Resolves to the login, `'query'`
 * (a key that may sign), or undefined (refused).
 */
export function checkLogin(deps: SftpAuthDeps, ctx: AuthContext): SftpLogin | 'query' | undefined {
  const name = parseUsername(ctx.username);
  const user = name && deps.users.findByEmail(name.email);
  if (!name || !user) return undefined;
  let tokenId: string | null = null;
  let keyId: string | null = null;
  if (ctx.method === 'password') {
    const principal = deps.tokens.authenticate(ctx.password);
    // The dashboard page's own tokens are not passwords: they live minutes and are no one's to hand out.
    if (!principal || principal.userId !== user.id || principal.sessionBound || !hasScope(principal.scopes, 'files')) return undefined;
    tokenId = principal.tokenId;
  } else if (ctx.method === 'publickey') {
    const key = deps.sshKeys.find(user.id, ctx.key.data.toString('base64'), ctx.signature !== undefined);
    if (!key) return undefined;
    if (!ctx.signature || !ctx.blob) return allowed(deps, name.serverId, user.id) ? 'query' : undefined;
    const parsed = utils.parseKey(key.public_key);
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-boolean-literal-compare -- ssh2's verify returns an Error (truthy) when it cannot verify, though @types/ssh2 says boolean: only `true` passes
    if (parsed instanceof Error || Array.isArray(parsed) || parsed.verify(ctx.blob, ctx.signature, ctx.hashAlgo) !== true) return undefined;
    keyId = key.id;
  } else {
    return undefined;
  }
  const standing = allowed(deps, name.serverId, user.id);
  if (!standing) return undefined;
  if (standing.member && !standing.member.accepted) deps.members.accept(standing.member.id);
  return { userId: user.id, serverId: name.serverId, tokenId, keyId };
}

/** The account's standing on the server when it may use its files (owner, or member with `files`). */
function allowed(deps: SftpAuthDeps, serverId: string, userId: string) {
  const standing = deps.members.standing(serverId, userId);
  return standing?.permissions.includes('files') ? standing : undefined;
}
