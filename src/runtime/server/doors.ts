import { AppError } from '../../errors';
import type { Server } from '../../store/servers-repo';
import type { ConsoleBuffer } from './console-buffer';
import { ServerDoor } from './door';
import type { SupervisorDeps } from './server-supervisor';
import type { LiveServer } from './types';

export type DoorsDeps = Omit<SupervisorDeps, 'isClosing' | 'crashed'> & {
  /** Tracks every command until it ends (Runtime idle()). */
  track: (p: Promise<unknown>) => void;
};

/**
 * The doors of this host's servers, one per server that needs one, each made on first use from the server's row
 * with its supervisor, which no one else holds (docs/architecture.md "The door"). A door whose server has settled
 * (stopped, nothing waiting, running or scheduled) is dropped by the reconcile loop's sweep, so memory follows the
 * servers in play, not the servers registered (docs/architecture.md "At scale"); its console, if it holds lines
 * of this life or has subscribers, is kept for the server's next door. Also whether the service is shutting down:
 * from then on no launch begins and no crash restart is scheduled.
 */
export function createDoors(deps: DoorsDeps) {
  const map = new Map<string, ServerDoor>();
  /** Consoles of servers without a door: getServerConsole promises this life's lines (openapi/v1.yaml). */
  const consoles = new Map<string, ConsoleBuffer>();
  let closing = false;
  const isClosing = () => closing;

  function forServer(server: Pick<Server, 'id' | 'state'>): ServerDoor {
    let door = map.get(server.id);
    if (!door) {
      const kept = consoles.get(server.id);
      consoles.delete(server.id);
      const doorDeps = { crashPolicy: deps.crashPolicy, isClosing, log: deps.log, track: deps.track, actors: deps.actors };
      door = new ServerDoor(server.id, server.state, { ...deps, isClosing }, doorDeps, kept);
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
    /** How many doors and kept consoles are in memory (tests, docs/architecture.md "At scale"). */
    size: (): { doors: number; consoles: number } => ({ doors: map.size, consoles: consoles.size }),
    /**
     * Drops the doors of settled servers (ServerDoor.settled), on its own tick: every caller of `of` uses the door
     * it got within its own synchronous step, so no command can reach a dropped door. A console worth keeping stays,
     * its log file closed until its next line.
     */
    dropSettled(): void {
      for (const [id, door] of map) {
        if (!door.settled) continue;
        map.delete(id);
        if (!door.console.empty) consoles.set(id, door.console);
        deps.track(door.console.closeFile());
      }
    },
    /** Drops a removed server's door and console (the removal's last step). */
    forget(serverId: string): void {
      map.delete(serverId);
      consoles.delete(serverId);
    },
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
