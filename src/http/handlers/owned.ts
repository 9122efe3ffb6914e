import { AppError } from '../../errors';
import type { ServersRepo } from '../../store/servers-repo';
import type { Principal } from '../../store/tokens-repo';

/**
 * The caller's server with this id. Another user's server answers exactly like a missing one
 * (docs/conventions.md "Authentication"), so ids cannot be probed across accounts.
 */
export function ownedServer(servers: ServersRepo, principal: Principal, id: string) {
  const server = servers.get(principal.userId, id);
  if (!server) throw serverNotFound(id);
  return server;
}

export function serverNotFound(id: string): AppError {
  return new AppError('server_not_found', `There is no server ${id}.`);
}
