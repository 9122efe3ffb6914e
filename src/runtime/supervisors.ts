import { AppError } from '../errors';
import type { Server } from '../store/servers-repo';
import { ServerSupervisor, type SupervisorDeps } from './server-supervisor';

/**
 * The supervisors of this host's servers, one per server, made on first use from the server's row. The runtime
 * (power actions, reads) and the reconcile loop share this one map; nothing else holds a supervisor.
 */
export function createSupervisors(deps: SupervisorDeps) {
  const map = new Map<string, ServerSupervisor>();

  function forServer(server: Pick<Server, 'id' | 'state'>): ServerSupervisor {
    let slot = map.get(server.id);
    if (!slot) map.set(server.id, (slot = new ServerSupervisor(server.id, server.state, deps)));
    return slot;
  }

  return {
    forServer,
    /** The supervisor of a server by id; server_not_found when no such row exists. */
    of(serverId: string): ServerSupervisor {
      const existing = map.get(serverId);
      if (existing) return existing;
      const server = deps.servers.find(serverId);
      if (!server) throw new AppError('server_not_found', `No server ${serverId}.`);
      return forServer(server);
    },
    all: (): ServerSupervisor[] => [...map.values()],
    /** Drops a removed server's supervisor. */
    forget: (serverId: string): void => void map.delete(serverId),
  };
}

export type Supervisors = ReturnType<typeof createSupervisors>;
