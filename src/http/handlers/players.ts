import { userActor } from '../../actors';
import { AppError } from '../../errors';
import type { Consoles } from '../../runtime/services/consoles';
import type { PlayerListsService } from '../../runtime/services/player-lists';
import type { IdempotencyRepo } from '../../store/idempotency-repo';
import type { Handlers } from '../types';
import { idempotent } from './idempotent';

/**
 * Players tag: listServerPlayers, answered by the game itself (launcher IPC, or a Minecraft ping); the player lists
 * (getServerPlayerList, updateServerPlayerList, addServerPlayerListEntry, removeServerPlayerListEntry) by
 * src/runtime/services/player-lists.ts; kickServerPlayer by the game, through src/runtime/services/consoles.ts. A change sent to the
 * game's console names its sender.
 */
const UUID = /^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$/;

export function playerHandlers(deps: { consoles: Consoles; playerLists: PlayerListsService; idempotency: IdempotencyRepo }): Handlers {
  const lists = deps.playerLists;
  const sender = (p: { userId: string; tokenId: string }) => userActor(p.userId, p.tokenId);
  /** A UUID stands for the name of the player online with it (openapi/v1.yaml PlayerNameOrUuid). */
  const nameOf = (serverId: string, nameOrUuid: string) => (UUID.test(nameOrUuid) ? deps.consoles.nameOf(serverId, nameOrUuid) : nameOrUuid);
  return {
    kickServerPlayer: (call) => {
      const { principal, server, body } = call;
      // The spec's KickRequest: exactly one of `player` (a name) and `uuid`.
      const who = body.uuid === undefined ? body.player : body.player === undefined ? { uuid: body.uuid } : undefined;
      if (who === undefined) {
        const detail = 'give exactly one of player (the name) and uuid';
        throw new AppError('validation_failed', `Say who to kick: ${detail}.`, [{ pointer: body.player === undefined ? '/body/player' : '/body/uuid', detail }]);
      }
      return idempotent(deps.idempotency, call, { operation: 'kickServerPlayer', path: server.id, body }, () => ({
        status: 202 as const,
        body: deps.consoles.kick(server.id, who, body.reason, sender(principal)),
      }));
    },
    listServerPlayers: async ({ server }) => ({ status: 200, body: await deps.consoles.players(server.id) }),
    getServerPlayerList: ({ server, path }) => ({ status: 200, body: lists.read(server.id, path.list) }),
    updateServerPlayerList: ({ principal, server, path, body }) => ({ status: 200, body: lists.setEnabled(server.id, path.list, body.enabled, sender(principal)) }),
    addServerPlayerListEntry: ({ principal, server, path }) => ({ status: 200, body: lists.add(server.id, path.list, nameOf(server.id, path.name), sender(principal)) }),
    removeServerPlayerListEntry: ({ principal, server, path }) => {
      lists.remove(server.id, path.list, nameOf(server.id, path.name), sender(principal));
      return { status: 204, body: undefined };
    },
  };
}
