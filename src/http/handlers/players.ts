import type { ServersRepo } from '../../store/servers-repo';
import type { Runtime } from '../../runtime/runtime';
import type { Handlers } from '../types';
import { ownedServer } from './owned';

/** Players tag: listServerPlayers, answered by the game itself (launcher IPC, or a Minecraft ping). */
export function playerHandlers(deps: { servers: ServersRepo; runtime: Runtime }): Handlers {
  return {
    listServerPlayers: async ({ principal, path }) => {
      const server = ownedServer(deps.servers, principal, path.server_id);
      return { status: 200, body: await deps.runtime.players(server.id) };
    },
  };
}
