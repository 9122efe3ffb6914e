import type { ServersRepo } from '../../store/servers-repo';
import type { Consoles } from '../../runtime/consoles';
import type { PlayerListsService } from '../../runtime/player-lists';
import type { IdempotencyRepo } from '../../store/idempotency-repo';
import type { Handlers } from '../types';
import { idempotent } from './idempotent';
import { ownedServer } from './owned';

/**
 * Players tag: listServerPlayers, answered by the game itself (launcher IPC, or a Minecraft ping); the player lists
 * (getServerPlayerList, updateServerPlayerList, addServerPlayerListEntry, removeServerPlayerListEntry) by
 * src/runtime/player-lists.ts; kickServerPlayer by the game, through src/runtime/consoles.ts.
 */
export function playerHandlers(deps: { servers: ServersRepo; consoles: Consoles; playerLists: PlayerListsService; idempotency: IdempotencyRepo }): Handlers {
  const lists = deps.playerLists;
  return {
    kickServerPlayer: (call) => {
      const { principal, path, body } = call;
      const server = ownedServer(deps.servers, principal, path.server_id);
      return idempotent(deps.idempotency, call, { operation: 'kickServerPlayer', path: server.id, body }, () => ({
        status: 202 as const,
        body: deps.consoles.kick(server.id, body.player, body.reason, principal),
      }));
    },
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
