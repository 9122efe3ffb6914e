import { AppError } from '../errors';
import type { Server } from '../store/servers-repo';
import { ServerDoor } from './door';
import type { SupervisorDeps } from './server-supervisor';
import type { LiveServer } from './types';

export type DoorsDeps = Omit<SupervisorDeps, 'isClosing' | 'crashed'> & {
  /** Tracks every command until it ends (Runtime idle()). */
  track(p: Promise<unknown>): void;
};

/**
 * The doors of this host's servers, one per server, each made on first use from the server's row with its
 * supervisor, which no one else holds (docs/architecture.md "The door"). Also whether the service is shutting down:
 * from then on no launch begins and no crash restart is scheduled.
 */
export function createDoors(deps: DoorsDeps) {
  const map = new Map<string, ServerDoor>();
  let closing = false;
  const isClosing = () => closing;

  function forServer(server: Pick<Server, 'id' | 'state'>): ServerDoor {
    let door = map.get(server.id);
    if (!door) {
      const doorDeps = { crashPolicy: deps.crashPolicy, isClosing, log: deps.log, track: deps.track, actors: deps.actors };
      door = new ServerDoor(server.id, server.state, { ...deps, isClosing }, doorDeps);
      map.set(server.id, door);
    }
    return door;
  }

  return {
    forServer,
    /** The door of a server by id; server_not_found when no such row exists. */
    of(serverId: string): ServerDoor {
      const existing = map.get(serverId);
      if (existing) return existing;
      const server = deps.servers.find(serverId);
      if (!server) throw new AppError('server_not_found', `No server ${serverId}.`);
      return forServer(server);
    },
    all: (): ServerDoor[] => [...map.values()],
    /** Drops a removed server's door (the removal's last step). */
    forget: (serverId: string): void => void map.delete(serverId),
    /** Every running game, for the telemetry sampler. */
    live: (): LiveServer[] => [...map.values()].flatMap((d) => d.live ?? []),
    /** True while a restore waits or runs with this backup (a kept backup cannot be deleted then). */
    usingBackup: (backupId: string): boolean => [...map.values()].some((d) => d.has((c) => c.kind === 'restore' && c.backupId === backupId)),
    /** Shutdown began (reconcile.ts close): launches are refused and crash restarts no longer scheduled. */
    markClosing(): void {
      closing = true;
    },
    isClosing,
  };
}

export type Doors = ReturnType<typeof createDoors>;
