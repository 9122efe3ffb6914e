import type { ServersRepo } from '../../store/servers-repo';
import type { Consoles } from '../../runtime/consoles';
import type { PlayerListsService } from '../../runtime/player-lists';
import type { Handlers } from '../types';
import { ownedServer } from './owned';

/**
 * Players tag: listServerPlayers, answered by the game itself (launcher IPC, or a Minecraft ping); the player lists
 * (getServerPlayerList, updateServerPlayerList, addServerPlayerListEntry, removeServerPlayerListEntry) by
 * src/runtime/player-lists.ts.
 */
export function playerHandlers(deps: { servers: ServersRepo; consoles: Consoles; playerLists: PlayerListsService }): Handlers {
  const lists = deps.playerLists;
  return {
    listServerPlayers: async ({ principal, path }) => {
      const server = ownedServer(deps.servers, principal, path.server_id);
      return { status: 200, body: await deps.consoles.players(server.id) };
    },
    getServerPlayerList: ({ principal, path }) => {
      const server = ownedServer(deps.servers, principal, path.server_id);
      return { status: 200, body: lists.read(server.id, path.list) };
    },
    updateServerPlayerList: ({ principal, path, body }) => {
      const server = ownedServer(deps.servers, principal, path.server_id);
      return { status: 200, body: lists.setEnabled(server.id, path.list, body.enabled, principal) };
    },
    addServerPlayerListEntry: ({ principal, path }) => {
      const server = ownedServer(deps.servers, principal, path.server_id);
      return { status: 200, body: lists.add(server.id, path.list, path.name, principal) };
    },
    removeServerPlayerListEntry: ({ principal, path }) => {
      const server = ownedServer(deps.servers, principal, path.server_id);
      lists.remove(server.id, path.list, path.name, principal);
      return { status: 204, body: undefined };
    },
  };
}
