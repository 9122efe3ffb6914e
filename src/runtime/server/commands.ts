// The commands that drive a server through its door (door.ts), apart from those of the services that own their
// data: a backup and a restore (backups.ts), the removal (lifecycle.ts), a power action (power.ts). Each is a plain
// value; docs/architecture.md "The door" lists them all.
import { serviceActor } from '../../actors';
import type { Command } from './door';
import type { Environment, GameProcess } from '../host/environment';
import type { Logger } from '../../log';

/** Prepares the server's folder (installing → stopped). Holds nothing: an action asked for meanwhile waits behind. */
export const install: Command = {
  kind: 'install',
  holds: false,
  keepsRestart: true,
  run: async (server) => {
    await server.install();
    return null;
  },
};

/** The reconcile loop's start of a server whose desired state is `running` (no action: nobody asked just now). */
export const reconcileStart: Command = { kind: 'reconcile', holds: false, actor: serviceActor('reconcile'), run: (server) => server.launch('start') };

/** The reconcile loop's stop of a running server whose desired state is `stopped` (after a previous life). */
export const reconcileStop: Command = {
  kind: 'reconcile',
  holds: false,
  actor: serviceActor('reconcile'),
  run: async (server) => {
    await server.halt('stop', 'stop');
    return null;
  },
};

/** Boot: a previous life left the server live and no game is left of it: `stopped`. */
export const resetAtBoot: Command = { kind: 'boot', holds: false, actor: serviceActor('boot'), begin: (server) => server.resetAtBoot() };

/**
 * Boot: a game a previous life left running is taken over (Environment.adopt; the state stays or becomes `running`).
 * Throws, changing nothing, when the server can no longer be launched (its plan is gone): the caller kills the game.
 */
export function adoptAtBoot(proc: GameProcess): Command {
  return {
    kind: 'boot',
    holds: false,
    actor: serviceActor('boot'),
    begin: (server) => {
      server.adopt(proc);
      server.console.push('system', `adopted process ${proc.pid}, left running by a previous service life`);
      server.adoptedAtBoot();
    },
  };
}

/** Its node stopped answering (node-loss.ts): `unreachable` at once, whatever waits or runs. */
export const nodeLost: Command = { kind: 'node_lost', holds: false, actor: serviceActor('node'), begin: (server) => server.nodeLost() };

/**
 * Its node answers again (node-loss.ts): a game still running there is let go and adopted again (its console
 * attach broke with the engine), `running`; one that is gone leaves the server `stopped`.
 */
export function nodeReturned(environment: Pick<Environment, 'adopt' | 'killLeftover'>, log: Logger): Command {
  return {
    kind: 'node_returned',
    holds: false,
    actor: serviceActor('node'),
    run: async (server) => {
      if (server.state !== 'unreachable') return null;
      server.console.push('system', 'the machine this server runs on answers again');
      const held = server.detach();
      if (held) {
        const leftover = { serverId: server.id, ...held };
        const proc = await environment.adopt?.(leftover).catch((err: unknown) => {
          log.warn('could not adopt a game again after its node returned', { serverId: server.id, error: String(err) });
          return null;
        });
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- the state may change during the await above; TypeScript keeps the narrowing from the first line
        if (proc && server.state === 'unreachable') {
          server.nodeReturned(proc);
          return null;
        }
        await environment.killLeftover(leftover); // whatever of it is left on the node: the next start is clean
      }
      server.nodeReturned(null);
      return null;
    },
  };
}

/**
 * The disk watcher's stop of a server over its plan's disk (disk-watcher.ts): like the owner's stop, with what it
 * records first (`begin`: the crash, desired state `stopped`).
 */
export function diskStop(record: () => void): Command {
  return {
    kind: 'disk_stop',
    holds: true,
    actor: serviceActor('disk_quota'),
    begin: record,
    run: async (server) => {
      await server.whenInstalled();
      await server.halt('stop', 'disk_quota_exceeded');
      return null;
    },
  };
}

/**
 * Graceful shutdown (reconcile.ts close): overtakes what runs, stops the game with its stop command, or lets a
 * running one the environment can adopt again go (a container), waits for the commands it overtook, closes the
 * console's file.
 */
export const shutdown: Command = {
  kind: 'shutdown',
  holds: true,
  overtakes: true,
  actor: serviceActor('shutdown'),
  run: async (server, ctx) => {
    await server.whenInstalled();
    if (server.hasProcess && server.detach() === null) await server.halt('stop', 'shutdown');
    await ctx.othersSettled();
    await server.console.close();
    return null;
  },
};
