import { AppError } from '../../errors';
import type { VersionCatalog } from '../../catalog/versions';
import type { ServersRepo } from '../../store/servers-repo';
import { pingStatus, type ServerStatus } from '../../runtime/server/status-ping';
import type { Handlers } from '../types';

/** The game whose servers answer the Server List Ping (its protocol is that edition's). */
const PINGED_GAME = 'Minecraft Java Edition';

export interface StatusDeps {
  servers: Pick<ServersRepo, 'find'>;
  versions: Pick<VersionCatalog, 'resolve'>;
  /** The ping itself; tests of the refusals need no game. */
  ping?: (host: string, port: number) => Promise<ServerStatus>;
}

/**
 * getServerStatus (openapi/v1.yaml): what a player's client sees in its server list, asked of the game at the
 * address players use, now. Refusals are `409 invalid_state` with the reason: not running, a game without the
 * ping, or no answer in time (the game may still be loading its world).
 */
export function statusHandlers(deps: StatusDeps): Handlers {
  const ping = deps.ping ?? ((host: string, port: number) => pingStatus(host, port));
  return {
    getServerStatus: async ({ server: { id } }) => {
      const server = deps.servers.find(id);
      if (!server) throw new AppError('server_not_found', `There is no server ${id}.`);
      const game = deps.versions.resolve(server.version)?.game ?? server.software;
      if (game !== PINGED_GAME) throw new AppError('invalid_state', `${game} servers answer no server-list ping; only ${PINGED_GAME} servers do.`);
      if (server.state !== 'running' || !server.address) throw new AppError('invalid_state', `${server.name} is ${server.state}: only a running server answers its status ping.`);
      try {
        return { status: 200, body: await ping(server.address.host, server.address.port) };
      } catch (e) {
        throw new AppError('invalid_state', `${server.name} did not answer its status ping (${(e as Error).message}); it may still be loading its world.`);
      }
    },
  };
}
